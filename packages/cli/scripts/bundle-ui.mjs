// Build step (npm run build), after tsc: dist/ui/bundle/, the interactive chat's UI (dist/ui/app.js, the rest
// of dist/ui/, and the packages they load: ink, React, yoga-layout, marked, marked-terminal) bundled by esbuild
// into a few ES modules, which `chat` loads instead of app.js when they are there. Node then reads and
// compiles a few files instead of some four hundred modules: most of what the UI added to the chat's start
// (docs/benchmarks.md). The Markdown packages (ui/markdown-modules.ts, most of the size: a syntax highlighter)
// are a part of their own, which app.tsx loads after its first frame.
//
// What the UI imports from the rest of the CLI (../style.js, ../tools.js, …) and from the workspace's
// packages (@cleveragents/*) stays outside, loaded as modules: one instance of each, shared with the
// code that started the chat (its classes, its state). Nothing outside dist/ui/ imports dist/ui/, so the
// bundle's copies of those modules are the only ones a run loads.
//
// React and its renderer are the production builds in the bundle (NODE_ENV defined as "production"
// there; the process's own environment is left alone): no development checks on every render. The
// tests of the UI in process run the sources, with React's development build; the CLI's end-to-end
// tests run the bundle.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const ui = resolve(root, 'dist/ui');
const outdir = resolve(ui, 'bundle');

/** Imports of the CLI's own modules outside dist/ui/ stay imports, written relative to the bundle. */
const sharedModules = {
  name: 'shared-modules',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) => {
      if (!args.importer.startsWith(ui + sep)) return undefined;
      const target = resolve(args.resolveDir, args.path);
      if (target.startsWith(ui + sep) && !target.startsWith(outdir + sep)) return undefined;
      const path = relative(outdir, target).split(sep).join('/');
      return { path: path.startsWith('.') ? path : `./${path}`, external: true };
    });
  },
};

/** ink imports React's developer tools only when asked to (DEV=true); the bundle never connects to them. */
const noDevtools = {
  name: 'no-devtools',
  setup(b) {
    b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'no-devtools' }));
    b.onLoad({ filter: /.*/, namespace: 'no-devtools' }, () => ({
      contents: 'export default { initialize() {}, connectToDevTools() {} };',
      loader: 'js',
    }));
  },
};

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: [resolve(ui, 'app.js')],
  outdir,
  // The Markdown packages, imported with import() by app.js, become a file of their own.
  splitting: true,
  chunkNames: '[name]-[hash]',
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  external: ['@cleveragents/*'],
  define: { 'process.env.NODE_ENV': '"production"' },
  // The CommonJS packages inside (React) call require(): an ES module has none of its own.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  plugins: [sharedModules, noDevtools],
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  logLevel: 'warning',
});
