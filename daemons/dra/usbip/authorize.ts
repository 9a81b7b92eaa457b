/**
 * Whether an importer may import a device of this node (the export side's check, beyond the shared
 * secret): only the node a ResourceClaim holding that device is for. The server asks an
 * `ImportAuthorizer` per OP_REQ_IMPORT; `ClaimImportAuthorizer` answers from the apiserver (imports
 * are rare: one list of the claims, a GET per consumer pod and per node, no cache to be stale):
 * 1. the device of the bus id: this node's device of that busid, by the driver's name for it;
 * 2. the claims whose allocation results name (driver, this node's pool, that device);
 * 3. the nodes each is for: the nodes of the pods in `status.reservedFor` (their `spec.nodeName`),
 *    and a single node the allocation's nodeSelector names (`matchFields metadata.name In [node]`);
 * 4. the addresses of those nodes: the host of the `usbip-address` annotation (what their gateway
 *    advertises) and their InternalIP addresses; the TCP peer's address must be one of them.
 */
import { NotFoundError } from '../../../shared/errors/index.js';
import type { ResourceClient } from '../../../shared/kube/index.js';
import type { Node, PodNode, ResourceClaim } from '../../../shared/api/k8s/resource.js';
import { ADDRESS_ANNOTATION, parseAddress } from './gateway.js';
import { objectKey } from '../../../shared/kube/index.js';

/** Why an import was refused (the `reason` label of the denials counter). */
export type ImportDenial = 'not-allocated' | 'other-node' | 'lookup-failed';

export type ImportDecision =
  | { readonly allowed: true; /** `namespace/name` of the claim that holds the device for the peer. */ readonly claim: string }
  | { readonly allowed: false; readonly reason: ImportDenial; readonly message: string };

export interface ImportRequest {
  readonly busId: string;
  /** The TCP peer's address as the socket reports it (IPv4-mapped IPv6 is taken as IPv4). */
  readonly peerAddress: string;
  readonly signal?: AbortSignal;
}

/** What the server asks before it binds a device for an importer. A throw is a refusal (`lookup-failed`). */
export interface ImportAuthorizer {
  authorize(request: ImportRequest): Promise<ImportDecision>;
}

export interface ClaimImportAuthorizerOptions {
  readonly driver: string;
  /** This node's name = its pool's name. */
  readonly nodeName: string;
  /** The driver's device name of this node's device at `busId` (from the daemon's scan); undefined if none. */
  readonly deviceName: (busId: string) => string | undefined;
  readonly claims: Pick<ResourceClient<ResourceClaim>, 'list'>;
  readonly pods: Pick<ResourceClient<PodNode>, 'get'>;
  readonly nodes: Pick<ResourceClient<Node>, 'get'>;
}

/** An address as compared: no brackets, lower case, IPv4-mapped IPv6 as IPv4. */
export function normalizeAddress(address: string): string {
  const bare = address
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  return mapped?.[1] ?? bare;
}

export class ClaimImportAuthorizer implements ImportAuthorizer {
  constructor(private readonly opts: ClaimImportAuthorizerOptions) {}

  async authorize(request: ImportRequest): Promise<ImportDecision> {
    const { driver, nodeName } = this.opts;
    const device = this.opts.deviceName(request.busId);
    if (device === undefined) return { allowed: false, reason: 'not-allocated', message: `bus id ${request.busId} is no device of the driver on this node` };
    const signal = request.signal;
    const holders = (await this.opts.claims.list(signal === undefined ? {} : { signal })).items.filter((c) =>
      (c.status?.allocation?.devices?.results ?? []).some((r) => r.driver === driver && r.pool === nodeName && r.device === device),
    );
    if (holders.length === 0) return { allowed: false, reason: 'not-allocated', message: `device ${device} is allocated to no ResourceClaim` };
    const peer = normalizeAddress(request.peerAddress);
    const seen: string[] = [];
    for (const claim of holders) {
      const ref = objectKey(claim.metadata);
      const nodes = await this.nodesOf(claim, signal);
      for (const node of nodes) {
        const addresses = await this.addressesOf(node, signal);
        if (addresses.includes(peer)) return { allowed: true, claim: ref };
        seen.push(`${node} [${addresses.join(' ')}]`);
      }
      if (nodes.length === 0) seen.push(`${ref}: reserved for no node`);
    }
    return {
      allowed: false,
      reason: 'other-node',
      message: `peer ${peer} is not the node of a claim holding device ${device} (${holders.length} claim(s); nodes: ${seen.join(', ')})`,
    };
  }

  /** The nodes a claim is for: its consumer pods' nodes and a single node its allocation names. */
  private async nodesOf(claim: ResourceClaim, signal: AbortSignal | undefined): Promise<string[]> {
    const nodes = new Set<string>(allocatedNode(claim));
    for (const consumer of claim.status?.reservedFor ?? []) {
      if (consumer.resource !== 'pods' || (consumer.apiGroup ?? '') !== '') continue;
      const node = await this.podNode(claim.metadata.namespace ?? '', consumer, signal);
      if (node !== undefined) nodes.add(node);
    }
    return [...nodes];
  }

  /** The node of a consumer pod; undefined when it is gone, made again (another uid) or not bound yet. */
  private async podNode(namespace: string, consumer: { name: string; uid?: string | undefined }, signal: AbortSignal | undefined): Promise<string | undefined> {
    try {
      const pod = await this.opts.pods.get({ namespace, name: consumer.name }, signal === undefined ? {} : { signal });
      if (consumer.uid !== undefined && pod.metadata.uid !== consumer.uid) return undefined;
      return pod.spec?.nodeName || undefined;
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /** The node's USB/IP address (annotation host) and InternalIP addresses; none when it is gone. */
  private async addressesOf(name: string, signal: AbortSignal | undefined): Promise<string[]> {
    let node: Node;
    try {
      node = await this.opts.nodes.get({ name }, signal === undefined ? {} : { signal });
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return [];
      throw err;
    }
    const out = new Set<string>();
    const advertised = node.metadata.annotations?.[ADDRESS_ANNOTATION];
    const host = advertised === undefined ? undefined : parseAddress(advertised)?.host;
    if (host !== undefined) out.add(normalizeAddress(host));
    for (const a of node.status?.addresses ?? []) if (a.type === 'InternalIP') out.add(normalizeAddress(a.address));
    return [...out];
  }
}

/** The single node an allocation's nodeSelector names (`matchFields metadata.name In [node]`), if any. */
function allocatedNode(claim: ResourceClaim): string[] {
  return (claim.status?.allocation?.nodeSelector?.nodeSelectorTerms ?? []).flatMap((term) =>
    (term.matchFields ?? []).flatMap((f) => (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1 && f.values[0] ? [f.values[0]] : [])),
  );
}
