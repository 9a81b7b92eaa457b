import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rootLogger } from '../../../../shared/log/index.js';
import type { GuestSockets } from './guest-stream.js';
import { VirtApiStandIn } from './virt-api-stand-in.js';

/** Guests as the stand-in sees them: `web` runs a real guest whose agent answers, `mute` one whose agent does not, others none. */
const asked: { vm: string; action: string; unfreezeMs: number | undefined }[] = [];
const guests: GuestSockets = {
  socketOf: () => undefined,
  fsFreeze: (namespace, name, action, unfreezeMs) => {
    asked.push({ vm: `${namespace}/${name}`, action, unfreezeMs });
    if (name === 'mute') return Promise.reject(new Error('guest agent: no answer within 10000 ms'));
    return Promise.resolve(name === 'web' ? 'done' : 'no-guest');
  },
};

describe('the virt-api stand-in: freeze and unfreeze of a real guest', () => {
  const standIn = new VirtApiStandIn({ port: 0, log: rootLogger, guests });
  beforeAll(() => standIn.start());
  afterAll(() => standIn.stop());

  const put = async (vm: string, sub: string, body?: unknown): Promise<{ status: number; message: string }> => {
    const res = await fetch(`${standIn.url}/apis/subresources.kubevirt.io/v1/namespaces/ns/virtualmachineinstances/${vm}/${sub}`, {
      method: 'PUT',
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await res.text();
    return { status: res.status, message: text === '' ? '' : ((JSON.parse(text) as { message?: string }).message ?? '') };
  };

  it('freezes with the unfreeze timeout given, thaws, and records both', async () => {
    asked.length = 0;
    expect((await put('web', 'freeze', { unfreezeTimeout: '90s' })).status).toBe(200);
    expect((await put('web', 'unfreeze')).status).toBe(200);
    expect(asked).toEqual([
      { vm: 'ns/web', action: 'freeze', unfreezeMs: 90_000 },
      { vm: 'ns/web', action: 'thaw', unfreezeMs: undefined },
    ]);
    expect(standIn.calls.filter((c) => c.name === 'web').map((c) => c.subresource)).toEqual(['freeze', 'unfreeze']);
  });

  it('a VM without a real guest here is only recorded (200), as before', async () => {
    expect((await put('other', 'freeze')).status).toBe(200);
  });

  it.each([['soon'], [''], [30], ['0s']])('refuses unfreezeTimeout %p with 400 naming it; the agent is not asked', async (given) => {
    asked.length = 0;
    const answer = await put('web', 'freeze', { unfreezeTimeout: given });
    expect(answer.status).toBe(400);
    expect(answer.message).toBe(`unfreezeTimeout: ${JSON.stringify(given)} is not a duration such as 30s or 5m`);
    expect(asked).toEqual([]);
  });

  it('a guest agent that does not answer: 500 naming the VM and the agent; the stand-in goes on serving', async () => {
    const answer = await put('mute', 'freeze');
    expect(answer).toEqual({ status: 500, message: 'freeze of ns/mute: guest agent: no answer within 10000 ms' });
    expect((await put('web', 'unfreeze')).status).toBe(200);
  });
});
