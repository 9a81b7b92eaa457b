import { describe, expect, it } from '@jest/globals';
import { waitFor } from './wait.js';

describe('waitFor', () => {
  it('returns the first truthy value, probing again after a falsy value or an error', async () => {
    const answers: Array<() => unknown> = [
      () => false,
      () => {
        throw new Error('not yet');
      },
      () => 'ready',
    ];
    let calls = 0;
    await expect(waitFor('the answer', () => answers[calls++](), { intervalMs: 1 })).resolves.toBe('ready');
    expect(calls).toBe(3);
  });

  it('stops at once with the reason abortIf gives, without probing again', async () => {
    let probes = 0;
    const aborted = waitFor(
      'the server',
      () => {
        probes++;
        return false;
      },
      { intervalMs: 1, abortIf: () => (probes >= 2 ? 'it exited with code 1' : undefined) },
    );
    await expect(aborted).rejects.toThrow('the server: it exited with code 1');
    expect(probes).toBe(2);
  });

  it('names what it waited for and the last error when the deadline passes', async () => {
    const late = waitFor(
      'the lease',
      () => {
        throw new Error('connection refused');
      },
      { timeoutMs: 20, intervalMs: 5 },
    );
    await expect(late).rejects.toThrow('timed out waiting for the lease (20 ms); last error: connection refused');
  });
});
