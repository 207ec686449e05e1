// Jest runs in ESM mode (NODE_OPTIONS=--experimental-vm-modules): NestJS 12 is ESM-only. ts-jest compiles
// each file on its own (tsconfig.jest.json: isolatedModules); `npm test` type-checks the whole project
// with tsc first. A type-checking ts-jest kept a language service per worker, which left workers that
// would not exit and cost minutes of compile time.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts', '.tsx'],
  moduleFileExtensions: ['ts', 'tsx', 'js', 'json'],
  rootDir: '.',
  roots: ['<rootDir>/packages', '<rootDir>/test'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testMatch: ['**/*.spec.ts', '**/*.spec.tsx', '**/*.e2e-spec.ts'],
  // The workspace packages resolve to their sources (as tsconfig.json's paths do), so a test needs no build of them.
  moduleNameMapper: {
    '^@cleveragents/contract$': '<rootDir>/packages/contract/src/index.ts',
    '^@cleveragents/client$': '<rootDir>/packages/client/src/index.ts',
    '^@cleveragents/client/node$': '<rootDir>/packages/client/src/node.ts',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.tsx?$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.jest.json', diagnostics: { warnOnly: false, ignoreCodes: [151002] } }],
  },
  // Every run also writes each test file's wall time, slowest first, to test-results/timings.md and .json.
  reporters: ['default', '<rootDir>/test/support/timing-reporter.mjs'],
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
  // How long a worker may take to exit after its last test file before Jest kills it and warns that "a worker
  // process has failed to exit gracefully". Measured (2026-12-02, jest-worker instrumented on both sides): a
  // worker's event loop is empty 8–34 ms after Jest's end message (no handle is left open), and the rest is the
  // process freeing its memory — 0.6–1.2 GB, most of it the WebAssembly memories of the embedded databases the
  // suites opened and closed, which V8 has not collected yet (a full GC at that point drops `external` from
  // 213–406 MB to 5–7 MB and itself takes 3–4 s). From the end message to the process being gone took 2.1–3.5 s
  // with the machine at load 10–16, more than Jest's default of 0.5 s. A worker kept alive by a leaked handle
  // is still killed, and reported, after this timeout; .ci/run fails when that happens.
  workerGracefulExitTimeout: 10000,
};
