import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { cliHome, type CliHome } from '../support/cli.js';
import { createEmbeddedTestDatabase, type TestDatabase } from '../support/database.js';
import { startServerWithBootstrapKey, type TestServer } from '../support/server.js';
import { ifAssigned } from '../support/assigned.js';

/*
 * The CLI as a user installs it: `npm pack` of the contract, client and CLI packages, the three tarballs
 * installed into an empty project (npm's cache and registry for their dependencies), none of the server's
 * stack pulled in, and the installed `cleveragents` run against a real server. Then the client library's
 * browser entry, bundled for a browser: no Node built-in in its import graph.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKED = ['contract', 'client', 'cli'];
/** The server's stack: none of it may come with the CLI. */
const SERVER_STACK = ['@nestjs', 'typeorm', '@electric-sql/pglite', '@langchain', 'pg', '@cleveragents/server'];

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `file args` asynchronously (the test's server answers from this process). */
function run(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: options.cwd, env: options.env ?? process.env, encoding: 'utf8', timeout: 240_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) =>
        resolve({ status: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

/** The package folders under `dir/node_modules`, scoped ones as `@scope/name`. */
function installed(dir: string): string[] {
  const modules = join(dir, 'node_modules');
  return readdirSync(modules).flatMap((name) =>
    name.startsWith('@') ? readdirSync(join(modules, name)).map((inner) => `${name}/${inner}`) : [name],
  );
}

describe('the cleveragents CLI packed and installed without the server', () => {
  let work: string;
  let project: string;
  let tarballs: string[];
  let db: TestDatabase;
  let server: TestServer;
  let bootstrapKey: string;
  let home: CliHome;

  beforeAll(async () => {
    for (const name of PACKED) {
      if (!existsSync(join(ROOT, 'packages', name, 'dist'))) {
        throw new Error(`packages/${name}/dist is missing: run "npm run build" first`);
      }
    }
    work = mkdtempSync(join(tmpdir(), 'cleveragents-pack-'));
    const packed = await run(
      'npm',
      ['pack', '--json', '--pack-destination', work, ...PACKED.flatMap((name) => ['--workspace', `packages/${name}`])],
      { cwd: ROOT },
    );
    expect({ status: packed.status, stderr: packed.status === 0 ? '' : packed.stderr }).toEqual({
      status: 0,
      stderr: '',
    });
    tarballs = (JSON.parse(packed.stdout) as { filename: string }[]).map((entry) => join(work, entry.filename));

    project = join(work, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true }));
    const install = await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', ...tarballs],
      { cwd: project, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect({ status: install.status, stderr: install.status === 0 ? '' : install.stderr }).toEqual({
      status: 0,
      stderr: '',
    });

    db = await createEmbeddedTestDatabase();
    ({ server, bootstrapKey } = await startServerWithBootstrapKey(db));
    home = await cliHome();
  }, 300_000);

  afterAll(async () => {
    await ifAssigned(server)?.close();
    await ifAssigned(db)?.cleanup();
    await ifAssigned(home)?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('packs the three packages with their built files and no sources or specs', () => {
    expect(tarballs.map((file) => file.slice(work.length + 1)).sort()).toEqual([
      'cleveragents-0.1.0.tgz',
      'cleveragents-client-0.1.0.tgz',
      'cleveragents-contract-0.1.0.tgz',
    ]);
  });

  it("installs the CLI, the client library and the contract, and none of the server's stack", () => {
    const packages = installed(project);
    expect(packages).toEqual(
      expect.arrayContaining(['cleveragents', '@cleveragents/client', '@cleveragents/contract']),
    );
    const stack = packages.filter((name) => SERVER_STACK.some((s) => name === s || name.startsWith(`${s}/`)));
    expect(stack).toEqual([]);
    const shipped = readdirSync(join(project, 'node_modules/cleveragents/dist'), { recursive: true }) as string[];
    // The interactive UI ships as its bundle too (scripts/bundle-ui.mjs).
    expect(shipped).toEqual(expect.arrayContaining(['bin.js', 'main.js', 'ui/bundle/app.js']));
    expect(shipped.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  });

  it('the installed cleveragents prints its version and lists namespaces on a real server with an API key', async () => {
    const bin = join(project, 'node_modules/.bin/cleveragents');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home.env };
    const version = await run(bin, ['--version'], { cwd: home.dir, env });
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string };
    expect(version).toEqual({ status: 0, stdout: `${manifest.version}\n`, stderr: '' });

    const listed = await run(
      bin,
      ['--server', server.baseUrl, '--api-key', bootstrapKey, '--json', 'namespaces', 'list'],
      {
        cwd: home.dir,
        env,
      },
    );
    expect({ status: listed.status, stderr: listed.stderr }).toEqual({ status: 0, stderr: '' });
    const names = (JSON.parse(listed.stdout) as { items: { namespace: string }[] }).items.map((n) => n.namespace);
    expect(names).toEqual(['default']);
  }, 60_000);

  it('the installed cleveragents says how to get the server when asked for local mode', async () => {
    const bin = join(project, 'node_modules/.bin/cleveragents');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...home.env };
    const local = await run(bin, ['--local', '--json', 'namespaces', 'list'], { cwd: home.dir, env });
    expect(local.status).not.toBe(0);
    expect(local.stderr).toContain('npm install -g @cleveragents/server');
  }, 60_000);
});

describe("the client library's browser entry", () => {
  it('bundles for a browser with no Node built-in; the Node entry does not', async () => {
    const bundle = (entry: string) =>
      build({
        entryPoints: [join(ROOT, 'packages/client/src', entry)],
        bundle: true,
        write: false,
        platform: 'browser',
        format: 'esm',
        logLevel: 'silent',
        absWorkingDir: ROOT,
        // The workspace packages from their sources, as the test suite reads them.
        alias: { '@cleveragents/contract': join(ROOT, 'packages/contract/src/index.ts') },
        metafile: true,
      });
    const browser = await bundle('index.ts');
    const inputs = Object.keys(browser.metafile.inputs);
    expect(inputs).toEqual(expect.arrayContaining(['packages/client/src/lib/client.ts']));
    expect(inputs.filter((input) => input.startsWith('node:') || input.includes('lib/stdio'))).toEqual([]);
    const node = await bundle('node.ts').catch((e: { errors?: { text: string }[] }) => e.errors?.map((x) => x.text));
    expect(node).toEqual(expect.arrayContaining([expect.stringMatching(/node:child_process/)]));
  }, 60_000);
});
