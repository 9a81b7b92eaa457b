export * from './sysfs.js';
export { fixtureDeviceDir, removeFixtureDevice } from '../../../shared/testing/fixture-sysfs.js';
