import { VMCondition } from '../../../../../shared/api/conditions/index.js';
import { onlyControllerFlagsMissing } from '../../../../../shared/api/internal/kubevirt-required.js';
import type { Deps } from '../../../deps.js';
import type { Handler } from '../../../engine/reconciler.js';
import { condition, dropCondition, type VMState } from '../state.js';

const KubeVirt = VMCondition.KubeVirtReady;

/**
 * While KubeVirt's configuration lacks a part every internal VM relies on (the bpfbridge binding of
 * its interface, the machine types, the feature gates), the VM says so (KubeVirtReady=False,
 * KubeVirtConfigurationIncomplete): KubeVirt takes the internal VM but will not run it. Without the
 * controller flag that turns KubeVirt's own evacuation off the VM runs, and the message says what
 * would happen instead. The condition goes once the configuration is whole again (the install
 * reconcile puts it back).
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
      const effect = onlyControllerFlagsMissing(missing)
        ? "KubeVirt's own evacuation would migrate this VM beside the module's until it is restored"
        : 'KubeVirt will not run this VM until it is restored';
      const message = `KubeVirt's configuration (${deps.kubevirt.where}) lacks ${missing.join('; ')}: ${effect}`;
      condition(s, ctx, { type: KubeVirt.type, status: 'False', reason: KubeVirt.reason.KubeVirtConfigurationIncomplete, message });
    },
  };
}
