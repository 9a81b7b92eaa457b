/**
 * The live view: one screen redrawn in place every second on a terminal (units, nodes, VMs with
 * phase, node, IP and conditions, images and disks with their import progress bar, operations, the
 * latest audit records, the demo's steps); on
 * anything else (a pipe, a log file) one plain line per change instead.
 */
import type { AuditRecord, OperationRow, Snapshot, StorageRow, VMRow } from './snapshot.js';

export interface ViewHeader {
  server: string;
  kubeconfig: string;
  logDir: string;
  uptimeMs: number;
  /** Unit name → running. */
  units: Record<string, boolean>;
  /** Which KubeVirt runs (real or simulated), when known. */
  kubevirt?: string;
}

const fmtDuration = (ms: number): string => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};

/** Left-aligned columns, two spaces apart. */
export function table(head: string[], rows: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(head), ...rows.map(line)];
}

const auditTime = (r: AuditRecord): string => (r.datetime.length >= 19 ? r.datetime.slice(11, 19) : r.datetime);

/** The whole screen as lines (not yet cut to the terminal's width); the demo's latest steps fill what `rows` leaves. */
export function renderScreen(h: ViewHeader, s: Snapshot, steps: readonly string[], rows = 60): string[] {
  const units = Object.entries(h.units)
    .map(([n, up]) => `${n} ${up ? '●' : '✗'}`)
    .join('  ');
  const nodes = s.nodes.map((n) => `${n.name} ${n.ready ? '●' : '○'}${n.launcherPods > 0 ? ` (${n.launcherPods} VM)` : ''}`).join('  ');
  const out = [
    `Virtualization module · local platform · up ${fmtDuration(h.uptimeMs)} · Ctrl-C stops everything`,
    `apiserver ${h.server} · export KUBECONFIG=${h.kubeconfig}`,
    `logs ${h.logDir}`,
    `units: ${units}`,
    ...(h.kubevirt !== undefined ? [h.kubevirt] : []),
    `nodes (simulated): ${nodes === '' ? '-' : nodes}`,
    '',
    'VIRTUAL MACHINES',
    ...(s.vms.length === 0 ? ['  (none)'] : table(['NAMESPACE', 'NAME', 'PHASE', 'NODE', 'IP', 'CONDITIONS'], s.vms.map(vmCells)).map((l) => `  ${l}`)),
    '',
    'IMAGES AND DISKS',
    ...(s.storage.length === 0
      ? ['  (none)']
      : table(['KIND', 'NAMESPACE', 'NAME', 'PHASE', 'PROGRESS', 'DETAIL'], s.storage.map(storageCells)).map((l) => `  ${l}`)),
    '',
    'OPERATIONS',
    ...(s.operations.length === 0
      ? ['  (none)']
      : table(['NAMESPACE', 'NAME', 'TYPE', 'VM', 'PHASE', 'DETAIL'], s.operations.map(opCells)).map((l) => `  ${l}`)),
    '',
    'AUDIT (latest security records)',
    ...(s.audit.length === 0 ? ['  (none yet)'] : s.audit.slice(-6).map((r) => `  ${auditTime(r)}  ${r.type.padEnd(20)} ${r.name}`)),
  ];
  if (steps.length > 0) {
    const room = Math.max(4, rows - 1 - out.length - 2);
    out.push('', 'DEMO', ...steps.slice(-room).map((l) => `  ${l}`));
  }
  return out;
}

/** Condition types without the `VirtualMachine` prefix they share (`ClassReady`, `IPAddressReady`). */
const shortCondition = (c: string): string => c.replace(/^(!?)VirtualMachine(?=[A-Z])/, '$1');
const vmCells = (v: VMRow): string[] => [v.namespace, v.name, v.phase || '-', v.node || '-', v.ip || '-', v.conditions.map(shortCondition).join(' ') || '-'];
const storageCells = (r: StorageRow): string[] => [r.kind, r.namespace, r.name, r.phase || '-', r.progress === '' ? '-' : progressBar(r.progress), r.detail];

/** `[██████░░░░░░░░░░░░░░]  31.0%` from a status.progress such as `31%` or `31.0%`; the text as it is when it is not a percentage. */
export function progressBar(progress: string, width = 20): string {
  const value = /^(\d+(?:\.\d+)?)%$/.exec(progress.trim());
  if (value === null) return progress;
  const ratio = Math.min(1, Math.max(0, Number(value[1]) / 100));
  const full = Math.round(ratio * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}] ${`${(ratio * 100).toFixed(1)}%`.padStart(6)}`;
}

const opCells = (o: OperationRow): string[] => [o.namespace, o.name, o.type, o.vm, o.phase || '-', o.detail || ''];

/** Plain mode: one line per thing that changed between two snapshots. */
export function changes(before: Snapshot | undefined, now: Snapshot): string[] {
  const known = new Set((before?.audit ?? []).map((r) => JSON.stringify(r)));
  return [
    ...changed(
      before?.vms,
      now.vms,
      (v) => `${v.namespace}/${v.name}`,
      (v) => [v.phase, v.node, v.ip],
      vmLine,
    ),
    ...changed(
      before?.storage,
      now.storage,
      (r) => `${r.kind}/${r.namespace}/${r.name}`,
      (r) => [r.phase, r.progress, r.detail],
      storageLine,
    ),
    ...changed(
      before?.operations,
      now.operations,
      (o) => `${o.namespace}/${o.name}`,
      (o) => [o.phase, o.detail],
      operationLine,
    ),
    ...now.audit.filter((r) => !known.has(JSON.stringify(r))).map((r) => `audit: ${r.type}: ${r.name}`),
  ];
}

/** A line for every row that is new or whose `fields` differ from before. */
function changed<T>(before: readonly T[] | undefined, now: readonly T[], key: (r: T) => string, fields: (r: T) => string[], line: (r: T) => string): string[] {
  const seen = new Map((before ?? []).map((r) => [key(r), fields(r).join('\0')]));
  return now.filter((r) => seen.get(key(r)) !== fields(r).join('\0')).map(line);
}

const vmLine = (v: VMRow): string =>
  `vm ${v.namespace}/${v.name}: ${v.phase || '-'}${v.node ? ` on ${v.node}` : ''}${v.ip ? ` ip ${v.ip}` : ''} [${v.conditions.join(' ')}]`;
const storageLine = (r: StorageRow): string =>
  `${r.kind} ${r.namespace}/${r.name}: ${r.phase || '-'}${r.progress === '' ? '' : ` ${progressBar(r.progress)}`}${r.detail ? ` ${r.detail}` : ''}`;
const operationLine = (o: OperationRow): string => `operation ${o.namespace}/${o.name} (${o.type} ${o.vm}): ${o.phase || '-'}${o.detail ? ` ${o.detail}` : ''}`;

/** Draw `lines` over the previous frame: cursor home, each line cut to `width` and cleared to its end, the rest cleared. */
export function frame(lines: readonly string[], width: number, first: boolean): string {
  const cut = lines.map((l) => ([...l].length > width ? `${[...l].slice(0, Math.max(0, width - 1)).join('')}…` : l));
  return `${first ? '\x1b[2J' : ''}\x1b[H${cut.map((l) => `${l}\x1b[K`).join('\n')}\n\x1b[J`;
}
