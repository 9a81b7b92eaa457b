/**
 * Our import side against our export side across two network namespaces joined by a veth pair, as
 * two nodes: node A (10.231.0.1) has the device in a fixture sysfs tree and runs the export server;
 * node B (10.231.0.2) imports it, attaches it (fake vhci), sends a URB through it, restarts and
 * detaches. Each side is its own process (peer.ts) in its namespace; the kernel-facing steps go to
 * the fakes. Needs root for `ip netns` (tests here run as root).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../../shared/testing/wait.js';
import { writeFixtureSysfs } from '../../../daemons/dra/discovery/index.js';
import { createNetns, type TestNetns } from '../../../shared/testing/netns.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const PEER = join(import.meta.dirname, 'peer.ts');
const A = '10.231.0.1';
const B = '10.231.0.2';

interface Peer {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  readonly stderr: string[];
  readonly exited: Promise<number | string>;
}

function runIn(netns: string, mode: 'export' | 'import', env: Record<string, string>): Peer {
  const child = spawn('ip', ['netns', 'exec', netns, process.execPath, '--import', 'tsx', PEER, mode], {
    cwd: ROOT,
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, lines, stderr, exited };
}

let work: string;
let nodeA: TestNetns;
let nodeB: TestNetns;
let exporter: Peer;
let port: number;
const secretFile = (): string => join(work, 'secret');

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'usbip-two-nodes-'));
  await writeFile(secretFile(), randomBytes(32).toString('hex'), { mode: 0o600 });
  await writeFixtureSysfs(join(work, 'sys-a'), [
    { busId: '3-2', busNum: 3, devNum: 2, vendorId: '046d', productId: 'c52b', speed: '12', product: 'USB Receiver' },
  ]);
  nodeA = await createNetns('usbip-a');
  nodeB = await createNetns('usbip-b');
  const link = `u${randomBytes(3).toString('hex')}`;
  await nodeA.ip(['link', 'add', `${link}a`, 'type', 'veth', 'peer', 'name', `${link}b`, 'netns', nodeB.name]);
  await nodeA.ip(['-batch', '-'], `link set lo up\naddr add ${A}/24 dev ${link}a\nlink set ${link}a up\n`);
  await nodeB.ip(['-batch', '-'], `link set lo up\naddr add ${B}/24 dev ${link}b\nlink set ${link}b up\n`);
  exporter = runIn(nodeA.name, 'export', { SYS_ROOT: join(work, 'sys-a'), HOST: A, PORT: '3240', SECRET_FILE: secretFile() });
  const ready = await waitFor('export server listening in node A', () => {
    if (exporter.child.exitCode !== null) throw new Error(`export side exited: ${exporter.stderr.join('')}`);
    return exporter.lines.find((l) => typeof l['listening'] === 'number');
  });
  port = ready['listening'] as number;
});

afterAll(async () => {
  exporter?.child.kill('SIGTERM');
  await exporter?.exited;
  await nodeA?.remove();
  await nodeB?.remove();
  await rm(work, { recursive: true, force: true });
});

describe('USB/IP between two nodes', () => {
  it('listens on the default port 3240 of node A', () => {
    expect(port).toBe(3240);
  });

  it('node B imports the device of node A over the veth link, a URB crosses, and the attachment survives a restart until detached', async () => {
    const records = join(work, 'state-b', 'attach-record.json');
    const importer = runIn(nodeB.name, 'import', { HOST: A, PORT: String(port), BUSID: '3-2', SECRET_FILE: secretFile(), RECORDS: records });
    const code = await importer.exited;
    expect({ code, stderr: importer.stderr.join('') }).toEqual({ code: 0, stderr: '' });
    const attached = importer.lines.find((l) => 'attached' in l);
    expect(attached?.['attached']).toMatchObject({
      key: 'usb-node-a-3-2',
      port: 0,
      hub: 'hs',
      devid: 0x00030002,
      remote: { host: A, port: 3240, busId: '3-2', node: 'node-a' },
    });
    // GET_DESCRIPTOR(DEVICE) answered by node A's stub: idVendor 046d, idProduct c52b (little-endian).
    expect(String(attached?.['descriptor']).slice(16, 24)).toBe('6d042bc5');
    const restored = importer.lines.find((l) => 'restored' in l)?.['restored'] as unknown[];
    expect(restored).toEqual([attached?.['attached']]);
    expect(importer.lines.find((l) => 'detached' in l)).toEqual({ detached: true });
    expect(JSON.parse(await readFile(records, 'utf8'))).toEqual({ version: 1, entries: [] });
  });

  it('refuses node B when it holds another secret, and the device stays importable', async () => {
    const wrong = join(work, 'wrong-secret');
    await writeFile(wrong, randomBytes(32).toString('hex'));
    const intruder = runIn(nodeB.name, 'import', { HOST: A, PORT: String(port), BUSID: '3-2', SECRET_FILE: wrong, RECORDS: join(work, 'state-x', 'r.json') });
    expect(await intruder.exited).toBe(1);
    expect(intruder.stderr.join('')).toMatch(/handshake/);
    const again = runIn(nodeB.name, 'import', {
      HOST: A,
      PORT: String(port),
      BUSID: '3-2',
      SECRET_FILE: secretFile(),
      RECORDS: join(work, 'state-c', 'r.json'),
    });
    expect(await again.exited).toBe(0);
  });
});
