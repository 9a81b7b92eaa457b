/**
 * Label selector strings (`labelSelector=` of list and watch requests): `k`, `!k`, `k=v`, `k==v`,
 * `k!=v`, `k in (a,b)`, `k notin (a,b)`, comma separated. Only split here; the apiserver evaluates them.
 */

/** The requirements of a selector: split on commas outside parentheses. */
export function splitLabelSelector(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** One requirement: leading `!` and spaces, the key, spaces, the rest (operator and values). */
export const SELECTOR_REQUIREMENT = /^(\s*!?\s*)([^\s!=()]+)(\s*)(.*)$/s;

/** The label keys a selector names (each once, in order). */
export function labelSelectorKeys(selector: string): string[] {
  const keys = new Set<string>();
  for (const req of splitLabelSelector(selector)) {
    const key = SELECTOR_REQUIREMENT.exec(req)?.[2];
    if (key !== undefined) keys.add(key);
  }
  return [...keys];
}

/**
 * The labels to give an object so it matches `selector` as `source` does: the source's values of the
 * keys the selector names. For every requirement form, an object carrying these matches when the
 * source matches (a key the source lacks stays absent).
 */
export function labelsMatchingAs(selector: string, source: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of labelSelectorKeys(selector)) {
    const value = source?.[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
