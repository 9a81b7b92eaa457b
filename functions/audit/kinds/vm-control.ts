/** "Control VM" by pod deletion: a virt-launcher pod deleted by the controller, a node or a user. */
import { VM_NAME_LABEL } from '../../../shared/api/internal/launcher.js';
import { completeRef, commonFields } from '../common.js';
import type { AuditEvent } from '../event.js';
import type { Enrichment, PodView } from '../enrichment.js';
import { RecordType, vmRecord, type Heading } from '../records.js';
import { vmDetailsByName } from '../vm-details.js';
import { logged, NOT_LOGGED, undecidable, type Decision, type EventKind } from './kind.js';

/** The VM a launcher pod runs, as virt-controller labels it through the rewriter. */
export const LAUNCHER_VM_LABEL = VM_NAME_LABEL;
const CONTROLLER_PREFIX = 'system:serviceaccount:d8-virtualization';
const NODE_PREFIX = 'system:node';
/** KubeVirt names launcher pods `virt-launcher-<vm>-<5 random characters>`. */
const LAUNCHER_NAME = /^virt-launcher-(.+)-[a-z0-9]{5}$/;

/** The compute container's termination message, if it has terminated. */
function terminationMessage(pod: PodView | undefined): string | undefined {
  const status = pod?.status?.containerStatuses?.find((c) => (c.name ?? '').endsWith('compute') && c.state?.terminated);
  return status?.state?.terminated?.message;
}

/** The VM name from the pod's label, else from the launcher pod's name (pod never seen). */
function vmName(pod: PodView | undefined, podName: string): string {
  const label = pod?.metadata?.labels?.[LAUNCHER_VM_LABEL];
  if (label !== undefined && label !== '') return label;
  return LAUNCHER_NAME.exec(podName)?.[1] ?? '';
}

function controllerHeading(vm: string, message: string): Heading | undefined {
  if (message.includes('guest-shutdown')) return { type: RecordType.controlVM, level: 'warn', name: `Virtual machine '${vm}' has been stopped from OS` };
  if (message.includes('guest-reset')) return { type: RecordType.controlVM, level: 'warn', name: `Virtual machine '${vm}' has been restarted from OS` };
  return undefined;
}

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const user = ev.user.username;
  if (user.startsWith(NODE_PREFIX)) return NOT_LOGGED;
  const ns = ev.objectRef?.namespace ?? '';
  const podName = ev.objectRef?.name ?? '';
  const pod = enrichment.getPod(ns, podName);
  const vm = vmName(pod, podName);
  let heading: Heading | undefined;
  if (user.startsWith(CONTROLLER_PREFIX)) {
    if (pod === undefined) return undecidable(`pod ${ns}/${podName} is not known: its termination message decides`);
    heading = controllerHeading(vm, terminationMessage(pod) ?? '');
    if (heading === undefined) return NOT_LOGGED;
  } else {
    heading = { type: RecordType.controlVM, level: 'critical', name: `Virtual machine '${vm}' has been killed abnormal way by '${user}'` };
  }
  return logged(vmRecord(heading, commonFields(ev), ev.verb, vmDetailsByName(ns, vm, enrichment)));
}

export const vmControl: EventKind = {
  id: 'vm-control',
  matches: (ev) => {
    const ref = completeRef(ev);
    return ref?.resource === 'pods' && ev.verb === 'delete' && (ref.name ?? '').includes('virt-launcher');
  },
  build,
};
