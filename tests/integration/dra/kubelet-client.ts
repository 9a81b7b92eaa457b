/**
 * kubelet's side of the plugin API for the tests: clients of the registration and DRA services over
 * the Unix sockets, speaking the same protos, and claims written as the scheduler would (spec, then
 * status.allocation through the status subresource).
 */
import { credentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { kubeletProtos, type DraVersion } from '../../../daemons/dra/plugin/protos.js';
import { PodNodeSchema, ResourceClaimSchema, podDescriptor, resourceClaimDescriptor } from '../../../shared/api/k8s/resource.js';
import type { KubeClient } from '../../../shared/kube/index.js';

/** The field manager of the DRA tests' own writes (here, not in harness.ts: the DRA bench imports this file without jest). */
export const TEST_MANAGER = 'dra-test';

type Callback<T> = (err: ServiceError | null, value?: T) => void;
type UnaryMethod = (req: unknown, cb: Callback<unknown>) => void;

function call<T>(client: Client, method: string, req: unknown): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fn = (client as unknown as Record<string, UnaryMethod>)[method];
    if (fn === undefined) throw new Error(`no method ${method}`);
    fn.call(client, req, (err, value) => (err ? reject(err) : resolve(value as T)));
  });
}

export interface PluginInfo {
  type: string;
  name: string;
  endpoint: string;
  supported_versions: string[];
}

export interface ClaimRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface PrepareResponse {
  claims: Record<string, { devices: { request_names: string[]; pool_name: string; device_name: string; cdi_device_ids: string[] }[]; error: string }>;
}

export interface UnprepareResponse {
  claims: Record<string, { error: string }>;
}

export class RegistrationClient {
  private readonly client: Client;

  constructor(socket: string) {
    const Ctor = kubeletProtos().pluginregistration.Registration;
    this.client = new Ctor(`unix://${socket}`, credentials.createInsecure());
  }

  getInfo(): Promise<PluginInfo> {
    return call(this.client, 'GetInfo', {});
  }

  notify(registered: boolean, error = ''): Promise<unknown> {
    return call(this.client, 'NotifyRegistrationStatus', { plugin_registered: registered, error });
  }

  close(): void {
    this.client.close();
  }
}

export class DraClient {
  readonly client: Client;

  constructor(socket: string, version: DraVersion) {
    const Ctor = kubeletProtos().k8s.io.kubelet.pkg.apis.dra[version].DRAPlugin;
    this.client = new Ctor(`unix://${socket}`, credentials.createInsecure());
  }

  prepare(claims: ClaimRef[]): Promise<PrepareResponse> {
    return call(this.client, 'NodePrepareResources', { claims });
  }

  unprepare(claims: ClaimRef[]): Promise<UnprepareResponse> {
    return call(this.client, 'NodeUnprepareResources', { claims });
  }

  close(): void {
    this.client.close();
  }
}

/** A claim for one device of the driver, allocated to `device` in `pool` as the scheduler would. */
export async function allocatedClaim(
  kube: KubeClient,
  namespace: string,
  name: string,
  pool: string,
  device: string,
  annotations: Record<string, string> = {},
): Promise<ClaimRef> {
  const claims = kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER);
  const created = await claims.create({
    apiVersion: 'resource.k8s.io/v1',
    kind: 'ResourceClaim',
    metadata: { namespace, name, annotations },
    spec: {
      devices: {
        requests: [{ name: 'req-0', exactly: { deviceClassName: 'usb-devices.virtualization.deckhouse.io', allocationMode: 'ExactCount', count: 1 } }],
      },
    },
  });
  await claims.patchStatus({ namespace, name }, { allocation: { devices: { results: [{ request: 'req-0', driver: 'virtualization-usb', pool, device }] } } });
  return { namespace, name, uid: created.metadata.uid ?? '' };
}

/**
 * Reserve a claim for a pod bound to `nodeName`, as the scheduler does before kubelet prepares it: a
 * Pod `<claim>-on-<node>` with `spec.nodeName` (nothing runs it) as its `status.reservedFor`. The export
 * side of USB/IP allows an import only from that node (daemons/dra/usbip/authorize.ts).
 */
export async function reserveForPodOn(kube: KubeClient, claim: ClaimRef, nodeName: string): Promise<void> {
  const pods = kube.resource(podDescriptor, PodNodeSchema, TEST_MANAGER);
  const name = `${claim.name}-on-${nodeName}`;
  const pod = await pods.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace: claim.namespace, name },
    spec: { nodeName, containers: [{ name: 'c', image: 'none' }] },
  });
  await kube
    .resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER)
    .patchStatus({ namespace: claim.namespace, name: claim.name }, { reservedFor: [{ resource: 'pods', name, uid: pod.metadata.uid ?? '' }] });
}
