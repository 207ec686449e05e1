// Jest runs in ESM mode (NODE_OPTIONS=--experimental-vm-modules): NestJS 12 is ESM-only. ts-jest compiles
// each file on its own (tsconfig.jest.json: isolatedModules); `npm test` type-checks the whole project
// with tsc first. A type-checking ts-jest kept a language service per worker, which left workers that
// would not exit and cost minutes of compile time.
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.jest.json', diagnostics: { warnOnly: false, ignoreCodes: [151002] } }],
  },
  globalSetup: '<rootDir>/test/global-setup.ts',
  globalTeardown: '<rootDir>/test/global-teardown.ts',
  testTimeout: 60000,
  maxWorkers: 2,
};
