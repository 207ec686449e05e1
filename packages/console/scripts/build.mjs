// Build step (npm run build): the web console, bundled by esbuild from src/main.tsx into dist/ — one
// index.html, one script and one stylesheet under assets/ with content hashes in their names (cached for
// good by browsers; index.html is not cached). The server serves dist/ at /console/ (docs/console.md).
// The page loads nothing from another origin and has no inline script or style (the server's CSP).
// dist/meta.json records each asset's size (bench/console.mjs reads it).
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve, sep } from 'node:path';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const outdir = resolve(root, 'dist');
const assets = resolve(outdir, 'assets');

/**
 * zod re-exports every locale it ships (`z.locales`), and a namespace export keeps them all in the bundle,
 * about half of its size; the console reads zod's messages in English only.
 */
const englishOnlyZod = {
  name: 'english-only-zod',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}zod${sep}`)
        ? { path: resolve(args.resolveDir, args.path), namespace: 'zod-locales' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(resolve(dirname(args.path), 'en.js'))};`,
      loader: 'js',
      resolveDir: dirname(args.path),
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });
const result = await build({
  entryPoints: { app: resolve(root, 'src/main.tsx') },
  outdir: assets,
  entryNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022', 'chrome120', 'firefox120', 'safari17'],
  jsx: 'automatic',
  // One tsconfig for every file: the repository's own maps @cleveragents/* to sources for the tests, and
  // would give the client's built files a second copy of the contract.
  tsconfig: resolve(root, 'tsconfig.json'),
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  metafile: true,
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
  plugins: [englishOnlyZod],
});

const outputs = Object.keys(result.metafile.outputs).map((path) => resolve(process.cwd(), path));
const script = outputs.find((path) => path.endsWith('.js'));
const style = outputs.find((path) => path.endsWith('.css'));
if (!script || !style) throw new Error(`the console build made no ${script ? 'stylesheet' : 'script'}`);

// <base> is the console's path; the server rewrites it when it serves the console under another prefix.
const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <base href="/console/" />
    <link rel="icon" href="data:," />
    <title>CleverAgents console</title>
    <link rel="stylesheet" href="assets/${basename(style)}" />
    <script type="module" src="assets/${basename(script)}"></script>
  </head>
  <body>
    <div id="root"></div>
    <noscript>The CleverAgents console needs JavaScript.</noscript>
  </body>
</html>
`;
writeFileSync(resolve(outdir, 'index.html'), html);

// Each asset also compressed beside it (app-….js.br, .gz): the server sends those to browsers that take them.
for (const path of [script, style]) {
  const bytes = readFileSync(path);
  writeFileSync(`${path}.br`, brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }));
  writeFileSync(`${path}.gz`, gzipSync(bytes, { level: 9 }));
}

const sizeOf = (path) => {
  const bytes = readFileSync(path);
  return {
    file: `assets/${basename(path)}`,
    bytes: bytes.length,
    gzipBytes: readFileSync(`${path}.gz`).length,
    brotliBytes: readFileSync(`${path}.br`).length,
  };
};
writeFileSync(
  resolve(outdir, 'meta.json'),
  `${JSON.stringify({ script: sizeOf(script), style: sizeOf(style) }, null, 2)}\n`,
);
