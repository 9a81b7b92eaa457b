/**
 * A small YAML emitter for plain JSON data (the generated CRDs). Strings that a YAML 1.1 or 1.2 reader
 * could take for anything but a string are double-quoted (JSON string syntax is valid YAML); multi-line
 * strings become literal blocks.
 */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const PLAIN = /^[A-Za-z][A-Za-z0-9_.,()/ -]*[A-Za-z0-9_.)]$|^[A-Za-z]$/;
const RESERVED = /^(y|yes|n|no|true|false|on|off|null)$/i;

function scalar(value: string | number | boolean | null): string {
  if (typeof value === 'string') return PLAIN.test(value) && !RESERVED.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`cannot emit ${value} as YAML`);
  return String(value);
}

function isBlockString(value: string): boolean {
  return value.includes('\n') && !/[ \t]\n|[ \t]$|\t|^[ \n]/.test(value) && !value.includes('\r');
}

function key(name: string): string {
  return /^[A-Za-z0-9_./-]+$/.test(name) && !RESERVED.test(name) && !/^[0-9.-]/.test(name) ? name : JSON.stringify(name);
}

/** The lines of `value` placed after `prefix` (a key or list dash) at `indent`. */
function emitInto(out: string[], prefix: string, value: Json, indent: string): void {
  if (Array.isArray(value)) {
    if (value.length === 0) return void out.push(`${prefix} []`);
    out.push(prefix);
    for (const item of value) emitItem(out, item, indent);
  } else if (value !== null && typeof value === 'object') {
    if (Object.keys(value).length === 0) return void out.push(`${prefix} {}`);
    out.push(prefix);
    emitMap(out, value, `${indent}  `);
  } else if (typeof value === 'string' && isBlockString(value)) {
    out.push(`${prefix} |-`);
    for (const line of value.split('\n')) out.push(line === '' ? '' : `${indent}  ${line}`);
  } else {
    out.push(`${prefix} ${scalar(value)}`);
  }
}

function emitMap(out: string[], map: { [key: string]: Json }, indent: string): void {
  for (const [k, v] of Object.entries(map)) emitInto(out, `${indent}${key(k)}:`, v, indent);
}

function emitItem(out: string[], item: Json, indent: string): void {
  if (item !== null && typeof item === 'object' && !Array.isArray(item) && Object.keys(item).length > 0) {
    // The first key shares the dash line; the rest align under it.
    const lines: string[] = [];
    emitMap(lines, item, `${indent}  `);
    out.push(`${indent}- ${lines[0].slice(indent.length + 2)}`, ...lines.slice(1));
    return;
  }
  emitInto(out, `${indent}-`, item, `${indent}  `);
}

/** One YAML document for a JSON object, optionally preceded by comment lines. */
export function toYaml(doc: { [key: string]: Json }, comments: readonly string[] = []): string {
  const out = comments.map((c) => `# ${c}`);
  if (Object.keys(doc).length === 0) out.push('{}');
  else emitMap(out, doc, '');
  return `${out.join('\n')}\n`;
}
