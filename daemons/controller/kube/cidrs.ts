import { NotFoundError } from '../../../shared/errors/index.js';
import { Backoff, Informer, sleep } from '../../../shared/kube/index.js';
import type { Logger } from '../../../shared/log/index.js';
import type { CidrSource } from '../deps.js';
import type { Clients, ModuleConfig } from './resources.js';

/** The ModuleConfig that holds the module's settings. */
export const MODULE_CONFIG_NAME = 'virtualization';

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

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Watch the ModuleConfig if the apiserver serves the resource; otherwise stay on the environment. */
  async start(clients: Pick<Clients, 'moduleConfigs'>, signal: AbortSignal, log: Logger): Promise<void> {
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
async function served(clients: Pick<Clients, 'moduleConfigs'>, fieldSelector: string, signal: AbortSignal, log: Logger): Promise<boolean> {
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
