/**
 * What the API serves: group subresources.virtualization.deckhouse.io, version v1alpha2 (the only one
 * the original serves), its discovery documents, its OpenAPI and Kubernetes Status answers.
 */
export const GROUP = 'subresources.virtualization.deckhouse.io';
export const VERSION = 'v1alpha2';
export const GROUP_VERSION = `${GROUP}/${VERSION}`;
export const BASE_PATH = `/apis/${GROUP}/${VERSION}`;

/** How a subresource is reached and where it goes in virt-api (subresources.kubevirt.io/v1). */
export interface Subresource {
  readonly name: string;
  readonly kind: string;
  /** HTTP methods accepted; stream subresources take GET/POST with an Upgrade. */
  readonly methods: readonly ('GET' | 'POST' | 'PUT')[];
  readonly stream: boolean;
  /** Requires VM phase Running (or Migrating, for streams). */
  readonly needsRunning: boolean;
}

export const SUBRESOURCES: readonly Subresource[] = [
  { name: 'console', kind: 'VirtualMachineConsole', methods: ['GET', 'POST'], stream: true, needsRunning: true },
  { name: 'vnc', kind: 'VirtualMachineVNC', methods: ['GET', 'POST'], stream: true, needsRunning: true },
  { name: 'portforward', kind: 'VirtualMachinePortForward', methods: ['GET', 'POST'], stream: true, needsRunning: true },
  { name: 'addvolume', kind: 'VirtualMachineAddVolume', methods: ['PUT'], stream: false, needsRunning: false },
  { name: 'removevolume', kind: 'VirtualMachineRemoveVolume', methods: ['PUT'], stream: false, needsRunning: false },
  { name: 'freeze', kind: 'VirtualMachineFreeze', methods: ['PUT'], stream: false, needsRunning: true },
  { name: 'unfreeze', kind: 'VirtualMachineUnfreeze', methods: ['PUT'], stream: false, needsRunning: true },
  { name: 'cancelevacuation', kind: 'VirtualMachineCancelEvacuation', methods: ['PUT'], stream: false, needsRunning: false },
  { name: 'addresourceclaim', kind: 'VirtualMachineAddResourceClaim', methods: ['PUT'], stream: false, needsRunning: false },
  { name: 'removeresourceclaim', kind: 'VirtualMachineRemoveResourceClaim', methods: ['PUT'], stream: false, needsRunning: false },
];

const VERBS: Record<string, string> = { GET: 'get', POST: 'create', PUT: 'update' };

/** GET /apis/<group>/<version>: the resources, with the verbs the apiserver authorizes them as. */
export function resourceList(): object {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: GROUP_VERSION,
    resources: [
      { name: 'virtualmachines', singularName: 'virtualmachine', namespaced: true, kind: 'VirtualMachine', verbs: ['get'] },
      ...SUBRESOURCES.map((s) => ({
        name: `virtualmachines/${s.name}`,
        singularName: '',
        namespaced: true,
        kind: s.kind,
        verbs: s.methods.map((m) => VERBS[m]),
      })),
      { name: 'virtualmachines/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get'] },
      { name: 'virtualmachinepools', singularName: 'virtualmachinepool', namespaced: true, kind: 'VirtualMachinePool', verbs: [] },
      { name: 'virtualmachinepools/scaledownwith', singularName: '', namespaced: true, kind: 'VirtualMachinePoolScaleDownWith', verbs: ['create'] },
    ],
  };
}

const groupVersionEntry = { groupVersion: GROUP_VERSION, version: VERSION };

export function apiGroup(): object {
  return { kind: 'APIGroup', apiVersion: 'v1', name: GROUP, versions: [groupVersionEntry], preferredVersion: groupVersionEntry };
}

export function apiGroupList(): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup()] };
}

/** A metav1.Status failure, as every Kubernetes API answers errors (kubectl prints its message). */
export function status(
  code: number,
  reason: string,
  message: string,
  details?: { name?: string; group?: string; kind?: string },
): { status: number; body: object } {
  return {
    status: code,
    body: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details === undefined ? {} : { details }), code },
  };
}

/** OpenAPI v2 (the aggregator merges it into /openapi/v2; `kubectl explain` reads it). */
export function openApiV2(): object {
  const paths: Record<string, object> = {};
  const nameParams = [
    { name: 'namespace', in: 'path', required: true, type: 'string', uniqueItems: true },
    { name: 'name', in: 'path', required: true, type: 'string', uniqueItems: true },
  ];
  paths[`${BASE_PATH}/`] = {
    get: {
      operationId: 'getSubresourcesVirtualizationDeckhouseIoV1alpha2APIResources',
      produces: ['application/json'],
      responses: { '200': { description: 'OK' } },
    },
  };
  paths[`${BASE_PATH}/namespaces/{namespace}/virtualmachines/{name}`] = {
    get: {
      operationId: 'readNamespacedVirtualMachine',
      produces: ['application/json'],
      responses: { '200': { description: 'OK', schema: { $ref: `#/definitions/${defName('VirtualMachine')}` } } },
    },
    parameters: nameParams,
  };
  for (const s of SUBRESOURCES) {
    const ops: Record<string, object> = {};
    for (const m of s.methods) {
      ops[m.toLowerCase()] = {
        operationId: `${VERBS[m]}NamespacedVirtualMachine${s.kind.replace(/^VirtualMachine/, '')}`,
        description: s.stream ? `${s.name}: an HTTP Upgrade to a WebSocket (subprotocol plain.virtualization.deckhouse.io)` : `${s.name}: proxied to virt-api`,
        consumes: ['*/*'],
        produces: ['*/*'],
        responses: { '200': { description: 'OK' } },
      };
    }
    paths[`${BASE_PATH}/namespaces/{namespace}/virtualmachines/{name}/${s.name}`] = { ...ops, parameters: nameParams };
  }
  return {
    swagger: '2.0',
    info: { title: 'VirtualizationAPI', version: VERSION },
    paths,
    definitions: {
      [defName('VirtualMachine')]: {
        type: 'object',
        properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' } },
        'x-kubernetes-group-version-kind': [{ group: GROUP, version: VERSION, kind: 'VirtualMachine' }],
      },
    },
  };
}

function defName(kind: string): string {
  return `io.deckhouse.virtualization.subresources.${VERSION}.${kind}`;
}

/** OpenAPI v3 of the group-version (the aggregator fetches it through the /openapi/v3 index). */
export function openApiV3Document(): object {
  const v2 = openApiV2() as { paths: Record<string, Record<string, unknown>>; definitions: Record<string, object> };
  const paths: Record<string, object> = {};
  for (const [path, item] of Object.entries(v2.paths)) {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(item)) {
      if (key === 'parameters') {
        out[key] = (value as Array<{ name: string; in: string }>).map((p) => ({ name: p.name, in: p.in, required: true, schema: { type: 'string' } }));
      } else {
        const { operationId, description } = value as { operationId: string; description?: string };
        out[key] = { operationId, ...(description === undefined ? {} : { description }), responses: { '200': { description: 'OK' } } };
      }
    }
    paths[path] = out;
  }
  return { openapi: '3.0.0', info: { title: 'VirtualizationAPI', version: VERSION }, paths, components: { schemas: v2.definitions } };
}
