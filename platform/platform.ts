/**
 * The platform: what `npm start` brings up, in order, and takes down in the reverse order.
 *
 * Local (default): control plane → kwok and nodes ‖ the install's CRDs, then the rest of the install →
 * the admission webhooks routed to the local function → ServiceAccount tokens → our units (controller,
 * admission, audit) and the KubeVirt simulator → the ModuleConfig, through our webhook.
 * With --kubeconfig: the install must be there already; only our units run, out-of-cluster.
 */
import { Parts, type PlatformOptions, type RunningPlatform } from './parts.js';
import { startAgainst } from './start-against.js';
import { startLocal } from './start-local.js';
import type { Supervisor } from './supervisor.js';

export type { PlatformOptions, RunningPlatform } from './parts.js';

export class Platform {
  private readonly parts: Parts;

  constructor(o: PlatformOptions) {
    this.parts = new Parts(o);
  }

  get supervisor(): Supervisor {
    return this.parts.supervisor;
  }

  async start(): Promise<RunningPlatform> {
    const { kubeconfig } = this.parts.o.flags;
    return kubeconfig === undefined ? startLocal(this.parts) : startAgainst(this.parts, kubeconfig);
  }

  /** Stop every unit and process, last started first. */
  async stop(onStep?: (name: string) => void): Promise<void> {
    await this.parts.stop(onStep);
  }
}
