/** What the live view and the demo read: VMs, images, disks, operations, nodes and launcher pods from the apiserver, audit records from the audit function's output. */
import { open } from 'node:fs/promises';
import { launcherSelector } from '../../shared/api/internal/launcher.js';
import type { KubeClient } from '../../shared/kube/index.js';

export interface VMRow {
  namespace: string;
  name: string;
  phase: string;
  node: string;
  ip: string;
  /** `Type` for each True condition, `!Type` for each False one. */
  conditions: string[];
}

export interface OperationRow {
  namespace: string;
  name: string;
  type: string;
  vm: string;
  phase: string;
  /** The reason of the Completed condition while it is not done, e.g. `Syncing`. */
  detail: string;
}

/** An image or a disk: its phase and import progress. */
export interface StorageRow {
  kind: 'image' | 'disk';
  namespace: string;
  name: string;
  phase: string;
  /** status.progress, e.g. `52.3%` ('' when not reported). */
  progress: string;
  /** Format and size of an image, capacity of a disk, or why it is not ready. */
  detail: string;
}

export interface NodeRow {
  name: string;
  ready: boolean;
  launcherPods: number;
}

export interface AuditRecord {
  datetime: string;
  type: string;
  name: string;
  operation_result?: string;
}

export interface Snapshot {
  vms: VMRow[];
  storage: StorageRow[];
  operations: OperationRow[];
  nodes: NodeRow[];
  audit: AuditRecord[];
}

interface Obj {
  metadata: { name: string; namespace?: string; creationTimestamp?: string };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown> & { conditions?: { type: string; status: string; reason?: string }[] };
}

const GROUP_PATH = '/apis/virtualization.deckhouse.io/v1alpha2';

async function list(kube: KubeClient, path: string, labelSelector?: string): Promise<Obj[]> {
  const query = labelSelector === undefined ? {} : { query: { labelSelector } };
  const res = (await kube.rest.request({ method: 'GET', path, what: `list ${path}`, ...query })) as { items?: Obj[] };
  return (res.items ?? []).sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''));
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function vmRow(o: Obj): VMRow {
  return {
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    phase: str(o.status?.['phase']),
    node: str(o.status?.['nodeName']),
    ip: str(o.status?.['ipAddress']),
    conditions: (o.status?.conditions ?? []).map((c) => (c.status === 'True' ? c.type : `!${c.type}`)),
  };
}

export function storageRow(kind: StorageRow['kind'], o: Obj): StorageRow {
  const phase = str(o.status?.['phase']);
  const size = o.status?.['size'] as { unpacked?: unknown } | undefined;
  const ready = o.status?.conditions?.find((c) => c.type === 'Ready');
  let detail: string;
  if (phase === 'Ready') detail = kind === 'image' ? `${str(o.status?.['format'])} ${str(size?.unpacked)}`.trim() : str(o.status?.['capacity']);
  else detail = ready?.status === 'False' ? (ready.reason ?? '') : '';
  return { kind, namespace: o.metadata.namespace ?? '', name: o.metadata.name, phase, progress: str(o.status?.['progress']), detail };
}

export function operationRow(o: Obj): OperationRow {
  const completed = o.status?.conditions?.find((c) => c.type === 'Completed');
  const phase = str(o.status?.['phase']);
  return {
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    type: str(o.spec?.['type']),
    vm: str(o.spec?.['virtualMachineName']),
    phase,
    detail: phase === 'Completed' ? '' : (completed?.reason ?? ''),
  };
}

/** Audit records (JSON lines that start with `{"type":`) among the last `bytes` of the audit function's log. */
export async function auditRecords(logPath: string, bytes = 512 * 1024): Promise<AuditRecord[]> {
  let text: string;
  try {
    const fh = await open(logPath, 'r');
    try {
      const size = (await fh.stat()).size;
      const start = Math.max(0, size - bytes);
      const buf = Buffer.alloc(size - start);
      await fh.read(buf, 0, buf.length, start);
      text = buf.toString('utf8');
    } finally {
      await fh.close();
    }
  } catch {
    return [];
  }
  const out: AuditRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"type":')) continue;
    try {
      out.push(JSON.parse(line) as AuditRecord);
    } catch {
      // a line cut at the start of the window
    }
  }
  return out;
}

export async function snapshot(kube: KubeClient, auditLog: string | undefined): Promise<Snapshot> {
  const [vms, images, disks, ops, nodes, pods, audit] = await Promise.all([
    list(kube, `${GROUP_PATH}/virtualmachines`),
    list(kube, `${GROUP_PATH}/virtualimages`),
    list(kube, `${GROUP_PATH}/virtualdisks`),
    list(kube, `${GROUP_PATH}/virtualmachineoperations`),
    list(kube, '/api/v1/nodes'),
    list(kube, '/api/v1/pods', launcherSelector()),
    auditLog === undefined ? Promise.resolve([]) : auditRecords(auditLog),
  ]);
  const podsOn = new Map<string, number>();
  for (const p of pods) {
    const node = str(p.spec?.['nodeName']);
    if (node !== '' && str(p.status?.['phase']) === 'Running') podsOn.set(node, (podsOn.get(node) ?? 0) + 1);
  }
  return {
    vms: vms.map(vmRow),
    storage: [...images.map((o) => storageRow('image', o)), ...disks.map((o) => storageRow('disk', o))],
    operations: ops.map(operationRow),
    nodes: nodes.map((n) => ({
      name: n.metadata.name,
      ready: n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      launcherPods: podsOn.get(n.metadata.name) ?? 0,
    })),
    audit,
  };
}
