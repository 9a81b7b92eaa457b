/**
 * Label selector strings (`labelSelector=` of list and watch requests): `k`, `!k`, `k=v`, `k==v`,
 * `k!=v`, `k in (a,b)`, `k notin (a,b)`, comma separated. Keys and the few renamed values are mapped;
 * anything the grammar does not know is left as written (the apiserver reports it).
 */
import { SELECTOR_REQUIREMENT as REQUIREMENT, splitLabelSelector as splitTopLevel } from '../../../shared/kube/label-selector.js';
import type { Direction, Renamer } from './names.js';

export function rewriteLabelSelectorString(r: Renamer, selector: string, dir: Direction): string {
  return splitTopLevel(selector)
    .map((req) => rewriteRequirement(r, req, dir))
    .join(',');
}

const SET_OP = /^((?:in|notin)\s*\()([^)]*)(\).*)$/s;
const EQ_OP = /^(==|=|!=)(\s*)(.*?)(\s*)$/s;

function rewriteRequirement(r: Renamer, req: string, dir: Direction): string {
  const m = REQUIREMENT.exec(req);
  if (!m) return req;
  const [, lead = '', key = '', space = '', rest = ''] = m;
  const newKey = r.key('labels', key, dir);
  const originalKey = dir === 'rename' ? key : newKey;
  const value = (v: string): string => r.labelValue(originalKey, v, dir);
  let newRest = rest;
  const set = SET_OP.exec(rest);
  const eq = EQ_OP.exec(rest);
  if (set) {
    const [, open = '', values = '', close = ''] = set;
    newRest =
      open +
      values
        .split(',')
        .map((v) => v.replace(v.trim(), value(v.trim())))
        .join(',') +
      close;
  } else if (eq) {
    const [, op = '', s1 = '', v = '', s2 = ''] = eq;
    newRest = op + s1 + value(v) + s2;
  }
  return lead + newKey + space + newRest;
}
