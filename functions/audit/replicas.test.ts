/**
 * The duplicate filter's promise is per replica (docs/adr/0016): the README names how many replicas the
 * install allows, and that number must be the install's own.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { load } from 'js-yaml';

const read = (path: string): string => readFileSync(new URL(path, import.meta.url), 'utf8');

function maxScale(): string {
  const service = load(read('../../knative/functions/audit.yaml')) as { spec?: { template?: { metadata?: { annotations?: Record<string, string> } } } };
  const value = service.spec?.template?.metadata?.annotations?.['autoscaling.knative.dev/max-scale'];
  if (value === undefined) throw new Error('knative/functions/audit.yaml sets no autoscaling.knative.dev/max-scale');
  return value;
}

describe('the audit duplicate filter’s guarantee', () => {
  it('is stated per replica in the README, with the replica count the install allows', () => {
    const readme = read('./README.md');
    expect(readme).toContain(`each pod (up to ${maxScale()}, \`max-scale\` in knative/functions/audit.yaml) has its own filter`);
    expect(readme).toContain('a duplicate delivered to another pod is written again');
  });
});
