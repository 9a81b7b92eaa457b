/**
 * The parts of KubeVirt's configuration (`InternalVirtualizationKubeVirt` named `config`,
 * spec.configuration) that the internal objects our controller builds rely on: the install ships
 * them (knative/kubevirt/config/kubevirt-config.yaml, checked against this list), the controller
 * reports VMs as affected while one is missing and puts missing ones back. Anything else in the
 * configuration is the administrator's.
 */
import type { InternalKubeVirt } from './resources.js';

/** The name of KubeVirt's configuration object. */
export const KUBEVIRT_CONFIG_NAME = 'config';

/** Every interface of our internal VMs says `binding: {name: bpfbridge}`; virt-controller renders no launcher pod without its entry. */
export const REQUIRED_BINDING = 'bpfbridge';
export const REQUIRED_BINDING_SPEC: Readonly<Record<string, unknown>> = Object.freeze({ domainAttachmentType: 'tap', migration: {} });
/** The machine types our controller writes (`q35`, `pc` for Legacy guests); virt-api refuses others. */
export const REQUIRED_EMULATED_MACHINES: readonly string[] = ['q35*', 'pc-q35*', 'pc', 'pc-i440fx*'];
/** What block-device attachment, snapshots, disk resize and CPU/memory hot-plug need. */
export const REQUIRED_FEATURE_GATES: readonly string[] = [
  'HotplugVolumes',
  'Snapshot',
  'ExpandDisks',
  'VMLiveUpdateFeatures',
  'CPUManager',
  'VolumeSnapshotDataSource',
];

/**
 * virt-controller's flags (`customizeComponents.flags.controller`): no worker for KubeVirt's own
 * evacuation controller, since our controller's Evict operation is the one migration of a VM marked
 * for evacuation (the original patches that controller out). Without it both would migrate the VM.
 */
export const REQUIRED_CONTROLLER_FLAGS: Readonly<Record<string, string>> = Object.freeze({ 'evacuation-controller-threads': '0' });
/** The phrase for a missing or changed controller flag; a configuration lacking only these still runs VMs. */
export const controllerFlagPart = (name: string, value: string): string => `virt-controller flag ${name}: '${value}' (KubeVirt's own evacuation off)`;

/** Whether the parts `missing` (of missingKubeVirtParts) are controller flags alone: KubeVirt still runs the VMs. */
export const onlyControllerFlagsMissing = (missing: readonly string[]): boolean =>
  missing.every((part) => Object.entries(REQUIRED_CONTROLLER_FLAGS).some(([k, v]) => controllerFlagPart(k, v) === part));

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

interface Parts {
  binding: Json | undefined;
  machines: string[];
  gates: string[];
  /** `customizeComponents.flags.controller` (a map of strings in a sound object). */
  controllerFlags: Json;
}

function partsOf(kv: Pick<InternalKubeVirt, 'spec'>): Parts {
  const c = obj(obj(kv.spec)['configuration']);
  const binding = obj(obj(c['network'])['binding'])[REQUIRED_BINDING];
  return {
    binding: binding === undefined ? undefined : obj(binding),
    machines: strings(obj(obj(c['architectureConfiguration'])['amd64'])['emulatedMachines']),
    gates: strings(obj(c['developerConfiguration'])['featureGates']),
    controllerFlags: obj(obj(obj(obj(kv.spec)['customizeComponents'])['flags'])['controller']),
  };
}

/** The controller flags that are missing or have another value. */
const wrongFlags = (have: Json): [string, string][] => Object.entries(REQUIRED_CONTROLLER_FLAGS).filter(([k, v]) => have[k] !== v);

const lacking = (have: readonly string[], need: readonly string[]): string[] => need.filter((n) => !have.includes(n));
const bindingOk = (b: Json | undefined): boolean =>
  b !== undefined && b['domainAttachmentType'] === REQUIRED_BINDING_SPEC['domainAttachmentType'] && b['migration'] !== undefined;

/** What the configuration lacks, one phrase per part (empty when nothing). */
export function missingKubeVirtParts(kv: Pick<InternalKubeVirt, 'spec'>): string[] {
  const p = partsOf(kv);
  const out: string[] = [];
  if (!bindingOk(p.binding)) out.push(`network binding ${REQUIRED_BINDING} (tap attachment, with migration)`);
  const machines = lacking(p.machines, REQUIRED_EMULATED_MACHINES);
  if (machines.length > 0) out.push(`emulated machines ${machines.join(', ')}`);
  const gates = lacking(p.gates, REQUIRED_FEATURE_GATES);
  if (gates.length > 0) out.push(`feature gates ${gates.join(', ')}`);
  for (const [name, value] of wrongFlags(p.controllerFlags)) out.push(controllerFlagPart(name, value));
  return out;
}

/**
 * The JSON merge patch that puts the missing parts back and changes nothing else (lists are sent
 * whole, as merge patches replace them: what was there first, then what was missing; a controller
 * flag alone, its map merged); undefined when nothing is missing.
 */
export function kubeVirtRepairPatch(kv: Pick<InternalKubeVirt, 'spec'>): Json | undefined {
  const p = partsOf(kv);
  const configuration: Json = {};
  if (!bindingOk(p.binding)) configuration['network'] = { binding: { [REQUIRED_BINDING]: { ...p.binding, ...REQUIRED_BINDING_SPEC } } };
  const machines = lacking(p.machines, REQUIRED_EMULATED_MACHINES);
  if (machines.length > 0) configuration['architectureConfiguration'] = { amd64: { emulatedMachines: [...p.machines, ...machines] } };
  const gates = lacking(p.gates, REQUIRED_FEATURE_GATES);
  if (gates.length > 0) configuration['developerConfiguration'] = { featureGates: [...p.gates, ...gates] };
  const spec: Json = Object.keys(configuration).length === 0 ? {} : { configuration };
  // A merge patch of a map keeps its other keys: the administrator's flags and our kubeconfig stay.
  const flags = wrongFlags(p.controllerFlags);
  if (flags.length > 0) spec['customizeComponents'] = { flags: { controller: Object.fromEntries(flags) } };
  return Object.keys(spec).length === 0 ? undefined : { spec };
}
