import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every path of the repository the documentation cites exists: a reader sent to a file finds it. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The folders whose files the documentation cites (packages/ once the tree is split into workspaces). */
const CITED_ROOTS = ['src', 'packages', 'test', 'bench', 'scripts', 'migrations'];
/** What the build and the benchmarks write, git-ignored: cited as where to look, never committed. */
const GENERATED = ['bench/results/', 'dist/'];
/** The server package's folders, which the docs name as `src/…`, `migrations/…` and `scripts/…` (docs/architecture.md). */
const SERVER_PACKAGE = 'packages/server';
const SERVER_FOLDERS = ['src/', 'migrations/', 'scripts/'];

/** Whether a cited path is in the repository: from its root, or (`src/…`) in the server package. */
export function inRepository(path: string): boolean {
  if (existsSync(join(ROOT, path))) return true;
  return SERVER_FOLDERS.some((folder) => path.startsWith(folder)) && existsSync(join(ROOT, SERVER_PACKAGE, path));
}

/** README.md and every page under docs/. */
function documents(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name.split('\\').join('/')}`);
  return ['README.md', ...pages];
}

/**
 * The repository paths `text` cites, each cut before its first wildcard (`src/**\/*.ts` cites `src/`):
 * `src/auth/identity-cache.ts`, `packages/cli/src/`, not the `src/x` inside `packages/y/src/x`.
 */
export function citedPaths(text: string): string[] {
  // A page's link climbs out of docs/ first (`../src/x.ts`): the path is the same from the root.
  const pattern = new RegExp(`(?<![\\w./@-])(?:\\.\\./)*((?:${CITED_ROOTS.join('|')})/[\\w.*{}/-]*)`, 'g');
  return [...text.matchAll(pattern)].map((match) => match[1].split(/[*{]/)[0].replace(/[.-]+$/, ''));
}

/** Of `paths`, those that `exists` does not find and the build or the benchmarks do not write. */
export function missingPaths(paths: readonly string[], exists: (path: string) => boolean): string[] {
  return paths.filter((path) => !GENERATED.some((root) => path.startsWith(root)) && !exists(path));
}

describe('documentation paths: every file or folder the docs cite is in the repository', () => {
  const cited = documents().flatMap((doc) =>
    citedPaths(readFileSync(join(ROOT, doc), 'utf8')).map((path) => ({ doc, path })),
  );

  it('reads the pages and finds their citations', () => {
    expect(documents()).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'docs/errors.md']));
    expect(cited.length).toBeGreaterThan(60);
    expect(cited.map((c) => c.path)).toContain('src/auth/identity-cache.ts');
  });

  it("reads `src/…` as the server package's, and a path from the root as it is", () => {
    expect(inRepository('src/auth/identity-cache.ts')).toBe(true);
    expect(inRepository('packages/server/src/auth/identity-cache.ts')).toBe(true);
    expect(inRepository('test/architecture/doc-paths.spec.ts')).toBe(true);
    expect(inRepository('test/auth/identity-cache.ts')).toBe(false);
  });

  it('no page cites a path that does not exist', () => {
    const missing = cited.filter(({ path }) => missingPaths([path], inRepository).length > 0);
    expect(missing).toEqual([]);
  });

  describe('the check bites', () => {
    it('a file that moved, in prose, in code and in a link', () => {
      const text =
        'Errors map in `src/a2a/rpc-error.mapper.ts`. See [the guard](../src/auth/http/gone.ts), and src/nowhere/.';
      expect(missingPaths(citedPaths(text), inRepository)).toEqual([
        'src/a2a/rpc-error.mapper.ts',
        'src/auth/http/gone.ts',
        'src/nowhere/',
      ]);
    });

    it('packages/ paths, wildcards cut, sentence ends dropped, generated output allowed', () => {
      expect(
        citedPaths('In packages/cli/src/main.ts, src/**/*.ts and src/rpc. Results: bench/results/latest.json.'),
      ).toEqual(['packages/cli/src/main.ts', 'src/', 'src/rpc', 'bench/results/latest.json']);
      expect(missingPaths(['bench/results/latest.json', 'packages/cli/src/main.ts'], () => false)).toEqual([
        'packages/cli/src/main.ts',
      ]);
    });
  });
});
