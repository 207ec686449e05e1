// Import rules of the packages, checked by test/architecture/dependency-rules.spec.ts (`npm run lint:deps` runs it
// alone; `npx depcruise packages --config .dependency-cruiser.cjs` lists every violation).
// Package and folder names are the design (docs/architecture.md): each rule says which way knowledge may flow.
// Between packages: contract <- client <- cli, client <- console, contract <- server; a package reaches another
// only by its name.

const SERVER = '^packages/server/src/';
/** Files that wire the whole server together: they may import any folder. */
const COMPOSITION = '^packages/server/src/(app\\.module|app\\.factory|main|stdio|entities|cli-data-source)\\.ts$';
/** The A2A transport: HTTP, stdio, the JSON-RPC dispatcher and the SDK's request handler. */
const TRANSPORT = '^packages/server/src/a2a/';
/** What the client and the CLI never load: the server's stack. */
const SERVER_PACKAGES =
  'node_modules/(@nestjs/|typeorm/|pg/|@electric-sql/|express/|@langchain/|passport|@a2a-js/sdk/dist/(server|compat/v0_3/server)/)';
/** The client's Node-only files: local mode (a server subprocess) and the Node entry that offers it. */
const CLIENT_NODE_FILES = '^packages/client/src/(node|lib/stdio)\\.ts$';

/**
 * The floors of the server, lowest first (docs/architecture.md, "Floors"): a folder imports only folders on
 * floors below its own, never one beside or above it. `(root)` is the composition root. The contract is a
 * package of its own, below them all (the package rules).
 */
const FLOORS = [
  ['common'],
  ['telemetry'],
  ['metrics'],
  ['config'],
  ['database'],
  ['rpc', 'execution', 'push'],
  ['audit'],
  ['auth'],
  ['namespace', 'diagnostics'],
  ['registry', 'health', 'console'],
  ['session', 'sync'],
  ['plan-store', 'approval-store'],
  ['turn'],
  ['replica'],
  ['plan', 'approval', 'a2a'],
  ['(root)'],
  ['cli'],
];

/** The files of a floor's folder. */
function folderPath(folder) {
  if (folder === '(root)') return `${SERVER}[^/]+\\.ts$`;
  return `${SERVER}${folder}/`;
}

/** One rule per folder: none of the folders on its floor or above it. */
const floorRules = FLOORS.flatMap((floor, level) =>
  floor.map((folder) => ({
    folder,
    level,
    above: FLOORS.slice(level)
      .flat()
      .filter((other) => other !== folder),
  })),
)
  .filter(({ above }) => above.length > 0)
  .map(({ folder, level, above }) => ({
    name: 'floors',
    comment:
      `src/${folder} is on floor ${level}: it imports only folders on lower floors. A folder that needs one ` +
      'above it declares a port (an abstract class) or an observable that the higher folder provides.',
    severity: 'error',
    from: { path: folderPath(folder) },
    to: { path: above.map(folderPath) },
  }));

module.exports = {
  forbidden: [
    {
      name: 'resolvable',
      comment: 'An import the cruiser cannot resolve escapes every other rule, so none may exist.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    ...floorRules,
    {
      name: 'no-file-cycles',
      comment: 'Two files that import each other (directly or through others) cannot be understood or tested apart.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycles',
      comment:
        'A folder that imports a folder importing it back is one design split across two places; break the cycle ' +
        'with a port owned by the lower folder or with an event, never with a late-set callback.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    {
      name: 'domain-not-transport',
      comment:
        'Domain folders never import the transport: a handler declares itself with src/rpc and is reached over ' +
        'HTTP and stdio alike.',
      severity: 'error',
      from: { path: SERVER, pathNot: [TRANSPORT, COMPOSITION, '^packages/server/src/cli/'] },
      to: { path: TRANSPORT },
    },
    {
      name: 'http-stack-at-the-boundary',
      comment:
        'Only the transport, HTTP authentication, the probes and the console files speak HTTP: a domain folder that imports ' +
        "Express, body-parser or the SDK's HTTP/gRPC handlers could serve requests past the A2A boundary.",
      severity: 'error',
      from: {
        path: SERVER,
        pathNot: [
          TRANSPORT,
          COMPOSITION,
          '^packages/server/src/auth/http/',
          '^packages/server/src/(health|metrics|console)/',
        ],
      },
      to: {
        path:
          'node_modules/(express/|body-parser/|@nestjs/platform-express/|' +
          '@a2a-js/sdk/dist/(server|compat/v0_3/server)/(express|grpc)/)',
      },
    },
    {
      name: 'contract-stands-alone',
      comment:
        'packages/contract is the wire contract every other package compiles against: it imports nothing but ' +
        'its schema library (zod).',
      severity: 'error',
      from: { path: '^packages/contract/' },
      to: { pathNot: '^packages/contract/|(^|/)node_modules/zod/' },
    },
    {
      name: 'packages-by-name',
      comment:
        "A package reaches another by its name (@cleveragents/contract), which resolves to that package's entry: " +
        "a relative path into another package's files would ship a file the other package does not export.",
      severity: 'error',
      from: { path: '^packages/([^/]+)/' },
      to: { path: '^packages/', pathNot: '^packages/$1/', dependencyTypesNot: ['aliased'] },
    },
    {
      name: 'client-off-server',
      comment: 'The client library ships without the server: it imports only itself and the contract.',
      severity: 'error',
      from: { path: '^packages/client/' },
      to: { path: '^packages/', pathNot: '^packages/(client|contract)/' },
    },
    {
      name: 'cli-off-server',
      comment: 'The CLI installs without the server: it imports itself, the client library and the contract.',
      severity: 'error',
      from: { path: '^packages/cli/' },
      to: { path: '^packages/', pathNot: '^packages/(cli|client|contract)/' },
    },
    {
      name: 'server-not-client',
      comment: 'The server speaks the contract, never the client library or the CLI.',
      severity: 'error',
      from: { path: '^packages/server/' },
      to: { path: '^packages/(client|cli)/' },
    },
    {
      name: 'client-without-server-packages',
      comment: "The client and the CLI do not load the server's stack (Nest, TypeORM, drivers, the SDK's server side).",
      severity: 'error',
      from: { path: '^packages/(client|cli)/' },
      to: { path: SERVER_PACKAGES },
    },
    {
      name: 'client-browser-without-node',
      comment:
        "The client library's browser entry runs where Node does not: only its Node-only files (local mode, the " +
        'Node entry) import a Node built-in.',
      severity: 'error',
      from: { path: '^packages/client/src/', pathNot: CLIENT_NODE_FILES },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'client-browser-off-node-files',
      comment: 'No other file of the client library imports its Node-only files, but for their types.',
      severity: 'error',
      from: { path: '^packages/client/src/', pathNot: CLIENT_NODE_FILES },
      to: { path: CLIENT_NODE_FILES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'console-off-server',
      comment:
        'The web console speaks to the server through the client library: it imports itself, the client and the contract.',
      severity: 'error',
      from: { path: '^packages/console/' },
      to: { path: '^packages/', pathNot: '^packages/(console|client|contract)/' },
    },
    {
      name: 'console-in-the-browser',
      comment:
        "The web console runs in a browser: no Node built-in, no server stack, not the client library's Node entry.",
      severity: 'error',
      from: { path: '^packages/console/src/' },
      to: { path: [SERVER_PACKAGES, CLIENT_NODE_FILES, '@cleveragents/client/node'] },
    },
    {
      name: 'console-without-node-builtins',
      comment: 'The web console runs in a browser: its sources import no Node built-in (its build script may).',
      severity: 'error',
      from: { path: '^packages/console/src/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'packages-not-tests',
      comment: 'A package ships alone: none imports the tests, the benchmarks or the root scripts (a spec file may).',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.(spec|e2e-spec)\\.tsx?$', '^packages/[^/]+/dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.tsx', '.js', '.mjs', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
