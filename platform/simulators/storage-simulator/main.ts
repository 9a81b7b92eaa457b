/**
 * storage-simulator, the composition root: plays the nodes' and the storage backend's part for the
 * import pipeline on a machine without them (the local platform of `npm start`). Never part of the
 * install. Exit codes: 0 after SIGTERM/SIGINT, 2 for invalid config, 1 for anything else.
 */
import { runDaemonIfMain } from '../../../shared/daemon/main.js';
import { untilAborted } from '../../../shared/kube/index.js';
import { loadConfig } from './config.js';
import { StorageSimulator } from './simulator.js';

runDaemonIfMain(import.meta.url, 'storage simulator', loadConfig, async ({ config, kube, signal }) => {
  const simulator = new StorageSimulator(kube, {
    volumesDir: config.VOLUMES_DIR,
    storageClasses: config.STORAGE_CLASSES,
    namespace: config.WATCH_NAMESPACE,
    podSelector: config.POD_SELECTOR,
    requireNode: config.REQUIRE_NODE,
    podIpPrefix: config.POD_IP_PREFIX,
    importerProgram: config.IMPORTER_PROGRAM,
  });
  try {
    await simulator.start();
    await untilAborted(signal);
  } finally {
    await simulator.stop();
  }
  return 0;
});
