/**
 * One YAML document for plain JSON data (the generated CRDs), written by js-yaml: block style, lists
 * flush with their key, no line folding, strings a YAML 1.1 or 1.2 reader could take for anything else
 * quoted.
 */
import { dump } from 'js-yaml';

export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** One YAML document for a JSON object, optionally preceded by comment lines. */
export function toYaml(doc: { [key: string]: Json }, comments: readonly string[] = []): string {
  const body = dump(doc, { seqNoIndent: true, lineWidth: -1, noRefs: true, quoteStyle: 'double' });
  return [...comments.map((c) => `# ${c}\n`), body].join('');
}
