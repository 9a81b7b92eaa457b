import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import type { Deps } from '../../../deps.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const KubeVirt = VMCondition.KubeVirtReady;

/**
 * While KubeVirt's configuration lacks a part every internal VM relies on (the bpfbridge binding of
 * its interface, the machine types, the feature gates), the VM says so (KubeVirtReady=False,
 * KubeVirtConfigurationIncomplete): KubeVirt takes the internal VM but will not run it. The
 * condition goes once the configuration is whole again (the install reconcile puts it back).
 */
export function kubeVirtConfigHandler(deps: Deps): Handler<VMState> {
  return {
    name: 'kubevirtConfig',
    handle(s, ctx): void {
      const missing = deps.kubevirt.missing();
      const ours = s.status.conditions?.find((c) => c.type === KubeVirt.type)?.reason === KubeVirt.reason.KubeVirtConfigurationIncomplete;
      if (missing.length === 0 || s.obj.metadata.deletionTimestamp !== undefined) {
        if (ours) dropCondition(s, KubeVirt.type);
        return;
      }
      const message = `KubeVirt's configuration (${deps.kubevirt.where}) lacks ${missing.join('; ')}: KubeVirt will not run this VM until it is restored`;
      condition(s, ctx, { type: KubeVirt.type, status: 'False', reason: KubeVirt.reason.KubeVirtConfigurationIncomplete, message });
    },
  };
}
