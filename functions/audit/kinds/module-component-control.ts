/** "Virtualization control": a pod of the module created or deleted by a user. */
import { completeRef, commonFields, isSystemUser, MODULE_NAMESPACE, orUnknown } from '../common.js';
import type { AuditEvent } from '../event.js';
import type { Enrichment } from '../enrichment.js';
import { defaultModuleDetails, moduleRecord, RecordType, UNKNOWN } from '../records.js';
import { nodeAddresses } from '../vm-details.js';
import { logged, type Decision, type EventKind } from './kind.js';

export const QEMU_VERSION_ANNOTATION = 'versions.virtualization.deckhouse.io/qemu-version';
export const LIBVIRT_VERSION_ANNOTATION = 'versions.virtualization.deckhouse.io/libvirt-version';
/** The Module object whose `properties.version` is the module version. */
export const MODULE_NAME = 'virtualization';

function build(ev: AuditEvent, enrichment: Enrichment): Decision {
  const podName = ev.objectRef?.name ?? '';
  const created = ev.verb === 'create';
  const heading = {
    type: RecordType.componentControl,
    level: created ? 'info' : 'warn',
    name: `Component '${podName}' has been ${created ? 'created' : 'deleted'} by '${ev.user.username}'`,
  };
  const details = defaultModuleDetails(ev.verb);
  details.component = podName;
  const pod = enrichment.getPod(MODULE_NAMESPACE, podName);
  if (pod !== undefined) {
    // As in the original: a found pod without the annotations gives empty strings, not `unknown`.
    details.qemu_version = pod.metadata?.annotations?.[QEMU_VERSION_ANNOTATION] ?? '';
    details.libvirt_version = pod.metadata?.annotations?.[LIBVIRT_VERSION_ANNOTATION] ?? '';
    const node = pod.spec?.nodeName;
    if (node !== undefined && node !== '') details.node_network_address = nodeAddresses(enrichment.getNode(node)) ?? UNKNOWN;
  }
  details.virtualization_version = orUnknown(enrichment.getModule(MODULE_NAME)?.properties?.version);
  return logged(moduleRecord(heading, commonFields(ev), details));
}

function matches(ev: AuditEvent): boolean {
  const ref = completeRef(ev);
  const name = ref?.name ?? '';
  return (
    ref?.resource === 'pods' &&
    ref.namespace === MODULE_NAMESPACE &&
    name !== '' &&
    !name.includes('cvi-importer') &&
    (ev.verb === 'create' || ev.verb === 'delete') &&
    !isSystemUser(ev.user.username)
  );
}

export const moduleComponentControl: EventKind = { id: 'module-component-control', matches, build };
