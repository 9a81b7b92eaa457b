/**
 * Where a server's CPU time went: the top self-time frames of a V8 `.cpuprofile` (written by a process
 * started with `node --cpu-prof --cpu-prof-dir=DIR`), and the same time grouped by npm package.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface ProfileShare {
  readonly frame: string;
  /** Share of all sampled time, 0..1. */
  readonly share: number;
}

export interface ProfileSummary {
  readonly totalMs: number;
  readonly frames: readonly ProfileShare[];
  readonly packages: readonly ProfileShare[];
  /**
   * Frames of JavaScript files (ours and npm packages, not node's internals) by their time with
   * everything they called, as a share of the busy time (idle left out): where a flat profile's time goes.
   */
  readonly inclusive: readonly ProfileShare[];
}

/** Node's arguments that make a process write its CPU profile into `dir` when it exits. */
export function cpuProfileArgs(dir: string): string[] {
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

/** The summary of the one profile in `dir` (the newest when there are several). */
export function summarizeProfileDir(dir: string, top = 25): ProfileSummary {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  const newest = files[files.length - 1];
  if (newest === undefined) throw new Error(`no .cpuprofile in ${dir}`);
  return summarizeProfile(JSON.parse(readFileSync(join(dir, newest), 'utf8')) as Profile, top);
}

export function summarizeProfile(profile: Profile, top: number): ProfileSummary {
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parents = new Map(profile.nodes.flatMap((n) => (n.children ?? []).map((child): [number, number] => [child, n.id])));
  const frames = new Map<string, number>();
  const packages = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id)?.callFrame;
    if (frame === undefined) continue;
    total += us;
    const name = frameName(frame);
    frames.set(name, (frames.get(name) ?? 0) + us);
    if (frame.functionName !== '(idle)') {
      busy += us;
      // Each frame once per sample, however deep it recurses.
      const onStack = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
        const f = nodes.get(at)?.callFrame;
        if (f !== undefined && /^file:/.test(f.url)) onStack.add(frameName(f));
      }
      for (const n of onStack) inclusive.set(n, (inclusive.get(n) ?? 0) + us);
    }
    const where = whereOf(frame);
    const pkg = /^npm:((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1];
    const group = pkg ?? (where.startsWith('node:') ? 'node internals' : where === '' ? frame.functionName || '(native)' : 'ours');
    packages.set(group, (packages.get(group) ?? 0) + us);
  }
  const ranked = (m: Map<string, number>, of: number): ProfileShare[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([frame, us]) => ({ frame, share: of === 0 ? 0 : us / of }));
  return { totalMs: total / 1000, frames: ranked(frames, total), packages: ranked(packages, total), inclusive: ranked(inclusive, busy) };
}

/** A frame's file, a file of a package as `npm:package/path`. */
function whereOf(frame: ProfileNode['callFrame']): string {
  return frame.url.replace(/^file:\/\//, '').replace(/^.*node_modules\//, 'npm:');
}

/** `function file:line`. */
function frameName(frame: ProfileNode['callFrame']): string {
  const where = whereOf(frame);
  return `${frame.functionName || '(anonymous)'} ${where === '' ? '' : `${where}:${frame.lineNumber + 1}`}`.trim();
}

/** The summary as text: one `  12.3%  frame` line each. */
export function formatProfile(title: string, summary: ProfileSummary): string {
  const lines = (shares: readonly ProfileShare[]): string =>
    shares.map((s) => `${(100 * s.share).toFixed(1).padStart(6)}%  ${s.frame.length > 120 ? `${s.frame.slice(0, 117)}...` : s.frame}`).join('\n');
  return `\n== ${title}: ${summary.totalMs.toFixed(0)} ms sampled ==\nself time by frame:\n${lines(summary.frames)}\nself time by package:\n${lines(summary.packages)}\nbusy time with callees, by JavaScript frame (share of the time not idle):\n${lines(summary.inclusive)}\n`;
}
