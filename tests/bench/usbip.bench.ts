/**
 * USB/IP benchmark (daemons/dra/usbip), on loopback in this process, shipped defaults:
 *
 * 1. URB codec throughput on one core: messages per second for encode, decode and both, of the three
 *    shapes that dominate a device's traffic (an IN request without data, its 64-byte answer, a
 *    512-byte OUT bulk transfer). Baseline (1.00x): reading the same 48-byte headers field by field
 *    and copying them, i.e. the least any decoder must do. Target: > 200,000 messages/s.
 * 2. Handshake latency over TCP: a devlist of BENCH_DEVICES fixture devices (includes the sysfs scan
 *    of a fixture tree on tmpfs or disk), and an import (connect, request, bind + hand-over on
 *    FakeKernelExport, reply), without and with the shared-secret handshake. Baseline (1.00x): a TCP
 *    connect + 8-byte request + 8-byte answer + close to a trivial server in the same process. Rows
 *    marked "monitor's scan" answer from a scan made once (as the DRA daemon can pass its monitor's
 *    last scan), which separates the sysfs read from the protocol work.
 *
 * Knobs: BENCH_URB_MESSAGES, BENCH_ROUNDS, BENCH_HANDSHAKES, BENCH_DEVICES.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { z } from 'zod';
import { env } from '../../shared/config/index.js';
import { waitFor } from '../../shared/testing/wait.js';
import { scanUsbDevices, writeFixtureSysfs, type FixtureDevice } from '../../daemons/dra/discovery/index.js';
import { importRemote, listRemote } from '../../daemons/dra/usbip/client.js';
import { FakeKernelExport } from '../../daemons/dra/usbip/fake-kernel-export.js';
import { startUsbipServer } from '../../daemons/dra/usbip/server.js';
import { cmdSubmit, decodeUrb, DIR_IN, encodeUrb, retSubmit, type UrbMessage } from '../../daemons/dra/usbip/urb-codec.js';
import { interleaved, knobs, medianBy, nowMs, print, printComparison, summarize, type Measurement } from './lib.js';

const settings = knobs(
  z.object({
    BENCH_URB_MESSAGES: env.int(300_000, 1000).describe('URB messages per codec run'),
    BENCH_ROUNDS: env.int(5, 1).describe('Runs per codec row, interleaved; the median run is reported'),
    BENCH_HANDSHAKES: env.int(300, 10).describe('Devlists and imports per latency row'),
    BENCH_DEVICES: env.int(8, 1).describe('Fixture devices the server lists'),
  }),
);
const log = pino({ level: 'silent' });
const SECRET = Buffer.alloc(32, 0x5a);

// ---- 1. codec ----

const MIX: UrbMessage[] = [
  cmdSubmit({ seqnum: 1, devid: 0x00030002, direction: DIR_IN, ep: 1, transferBufferLength: 64 }),
  retSubmit({ seqnum: 1, data: Buffer.alloc(64, 0xab), actualLength: 64 }),
  cmdSubmit({ seqnum: 2, devid: 0x00030002, ep: 2, data: Buffer.alloc(512, 0xcd) }),
];
const ENCODED = MIX.map(encodeUrb);
const directionOf = (): 0 | 1 => DIR_IN;

interface CodecVariant {
  readonly name: string;
  readonly run: (n: number) => number;
}

const VARIANTS: CodecVariant[] = [
  {
    name: 'raw header read (12 fields + copy)',
    run: (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const buf = ENCODED[i % 3];
        for (let at = 0; at < 48; at += 4) sink += buf.readUInt32BE(at);
        sink += Buffer.from(buf.subarray(0, 48)).length;
      }
      return sink;
    },
  },
  {
    name: 'decode',
    run: (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const r = decodeUrb(ENCODED[i % 3], 0, { directionOf });
        if (r.kind === 'ok') sink += r.length;
      }
      return sink;
    },
  },
  {
    name: 'encode',
    run: (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) sink += encodeUrb(MIX[i % 3]).length;
      return sink;
    },
  },
  {
    name: 'encode + decode',
    run: (n) => {
      let sink = 0;
      for (let i = 0; i < n; i++) {
        const r = decodeUrb(encodeUrb(MIX[i % 3]), 0, { directionOf });
        if (r.kind === 'ok') sink += r.length;
      }
      return sink;
    },
  },
];

async function codec(): Promise<void> {
  const n = settings.BENCH_URB_MESSAGES;
  for (const v of VARIANTS) v.run(Math.min(n, 20_000)); // warm-up
  const runs = await interleaved(VARIANTS, settings.BENCH_ROUNDS, (v) => {
    const start = nowMs();
    v.run(n);
    const ms = nowMs() - start;
    return Promise.resolve({ ms, rate: n / (ms / 1000) });
  });
  const rows: Measurement[] = VARIANTS.map((v, i) => {
    const median = medianBy(runs[i] ?? [], (r) => r.ms);
    const note = v.name === VARIANTS[0]?.name ? '' : median.rate > 200_000 ? 'target > 200k/s: met' : 'target > 200k/s: MISSED';
    return { name: v.name, values: { rate: median.rate / 1000 }, note };
  });
  printComparison(
    `URB codec, ${n} messages per run (CMD_SUBMIT IN / RET_SUBMIT 64 B / CMD_SUBMIT OUT 512 B), median of ${settings.BENCH_ROUNDS}`,
    [{ key: 'rate', label: 'k msgs/s', ratio: true }],
    rows,
    VARIANTS[0]?.name ?? '',
  );
}

// ---- 2. handshakes ----

async function baselineServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((s) => {
    s.once('data', () => s.end(Buffer.alloc(8)));
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0 };
}

function tcpRoundTrip(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, noDelay: true }, () => s.write(Buffer.alloc(8)));
    s.on('data', () => undefined);
    s.once('close', () => resolve());
    s.once('error', reject);
  });
}

async function latency(name: string, times: number, once: () => Promise<void>, between?: () => Promise<void>): Promise<Measurement> {
  for (let i = 0; i < 10; i++) {
    await once();
    await between?.();
  }
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = nowMs();
    await once();
    samples.push(nowMs() - start);
    await between?.();
  }
  const s = summarize(samples);
  return { name, values: { p50: s.p50, p90: s.p90, p99: s.p99 } };
}

async function handshakes(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'usbip-bench-'));
  const devices: FixtureDevice[] = Array.from({ length: settings.BENCH_DEVICES }, (_, i) => ({
    busId: `1-${i + 1}`,
    busNum: 1,
    devNum: i + 2,
    vendorId: '046d',
    productId: (0xc52b + i).toString(16),
    interfaces: [{ class: '03', subClass: '01', protocol: '02' }],
  }));
  await writeFixtureSysfs(root, devices);
  const kernel = new FakeKernelExport();
  const plain = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: root, kernel, log });
  const guarded = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: root, kernel, log, secret: SECRET });
  // The DRA daemon can hand the server its monitor's last scan instead of a fresh one per request.
  const lastScan = await scanUsbDevices(root);
  const cached = await startUsbipServer({ host: '127.0.0.1', port: 0, sysRoot: root, kernel, log, scan: () => Promise.resolve(lastScan) });
  const base = await baselineServer();
  const peer = (port: number, secret?: Buffer): { host: string; port: number; secret: Buffer | undefined } => ({ host: '127.0.0.1', port, secret });
  let imported: { destroy(): void } | undefined;
  const importOnce = (port: number, secret?: Buffer) => async (): Promise<void> => {
    imported = (await importRemote({ ...peer(port, secret), busId: '1-1' })).socket;
  };
  const release = async (): Promise<void> => {
    imported?.destroy();
    await waitFor('device available again', () => kernel.states.get('1-1') === 'available', { intervalMs: 1 });
  };
  try {
    const n = settings.BENCH_HANDSHAKES;
    const rows = [
      await latency('TCP request/answer/close', n, () => tcpRoundTrip(base.port)),
      await latency(`devlist (${settings.BENCH_DEVICES} devices)`, n, async () => void (await listRemote(peer(plain.port)))),
      await latency(`devlist, monitor's scan (no sysfs read)`, n, async () => void (await listRemote(peer(cached.port)))),
      await latency(`devlist + shared-secret handshake`, n, async () => void (await listRemote(peer(guarded.port, SECRET)))),
      await latency('import', n, importOnce(plain.port), release),
      await latency('import + shared-secret handshake', n, importOnce(guarded.port, SECRET), release),
      await latency(`import, monitor's scan (no sysfs read)`, n, importOnce(cached.port), release),
    ];
    printComparison(
      `USB/IP handshake latency over loopback, ${n} each (ms)`,
      [
        { key: 'p50', label: 'p50', digits: 3, ratio: true },
        { key: 'p90', label: 'p90', digits: 3 },
        { key: 'p99', label: 'p99', digits: 3, ratio: true },
      ],
      rows,
      'TCP request/answer/close',
    );
  } finally {
    imported?.destroy();
    await plain.close();
    await guarded.close();
    await cached.close();
    base.server.close();
    await rm(root, { recursive: true, force: true });
  }
}

print(`USB/IP benchmark (node ${process.version}, pid ${process.pid})`);
await codec();
await handshakes();
