/**
 * The module's VM subnets as its units read them: the ModuleConfig `virtualization`
 * (spec.settings.virtualMachineCIDRs) when the apiserver serves ModuleConfigs and it sets them, else
 * the unit's environment. A contract of the controller (IPAM) and route-forge, so it lives here.
 */
import { z } from 'zod';
import { ObjectMetaSchema } from '../api/k8s/core.js';
import { NotFoundError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { Backoff, sleep } from './backoff.js';
import type { ResourceDescriptor } from './descriptor.js';
import { Informer } from './informer.js';
import type { ResourceClient } from './resource-client.js';

/** The ModuleConfig that holds the module's settings. */
export const MODULE_CONFIG_NAME = 'virtualization';

/** The ModuleConfig, as far as the VM subnets go (spec.settings.virtualMachineCIDRs). */
export const ModuleConfigSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: ObjectMetaSchema,
  spec: z.looseObject({ settings: z.looseObject({ virtualMachineCIDRs: z.array(z.string()).optional() }).optional() }).optional(),
});
export type ModuleConfig = z.infer<typeof ModuleConfigSchema>;

export const moduleConfigDescriptor: ResourceDescriptor = {
  group: 'deckhouse.io',
  version: 'v1alpha1',
  plural: 'moduleconfigs',
  kind: 'ModuleConfig',
  namespaced: false,
};

/** The subnets VM addresses come from (ModuleConfig or environment); empty means none are set. */
export interface CidrSource {
  current(): readonly string[];
}

/** The one client the view reads through. */
export interface ModuleConfigClients {
  moduleConfigs: ResourceClient<ModuleConfig>;
}

/**
 * virtualMachineCIDRs from ModuleConfig `virtualization` (spec.settings) when that resource is served
 * and sets them, else from the environment. Change listeners run when the ModuleConfig changes.
 */
export class ModuleConfigCidrs implements CidrSource {
  private informer: Informer<ModuleConfig> | undefined;
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly fromEnv: readonly string[]) {}

  current(): readonly string[] {
    const fromModule = this.informer?.store.get(MODULE_CONFIG_NAME)?.spec?.settings?.virtualMachineCIDRs;
    return fromModule !== undefined && fromModule.length > 0 ? fromModule : this.fromEnv;
  }

  /** The ModuleConfig's whole spec.settings as stored (undefined when not served or absent); other settings' readers parse their part. */
  settings(): unknown {
    return this.informer?.store.get(MODULE_CONFIG_NAME)?.spec?.settings;
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Watch the ModuleConfig if the apiserver serves the resource; otherwise stay on the environment. */
  async start(clients: ModuleConfigClients, signal: AbortSignal, log: Logger): Promise<void> {
    const fieldSelector = `metadata.name=${MODULE_CONFIG_NAME}`;
    if (!(await served(clients, fieldSelector, signal, log))) {
      log.info({ cidrs: this.fromEnv }, 'ModuleConfig is not served here; virtualMachineCIDRs come from the environment');
      return;
    }
    const informer = new Informer<ModuleConfig>({ client: clients.moduleConfigs, fieldSelector, signal, logger: log });
    const changed = (): void => this.listeners.forEach((l) => l());
    informer.on('add', changed);
    informer.on('update', changed);
    informer.on('delete', changed);
    this.informer = informer.start();
    await informer.synced;
  }

  async stop(): Promise<void> {
    await this.informer?.stop();
  }
}

/** Whether the apiserver serves ModuleConfigs (404: no such resource); transient failures are retried. */
async function served(clients: ModuleConfigClients, fieldSelector: string, signal: AbortSignal, log: Logger): Promise<boolean> {
  const backoff = new Backoff({ initialMs: 200, maxMs: 5_000, jitter: 0.2 });
  for (;;) {
    try {
      await clients.moduleConfigs.listRaw({ fieldSelector, signal });
      return true;
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return false;
      if (signal.aborted) throw err;
      const delayMs = backoff.next();
      log.warn({ err, delayMs }, 'could not read the ModuleConfig, retrying');
      await sleep(delayMs, signal);
    }
  }
}
