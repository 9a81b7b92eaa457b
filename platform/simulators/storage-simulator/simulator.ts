/**
 * The storage simulator: what a cluster's nodes and storage backend do for the import pipeline,
 * SIMULATED for a machine without them (the local platform of `npm start`, the controller's storage
 * tests): the kubelet's part for the importer/uploader pods (pods.ts) and a static provisioner of
 * directory-backed volumes (provisioner.ts).
 */
import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../../../shared/kube/index.js';
import { rootLogger, type Logger } from '../../../shared/log/index.js';
import { PodAddresses } from './addresses.js';
import { HELPER_POD_SELECTOR } from './config.js';
import { storageSimulatorClients } from './kube.js';
import { PodRunner, type PodRun } from './pods.js';
import { StaticProvisioner } from './provisioner.js';

export interface StorageSimulatorOptions {
  /** Directory under which the volumes are made. */
  volumesDir: string;
  /** Claims of these storage classes get a volume. */
  storageClasses: readonly string[];
  namespace?: string | undefined;
  /** Label selector of the pods to run (default: the controller's helper pods). */
  podSelector?: string | undefined;
  /** Run a pod only once it is bound to a node (default true; false where no scheduler runs). */
  requireNode?: boolean | undefined;
  /** `127.<n>`: pod IPs from 127.<n>.0.0/16 (random when omitted). */
  podIpPrefix?: string | undefined;
  /** The importer program (default: its sources with tsx). */
  importerProgram?: string | undefined;
  logger?: Logger | undefined;
}

export class StorageSimulator {
  private readonly pods: PodRunner;
  private readonly provisioner: StaticProvisioner;
  private readonly log: Logger;

  constructor(kube: KubeClient, o: StorageSimulatorOptions) {
    this.log = o.logger ?? rootLogger.child({ component: 'storage-simulator' });
    const clients = storageSimulatorClients(kube);
    this.provisioner = new StaticProvisioner({
      clients,
      log: this.log.child({ part: 'provisioner' }),
      storageClasses: o.storageClasses,
      root: o.volumesDir,
      namespace: o.namespace,
      instance: randomBytes(4).toString('hex'),
    });
    this.pods = new PodRunner({
      clients,
      log: this.log.child({ part: 'kubelet' }),
      selector: o.podSelector ?? HELPER_POD_SELECTOR,
      namespace: o.namespace,
      requireNode: o.requireNode ?? true,
      addresses: new PodAddresses(o.podIpPrefix),
      program: o.importerProgram,
    });
  }

  /** Finished pod runs (exit code and result), oldest first. */
  get runs(): readonly PodRun[] {
    return this.pods.runs;
  }

  /** Resolves once both parts have listed what they watch. */
  async start(): Promise<void> {
    await Promise.all([this.provisioner.start(), this.pods.start()]);
    this.log.info({}, 'storage simulator started');
  }

  /** Stops the running programs (SIGTERM) and waits for them; the volumes stay. */
  async stop(): Promise<void> {
    await this.pods.stop();
    await this.provisioner.stop();
  }

  /** The directory backing a claim. */
  dirOf(namespace: string, claim: string): string {
    return this.provisioner.dirOf(namespace, claim);
  }

  /** `podIP:port` of an uploader pod's endpoint, once it listens. */
  uploadAddress(pod: string): string | undefined {
    return this.pods.uploadAddress(pod);
  }
}
