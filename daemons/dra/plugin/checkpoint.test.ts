import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../../shared/log/index.js';
import { Checkpoint } from './checkpoint.js';

let dir: string;
const log = (): Logger & { error: jest.Mock } =>
  ({ error: jest.fn(), warn: jest.fn(), info: jest.fn(), debug: jest.fn() }) as unknown as Logger & { error: jest.Mock };
const device = { requestNames: ['r'], poolName: 'n1', deviceName: 'usb-a', cdiDeviceIds: ['x/y=z'], busId: '1-1', usbAddress: '001:002' };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dra-checkpoint-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Checkpoint', () => {
  it('survives a restart: saved claims load again, with the holder of each device', async () => {
    const a = new Checkpoint(join(dir, 'sub', 'checkpoint.json'), log());
    await a.load();
    a.set('uid-1', { namespace: 'ns', name: 'c1', devices: [device] });
    await a.save();
    const b = new Checkpoint(join(dir, 'sub', 'checkpoint.json'), log());
    await b.load();
    expect(b.get('uid-1')).toEqual({ namespace: 'ns', name: 'c1', devices: [device] });
    expect(b.holderOf('usb-a')).toBe('uid-1');
    expect(b.holderOf('usb-b')).toBeUndefined();
    expect(await readdir(join(dir, 'sub'))).toEqual(['checkpoint.json']);
  });

  it('keeps the node a device was imported from (USB/IP), and reads entries written before that field existed', async () => {
    const path = join(dir, 'checkpoint.json');
    const imported = { ...device, deviceName: 'usb-b', poolName: 'node-a', importedFrom: 'node-a' };
    await writeFile(path, JSON.stringify({ version: 1, claims: { old: { namespace: 'ns', name: 'c0', devices: [device] } } }));
    const a = new Checkpoint(path, log());
    await a.load();
    a.set('uid-2', { namespace: 'ns', name: 'c2', devices: [imported] });
    await a.save();
    const b = new Checkpoint(path, log());
    await b.load();
    expect(b.get('old')?.devices).toEqual([device]);
    expect(b.get('uid-2')?.devices).toEqual([imported]);
  });

  it.each([
    ['truncated JSON', '{"version":1,"claims":{"u', /not JSON/],
    ['an unknown version', '{"version":2,"claims":{}}', /version/],
    ['a wrong type', '{"version":1,"claims":{"u":{"namespace":1,"name":"c","devices":[]}}}', /claims\.u\.namespace/],
    [
      'a non-string importedFrom',
      '{"version":1,"claims":{"u":{"namespace":"n","name":"c","devices":[{"requestNames":[],"poolName":"p","deviceName":"d","cdiDeviceIds":[],"busId":"1-1","usbAddress":"001:002","importedFrom":7}]}}}',
      /importedFrom/,
    ],
  ])('moves a file with %s aside, reports it, and starts empty', async (_, text, problem) => {
    const path = join(dir, 'checkpoint.json');
    await writeFile(path, text);
    const l = log();
    const c = new Checkpoint(path, l);
    await c.load();
    expect(c.size).toBe(0);
    expect(l.error).toHaveBeenCalledTimes(1);
    expect((l.error.mock.calls[0]?.[0] as { problem: string }).problem).toMatch(problem);
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^checkpoint\.json\.corrupt-\d+$/);
    expect(await readFile(join(dir, files[0] ?? ''), 'utf8')).toBe(text);
  });

  it('moves the file from where an earlier version kept it when its own place has none, and leaves a broken legacy file aside', async () => {
    const legacy = join(dir, 'plugins', 'checkpoint.json');
    const path = join(dir, 'state', 'checkpoint.json');
    await mkdir(join(dir, 'plugins'));
    await writeFile(legacy, JSON.stringify({ version: 1, claims: { 'uid-1': { namespace: 'ns', name: 'c1', devices: [device] } } }));
    const a = new Checkpoint(path, log(), legacy);
    await a.load();
    expect(a.get('uid-1')?.name).toBe('c1');
    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({ version: 1, claims: { 'uid-1': { namespace: 'ns', name: 'c1', devices: [device] } } });
    expect(await readdir(join(dir, 'plugins'))).toEqual([]);

    // Its own file wins over a legacy one; a broken legacy file is moved aside, never reused.
    await writeFile(legacy, 'not json');
    const b = new Checkpoint(path, log(), legacy);
    await b.load();
    expect(b.size).toBe(1);
    await rm(path);
    const l = log();
    const c = new Checkpoint(path, l, legacy);
    await c.load();
    expect(c.size).toBe(0);
    expect((await readdir(join(dir, 'plugins')))[0]).toMatch(/^checkpoint\.json\.corrupt-\d+$/);
    expect(l.error).toHaveBeenCalledWith(expect.objectContaining({ path: legacy }), 'the checkpoint of prepared claims cannot be used; starting without it');
  });
});
