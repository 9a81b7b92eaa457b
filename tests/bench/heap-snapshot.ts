/**
 * Where a server's memory is: a V8 heap snapshot (written by a process started with
 * `--heapsnapshot-signal=SIGUSR2`, on that signal) summed by what its objects are (constructor or
 * kind) and, for strings, by content: a cache that keeps a copy of the same value per object shows as
 * one string repeated thousands of times.
 *
 * The snapshot is read from a Buffer section by section (its node table and its string table), not
 * with one `JSON.parse` of the file, which V8 refuses past about 512 MB of text.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../shared/testing/wait.js';

/** The signal `heapSnapshotArgs` makes a process write a snapshot on. */
export const HEAP_SNAPSHOT_SIGNAL = 'SIGUSR2';

/** Node's arguments that make a process write a heap snapshot into `dir` on HEAP_SNAPSHOT_SIGNAL. */
export function heapSnapshotArgs(dir: string): string[] {
  return [`--heapsnapshot-signal=${HEAP_SNAPSHOT_SIGNAL}`, `--diagnostic-dir=${dir}`];
}

/**
 * Signal process `pid` and wait until its snapshot is in `dir` complete (node writes it on its main
 * thread; the file ends with the string table's closing brackets once done); the snapshot's path.
 */
export async function takeHeapSnapshot(pid: number, dir: string, timeoutMs = 600_000): Promise<string> {
  const before = new Set(snapshotsIn(dir));
  process.kill(pid, HEAP_SNAPSHOT_SIGNAL);
  let last = -1;
  return waitFor(
    'the heap snapshot to be written',
    () => {
      const file = snapshotsIn(dir).find((f) => !before.has(f));
      if (file === undefined) return undefined;
      const size = statSync(file).size;
      const done = size === last && size > 2 && readFileSync(file).subarray(-2).toString() === ']}';
      last = size;
      return done ? file : undefined;
    },
    { timeoutMs, intervalMs: 1000 },
  );
}

function snapshotsIn(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.heapsnapshot'))
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

export interface HeapShare {
  readonly what: string;
  readonly count: number;
  readonly bytes: number;
}

export interface HeapSummary {
  readonly totalBytes: number;
  readonly nodes: number;
  /** Self size by node type and name (`object Foo`, `string`, `closure bar`, `array`...), largest first. */
  readonly byKind: readonly HeapShare[];
  /** Strings by content (the first 100 characters), the most bytes first: a value copied per object. */
  readonly repeatedStrings: readonly HeapShare[];
}

/** The summary of heap snapshot `file`: the `top` largest groups of each table. */
export function summarizeHeapSnapshot(file: string, top = 25): HeapSummary {
  const buf = readFileSync(file);
  const meta = JSON.parse(section(buf, '"snapshot":', '"nodes":').replace(/,\s*$/, '')) as {
    meta: { node_fields: string[]; node_types: [string[], ...unknown[]] };
  };
  const fields = meta.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  if (typeAt === undefined || nameAt === undefined || sizeAt === undefined || typeAt < 0 || nameAt < 0 || sizeAt < 0) {
    throw new Error(`${file}: node_fields ${JSON.stringify(fields)} lack type, name or self_size`);
  }
  const types = meta.meta.node_types[0];
  const nodes = numbers(buf, '"nodes":[');
  const strings = JSON.parse(`[${section(buf, '"strings":[', undefined).replace(/\]\s*\}\s*$/, '')}]`) as string[];
  const kinds = new Map<string, { count: number; bytes: number }>();
  const texts = new Map<string, { count: number; bytes: number }>();
  const add = (m: Map<string, { count: number; bytes: number }>, key: string, bytes: number): void => {
    const have = m.get(key);
    if (have === undefined) m.set(key, { count: 1, bytes });
    else {
      have.count += 1;
      have.bytes += bytes;
    }
  };
  let total = 0;
  for (let i = 0; i + width <= nodes.length; i += width) {
    const type = types[nodes[i + typeAt] ?? -1] ?? '?';
    const name = strings[nodes[i + nameAt] ?? -1] ?? '?';
    const bytes = nodes[i + sizeAt] ?? 0;
    total += bytes;
    const isString = type === 'string' || type === 'concatenated string' || type === 'sliced string';
    add(kinds, isString || type === 'number' || type === 'hidden' ? type : `${type} ${name.slice(0, 60)}`, bytes);
    if (isString) add(texts, JSON.stringify(name.slice(0, 100)), bytes);
  }
  const ranked = (m: Map<string, { count: number; bytes: number }>): HeapShare[] =>
    [...m]
      .map(([what, v]) => ({ what, ...v }))
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, top);
  return { totalBytes: total, nodes: nodes.length / width, byKind: ranked(kinds), repeatedStrings: ranked(texts) };
}

/** The text of `buf` from just after `start` to just before `end` (or the buffer's end). */
function section(buf: Buffer, start: string, end: string | undefined): string {
  const from = buf.indexOf(start);
  if (from < 0) throw new Error(`not a heap snapshot: no ${start}`);
  const to = end === undefined ? buf.length : buf.indexOf(end, from);
  if (to < 0) throw new Error(`not a heap snapshot: no ${end ?? ''} after ${start}`);
  return buf.subarray(from + start.length, to).toString('utf8');
}

/** The unsigned integers of the array that starts after `start` (to its closing bracket). */
function numbers(buf: Buffer, start: string): Uint32Array {
  const from = buf.indexOf(start);
  if (from < 0) throw new Error(`not a heap snapshot: no ${start}`);
  const to = buf.indexOf(']', from);
  let out = new Uint32Array(1 << 20);
  let n = 0;
  let value = 0;
  let inNumber = false;
  for (let i = from + start.length; i <= to; i++) {
    const c = buf[i] ?? 0;
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      inNumber = true;
    } else if (inNumber) {
      if (n === out.length) {
        const grown = new Uint32Array(out.length * 2);
        grown.set(out);
        out = grown;
      }
      out[n++] = value;
      value = 0;
      inNumber = false;
    }
  }
  return out.subarray(0, n);
}

/** The summary as text. */
export function formatHeapSummary(title: string, s: HeapSummary): string {
  const mb = (b: number): string => (b / 1048576).toFixed(1).padStart(7);
  const lines = (rows: readonly HeapShare[]): string =>
    rows.map((r) => `${mb(r.bytes)} MB ${String(r.count).padStart(9)}x  ${r.what.length > 110 ? `${r.what.slice(0, 107)}...` : r.what}`).join('\n');
  return `\n== ${title}: ${mb(s.totalBytes).trim()} MB in ${s.nodes.toLocaleString('en-US')} heap objects ==\nself size by kind:\n${lines(s.byKind)}\nstrings by content:\n${lines(s.repeatedStrings)}\n`;
}
