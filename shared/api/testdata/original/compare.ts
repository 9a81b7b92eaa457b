/**
 * Differences between our generated CRDs and the original's published ones (original-crds.json), by
 * property path under `spec`: a path only one side has, or a different type, pattern, enum, default or
 * required list. Each difference has a key, `<Kind> <version> <path>: <field>` (or `: only in ours`,
 * `: only in the original`, `: not served`), which the reviewed allow-list names, and the details.
 */
import { readFileSync } from 'node:fs';
import { toCRD } from '../../k8s/crd.js';
import { PUBLIC_RESOURCES } from '../../registry.js';
import { CRD_LABELS } from '../../resources/common.js';
import type { OriginalFacts } from './extract.js';
import { ORIGINAL_FACTS } from './extract.js';
import { specFacts, type Facts, type FactsByPath } from './flatten.js';

export function originalFacts(): OriginalFacts {
  return JSON.parse(readFileSync(ORIGINAL_FACTS, 'utf8')) as OriginalFacts;
}

/** Our CRDs as facts: kind -> version -> path -> facts. */
export function ourFacts(): Record<string, Record<string, FactsByPath>> {
  return Object.fromEntries(PUBLIC_RESOURCES.map((def) => [def.kind, specFacts(toCRD(def, CRD_LABELS) as Record<string, unknown>)]));
}

const FIELDS = ['type', 'pattern', 'enum', 'default', 'required'] as const;
const show = (v: unknown): string => (v === undefined ? 'none' : JSON.stringify(v));

export interface Difference {
  key: string;
  detail: string;
}

function factDiffs(at: string, ours: Facts, theirs: Facts): Difference[] {
  return FIELDS.flatMap((f) => {
    const a = show(ours[f]);
    const b = show(theirs[f]);
    return a === b ? [] : [{ key: `${at}: ${f}`, detail: `ours ${a}, original ${b}` }];
  });
}

/** Every difference for the kinds the original publishes (paths under a path only one side has are not repeated). */
export function differences(original: OriginalFacts = originalFacts(), ours = ourFacts()): Difference[] {
  const out: Difference[] = [];
  const only = (key: string): void => void out.push({ key, detail: '' });
  for (const [kind, versions] of Object.entries(original.kinds)) {
    for (const [version, theirs] of Object.entries(versions)) {
      const mine = ours[kind]?.[version];
      if (mine === undefined) {
        only(`${kind} ${version}: not served`);
        continue;
      }
      const under = (set: FactsByPath, path: string): boolean =>
        Object.keys(set).some((p) => p !== path && path.startsWith(p) && /^[.[{]/.test(path.slice(p.length)) && !(p in (set === mine ? theirs : mine)));
      for (const [path, f] of Object.entries(theirs)) {
        const m = mine[path];
        if (m === undefined) {
          if (!under(theirs, path)) only(`${kind} ${version} ${path || '<root>'}: only in the original`);
        } else {
          out.push(...factDiffs(`${kind} ${version} ${path || '<root>'}`, m, f));
        }
      }
      for (const path of Object.keys(mine)) {
        if (!(path in theirs) && !under(mine, path)) only(`${kind} ${version} ${path || '<root>'}: only in ours`);
      }
    }
  }
  return out;
}
