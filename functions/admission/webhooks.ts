/**
 * Every webhook the function serves: the original's paths (facts 5.1), each bound to a validator or
 * to the VirtualMachine defaulter. knative/webhooks/ registers the same paths.
 */
import { Finalizer } from '../../shared/api/finalizers.js';
import { GROUP } from '../../shared/api/resources/common.js';
import type { Decision } from './decision.js';
import { validate } from './admit.js';
import { defaultVirtualMachine } from './defaulting/virtualmachine.js';
import type { RuleContext } from './lookups.js';
import { mutate, type Defaulter } from './mutate.js';
import type { JsonPatchOp } from './patch.js';
import type { AdmissionRequest } from './review.js';
import type { CheckFailure } from './rules/check.js';
import { moduleConfigValidator } from './rules/moduleconfig/index.js';
import type { Validator } from './rules/validator.js';
import { virtualDiskValidator } from './rules/virtualdisk.js';
import { clusterVirtualImageValidator, virtualImageValidator } from './rules/virtualimage.js';
import { virtualMachineValidator } from './rules/virtualmachine/index.js';
import { vmbdaValidator } from './rules/vmbda.js';
import { vmClassV1alpha3Validator, vmClassValidator } from './rules/vmclass.js';
import { vmipLeaseValidator, vmipValidator } from './rules/vmip.js';
import { vmopValidator } from './rules/vmop.js';
import { vmPoolScaleValidator, vmPoolValidator } from './rules/vmpool.js';

export interface AdmissionAnswer {
  readonly decision: Decision;
  readonly patch?: readonly JsonPatchOp[];
  readonly failures: readonly CheckFailure[];
}

export interface Webhook {
  /** The URL path the apiserver posts AdmissionReviews to. */
  readonly path: string;
  /** Short name for logs and metrics. */
  readonly name: string;
  readonly admit: (request: AdmissionRequest, ctx: RuleContext) => Promise<AdmissionAnswer>;
}

const v1alpha2 = (resource: string): string => `/validate-virtualization-deckhouse-io-v1alpha2-${resource}`;

function validating<T>(name: string, path: string, validator: Validator<T>): Webhook {
  return { name, path, admit: (request, ctx) => validate(validator, request, ctx) };
}

export const vmDefaulter: Defaulter = { group: GROUP, kind: 'VirtualMachine', apply: defaultVirtualMachine, createFinalizer: Finalizer.vmCleanup };

export const WEBHOOKS: readonly Webhook[] = [
  validating('vm', v1alpha2('virtualmachine'), virtualMachineValidator),
  validating('vd', v1alpha2('virtualdisk'), virtualDiskValidator),
  validating('vi', v1alpha2('virtualimage'), virtualImageValidator),
  validating('cvi', v1alpha2('clustervirtualimage'), clusterVirtualImageValidator),
  validating('vmbda', v1alpha2('virtualmachineblockdeviceattachment'), vmbdaValidator),
  validating('vmip', v1alpha2('virtualmachineipaddress'), vmipValidator),
  validating('vmipl', v1alpha2('virtualmachineipaddresslease'), vmipLeaseValidator),
  validating('vmop', v1alpha2('virtualmachineoperation'), vmopValidator),
  validating('vmclass-v1alpha2', v1alpha2('virtualmachineclass'), vmClassValidator),
  validating('vmclass-v1alpha3', '/validate-virtualization-deckhouse-io-v1alpha3-virtualmachineclass', vmClassV1alpha3Validator),
  validating('vmpool', v1alpha2('virtualmachinepool'), vmPoolValidator),
  validating('vmpool-scale', v1alpha2('virtualmachinepool-scale'), vmPoolScaleValidator),
  validating('moduleconfig', '/validate-deckhouse-io-v1alpha1-moduleconfig', moduleConfigValidator),
  {
    name: 'vm-defaulter',
    path: '/mutate-virtualization-deckhouse-io-v1alpha2-virtualmachine',
    admit: (request, ctx) => mutate(vmDefaulter, request, ctx),
  },
];
