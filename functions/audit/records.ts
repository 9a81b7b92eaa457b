/**
 * The four output record shapes. Field names, type strings and the JSON field order are a contract
 * with the regex-based security-event shipper downstream: every builder writes its keys in the
 * documented order, whatever order its inputs have.
 */

export const RecordType = {
  forbidden: 'Forbidden operation',
  manageVM: 'Manage VM',
  controlVM: 'Control VM',
  accessVM: 'Access to VM',
  componentControl: 'Virtualization control',
  moduleControl: 'Module control',
  integrity: 'Integrity check',
} as const;

export type RecordTypeName = (typeof RecordType)[keyof typeof RecordType];

/** The value of every string field nothing could be learned about. */
export const UNKNOWN = 'unknown';

/** Fields every record shares, computed from the event alone. */
export interface CommonFields {
  datetime: string;
  uid: string;
  request_subject: string;
  operation_result: string;
}

/** What a builder decides: the record's type, severity and sentence. */
export interface Heading<T extends RecordTypeName = RecordTypeName> {
  type: T;
  level: string;
  name: string;
}

export interface ForbidRecord extends Heading<typeof RecordType.forbidden>, CommonFields {
  is_admin: boolean;
  source_ip: string;
  forbid_reason: string;
}

export interface VMDetails {
  node_network_address: string;
  virtual_machine_name: string;
  virtual_machine_namespace: string;
  virtualmachine_uid: string;
  virtualmachine_os: string;
  storageclasses: string;
  qemu_version: string;
  libvirt_version: string;
}

export interface VMRecord extends Heading, CommonFields, VMDetails {
  action_type: string;
}

export interface ModuleDetails {
  action_type: string;
  component: string;
  node_network_address: string;
  virtualization_version: string;
  virtualization_name: string;
  qemu_version: string;
  libvirt_version: string;
}

export interface ModuleRecord extends Heading, CommonFields, ModuleDetails {}

export interface IntegrityDetails {
  virtual_machine_name: string;
  virtual_machine_namespace: string;
  reference_checksum: string;
  current_checksum: string;
}

export interface IntegrityRecord extends Heading<typeof RecordType.integrity>, CommonFields, IntegrityDetails {
  object_type: string;
  control_method: string;
  reaction_type: string;
  integrity_check_algo: string;
}

export type AuditRecord = ForbidRecord | VMRecord | ModuleRecord | IntegrityRecord;

/** The first six keys of every record, in the contract's order (a spread keeps it). */
function opening<T extends RecordTypeName>(h: Heading<T>, c: CommonFields): Heading<T> & Omit<CommonFields, 'operation_result'> {
  return { type: h.type, level: h.level, name: h.name, datetime: c.datetime, uid: c.uid, request_subject: c.request_subject };
}

export function forbidRecord(
  h: Heading<typeof RecordType.forbidden>,
  c: CommonFields,
  f: Pick<ForbidRecord, 'is_admin' | 'source_ip' | 'forbid_reason'>,
): ForbidRecord {
  return {
    ...opening(h, c),
    operation_result: c.operation_result,
    is_admin: f.is_admin,
    source_ip: f.source_ip,
    forbid_reason: f.forbid_reason,
  };
}

/** VM details before enrichment: every field `unknown`. */
export function unknownVMDetails(): VMDetails {
  return {
    node_network_address: UNKNOWN,
    virtual_machine_name: UNKNOWN,
    virtual_machine_namespace: UNKNOWN,
    virtualmachine_uid: UNKNOWN,
    virtualmachine_os: UNKNOWN,
    storageclasses: UNKNOWN,
    qemu_version: UNKNOWN,
    libvirt_version: UNKNOWN,
  };
}

export function vmRecord(h: Heading, c: CommonFields, actionType: string, d: VMDetails): VMRecord {
  return {
    ...opening(h, c),
    action_type: actionType,
    node_network_address: d.node_network_address,
    virtual_machine_name: d.virtual_machine_name,
    virtual_machine_namespace: d.virtual_machine_namespace,
    virtualmachine_uid: d.virtualmachine_uid,
    virtualmachine_os: d.virtualmachine_os,
    storageclasses: d.storageclasses,
    qemu_version: d.qemu_version,
    libvirt_version: d.libvirt_version,
    operation_result: c.operation_result,
  };
}

/** Module details before enrichment (note the original's misspelt default component, kept as is). */
export function defaultModuleDetails(actionType: string): ModuleDetails {
  return {
    action_type: actionType,
    component: 'virtualizaion',
    node_network_address: UNKNOWN,
    virtualization_version: UNKNOWN,
    virtualization_name: 'Deckhouse Virtualization Platform',
    qemu_version: UNKNOWN,
    libvirt_version: UNKNOWN,
  };
}

export function moduleRecord(h: Heading, c: CommonFields, d: ModuleDetails): ModuleRecord {
  return {
    ...opening(h, c),
    operation_result: c.operation_result,
    action_type: d.action_type,
    component: d.component,
    node_network_address: d.node_network_address,
    virtualization_version: d.virtualization_version,
    virtualization_name: d.virtualization_name,
    qemu_version: d.qemu_version,
    libvirt_version: d.libvirt_version,
  };
}

export function integrityRecord(h: Heading<typeof RecordType.integrity>, c: CommonFields, d: IntegrityDetails): IntegrityRecord {
  return {
    ...opening(h, c),
    operation_result: c.operation_result,
    object_type: 'Virtual machine configuration',
    virtual_machine_name: d.virtual_machine_name,
    virtual_machine_namespace: d.virtual_machine_namespace,
    control_method: 'Integrity Check',
    reaction_type: 'info',
    integrity_check_algo: 'sha256',
    reference_checksum: d.reference_checksum,
    current_checksum: d.current_checksum,
  };
}
