import { beforeAll, describe, expect, it } from '@jest/globals';
import { kubectl } from '../../env/index.js';
import { prepareApiServer } from './knative-crds.js';
import { KNATIVE_DIR, kustomize } from './manifests.js';

const dryRun = (dir: string): Promise<{ code: number; stdout: string; stderr: string }> =>
  kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=virtualization-install', '-k', dir]);

beforeAll(async () => {
  await prepareApiServer();
});

describe('the install against the real apiserver', () => {
  it('passes server-side dry-run of `kubectl apply -k knative/` with every object accepted', async () => {
    const objects = await kustomize();
    const res = await dryRun(KNATIVE_DIR);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const accepted = res.stdout
      .trim()
      .split('\n')
      .filter((line) => line.endsWith('serverside-applied (server dry run)'));
    expect(accepted).toHaveLength(objects.length);
  });

  it('passes server-side dry-run of the pre-delete hook Job', async () => {
    const res = await dryRun(`${KNATIVE_DIR}hooks/pre-delete`);
    expect(res.stderr).toBe('');
    expect(res.stdout.trim()).toBe('job.batch/pre-delete-hook serverside-applied (server dry run)');
  });
});
