/**
 * Port-forward into a real QEMU guest, against the real apiserver (the set-up: agent-world.ts): the
 * virt-api stand-in's `portforward/<port>` WebSocket of a VM with a real guest reaches that TCP port of
 * the guest (a host forward of its user-mode network, made on first use). A `nc -l` started over the
 * serial console says hello through it, and what the test sends arrives in the guest. Bad input: a
 * port that is no TCP port closes the session with the reason; a port nothing listens on closes it;
 * the stand-in serves on. Fails, saying so, where qemu-system-x86_64 is not installed.
 */
import { describe, expect, test } from '@jest/globals';
import { WebSocket } from 'ws';
import { rootLogger } from '../../../shared/log/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { useBootedGuest } from './agent-world.js';
import { requireQemu } from './qemu.js';

const qemu = await requireQemu();
const BOOT_MS = 240_000;
const STEP_MS = 90_000;
const log = rootLogger.child({ component: 'guests-port-forward-test' });

/** A port-forward session: what came back so far, how it closed (once it has). */
interface Forward {
  ws: WebSocket;
  received(): string;
  closed(): { code: number; reason: string } | undefined;
}

describe('port-forward into a real QEMU guest', () => {
  const guest = useBootedGuest({ qemu, log, prefix: 'guests-pf', vm: 'pf', bootMs: BOOT_MS });

  async function forward(port: string): Promise<Forward> {
    const url = `${guest.world.virtApi.url.replace(/^http/, 'ws')}/apis/subresources.kubevirt.io/v1/namespaces/${guest.world.ns}/virtualmachineinstances/pf/portforward/${port}`;
    const ws = new WebSocket(url, 'plain.kubevirt.io');
    let text = '';
    let end: { code: number; reason: string } | undefined;
    ws.on('message', (b: Buffer) => (text += b.toString('utf8')));
    ws.on('close', (code, reason) => (end = { code, reason: reason.toString('utf8') }));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    return { ws, received: () => text, closed: () => end };
  }

  test(
    'the portforward WebSocket reaches a port the guest listens on, both ways',
    async () => {
      await guest.shell.run('((echo hello-from-guest; sleep 60) | nc -l -p 7777 > /tmp/got &)');
      // nc listens once its job runs; a session that came too early is closed, so try until it greets.
      const session = await waitFor(
        'the guest greeting through the port-forward',
        async () => {
          const f = await forward('7777');
          const seen = await waitFor(
            'a greeting or a close',
            () => (f.received().includes('hello-from-guest') ? 'greeted' : f.closed() !== undefined ? 'closed' : undefined),
            { timeoutMs: 20_000, intervalMs: 200 },
          ).catch(() => 'silent');
          if (seen === 'greeted') return f;
          f.ws.close();
          return undefined;
        },
        { timeoutMs: STEP_MS, intervalMs: 1000 },
      );
      session.ws.send(Buffer.from('from-the-host\n'), { binary: true });
      await waitFor('the host bytes in the guest', async () => ((await guest.shell.run('cat /tmp/got')).includes('from-the-host') ? true : undefined), {
        timeoutMs: STEP_MS,
        intervalMs: 2000,
      });
      session.ws.close();
    },
    3 * STEP_MS,
  );

  test(
    'a port that is no TCP port, or one nothing listens on, closes the session with the reason; the stand-in serves on',
    async () => {
      const bad = await forward('0');
      const badEnd = await waitFor('the bad port session closed', () => bad.closed(), { timeoutMs: 30_000 });
      expect(badEnd.code).toBe(1011);
      expect(badEnd.reason).toContain('0 is not a TCP port');

      const nobody = await forward('7778');
      await waitFor('the session to a port nothing listens on closed', () => nobody.closed(), { timeoutMs: 60_000 });
      expect(nobody.received()).toBe('');

      // The guest and the stand-in go on.
      expect(await guest.shell.run('echo alive-$((40+2))')).toContain('alive-42');
      expect(guest.world.backend.byVm(guest.world.ns, 'pf')?.running).toBe(true);
    },
    3 * STEP_MS,
  );
});
