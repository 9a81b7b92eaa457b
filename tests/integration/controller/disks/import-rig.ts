/**
 * What the import tests stand on: a real registry as DVCR, a file server for HTTP sources, a
 * StorageClass of the test's scope, the storage simulator (SIMULATED nodes and storage, in-process,
 * one namespace) and the controller with its storage reconcilers. Started in beforeAll, stopped in
 * afterAll, in reverse order.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeClient } from '../../../../shared/kube/index.js';
import { serveDir, type FileServer } from '../../../../shared/testing/disk-images.js';
import { startController, type RunningController, type StartOptions } from '../../../../daemons/controller/controller.js';
import type { StorageClass, StorageClients } from '../../../../daemons/controller/reconcilers/provisioning/kube.js';
import { StorageSimulator } from '../../../../platform/simulators/storage-simulator/simulator.js';
import { startLocalRegistry, type LocalRegistry } from '../../../env/local-registry.js';
import { SCOPE_LABEL, controllerConfig, type Scope } from '../fixtures.js';

export interface ImportRig {
  readonly registry: LocalRegistry;
  readonly files: FileServer;
  /** Where the file server's files are (fill before the tests run). */
  readonly filesDir: string;
  readonly storage: StorageSimulator;
  readonly storageClass: string;
  readonly controller: RunningController;
  stop(): Promise<void>;
}

export interface ImportRigOptions {
  kube: KubeClient;
  sc: StorageClients;
  scope: Scope;
  /** The class's name prefix, and what it states besides the name (provisioner, binding, parameters). */
  classPrefix: string;
  classSpec?: Partial<StorageClass> & Record<string, unknown>;
  /** Called with the files directory before the server starts. */
  makeFiles(dir: string): void;
  /** Controller config keys besides the storage ones (a function: from the started registry). */
  env?: Record<string, string> | ((registry: LocalRegistry) => Record<string, string>);
  /** Controller start options (ports such as a hot-plug fake). */
  start?: Partial<Pick<StartOptions, 'hotplug'>>;
}

export async function startImportRig(o: ImportRigOptions): Promise<ImportRig> {
  const ns = o.scope.namespace;
  const registry = await startLocalRegistry();
  const filesDir = mkdtempSync(join(tmpdir(), `${o.classPrefix}-files-`));
  o.makeFiles(filesDir);
  const files = await serveDir(filesDir);
  const storageClass = `${o.classPrefix}-${o.scope.id}`;
  await o.sc.storageClasses.create({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: storageClass, labels: { [SCOPE_LABEL]: o.scope.id } },
    provisioner: 'kubernetes.io/no-provisioner',
    volumeBindingMode: 'Immediate',
    ...o.classSpec,
  });
  const volumesDir = mkdtempSync(join(tmpdir(), `${o.classPrefix}-volumes-`));
  const storage = new StorageSimulator(o.kube, { volumesDir, storageClasses: [storageClass], namespace: ns, requireNode: false });
  await storage.start();
  const abort = new AbortController();
  const config = controllerConfig(o.scope, {
    STORAGE_RECONCILERS: 'true',
    POD_NAMESPACE: ns,
    DVCR_ADDRESS: registry.host,
    DVCR_PLAIN_HTTP: 'true',
    DEPENDENCY_RECHECK_INTERVAL: '1s',
    ...(typeof o.env === 'function' ? o.env(registry) : o.env),
  });
  const controller = await startController({ kube: o.kube, config, signal: abort.signal, ...o.start });
  return {
    registry,
    files,
    filesDir,
    storage,
    storageClass,
    controller,
    async stop(): Promise<void> {
      abort.abort();
      await controller.stop();
      await storage.stop();
      rmSync(volumesDir, { recursive: true, force: true });
      await files.close();
      await registry.stop();
      rmSync(filesDir, { recursive: true, force: true });
      await o.sc.storageClasses.delete({ name: storageClass }).catch(() => undefined);
    },
  };
}
