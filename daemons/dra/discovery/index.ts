export * from './sysfs.js';
export { fixtureDeviceDir, removeFixtureDevice } from './fixture-sysfs.js';
