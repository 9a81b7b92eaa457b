/**
 * The admission function with in-memory lookups (the typical VM's world), for the benchmark's
 * "decision and transport only" row: `node dist/.bench/functions/admission/testing/bench-entry.js`.
 */
import { runIfMain } from '../../../shared/runtime/index.js';
import { createAdmission } from '../index.js';
import { FakeLookups } from './fake-lookups.js';
import { typicalWorld } from './typical.js';

const world = typicalWorld();

export const benchAdmission = createAdmission(() => ({ lookups: new FakeLookups(world), close: () => undefined }));

runIfMain(import.meta.url, benchAdmission);
