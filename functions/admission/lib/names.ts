/** Kubernetes name and label syntax (apimachinery's validation rules, as messages for users). */

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/** Why `key` is not a valid label key (prefix/name), or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `label key ${JSON.stringify(key)} must be a name with an optional DNS subdomain prefix and '/'`;
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  if (prefix !== undefined && (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix))) {
    return `label key prefix ${JSON.stringify(prefix)} must be a DNS subdomain`;
  }
  if (name === undefined || name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    return `label key ${JSON.stringify(key)} must be at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63 || !QUALIFIED_NAME.test(value)) {
    return `label value ${JSON.stringify(value)} must be at most 63 alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric`;
  }
  return undefined;
}
