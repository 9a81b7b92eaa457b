/** The admission function's declaration: one POST route per webhook path, typed config and state. */
import { describe, expect, it } from '@jest/globals';
import type { FunctionDefinition } from '../../shared/runtime/index.js';
import { admissionConfig } from './config.js';
import { REVIEW_BODY_LIMIT_BYTES, admission, type AdmissionState } from './index.js';
import { WEBHOOKS } from './webhooks.js';

const declaration = admission satisfies FunctionDefinition<typeof admissionConfig, AdmissionState>;

describe('the admission declaration', () => {
  it('serves every webhook path and the conversion webhook with POST and the review body limit', () => {
    expect(declaration.routes?.map((r) => [r.method, r.path, r.bodyLimitBytes])).toEqual([
      ...WEBHOOKS.map((w) => ['post', w.path, REVIEW_BODY_LIMIT_BYTES]),
      ['post', '/convert', REVIEW_BODY_LIMIT_BYTES],
    ]);
    expect(new Set(WEBHOOKS.map((w) => w.path)).size).toBe(WEBHOOKS.length);
  });

  it('reports every bad configuration key at once', () => {
    const result = admissionConfig.safeParse({ EDITION: 'PRO', CLUSTER_POD_SUBNET_CIDR: '10.0.0.0/8,nope', LOOKUP_TIMEOUT_MS: '5' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.')).sort()).toEqual(['CLUSTER_POD_SUBNET_CIDR', 'EDITION', 'LOOKUP_TIMEOUT_MS']);
  });
});
