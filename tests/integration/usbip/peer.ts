/**
 * One side of the two-node USB/IP test, run as its own process inside a network namespace
 * (`ip netns exec NS node --import tsx peer.ts export|import`). Kernel-facing steps go to the fakes
 * (FakeKernelExport, FakeKernelImport: no usbip modules here); sockets, TCP and the protocol are real.
 * Reports JSON lines on stdout.
 *
 *   export: SYS_ROOT, HOST, PORT, SECRET_FILE  -> {"listening":port}, then serves until SIGTERM
 *   import: HOST, PORT, BUSID, SECRET_FILE, RECORDS -> {"attached":record,"descriptor":hex},
 *           then, as a restarted daemon, {"restored":[records]}, {"detached":true}
 */
import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { parseSecret } from '../../../daemons/dra/usbip/auth.js';
import { FakeKernelExport } from '../../../daemons/dra/usbip/fake-kernel-export.js';
import { FakeKernelImport } from '../../../daemons/dra/usbip/fake-kernel-import.js';
import { readMessage, writeAll } from '../../../daemons/dra/usbip/framing.js';
import { UsbipImporter } from '../../../daemons/dra/usbip/importer.js';
import { AttachmentStore } from '../../../daemons/dra/usbip/records.js';
import { startUsbipServer } from '../../../daemons/dra/usbip/server.js';
import { cmdSubmit, decodeUrb, DIR_IN, encodeUrb } from '../../../daemons/dra/usbip/urb-codec.js';

const log = pino({ level: process.env['LOG_LEVEL'] ?? 'warn' }, pino.destination(2));
const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required`);
  return value;
};
const say = (value: unknown): void => {
  process.stdout.write(`${JSON.stringify(value)}\n`);
};

async function exportSide(): Promise<void> {
  const secret = parseSecret(await readFile(env('SECRET_FILE')), 'SECRET_FILE');
  const kernel = new FakeKernelExport(new Map([['3-2', { idVendor: 0x046d, idProduct: 0xc52b }]]));
  const server = await startUsbipServer({ host: env('HOST'), port: Number(env('PORT')), sysRoot: env('SYS_ROOT'), kernel, log, secret });
  say({ listening: server.port });
  process.once('SIGTERM', () => {
    void server.close().then(() => process.exit(0));
  });
}

async function importSide(): Promise<void> {
  const secret = parseSecret(await readFile(env('SECRET_FILE')), 'SECRET_FILE');
  const vhci = new FakeKernelImport();
  const make = (): UsbipImporter => new UsbipImporter({ kernel: vhci, store: new AttachmentStore(env('RECORDS')), log, secret });
  const first = make();
  await first.start();
  const record = await first.attach({ key: 'usb-node-a-3-2', host: env('HOST'), port: Number(env('PORT')), busId: env('BUSID'), node: 'node-a' });
  const socket = vhci.socketOf(record.port);
  if (socket === undefined) throw new Error('fake vhci holds no socket after attach');
  await writeAll(
    socket,
    encodeUrb(cmdSubmit({ seqnum: 1, devid: record.devid, direction: DIR_IN, transferBufferLength: 18, setup: Buffer.from('8006000100001200', 'hex') })),
  );
  const reply = await readMessage(socket, (b) => decodeUrb(b, 0, { directionOf: () => DIR_IN }), { timeoutMs: 10_000, what: 'RET_SUBMIT' });
  say({ attached: record, descriptor: reply.command === 'RET_SUBMIT' ? reply.data.toString('hex') : null });
  const restarted = make();
  say({ restored: await restarted.start() });
  await restarted.detach(record.key);
  say({ detached: restarted.list().length === 0 });
  vhci.closeAll();
}

const mode = process.argv[2];
(mode === 'export' ? exportSide() : mode === 'import' ? importSide() : Promise.reject(new Error(`mode export|import, not ${mode}`))).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
