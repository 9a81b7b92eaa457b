/**
 * The access matrix of the seed docs (module README, "Role Model"), transcribed cell by cell. This
 * table is the specification the role-matrix test checks the ClusterRoles in knative/rbac/roles/
 * against; it is deliberately not derived from those files.
 */

export const ROLE_LEVELS = ['User', 'PrivilegedUser', 'Editor', 'Admin', 'ClusterEditor', 'ClusterAdmin'] as const;
export type RoleLevel = (typeof ROLE_LEVELS)[number];

/** One cell: a combination of C (create), R (read), U (update), D (delete), or `-` for nothing. */
export type Cell = '-' | 'R' | 'CR' | 'RUD' | 'CRUD';
/** d8 cli rows: Y (allowed) or N (denied). */
export type CliCell = 'Y' | 'N';

type Row<T> = readonly [T, T, T, T, T, T];

/** Resource | User | PrivilegedUser | Editor | Admin | ClusterEditor | ClusterAdmin */
export const RESOURCE_MATRIX: Readonly<Record<string, Row<Cell>>> = {
  virtualmachines: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualdisks: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualimages: ['R', 'R', 'R', 'CRUD', 'CRUD', 'CRUD'],
  clustervirtualimages: ['R', 'R', 'R', 'R', 'CRUD', 'CRUD'],
  virtualmachineblockdeviceattachments: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualmachineoperations: ['R', 'CR', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualmachineipaddresses: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualmachineipaddressleases: ['-', '-', '-', 'R', 'R', 'CRUD'],
  virtualmachineclasses: ['R', 'R', 'R', 'R', 'CRUD', 'CRUD'],
};

/**
 * Resources the API serves that the seed table does not list, at the level of their closest row
 * (MAC addresses and leases as IP addresses and leases) or of the original's current roles (facts
 * section 6.1: VM pools and the snapshot kinds with the editors, USB devices read by everyone,
 * NodeUSBDevices changed by cluster editors). Not part of the seed specification; checked the same way.
 */
export const EXTENDED_MATRIX: Readonly<Record<string, Row<Cell>>> = {
  virtualmachinemacaddresses: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualmachinemacaddressleases: ['-', '-', '-', 'R', 'R', 'CRUD'],
  virtualmachinepools: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  usbdevices: ['R', 'R', 'R', 'R', 'R', 'R'],
  nodeusbdevices: ['R', 'R', 'R', 'R', 'RUD', 'RUD'],
  // The snapshot kinds with the editors, as the original's legacy roles have them.
  virtualdisksnapshots: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualmachinesnapshots: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  virtualmachinesnapshotoperations: ['R', 'R', 'CRUD', 'CRUD', 'CRUD', 'CRUD'],
  // storage.virtualization.deckhouse.io: the original's manage_internals (superadmin) has them all.
  storageprofiles: ['-', '-', '-', '-', '-', 'CRUD'],
};

/** A subresource row beyond the seed table: which verbs it grants, and to which levels (Y/N). */
export interface SubresourceRow {
  readonly group: 'virtualization.deckhouse.io' | 'subresources.virtualization.deckhouse.io';
  readonly resource: string;
  readonly subresource: string;
  readonly verbs: readonly string[];
  readonly levels: Row<CliCell>;
}

/**
 * Pool subresources, with the editors as in the original's roles (facts section 6.1: Editor gets
 * virtualmachinepools/scale get/patch/update and subresources virtualmachinepools/scaledownwith create).
 */
export const SUBRESOURCE_MATRIX: Readonly<Record<string, SubresourceRow>> = {
  'kubectl scale virtualmachinepool': {
    group: 'virtualization.deckhouse.io',
    resource: 'virtualmachinepools',
    subresource: 'scale',
    verbs: ['get', 'patch', 'update'],
    levels: ['N', 'N', 'Y', 'Y', 'Y', 'Y'],
  },
  'd8v scaledownwith': {
    group: 'subresources.virtualization.deckhouse.io',
    resource: 'virtualmachinepools',
    subresource: 'scaledownwith',
    verbs: ['create'],
    levels: ['N', 'N', 'Y', 'Y', 'Y', 'Y'],
  },
};

/** Rows whose resource is outside virtualization.deckhouse.io. */
export const ROW_GROUPS: Readonly<Record<string, string>> = { storageprofiles: 'storage.virtualization.deckhouse.io' };

/** d8 cli | User | PrivilegedUser | Editor | Admin | ClusterEditor | ClusterAdmin */
export const CLI_MATRIX: Readonly<Record<string, Row<CliCell>>> = {
  'd8 v console': ['N', 'Y', 'Y', 'Y', 'Y', 'Y'],
  'd8 v ssh / scp / port-forward': ['N', 'Y', 'Y', 'Y', 'Y', 'Y'],
  'd8 v vnc': ['N', 'Y', 'Y', 'Y', 'Y', 'Y'],
};

/** The abbreviation table of the seed: letter -> Kubernetes verbs. */
export const LETTER_VERBS: Readonly<Record<'C' | 'R' | 'U' | 'D', readonly string[]>> = {
  C: ['create'],
  R: ['get', 'list', 'watch'],
  U: ['patch', 'update'],
  D: ['delete', 'deletecollection'],
};

/** Which subresource of `subresources.virtualization.deckhouse.io/virtualmachines` each cli row uses
 *  (facts section 3.2: ssh and scp tunnel through port forwarding). */
export const CLI_SUBRESOURCE: Readonly<Record<string, string>> = {
  'd8 v console': 'console',
  'd8 v ssh / scp / port-forward': 'portforward',
  'd8 v vnc': 'vnc',
};

/** Verbs a client uses on a streaming subresource: the WebSocket upgrade (GET), SPDY/POST (create)
 *  and the original's update grant. */
export const CLI_VERBS = ['get', 'create', 'update'] as const;

/** Cluster-scoped resources of the matrix; the others are namespaced. */
export const CLUSTER_SCOPED = new Set([
  'clustervirtualimages',
  'virtualmachineipaddressleases',
  'virtualmachineclasses',
  'virtualmachinemacaddressleases',
  'nodeusbdevices',
  'storageprofiles',
]);
