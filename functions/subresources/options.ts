/**
 * Pure: where a subresource call goes in virt-api and with which body. addvolume, removevolume,
 * addresourceclaim and removeresourceclaim have two modes, as in the original: with option fields in
 * the query the body is rebuilt and the VM (persistent) path is used; without them the call is taken
 * to come from KubeVirt's own tooling and goes to the VMI path with its body unchanged.
 */
import { KUBEVIRT_BASE } from './backend.js';

export interface Upstream {
  readonly path: string;
  readonly body: Buffer;
}

/** A caller mistake: 400 naming it. */
export class OptionsError extends Error {}

const vmi = (ns: string, name: string, sub: string): string =>
  `${KUBEVIRT_BASE}/namespaces/${encodeURIComponent(ns)}/virtualmachineinstances/${encodeURIComponent(name)}/${sub}`;
const vm = (ns: string, name: string, sub: string): string =>
  `${KUBEVIRT_BASE}/namespaces/${encodeURIComponent(ns)}/virtualmachines/${encodeURIComponent(name)}/${sub}`;

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

function bool(query: URLSearchParams, key: string): boolean {
  const v = query.get(key);
  if (v === null || v === '' || v === 'false') return false;
  if (v === 'true') return true;
  throw new OptionsError(`query ${key} must be true or false, got ${JSON.stringify(v)}`);
}

function dryRun(query: URLSearchParams): string[] | undefined {
  const values = query.getAll('dryRun').filter((v) => v !== '');
  for (const v of values) if (v !== 'All') throw new OptionsError(`query dryRun must be All, got ${JSON.stringify(v)}`);
  return values.length === 0 ? undefined : values;
}

/** A non-stream subresource call (PUT). `body` is what the client sent. */
export function plainUpstream(sub: string, namespace: string, name: string, query: URLSearchParams, body: Buffer): Upstream {
  switch (sub) {
    case 'freeze':
    case 'unfreeze':
      if (body.length > 0) checkJsonObject(body);
      return { path: vmi(namespace, name, sub), body };
    case 'addvolume':
      return addVolume(namespace, name, query, body);
    case 'removevolume': {
      const volume = query.get('name') ?? '';
      if (volume === '') return { path: vmi(namespace, name, sub), body };
      return { path: vm(namespace, name, sub), body: json({ name: volume, ...withDryRun(query) }) };
    }
    case 'addresourceclaim': {
      const claim = query.get('name') ?? '';
      if (claim === '') return { path: vmi(namespace, name, sub), body };
      const template = query.get('resourceClaimTemplateName') ?? '';
      if (template === '') throw new OptionsError('addresourceclaim: query resourceClaimTemplateName is required with name');
      const requestName = query.get('requestName') ?? '';
      return {
        path: vm(namespace, name, sub),
        body: json({
          name: claim,
          resourceClaimTemplateName: template,
          ...(requestName === '' ? {} : { requestName }),
          hotpluggable: true,
          ...withDryRun(query),
        }),
      };
    }
    case 'removeresourceclaim': {
      const claim = query.get('name') ?? '';
      if (claim === '') return { path: vmi(namespace, name, sub), body };
      return { path: vm(namespace, name, sub), body: json({ name: claim, ...withDryRun(query) }) };
    }
    case 'cancelevacuation':
      return { path: vm(namespace, name, 'evacuatecancel'), body: json({ dryRun: dryRun(query) ?? [] }) };
    default:
      throw new OptionsError(`unknown subresource ${sub}`);
  }
}

function withDryRun(query: URLSearchParams): { dryRun?: string[] } {
  const d = dryRun(query);
  return d === undefined ? {} : { dryRun: d };
}

function checkJsonObject(body: Buffer): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch (err: unknown) {
    throw new OptionsError(`request body is not JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new OptionsError('request body must be a JSON object');
}

const VOLUME_KINDS = ['VirtualDisk', 'VirtualImage', 'ClusterVirtualImage'] as const;

/** KubeVirt AddVolumeOptions: a SCSI disk (or cdrom) hot-plugged from a PVC or a container disk. */
function addVolume(namespace: string, name: string, query: URLSearchParams, body: Buffer): Upstream {
  const volume = query.get('name') ?? '';
  const kind = query.get('volumeKind') ?? '';
  if (volume === '' && kind === '') return { path: vmi(namespace, name, 'addvolume'), body };
  if (volume === '') throw new OptionsError('addvolume: query name is required');
  if (!(VOLUME_KINDS as readonly string[]).includes(kind))
    throw new OptionsError(`addvolume: query volumeKind must be one of ${VOLUME_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  const pvcName = query.get('pvcName') ?? '';
  const image = query.get('image') ?? '';
  const serial = query.get('serial') ?? '';
  const isCdrom = bool(query, 'isCdrom');
  let volumeSource: object;
  if (kind === 'VirtualDisk') {
    if (pvcName === '') throw new OptionsError('addvolume: volumeKind VirtualDisk needs query pvcName');
    volumeSource = { persistentVolumeClaim: { claimName: pvcName, hotpluggable: true } };
  } else if (kind === 'VirtualImage') {
    if ((pvcName === '') === (image === '')) throw new OptionsError('addvolume: volumeKind VirtualImage needs exactly one of query pvcName and image');
    volumeSource =
      pvcName !== '' ? { persistentVolumeClaim: { claimName: pvcName, readOnly: true, hotpluggable: true } } : { containerDisk: { image, hotpluggable: true } };
  } else {
    if (image === '') throw new OptionsError('addvolume: volumeKind ClusterVirtualImage needs query image');
    volumeSource = { containerDisk: { image, hotpluggable: true } };
  }
  const disk = isCdrom
    ? { name: volume, cdrom: { bus: 'scsi' }, errorPolicy: 'report' }
    : { name: volume, disk: { bus: 'scsi' }, errorPolicy: 'report', ...(serial === '' ? {} : { serial }) };
  return { path: vm(namespace, name, 'addvolume'), body: json({ name: volume, disk, volumeSource, ...withDryRun(query) }) };
}

/** Where a stream goes: console and vnc as they are, portforward with its port (and protocol). */
export function streamUpstreamPath(sub: string, namespace: string, name: string, query: URLSearchParams): string {
  if (sub === 'console' || sub === 'vnc') return vmi(namespace, name, sub);
  if (sub !== 'portforward') throw new OptionsError(`unknown stream subresource ${sub}`);
  const portText = query.get('port') ?? '';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65535)
    throw new OptionsError(`portforward: query port must be a port number 1-65535, got ${JSON.stringify(portText)}`);
  const protocol = query.get('protocol') ?? '';
  if (protocol !== '' && protocol !== 'tcp' && protocol !== 'udp')
    throw new OptionsError(`portforward: query protocol must be tcp or udp, got ${JSON.stringify(protocol)}`);
  return vmi(namespace, name, `portforward/${port}${protocol === '' ? '' : `/${protocol}`}`);
}
