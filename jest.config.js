// Native ESM under jest (see docs/adr/0001-esm-modules.md): sources are TypeScript transformed by
// @swc/jest into ES modules; `.js` import specifiers are mapped back to the `.ts` files.
//
// Two tiers (projects): `unit` are the tests next to the sources (`shared/`, `functions/`, `daemons/`, `eslint-rules/`,
// `platform/`); they never start a control plane, so `npm run jest -- --selectProjects unit` runs on a
// fresh clone in seconds without Go. `integration` are the tests under `tests/`; their globalSetup
// builds (once, cached) and starts a real etcd + kube-apiserver + kube-controller-manager. A test that
// needs the control plane therefore lives under `tests/`.
/** @type {import('jest').Config} */
const swc = ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'es6' } }];

const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};

export default {
  maxWorkers: 2,
  // testTimeout is a global option: jest ignores it inside a project. A deadline only bounds how long a
  // failure takes to show; above the controller tests' own waits (EVENTUALLY_MS, 120 s), so theirs
  // name the condition that was not met.
  testTimeout: 180_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{shared,functions,daemons,platform,eslint-rules}/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/tests/**/*.test.ts'],
      globalSetup: '<rootDir>/tests/env/jest-global-setup.js',
      globalTeardown: '<rootDir>/tests/env/jest-global-teardown.js',
    },
  ],
};
