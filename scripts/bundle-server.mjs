// Build step (npm run build), after tsc: dist/bundle/, the server (dist/server.js and what it imports,
// packages included) bundled by esbuild into a few ES modules, which dist/main.js loads. Node then
// reads, resolves and links some thirty files at start instead of some two thousand, the larger part
// of a cold start. The input is tsc's output, so decorator metadata is already emitted; the source
// maps chain back to src/ (node --enable-source-maps).
//
// What the server imports with import() only when it needs it (a backend, the client's code) stays
// out of the start: each such module is a chunk of its own (splitting), loaded at its import().
// The chunks sit next to server.js, one folder below dist/ like every compiled module, so paths taken
// from import.meta.url (../migrations, ../embedded-template, ../../package.json) hold.
//
// Left out, loaded from node_modules at run time:
// - packages read by path or loaded by name at run time rather than imported: PGlite (its .wasm and
//   data files), pg (TypeORM requires it by name: one instance for TypeORM and us), class-transformer
//   (params-schema.ts requires its storage module: the instance Nest's pipes use);
// - pino: a transport would start a worker from a file next to pino's own (__dirname);
// - optional peers Nest requires only when installed; what only a backend imports (LangChain, OpenAI).
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

// keepNames makes esbuild call `__name(fn, "name")` on every class and function it bundles, so that a
// class renamed for a clash between modules (Response -> Response2) keeps its name: Nest and TypeORM read
// class names. Its helper defines `name` even where the function already has that name, which is every
// closure created per call (a router's `next`, a stream's generator): each then carries a property store
// of its own (256 bytes), some ten per open stream. The helper below defines it only where it differs,
// and not on an anonymous arrow function or method (no `prototype`: never a class or a constructor),
// which esbuild's wrapping left without the name JavaScript would have inferred: those stay anonymous.
const NAME_HELPER = 'var __name = (target, value) => __defProp(target, "name", { value, configurable: true });';
const NAME_HELPER_WHERE_DIFFERENT =
  'var __name = (target, value) => target.name === value || (target.name === "" && target.prototype === undefined) ? target : __defProp(target, "name", { value, configurable: true });';

const dist = resolve(import.meta.dirname, '..', 'dist');
const outdir = resolve(dist, 'bundle');
rmSync(outdir, { recursive: true, force: true });
const { outputFiles } = await build({
  write: false,
  entryPoints: [resolve(dist, 'server.js')],
  outdir,
  bundle: true,
  splitting: true,
  chunkNames: '[name]-[hash]',
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Class names as written: Nest and TypeORM read them (tokens, log contexts, entity names).
  keepNames: true,
  sourcemap: 'linked',
  logLevel: 'warning',
  external: [
    '@electric-sql/pglite',
    '@electric-sql/pglite/*',
    'pg',
    'pg-native',
    'class-transformer',
    'class-transformer/*',
    'pino',
    '@nestjs/microservices',
    '@nestjs/microservices/*',
    '@nestjs/websockets',
    '@nestjs/websockets/*',
    '@langchain/*',
    'openai',
  ],
  // CommonJS packages in an ES module: their require() of Node's modules and of the packages above.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
});
let helpers = 0;
for (const file of outputFiles) {
  let text = file.text;
  if (file.path.endsWith('.js') && text.includes(NAME_HELPER)) {
    helpers += 1;
    text = text.replace(NAME_HELPER, NAME_HELPER_WHERE_DIFFERENT);
  }
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, text);
}
if (helpers !== 1)
  throw new Error(`bundle: expected esbuild's __name helper once in the output, found it ${helpers} times`);
