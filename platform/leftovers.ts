/**
 * What a platform killed hard (SIGKILL, a power cut of the terminal) leaves behind: its children run
 * in process groups of their own and outlive it. The next `npm start` finds their work directories
 * by `platform.json`, and stops every recorded child whose platform is gone and whose command line
 * still names that work directory or that platform's unit bundles (so a recycled pid is never hit).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { removeLeftoverNetns } from './route-forge.js';

interface Recorded {
  platformPid: number;
  children: { name: string; pid: number }[];
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function killGroupOr(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    process.kill(pid, 'SIGKILL');
  }
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** Work directories of earlier platforms under `bases` (`virt-platform-*`) plus `extra` ones. */
export function earlierWorkDirs(bases: readonly string[], extra: readonly string[] = []): string[] {
  const dirs = bases.flatMap((b) => {
    try {
      return readdirSync(b)
        .filter((d) => d.startsWith('virt-platform-'))
        .map((d) => join(b, d));
    } catch {
      return [];
    }
  });
  return [...dirs, ...extra].filter((d) => existsSync(join(d, 'platform.json')));
}

/** SIGKILL the orphans of dead platforms; returns what was stopped, as `name (pid) from dir`. */
export async function stopLeftovers(workDirs: readonly string[], bundleRoot: string): Promise<string[]> {
  const stopped: string[] = [];
  for (const dir of workDirs) {
    let rec: Recorded;
    try {
      rec = JSON.parse(readFileSync(join(dir, 'platform.json'), 'utf8')) as Recorded;
    } catch {
      continue;
    }
    if (rec.platformPid === process.pid || alive(rec.platformPid)) continue;
    for (const c of rec.children) {
      const cmd = commandLine(c.pid);
      if (!alive(c.pid) || !(cmd.includes(dir) || cmd.includes(`virt-platform/${rec.platformPid}/`))) continue;
      try {
        // Its process group, when it leads one: what the unit started (route-forge's `ip monitor`) goes with it.
        killGroupOr(c.pid);
        stopped.push(`${c.name} (pid ${c.pid}) from ${dir}`);
      } catch {
        // gone meanwhile
      }
    }
    const netns = await removeLeftoverNetns(dir);
    if (netns !== undefined) stopped.push(`network namespace ${netns} from ${dir}`);
  }
  // Unit bundles of platforms that are gone (a clean stop removes its own).
  for (const pid of existsSync(bundleRoot) ? readdirSync(bundleRoot) : []) {
    if (/^\d+$/.test(pid) && Number(pid) !== process.pid && !alive(Number(pid))) await rm(join(bundleRoot, pid), { recursive: true, force: true });
  }
  return stopped;
}
