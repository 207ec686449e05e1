// A clean build of one git revision, away from the working tree: `git archive <rev>` of its sources
// (packages/ and the tsconfigs; src/ and migrations/ before the npm workspaces) into a temporary directory
// (node_modules linked), compiled with the project's tsc. For measuring a commit while the checkout is being
// edited and rebuilt.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './servers.mjs';

export function buildRevision(rev) {
  const commit = execFileSync('git', ['rev-parse', '--short', `${rev}^{commit}`], { cwd: ROOT })
    .toString()
    .trim();
  const dir = join(tmpdir(), `ca-bench-build-${commit}`);
  let packaged = true;
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}:packages/server/package.json`], { cwd: ROOT, stdio: 'ignore' });
  } catch {
    packaged = false;
  }
  if (packaged) return buildPackages(commit, dir);
  // A build made from another checkout links that checkout's node_modules, which may be gone (a removed
  // worktree: the bundle then fails to start, its packages not found) or hold other versions: built anew.
  const linked = join(dir, 'node_modules');
  const ours =
    existsSync(linked) && lstatSync(linked).isSymbolicLink() && readlinkSync(linked) === join(ROOT, 'node_modules');
  if (ours && existsSync(join(dir, 'dist/main.js'))) return { dist: join(dir, 'dist'), commit };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const paths = [
    'src',
    'migrations',
    'scripts',
    'tsconfig.json',
    'tsconfig.build.json',
    'tsconfig.migrations.json',
    'package.json',
  ];
  const tar = execFileSync('git', ['archive', '--format=tar', commit, ...paths], { cwd: ROOT, maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  for (const project of ['tsconfig.build.json', 'tsconfig.migrations.json']) {
    execFileSync(process.execPath, [tsc, '-p', project], { cwd: dir, stdio: 'inherit' });
  }
  // The build's own steps after tsc (the server's bundle, the embedded template), for a revision that has them.
  const bundle = join(dir, 'scripts/bundle-server.mjs');
  if (existsSync(bundle)) execFileSync(process.execPath, [bundle], { cwd: dir, stdio: 'inherit' });
  const template = join(dir, 'scripts/embedded-template.mjs');
  if (existsSync(template)) execFileSync(process.execPath, [template], { cwd: dir, stdio: 'inherit' });
  return { dist: join(dir, 'dist'), commit };
}

/**
 * A revision in npm workspaces: its packages/ built with `tsc -b`, then the server's bundle and template.
 * node_modules is a folder of links into the checkout's, but for @cleveragents/*, which link to the
 * revision's own packages (the bundle takes the contract from there).
 */
function buildPackages(commit, dir) {
  const marker = join(dir, 'node_modules/.linked-from');
  const dist = join(dir, 'packages/server/dist');
  const ours = existsSync(marker) && readFileSync(marker, 'utf8') === ROOT;
  if (ours && existsSync(join(dist, 'main.js'))) return { dist, commit };
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'node_modules/@cleveragents'), { recursive: true });
  const paths = ['packages', 'tsconfig.base.json', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];
  const tar = execFileSync('git', ['archive', '--format=tar', commit, ...paths], { cwd: ROOT, maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', dir], { input: tar });
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name !== '@cleveragents') symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name));
  }
  for (const name of readdirSync(join(dir, 'packages'))) {
    const manifest = JSON.parse(readFileSync(join(dir, 'packages', name, 'package.json'), 'utf8'));
    if (manifest.name.startsWith('@cleveragents/')) {
      symlinkSync(join(dir, 'packages', name), join(dir, 'node_modules', manifest.name));
    }
  }
  writeFileSync(marker, ROOT);
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: dir, stdio: 'inherit' });
  for (const script of ['bundle-server.mjs', 'embedded-template.mjs']) {
    execFileSync(process.execPath, [join(dir, 'packages/server/scripts', script)], { cwd: dir, stdio: 'inherit' });
  }
  return { dist, commit };
}
