/**
 * How the node agent writes an instance: as KubeVirt's virt-handler does, in the JSON shape KubeVirt's
 * Go types have on the wire, and with a JSON Patch, on condition that it is the version the step read.
 *
 * Why not a merge patch: virt-controller patches the instance with JSON Patch `test` operations on
 * whole fields as it decoded them (`/status/conditions`, `/status/migrationState`); a value stored in
 * another shape never passes such a test, so its patch is refused every time (issue 31). A merge patch
 * cannot store Go's shape: the apiserver drops every `null` inside it, arrays included, and a
 * condition's unset `lastProbeTime` is `null` on the wire.
 */
import type { InternalVirtualMachineInstance } from '../../../../shared/api/internal/resources.js';
import { pointer, type JsonPatchOp } from '../../../../shared/kube/patch.js';
import { ref, type StepContext } from '../context.js';

type VMI = InternalVirtualMachineInstance;

/** What one step changes: status fields (null removes one), labels and annotations (null removes one). */
export interface InstanceChange {
  readonly status: Readonly<Record<string, unknown>>;
  readonly labels?: Readonly<Record<string, string | null>>;
  readonly annotations?: Readonly<Record<string, string | null>>;
}

/** A migration state as Go marshals it: every field is `omitempty`, so false, "" and null are left out. */
export function goMigrationState(state: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(state).filter(([, v]) => v !== false && v !== '' && v !== null && v !== undefined));
}

function fieldOps(base: string[], current: Readonly<Record<string, unknown>> | undefined, change: Readonly<Record<string, unknown>>): JsonPatchOp[] {
  const entries = Object.entries(change).filter(([, v]) => v !== undefined);
  if (current === undefined) {
    const set = Object.fromEntries(entries.filter(([, v]) => v !== null));
    return Object.keys(set).length === 0 ? [] : [{ op: 'add', path: pointer(base), value: set }];
  }
  return entries.flatMap(([k, v]): JsonPatchOp[] => {
    if (v !== null) return [{ op: 'add', path: pointer([...base, k]), value: v }];
    return current[k] === undefined ? [] : [{ op: 'remove', path: pointer([...base, k]) }];
  });
}

/**
 * The JSON Patch of one change: first the resourceVersion the step read (the apiserver answers 409
 * Conflict when anyone wrote since), then each label, annotation and status field (a migration state
 * in Go's shape: `goMigrationState`).
 */
export function instanceWriteOps(vmi: VMI, change: InstanceChange): JsonPatchOp[] {
  const rv = vmi.metadata.resourceVersion;
  if (rv === undefined || rv === '') throw new TypeError('an instance write needs the resourceVersion it was decided on');
  return [
    { op: 'replace', path: '/metadata/resourceVersion', value: rv },
    ...fieldOps(['metadata', 'labels'], vmi.metadata.labels, change.labels ?? {}),
    ...fieldOps(['metadata', 'annotations'], vmi.metadata.annotations, change.annotations ?? {}),
    ...fieldOps(['status'], vmi.status, goStatus(change.status)),
  ];
}

/** A status change with its migration state as Go marshals it, whoever wrote the change. */
function goStatus(status: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const state = status['migrationState'];
  return state === null || typeof state !== 'object' ? status : { ...status, migrationState: goMigrationState(state as Record<string, unknown>) };
}

/** Write one change to the instance (on the version `vmi` is). */
export async function writeInstance(ctx: Pick<StepContext, 'c'>, vmi: VMI, change: InstanceChange): Promise<VMI> {
  return ctx.c.kvvmis.jsonPatch(ref(vmi.metadata.namespace ?? '', vmi.metadata.name ?? ''), instanceWriteOps(vmi, change));
}
