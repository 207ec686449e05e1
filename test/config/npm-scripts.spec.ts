import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The npm scripts as the documents and deployment files name them: every `npm run x` they show exists,
 * the scripts that run the compiled server or the migrations do not rebuild, and the image builds with
 * every tsconfig the build script names.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** The package configs tsconfig.build.json references, relative to the root. */
function buildConfigs(): string[] {
  const { references } = JSON.parse(read('tsconfig.build.json')) as { references: { path: string }[] };
  return references.map((reference) => reference.path);
}

/** The files that tell someone which command to type. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
  'Dockerfile',
  'docker-compose.yml',
  '.ci/run',
  ...filesUnder('deploy'),
];

/** Every script named as `npm start`, `npm test` or `npm run [--silent] <name>` in `text`. */
function namedScripts(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/\bnpm (start|test)\b/g)) names.push(match[1]);
  for (const match of text.matchAll(/\bnpm run (?:--silent )?([a-z][\w:-]*)/g)) names.push(match[1]);
  return names;
}

/** Whether `command` rebuilds: runs the build script or the compiler. */
const builds = (command: string): boolean => /\bnpm run (--silent )?build\b|\btsc\b|\bnest build\b/.test(command);

describe('npm scripts', () => {
  it("start builds, then runs the server package's dist/main.js; start:stdio the same with --stdio", () => {
    expect(scripts.start).toMatch(/^npm run build\b.* && node packages\/server\/dist\/main\.js$/);
    expect(scripts['start:stdio']).toMatch(/^npm run build\b.* && node packages\/server\/dist\/main\.js --stdio$/);
  });

  it('start:prod, start:stdio:prod, admin and the migration commands run dist/ without building', () => {
    const runFromDist = Object.keys(scripts).filter(
      (name) => name.startsWith('migration:') || name.endsWith(':prod') || name === 'admin',
    );
    expect(runFromDist).toEqual(
      expect.arrayContaining([
        'start:prod',
        'start:stdio:prod',
        'admin',
        'migration:run',
        'migration:revert',
        'migration:show',
        'migration:generate',
        'migration:check',
      ]),
    );
    for (const name of runFromDist) expect({ name, builds: builds(scripts[name]) }).toEqual({ name, builds: false });
    expect(scripts['start:prod']).toBe('node packages/server/dist/main.js');
    expect(scripts['start:stdio:prod']).toBe('node packages/server/dist/main.js --stdio');
    for (const name of runFromDist.filter((n) => n.startsWith('migration:'))) {
      expect(scripts[name]).toContain('-d packages/server/dist/cli-data-source.js');
    }
  });

  it("the build is incremental over every package, each one's state under its dist/", () => {
    expect(scripts.build).toMatch(/^tsc -b tsconfig\.build\.json /);
    const configs = buildConfigs();
    expect(configs.map((config) => config.split('/')[1])).toEqual(
      expect.arrayContaining(['contract', 'client', 'cli', 'server']),
    );
    for (const config of configs) {
      const options = (JSON.parse(read(config)) as { compilerOptions: Record<string, unknown> }).compilerOptions;
      const incremental = options.incremental === true || options.composite === true;
      expect({ config, incremental }).toEqual({ config, incremental: true });
      expect(options.tsBuildInfoFile).toMatch(/^dist\//);
    }
  });

  it.each(DOCUMENTS)('every npm script %s names exists', (file) => {
    const text = read(file);
    for (const name of namedScripts(text)) {
      // `npm run migration:*` names a family of scripts.
      const exists = name.endsWith(':') ? Object.keys(scripts).some((s) => s.startsWith(name)) : name in scripts;
      expect({ file, script: name, exists }).toEqual({ file, script: name, exists: true });
    }
  });

  it('the documents do name scripts (the pattern above finds them)', () => {
    expect(namedScripts(read('README.md'))).toEqual(expect.arrayContaining(['start', 'test', 'build', 'admin']));
  });

  it('the image copies every tsconfig the build reads, every package, and runs files the build emits', () => {
    const dockerfile = read('Dockerfile');
    const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \.\/$/gm)].flatMap((m) => m[1].split(/\s+/));
    for (const config of ['tsconfig.build.json', 'tsconfig.base.json']) {
      expect({ config, copied: copied.includes(config) }).toEqual({ config, copied: true });
    }
    expect(dockerfile).toMatch(/^COPY packages \.\/packages$/m);
    expect(buildConfigs().every((config) => config.startsWith('packages/'))).toBe(true);
    const deployment = [read('Dockerfile'), read('docker-compose.yml'), ...filesUnder('deploy').map(read)].join('\n');
    const distFiles = [...deployment.matchAll(/\bdist\/([\w/.-]+)\.js\b/g)].map((m) => m[1]);
    expect(distFiles).toEqual(expect.arrayContaining(['main', 'cli/admin']));
    for (const file of new Set(distFiles)) {
      const source = existsSync(join(ROOT, 'packages/server/src', `${file}.ts`));
      expect({ file, source }).toEqual({ file, source: true });
    }
  });
});
