// Import rules of src/, checked by test/architecture/dependency-rules.spec.ts (`npm run lint:deps` runs it alone;
// `npx depcruise src --config .dependency-cruiser.cjs` lists every violation).
// Folder names are the design (docs/architecture.md): each rule says which way knowledge may flow.

/** Files that wire the whole server together: they may import any folder. */
const COMPOSITION = '^src/(app\\.module|app\\.factory|main|stdio|entities|cli-data-source)\\.ts$';
/** The A2A transport: HTTP, stdio, the JSON-RPC dispatcher and the SDK's request handler. */
const TRANSPORT = '^src/a2a/';

module.exports = {
  forbidden: [
    {
      name: 'resolvable',
      comment: 'An import the cruiser cannot resolve escapes every other rule, so none may exist.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
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
      from: { path: '^src/', pathNot: [TRANSPORT, COMPOSITION, '^src/cli/'] },
      to: { path: TRANSPORT },
    },
    {
      name: 'http-stack-at-the-boundary',
      comment:
        'Only the transport, HTTP authentication and the probes speak HTTP: a domain folder that imports ' +
        "Express, body-parser or the SDK's HTTP/gRPC handlers could serve requests past the A2A boundary.",
      severity: 'error',
      from: { path: '^src/', pathNot: [TRANSPORT, COMPOSITION, '^src/auth/http/', '^src/(health|metrics)/'] },
      to: {
        path:
          'node_modules/(express/|body-parser/|@nestjs/platform-express/|' +
          '@a2a-js/sdk/dist/(server|compat/v0_3/server)/(express|grpc)/)',
      },
    },
    {
      name: 'contract-stands-alone',
      comment: 'src/contract/ is the wire contract both sides compile against: it imports nothing.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { pathNot: '^src/contract/' },
    },
    {
      name: 'client-off-server',
      comment: 'The client ships without the server: it imports only itself and the contract of src/.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|contract)/' },
    },
    {
      name: 'client-without-server-packages',
      comment: "The client does not load the server's stack (Nest, TypeORM, drivers, the SDK's server side).",
      severity: 'error',
      from: { path: '^src/client/' },
      to: {
        path: 'node_modules/(@nestjs/|typeorm/|pg/|@electric-sql/|express/|@langchain/|passport|@a2a-js/sdk/dist/(server|compat/v0_3/server)/)',
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.(spec|e2e-spec)\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.mjs', '.json'],
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};
