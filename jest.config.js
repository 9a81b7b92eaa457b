// Native ESM under jest (see docs/adr/0001-esm-modules.md): sources are TypeScript transformed by
// @swc/jest into ES modules; `.js` import specifiers are mapped back to the `.ts` files.
/** @type {import('jest').Config} */
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }];

export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/{shared,functions,daemons,platform,tests}/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  globalSetup: '<rootDir>/tests/env/jest-global-setup.js',
  globalTeardown: '<rootDir>/tests/env/jest-global-teardown.js',
  testTimeout: 60_000,
  maxWorkers: 2,
};
