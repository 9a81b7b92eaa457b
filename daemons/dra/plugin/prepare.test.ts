import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResourceClaim } from '../../../shared/api/k8s/resource.js';
import type { Logger } from '../../../shared/log/index.js';
import type { UsbDeviceInfo } from '../discovery/index.js';
import type { DevicePlan } from '../usbip/gateway.js';
import type { ImportOutcome } from '../usbip/remote.js';
import { CdiDir, specFileName } from './cdi.js';
import { Checkpoint } from './checkpoint.js';
import { Preparer, type RemoteImportPort } from './prepare.js';

const DRIVER = 'virtualization-usb';
const claim = { namespace: 'ns', name: 'c1', uid: 'uid-1' };
let dir: string;
let log: Logger & { error: jest.Mock };
let detachErrors: string[];
let detached: string[][];
let attaches: number;

/** The import side as the preparer sees it: plans every device as an import from node-a, attaches to a SIMULATED bus 7. */
function remotePort(): RemoteImportPort {
  return {
    plan: (results) =>
      Promise.resolve(
        results.map((r): DevicePlan => ({ kind: 'import', device: r.device, exportNode: r.pool, host: '127.0.0.1', port: 3240, busId: '3-2', hub: 'hs' })),
      ),
    attach: (plans) => {
      attaches++;
      return Promise.resolve<ImportOutcome>({
        kind: 'ok',
        devices: plans.map((p) => ({
          device: p.device,
          exportNode: p.kind === 'import' ? p.exportNode : '',
          busId: '3-2',
          node: { busNum: 7, devNum: 2, devicePath: '/dev/bus/usb/007/002', major: 189, minor: 769 },
        })),
      });
    },
    detach: (devices) => {
      detached.push([...devices]);
      return Promise.resolve(detachErrors);
    },
  };
}

function preparer(remote: RemoteImportPort | undefined, cdiRoot = join(dir, 'cdi')): Preparer {
  const rc: ResourceClaim = {
    metadata: { namespace: claim.namespace, name: claim.name, uid: claim.uid },
    spec: { devices: { requests: [] } },
    status: { allocation: { devices: { results: [{ request: 'req-0', driver: DRIVER, pool: 'node-a', device: 'usb-remote' }] } } },
  };
  return new Preparer({
    driver: DRIVER,
    nodeName: 'node-b',
    claims: { read: () => Promise.resolve(rc), mergePatch: () => Promise.resolve(rc) },
    devices: () => new Map(),
    cdi: new CdiDir(cdiRoot),
    checkpoint: new Checkpoint(join(dir, 'checkpoint.json'), log),
    log,
    remote: () => remote,
  });
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dra-prepare-'));
  log = { error: jest.fn(), warn: jest.fn(), info: jest.fn(), debug: jest.fn() } as unknown as Logger & { error: jest.Mock };
  detachErrors = [];
  detached = [];
  attaches = 0;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Preparer with the USB/IP import side', () => {
  it('refuses a device of another pool while the gateway is off', async () => {
    const p = preparer(undefined);
    await p.start();
    const out = await p.prepare([claim]);
    expect(out[claim.uid]?.error).toBe(
      "device usb-remote is allocated from pool node-a, not from this node's pool node-b (USB/IP gateway allocations are not prepared by this driver)",
    );
  });

  it('keeps the claim prepared when a detach fails at unprepare, and unprepares once it succeeds', async () => {
    const p = preparer(remotePort());
    await p.start();
    expect((await p.prepare([claim]))[claim.uid]?.devices?.map((d) => d.device_name)).toEqual(['usb-remote']);
    detachErrors = ['detach of usb-remote: fake vhci: write failed'];
    expect((await p.unprepare([claim]))[claim.uid]?.error).toBe('detach of usb-remote: fake vhci: write failed');
    expect(await exists(join(dir, 'cdi', specFileName(claim.uid)))).toBe(true);
    detachErrors = [];
    expect((await p.unprepare([claim]))[claim.uid]?.error).toBe('');
    expect(detached).toEqual([['usb-remote'], ['usb-remote']]);
    expect(await exists(join(dir, 'cdi', specFileName(claim.uid)))).toBe(false);
  });

  it('unprepares a claim with imported devices after a restart with the gateway off, and logs the devices left attached', async () => {
    const p = preparer(remotePort());
    await p.start();
    expect((await p.prepare([claim]))[claim.uid]?.devices?.map((d) => d.device_name)).toEqual(['usb-remote']);
    const restarted = preparer(undefined);
    await restarted.start();
    expect((await restarted.unprepare([claim]))[claim.uid]?.error).toBe('');
    expect(log.error).toHaveBeenCalledWith(
      expect.objectContaining({ claim: claim.uid, devices: ['usb-remote'] }),
      'devices imported over USB/IP but the gateway is off: not detached',
    );
  });

  it('detaches what it imported when the CDI spec cannot be written', async () => {
    const notADir = join(dir, 'file');
    await writeFile(notADir, '');
    const p = preparer(remotePort(), join(notADir, 'cdi'));
    // start() loads the checkpoint, then fails on the common spec in the same dir.
    await expect(p.start()).rejects.toThrow();
    const out = await p.prepare([claim]);
    expect(out[claim.uid]?.error).toMatch(/ENOTDIR|EEXIST|not a directory/);
    expect(detached).toEqual([['usb-remote']]);
  });
});

describe('Preparer at start, against the CDI specs the checkpoint names', () => {
  const specPath = (): string => join(dir, 'cdi', specFileName(claim.uid));
  const checkpointClaims = async (): Promise<string[]> =>
    Object.keys((JSON.parse(await readFile(join(dir, 'checkpoint.json'), 'utf8')) as { claims: Record<string, unknown> }).claims);

  it('keeps a claim whose spec is there (a daemon restart): a repeated prepare answers from the checkpoint, nothing imported again', async () => {
    const p = preparer(remotePort());
    await p.start();
    await p.prepare([claim]);
    const restarted = preparer(remotePort());
    await restarted.start();
    expect((await restarted.prepare([claim]))[claim.uid]?.devices?.map((d) => d.device_name)).toEqual(['usb-remote']);
    expect({ attaches, detached }).toEqual({ attaches: 1, detached: [] });
    expect(await checkpointClaims()).toEqual([claim.uid]);
  });

  it('drops a claim whose spec is gone (a reboot wiped /var/run/cdi), detaches its imports, and prepares it again instead of answering "already prepared"', async () => {
    const p = preparer(remotePort());
    await p.start();
    await p.prepare([claim]);
    await rm(specPath());
    const rebooted = preparer(remotePort());
    await rebooted.start();
    expect(detached).toEqual([['usb-remote']]);
    expect(await checkpointClaims()).toEqual([]);
    expect(log.warn).toHaveBeenCalledWith(
      expect.objectContaining({ uid: claim.uid, detached: ['usb-remote'] }),
      'dropping a checkpointed claim whose CDI spec is gone (node rebooted?): the next prepare does it again',
    );
    expect((await rebooted.prepare([claim]))[claim.uid]).toEqual({
      devices: [expect.objectContaining({ device_name: 'usb-remote' })],
    });
    expect(attaches).toBe(2);
    expect(await exists(specPath())).toBe(true);
    expect(await checkpointClaims()).toEqual([claim.uid]);
  });

  it('drops such a claim with the gateway off too, naming the imported devices it could not detach', async () => {
    const p = preparer(remotePort());
    await p.start();
    await p.prepare([claim]);
    await rm(specPath());
    const rebooted = preparer(undefined);
    await rebooted.start();
    expect(await checkpointClaims()).toEqual([]);
    expect(log.error).toHaveBeenCalledWith({ claim: claim.uid, devices: ['usb-remote'] }, 'devices imported over USB/IP but the gateway is off: not detached');
  });
});

describe('Preparer writing the address annotation ahead of the prepare', () => {
  const local = 'usb-local';
  /** A claim of this node's (node-b) device usb-local; a SIMULATED device at bus 3, device 5. */
  const localClaim = (pool = 'node-b', annotations: Record<string, string> = {}): ResourceClaim => ({
    metadata: { namespace: claim.namespace, name: claim.name, uid: claim.uid, annotations },
    spec: { devices: { requests: [] } },
    status: { allocation: { devices: { results: [{ request: 'req-0', driver: DRIVER, pool, device: local }] } } },
  });
  const device = { busId: '3-1', busNum: 3, devNum: 5, devicePath: '/dev/bus/usb/003/005', major: 189, minor: 260 } as UsbDeviceInfo;
  const value = JSON.stringify([{ deviceName: local, usbAddress: '003:005' }]);

  function localPreparer(patch: () => Promise<ResourceClaim>, rc = localClaim()): { p: Preparer; patches: unknown[] } {
    const patches: unknown[] = [];
    const p = new Preparer({
      driver: DRIVER,
      nodeName: 'node-b',
      claims: {
        read: () => Promise.resolve(rc),
        mergePatch: (_ref, body) => {
          patches.push(body);
          return patch();
        },
      },
      devices: () => new Map([[local, device]]),
      cdi: new CdiDir(join(dir, 'cdi')),
      checkpoint: new Checkpoint(join(dir, 'checkpoint.json'), log),
      log,
    });
    return { p, patches };
  }
  const annotation = { metadata: { annotations: { 'usb.virtualization.deckhouse.io/device-addresses': value } } };

  it('writes it once on seeing the allocation; the prepare then writes nothing', async () => {
    const { p, patches } = localPreparer(() => Promise.resolve(localClaim()));
    await p.start();
    p.annotateAhead(localClaim());
    p.annotateAhead(localClaim()); // the same allocation seen again while the write is under way
    expect(patches).toEqual([annotation]);
    expect((await p.prepare([claim]))[claim.uid]?.error).toBeUndefined();
    expect(patches).toEqual([annotation]);
  });

  it('leaves alone a claim that carries the value, one of another pool, one of a device not here, and a prepared one', async () => {
    const { p, patches } = localPreparer(() => Promise.resolve(localClaim()));
    await p.start();
    p.annotateAhead(localClaim('node-b', { 'usb.virtualization.deckhouse.io/device-addresses': value }));
    p.annotateAhead(localClaim('node-a'));
    p.annotateAhead({
      ...localClaim(),
      status: { allocation: { devices: { results: [{ request: 'r', driver: DRIVER, pool: 'node-b', device: 'usb-gone' }] } } },
    });
    expect(patches).toEqual([]);
    await p.prepare([claim]);
    expect(patches).toEqual([annotation]);
    p.annotateAhead(localClaim());
    expect(patches).toHaveLength(1);
  });

  it('makes the write in the prepare when the one ahead failed, after logging it', async () => {
    let fail = true;
    const { p, patches } = localPreparer(() => (fail ? Promise.reject(new Error('apiserver: connection refused')) : Promise.resolve(localClaim())));
    await p.start();
    p.annotateAhead(localClaim());
    fail = false;
    expect((await p.prepare([claim]))[claim.uid]?.error).toBeUndefined();
    expect(patches).toEqual([annotation, annotation]);
    expect(log.warn).toHaveBeenCalledWith(
      expect.objectContaining({ claim: 'ns/c1' }),
      'writing the address annotation ahead of the prepare failed; the prepare writes it',
    );
  });

  it('writes again, ahead, for a claim re-allocated after it was forgotten', async () => {
    const { p, patches } = localPreparer(() => Promise.resolve(localClaim()));
    await p.start();
    p.annotateAhead(localClaim());
    p.forgetAhead(claim.uid);
    p.annotateAhead(localClaim());
    expect(patches).toEqual([annotation, annotation]);
  });
});
