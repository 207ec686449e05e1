// Build step (npm run build), after tsc: dist/bundle/server.js, the server (dist/server.js and what it
// imports, packages included) bundled by esbuild into one CommonJS script, which dist/main.js runs. Node
// then reads and compiles one file at start instead of some two thousand modules, the larger part of a
// cold start. The input is tsc's output, so decorator metadata is already emitted; the source map chains
// back to src/ (node --enable-source-maps).
//
// A script rather than ES modules because only a script can be compiled with a V8 code cache on Node 20
// (vm.Script cachedData; ES modules have no such thing there, and Node's own compile cache starts with
// 22.1): see src/common/code-cache.ts. Hence no splitting (esbuild splits ES modules only): what the
// server imports with import() only when it needs it (a backend, the client's code) stays out of the start
// all the same, wrapped in a function that runs at its import(). Each import() of a package left out
// (below) becomes a require() (`dynamic-import` unsupported): import() in a script compiled with a code
// cache has no loader to call on Node 20, and every package here has a CommonJS build (or is an ES module
// without top-level await, which require() loads on every Node the server supports: package.json engines).
// The script sits one folder below dist/ like every compiled module, so paths taken from import.meta.url
// (../migrations, ../embedded-template, ../../package.json) hold; dist/bundle/package.json marks it CommonJS.
//
// Left out, loaded from node_modules at run time:
// - packages read by path or loaded by name at run time rather than imported: PGlite (its .wasm and
//   data files; only the embedded database's thread loads it, src/database/pglite-worker.ts), pg and
//   pg-protocol (TypeORM requires pg by name: one instance for TypeORM and us), class-transformer
//   (params-schema.ts requires its storage module: the instance Nest's pipes use);
// - pino: a transport would start a worker from a file next to pino's own (__dirname);
// - optional peers Nest requires only when installed; what only a backend imports (LangChain, OpenAI);
// - the OpenTelemetry API (one copy, shared with the SDK), the SDK and metric exporters (only when on).
//
// What a start runs (and Node compiles) is trimmed further by the plugin below (startupTrim): see there.
// The script's whitespace, comments and syntax are minified, identifiers not (keepNames too): 5.2 MB became
// 3.4 MB that a start reads, hashes (code-cache.ts), checks for ASCII and makes a string of. The source map
// still leads to src/.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';

// keepNames makes esbuild call `__name(fn, "name")` on every class and function it bundles, so that a
// class renamed for a clash between modules (Response -> Response2) keeps its name: Nest and TypeORM read
// class names. Its helper defines `name` even where the function already has that name, which is every
// closure created per call (a router's `next`, a stream's generator): each then carries a property store
// of its own (256 bytes), some ten per open stream. The helper below defines it only where it differs,
// and not on an anonymous arrow function or method (no `prototype`: never a class or a constructor),
// which esbuild's wrapping left without the name JavaScript would have inferred: those stay anonymous.
// As esbuild writes it, its whitespace and `true` (`!0`) minified or not.
const NAME_HELPER =
  /var __name ?= ?\(target, ?value\) ?=> ?__defProp\(target, ?"name", ?\{ ?value, ?configurable: ?(true|!0) ?\}\)/;
const NAME_HELPER_WHERE_DIFFERENT =
  'var __name = (target, value) => target.name === value || (target.name === "" && target.prototype === undefined) ? target : __defProp(target, "name", { value, configurable: true })';

const root = resolve(import.meta.dirname, '..');
const requireFromRoot = createRequire(resolve(root, 'package.json'));

/** A file of an installed package, from the nearest node_modules up from the package (npm workspaces hoist). */
function inNodeModules(file) {
  for (let dir = root; ; dir = dirname(dir)) {
    if (existsSync(resolve(dir, 'node_modules', file))) return resolve(dir, 'node_modules', file);
    if (dirname(dir) === dir) throw new Error(`bundle: ${file} is not installed`);
  }
}

// Packages that a start imports but never calls: each is replaced in the bundle by a stand-in that
// loads the package from node_modules at its first use (any property read or call), with the same
// export names. Found by timing each module's evaluation during a start.
// - multer: @nestjs/platform-express's file interceptors import it; the server takes no uploads;
// - iconv-lite: body-parser and raw-body decode a body in a charset other than UTF-8 with it; the
//   server reads its JSON bodies itself (bodyParser: false), and 0.5 MB of tables is not parsed at start;
// - tinyglobby: TypeORM finds entities and migrations named by glob with it; the server names classes;
// - @sqltools/formatter, sql-highlight: TypeORM formats and colours SQL for its console logger.
const LAZY_PACKAGES = ['multer', 'iconv-lite', 'tinyglobby', '@sqltools/formatter', 'sql-highlight'];

// ES module builds of packages whose CommonJS build (the one "node" resolves) runs every module of the
// package at import: from an ES module build esbuild keeps only what the server uses. Both are marked
// free of side effects. class-validator's index alone loads every decorator, validator.js's checks and
// libphonenumber's metadata (1 MB); rxjs's every operator.
const ES_MODULE_BUILDS = {
  'class-validator': 'class-validator/esm2015/index.js',
  rxjs: 'rxjs/dist/esm/index.js',
  'rxjs/operators': 'rxjs/dist/esm/operators/index.js',
};

// Nest's ConsoleLogger and Logger each build an Intl.DateTimeFormat at load, for the timestamp of a line
// they print; the first one built in a process loads the locale's data, some 25 ms (measured alone). The
// server's lines go through pino (src/common/logging/), so a start never formats one: built at first use.
const NEST_DATE_FORMATTERS =
  /[\\/]node_modules[\\/]@nestjs[\\/]common[\\/]services[\\/](console-logger|logger)\.service\.js$/;
const DATE_FORMATTER = /const dateTimeFormatter = new Intl\.DateTimeFormat\(([^;]*?)\);/;

// The migrations a start loads (src/database/data-source.factory.ts, loadMigrations) are compiled with the
// bundle, and so come from its code cache: src/database/bundled-migrations.ts, empty as tsc writes it, is
// replaced here by a module that imports every file of dist/migrations (the files loadMigrations lists).
const BUNDLED_MIGRATIONS = /[\\/]dist[\\/]database[\\/]bundled-migrations\.js$/;
const isMigrationFile = (name) => name.endsWith('.js') && !name.endsWith('.d.js') && !/\.(spec|e2e-spec)\./.test(name);

// TypeORM's DriverFactory imports every driver it knows (1 MB of MySQL, Oracle, SQL Server, SAP,
// Spanner, MongoDB, SQLite ... code) to pick one by `type`; the server's is always `postgres`.
const TYPEORM_DRIVER_FACTORY = /[\\/]node_modules[\\/]typeorm[\\/]driver[\\/]DriverFactory\.js$/;
const KEPT_DRIVER = './postgres/PostgresDriver';

/** The stand-in module for a lazily loaded package: the same names, each read from the package on use. */
function lazyStandIn(name) {
  const real = requireFromRoot(name);
  const skip = new Set(['length', 'name', 'arguments', 'caller', 'prototype']);
  const lines = [
    `// ${name}, loaded from node_modules at its first use (scripts/bundle-server.mjs, LAZY_PACKAGES).`,
    'let loaded;',
    `const load = () => (loaded ??= require(${JSON.stringify(name)}));`,
  ];
  if (typeof real === 'function') {
    if (real.prototype && Object.getOwnPropertyNames(real.prototype).length > 1)
      throw new Error(`bundle: ${name} exports a class; a lazy stand-in would break instanceof`);
    lines.push(`module.exports = function ${real.name || 'lazy'}(...args) { return load().apply(this, args); };`);
  } else lines.push('module.exports = {};');
  for (const key of Object.getOwnPropertyNames(real)) {
    if (typeof real === 'function' && skip.has(key)) continue;
    const { enumerable } = Object.getOwnPropertyDescriptor(real, key);
    // __esModule decides how an importer reads `default`: a fixed value, read without loading.
    const accessor =
      key === '__esModule' ? `value: ${JSON.stringify(real[key])}` : `get: () => load()[${JSON.stringify(key)}]`;
    lines.push(
      `Object.defineProperty(module.exports, ${JSON.stringify(key)}, { enumerable: ${enumerable}, configurable: true, ${accessor} });`,
    );
  }
  return lines.join('\n');
}

const trimmed = { lazy: new Set(), esm: new Set(), drivers: new Set(), formatters: new Set(), migrations: 0 };
const startupTrim = {
  name: 'startup-trim',
  setup(b) {
    const lazyFilter = new RegExp(`^(${LAZY_PACKAGES.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter: lazyFilter }, (args) => {
      // The stand-in's own require of the package: from node_modules, at run time.
      if (args.namespace === 'lazy-package') return { path: args.path, external: true };
      // The stand-in loads the package the project's root resolves: the importer must get that one too.
      const own = createRequire(resolve(args.resolveDir, 'importer.js')).resolve(args.path);
      if (own !== requireFromRoot.resolve(args.path))
        throw new Error(`bundle: ${args.importer} imports another ${args.path} (${own}) than the root's`);
      return { path: args.path, namespace: 'lazy-package' };
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-package' }, (args) => {
      trimmed.lazy.add(args.path);
      return { contents: lazyStandIn(args.path), loader: 'js', resolveDir: root };
    });
    const esmFilter = new RegExp(
      `^(${Object.keys(ES_MODULE_BUILDS)
        .map((n) => n.replace(/[/.]/g, '\\$&'))
        .join('|')})$`,
    );
    b.onResolve({ filter: esmFilter }, (args) => {
      // Nest's ValidationPipe imports class-validator whole when not handed the package (the server's
      // pipes always are, src/rpc/rpc-params.pipe.ts): that import() stays a run-time one.
      if (args.kind === 'dynamic-import' && args.path === 'class-validator') return { path: args.path, external: true };
      trimmed.esm.add(args.path);
      const path = inNodeModules(ES_MODULE_BUILDS[args.path]);
      if (!existsSync(path)) throw new Error(`bundle: ${path} is missing`);
      return { path };
    });
    b.onLoad({ filter: BUNDLED_MIGRATIONS }, (args) => {
      const files = readdirSync(resolve(dist, 'migrations')).filter(isMigrationFile).sort();
      trimmed.migrations = files.length;
      const lines = files.map((f, i) => `import * as migration${i} from '../migrations/${f}';`);
      const entries = files.map((f, i) => `  [${JSON.stringify(f)}, migration${i}],`);
      lines.push('export const bundledMigrations = new Map([', ...entries, ']);');
      return { contents: lines.join('\n'), loader: 'js', resolveDir: dirname(args.path) };
    });
    b.onLoad({ filter: NEST_DATE_FORMATTERS }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const match = DATE_FORMATTER.exec(text);
      // Its only use must be format(): the stand-in has nothing else.
      if (!match || text.split('dateTimeFormatter').length - 1 !== text.split('dateTimeFormatter.format(').length)
        throw new Error(`bundle: ${args.path} no longer builds its date formatter as expected`);
      trimmed.formatters.add(args.path);
      const lazy =
        'let dateTimeFormat; // built at first use (scripts/bundle-server.mjs, NEST_DATE_FORMATTERS)\n' +
        `const dateTimeFormatter = { format: (time) => (dateTimeFormat ??= new Intl.DateTimeFormat(${match[1]})).format(time) };`;
      return { contents: text.replace(match[0], lazy), loader: 'js' };
    });
    b.onResolve({ filter: /^\.\/[a-z0-9-]+\/[A-Za-z0-9]+Driver$/ }, (args) => {
      if (!TYPEORM_DRIVER_FACTORY.test(args.importer) || args.path === KEPT_DRIVER) return undefined;
      trimmed.drivers.add(args.path);
      return { path: args.path, namespace: 'typeorm-driver-left-out' };
    });
    b.onLoad({ filter: /.*/, namespace: 'typeorm-driver-left-out' }, (args) => {
      const name = args.path.split('/').pop();
      return {
        contents:
          `// TypeORM's ${name}, left out of the bundle (scripts/bundle-server.mjs): the server runs on PostgreSQL.\n` +
          `exports.${name} = class ${name} { constructor() { throw new Error("TypeORM's ${name} is not part of this build: the server runs on PostgreSQL"); } };`,
        loader: 'js',
      };
    });
  },
};

const dist = resolve(root, 'dist');
const outdir = resolve(dist, 'bundle');
rmSync(outdir, { recursive: true, force: true });
const { outputFiles } = await build({
  write: false,
  entryPoints: [resolve(dist, 'server.js')],
  outdir,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  supported: { 'dynamic-import': false },
  // The script's own file URL, defined by the banner below.
  define: { 'import.meta.url': '__bundleUrl' },
  // Class names as written: Nest and TypeORM read them (tokens, log contexts, entity names).
  keepNames: true,
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  charset: 'ascii',
  logLevel: 'warning',
  plugins: [startupTrim],
  external: [
    '@electric-sql/pglite',
    '@electric-sql/pglite/*',
    'pg',
    'pg-native',
    // The one pg-protocol pg itself loads: the embedded database's connection (pglite-thread.ts) parses with it.
    'pg-protocol',
    'pg-protocol/*',
    'class-transformer',
    'class-transformer/*',
    'pino',
    '@nestjs/microservices',
    '@nestjs/microservices/*',
    '@nestjs/websockets',
    '@nestjs/websockets/*',
    '@langchain/*',
    'openai',
    // One copy of the OpenTelemetry API for the server and the SDK it loads from node_modules (its global
    // registry is what links the two); the SDK and metric exporters are imported only when the OTEL_*
    // variables turn tracing or metric export on (src/telemetry/).
    '@opentelemetry/api',
    '@opentelemetry/sdk-node',
    '@opentelemetry/exporter-metrics-otlp-*',
  ],
  banner: { js: 'const __bundleUrl = require("node:url").pathToFileURL(__filename).href;' },
});
// Each rule must still find what it was written for: a package that moved makes the build say so.
for (const name of LAZY_PACKAGES) if (!trimmed.lazy.has(name)) throw new Error(`bundle: ${name} is no longer imported`);
for (const name of Object.keys(ES_MODULE_BUILDS))
  if (!trimmed.esm.has(name)) throw new Error(`bundle: ${name} is no longer imported`);
if (trimmed.migrations === 0) throw new Error('bundle: no migrations bundled (dist/migrations, bundled-migrations.js)');
if (trimmed.formatters.size !== 2)
  throw new Error(`bundle: expected Nest's two date formatters, found ${trimmed.formatters.size}`);
if (trimmed.drivers.size < 10)
  throw new Error(`bundle: TypeORM's DriverFactory no longer imports its drivers as expected`);
let helpers = 0;
for (const file of outputFiles) {
  let text = file.text;
  if (file.path.endsWith('.js') && NAME_HELPER.test(text)) {
    helpers += 1;
    text = text.replace(NAME_HELPER, NAME_HELPER_WHERE_DIFFERENT);
  }
  // ASCII throughout, so that main.js reads the script as a one-byte string without decoding UTF-8 (5 MB,
  // some 25 ms). esbuild escapes what it writes itself (charset ascii) but copies comments as they are;
  // a \uXXXX escape reads as its character anywhere else, and only comments are left to carry one.
  if (file.path.endsWith('.js'))
    text = text.replace(/[^\0-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, text);
}
writeFileSync(resolve(outdir, 'package.json'), '{ "type": "commonjs" }\n');
if (outputFiles.filter((f) => f.path.endsWith('.js')).length !== 1)
  throw new Error(`bundle: expected one script, found ${outputFiles.map((f) => f.path).join(', ')}`);
if (helpers !== 1)
  throw new Error(`bundle: expected esbuild's __name helper once in the output, found it ${helpers} times`);
