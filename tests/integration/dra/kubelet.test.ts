import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usbDeviceName } from '../../../daemons/dra/devices.js';
import { writeFixtureSysfs, type FixtureDevice } from '../../../daemons/dra/discovery/index.js';
import { ResourceClaimSchema, resourceClaimDescriptor } from '../../../shared/api/k8s/resource.js';
import { specFileName } from '../../../daemons/dra/plugin/cdi.js';
import { DEVICE_ADDRESSES_ANNOTATION } from '../../../daemons/dra/plugin/prepare.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { freshNamespace } from '../../env/index.js';
import { fixtureNode, startDaemon, TEST_MANAGER, type FixtureNode, type RunningDaemon } from './harness.js';
import { allocatedClaim, DraClient, RegistrationClient, type ClaimRef } from './kubelet-client.js';

const dongle: FixtureDevice = { busId: '1-1', devNum: 2, vendorId: '0529', productId: '0001', product: 'HASP HL', serial: 'H1' };
const reader: FixtureDevice = { busId: '1-2', devNum: 7, vendorId: '076b', productId: '3021', speed: '12' };

let node: FixtureNode;
let daemon: RunningDaemon;
let namespace: string;
let dongleName: string;
let readerName: string;
const clients: { close(): void }[] = [];
const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );
const cdiPath = (uid: string): string => join(node.env.CDI_ROOT, specFileName(uid));
const socketsOf = (d: RunningDaemon): { dra: string; reg: string } => {
  const p = d.handle.plugin();
  if (!p) throw new Error('the plugin does not serve');
  return { dra: p.draSocket, reg: p.registrationSocket };
};
function dra(version: 'v1' | 'v1beta1'): DraClient {
  const c = new DraClient(socketsOf(daemon).dra, version);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  node = await fixtureNode('dra-kubelet');
  dongleName = usbDeviceName(dongle, node.name);
  readerName = usbDeviceName(reader, node.name);
  await writeFixtureSysfs(node.sysRoot, [dongle, reader]);
  // A socket file left behind by a killed plugin: the daemon must remove it before binding.
  await writeFile(join(node.env.KUBELET_REGISTRY_DIR, 'virtualization-usb-reg.sock'), 'stale');
  namespace = await freshNamespace('dra-kubelet');
  daemon = startDaemon(node);
  await daemon.handle.started;
});

afterAll(async () => {
  for (const c of clients) c.close();
  await daemon?.stop();
  await node?.cleanup();
});

describe('the kubelet plugin, called as kubelet does', () => {
  let first: ClaimRef;
  let second: ClaimRef;

  it('registers: GetInfo names the driver, the DRA socket and both API versions (v1 first)', async () => {
    const reg = new RegistrationClient(socketsOf(daemon).reg);
    clients.push(reg);
    expect(await reg.getInfo()).toEqual({
      type: 'DRAPlugin',
      name: 'virtualization-usb',
      endpoint: join(node.env.KUBELET_PLUGINS_DIR, 'virtualization-usb', 'dra.sock'),
      supported_versions: ['v1.DRAPlugin', 'v1beta1.DRAPlugin'],
    });
    await reg.notify(true);
    expect(daemon.handle.plugin()?.registered()).toBe(true);
  });

  it('prepares a claim over v1: CDI device IDs, the CDI spec file with the device node, the address on the claim', async () => {
    first = await allocatedClaim(node.kube, namespace, 'dongle', node.name, dongleName, {
      'usb.virtualization.deckhouse.io/device-user': '64535',
      'usb.virtualization.deckhouse.io/device-group': '64535',
    });
    const res = await dra('v1').prepare([first]);
    expect(res.claims[first.uid]).toEqual({
      error: '',
      devices: [
        {
          request_names: ['req-0'],
          pool_name: node.name,
          device_name: dongleName,
          cdi_device_ids: ['dra.virtualization.deckhouse.io/usb=common', `dra.virtualization.deckhouse.io/usb=${first.uid}-${dongleName}`],
        },
      ],
    });
    const spec = JSON.parse(await readFile(cdiPath(first.uid), 'utf8')) as {
      cdiVersion: string;
      kind: string;
      devices: { name: string; containerEdits: { env: string[]; deviceNodes: unknown[] } }[];
    };
    expect(spec.cdiVersion).toBe('1.0.0');
    expect(spec.kind).toBe('dra.virtualization.deckhouse.io/usb');
    expect(spec.devices).toHaveLength(1);
    expect(spec.devices[0]?.name).toBe(`${first.uid}-${dongleName}`);
    expect(spec.devices[0]?.containerEdits.deviceNodes).toEqual([
      { path: '/dev/bus/usb/001/002', hostPath: '/dev/bus/usb/001/002', type: 'c', major: 189, minor: 1, permissions: 'rwm', uid: 64535, gid: 64535 },
    ]);
    expect(spec.devices[0]?.containerEdits.env).toContain(`DRA_USB_${dongleName.toUpperCase()}_BUS_DEVICENUMBER=001:002`);
    expect(spec.devices[0]?.containerEdits.env).toContain(`DRA_USB_CLAIM_UID_${first.uid.toUpperCase()}_DEVICE_NAME=${dongleName}`);
    expect(await exists(join(node.env.CDI_ROOT, specFileName('common')))).toBe(true);
    const rc = await node.kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER).get({ namespace, name: 'dongle' });
    expect(JSON.parse(rc.metadata.annotations?.[DEVICE_ADDRESSES_ANNOTATION] ?? 'null')).toEqual([{ deviceName: dongleName, usbAddress: '001:002' }]);
  });

  it('answers a repeated prepare the same way (kubelet retries)', async () => {
    const again = await dra('v1').prepare([first]);
    expect(again.claims[first.uid]?.devices.map((d) => d.device_name)).toEqual([dongleName]);
    expect(again.claims[first.uid]?.error).toBe('');
  });

  it('gives each bad claim its own error and still prepares the good one (v1beta1)', async () => {
    second = await allocatedClaim(node.kube, namespace, 'reader', node.name, readerName);
    const unknown = await allocatedClaim(node.kube, namespace, 'unknown', node.name, 'usb-0000000000000000000000000000000000000000');
    const taken = await allocatedClaim(node.kube, namespace, 'taken', node.name, dongleName);
    const remote = await allocatedClaim(node.kube, namespace, 'remote', 'other-node', readerName);
    const missing = { namespace, name: 'no-such-claim', uid: '6b7c1f5e-0000-4000-8000-000000000000' };
    const wrongUid = { namespace, name: 'reader', uid: '6b7c1f5e-0000-4000-8000-000000000001' };
    const res = await dra('v1beta1').prepare([unknown, second, taken, missing, remote, wrongUid]);
    expect(res.claims[second.uid]?.error).toBe('');
    expect(res.claims[second.uid]?.devices.map((d) => d.device_name)).toEqual([readerName]);
    expect(res.claims[unknown.uid]?.error).toMatch(/requested device usb-0+ is not allocatable/);
    expect(res.claims[taken.uid]?.error).toBe(`device ${dongleName} is already prepared for claim ${first.uid}`);
    expect(res.claims[missing.uid]?.error).toBe(`ResourceClaim ${namespace}/no-such-claim not found`);
    expect(res.claims[remote.uid]?.error).toMatch(/allocated from pool other-node, not from this node's pool/);
    expect(res.claims[wrongUid.uid]?.error).toMatch(/has uid .*, not 6b7c1f5e-0000-4000-8000-000000000001/);
    expect(await exists(cdiPath(unknown.uid))).toBe(false);
    expect(await exists(cdiPath(second.uid))).toBe(true);
  });

  it('refuses a request that is not protobuf with an error, and keeps serving', async () => {
    const raw = new Client(`unix://${socketsOf(daemon).dra}`, credentials.createInsecure());
    clients.push(raw);
    const err = await new Promise<ServiceError | null>((resolve) => {
      raw.makeUnaryRequest(
        '/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff, 0xff]),
        new Metadata(),
        (e) => resolve(e),
      );
    });
    expect(err?.code).toBe(status.INTERNAL);
    const ok = await dra('v1').prepare([first]);
    expect(ok.claims[first.uid]?.error).toBe('');
  });

  it('refuses a body over 4 MiB and an API version it does not serve, and keeps serving', async () => {
    const raw = new Client(`unix://${socketsOf(daemon).dra}`, credentials.createInsecure());
    clients.push(raw);
    const send = (path: string, body: Buffer): Promise<ServiceError | null> =>
      new Promise((resolve) =>
        raw.makeUnaryRequest(
          path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          body,
          new Metadata(),
          (e) => resolve(e),
        ),
      );
    expect((await send('/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources', Buffer.alloc(5 * 1024 * 1024)))?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect((await send('/v1alpha3.Node/NodePrepareResources', Buffer.alloc(0)))?.code).toBe(status.UNIMPLEMENTED);
    expect((await dra('v1beta1').prepare([second])).claims[second.uid]?.error).toBe('');
  });

  it('unprepares after a daemon restart: the checkpoint survives, the CDI files go', async () => {
    await daemon.stop();
    expect(await exists(join(node.env.KUBELET_REGISTRY_DIR, 'virtualization-usb-reg.sock'))).toBe(false);
    daemon = startDaemon(node);
    await daemon.handle.started;
    expect(daemon.handle.preparer).toBeDefined();
    const repeat = await dra('v1').prepare([first]);
    expect(repeat.claims[first.uid]?.devices.map((d) => d.device_name)).toEqual([dongleName]);

    const v1 = await dra('v1').unprepare([first]);
    expect(v1.claims[first.uid]).toEqual({ error: '' });
    expect(await exists(cdiPath(first.uid))).toBe(false);
    const beta = await dra('v1beta1').unprepare([second, { namespace, name: 'never', uid: 'never-prepared-uid' }]);
    expect(beta.claims).toEqual({ [second.uid]: { error: '' }, 'never-prepared-uid': { error: '' } });
    expect(await exists(cdiPath(second.uid))).toBe(false);
    const checkpoint = JSON.parse(await readFile(join(node.env.STATE_DIR, 'checkpoint.json'), 'utf8')) as {
      version: number;
      claims: object;
    };
    expect(checkpoint).toEqual({ version: 1, claims: {} });
  });

  it('prepares the freed device for another claim', async () => {
    const next = await allocatedClaim(node.kube, namespace, 'dongle-again', node.name, dongleName);
    const res = await dra('v1').prepare([next]);
    expect(res.claims[next.uid]?.error).toBe('');
    await dra('v1').unprepare([next]);
  });

  it('prepares again, spec written, a claim whose CDI spec a reboot wiped while its checkpoint entry stayed (STATE_DIR off tmpfs)', async () => {
    const claim = await allocatedClaim(node.kube, namespace, 'rebooted', node.name, dongleName);
    expect((await dra('v1').prepare([claim])).claims[claim.uid]?.error).toBe('');
    await daemon.stop();
    // The reboot as /var/run/cdi (tmpfs) sees it; the state dir here is a plain directory, as on a disk.
    await rm(node.env.CDI_ROOT, { recursive: true });
    await mkdir(node.env.CDI_ROOT);
    daemon = startDaemon(node);
    await daemon.handle.started;
    const again = await dra('v1').prepare([claim]);
    expect(again.claims[claim.uid]?.devices.map((d) => d.device_name)).toEqual([dongleName]);
    expect(await exists(cdiPath(claim.uid))).toBe(true);
    expect((await dra('v1').unprepare([claim])).claims[claim.uid]).toEqual({ error: '' });
  });

  it('reads a claim re-created under the same name afresh, not the cached copy of the old one', async () => {
    const old = await allocatedClaim(node.kube, namespace, 'recreated', node.name, dongleName);
    await waitFor('the old claim cached', () => daemon.handle.claims.holds(old));
    const claims = node.kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER);
    await claims.delete({ namespace, name: 'recreated' });
    // Now allocated the reader; prepared at once (the cache may still hold the old uid: then a GET).
    const fresh = await allocatedClaim(node.kube, namespace, 'recreated', node.name, readerName);
    const reads = daemon.handle.metrics.claimReads;
    const before = await reads.get({ source: 'apiserver' });
    const res = await dra('v1').prepare([fresh]);
    expect(res.claims[fresh.uid]?.error).toBe('');
    expect(res.claims[fresh.uid]?.devices.map((d) => d.device_name)).toEqual([readerName]);
    // Asked for the old uid once the cache has the new claim: a miss, so a GET, which has the new uid.
    await waitFor('the new claim cached', () => daemon.handle.claims.holds(fresh));
    expect((await dra('v1').prepare([old])).claims[old.uid]?.error).toContain(`not ${old.uid} (re-created?)`);
    expect(await reads.get({ source: 'apiserver' })).toBeGreaterThan(before);
    await dra('v1').unprepare([fresh]);
  });

  it('writes the address on a claim allocated here as soon as it sees it, ahead of the prepare, which then writes nothing', async () => {
    const claims = node.kube.resource(resourceClaimDescriptor, ResourceClaimSchema, TEST_MANAGER);
    const writes = daemon.handle.metrics.addressWrites;
    const before = { ahead: await writes.get({ when: 'ahead' }), prepare: await writes.get({ when: 'prepare' }) };
    // Created first, so the daemon has seen it by the time the second claim's annotation is in.
    await allocatedClaim(node.kube, namespace, 'ahead-elsewhere', 'some-other-node', readerName);
    const here = await allocatedClaim(node.kube, namespace, 'ahead', node.name, readerName);
    const addresses = async (name: string): Promise<unknown> =>
      JSON.parse((await claims.get({ namespace, name })).metadata.annotations?.[DEVICE_ADDRESSES_ANNOTATION] ?? 'null') as unknown;
    await waitFor('the address annotation written without a prepare', async () => (await addresses('ahead')) !== null);
    expect(await addresses('ahead')).toEqual([{ deviceName: readerName, usbAddress: '001:007' }]);
    expect(await addresses('ahead-elsewhere')).toBeNull();
    expect(await writes.get({ when: 'ahead' })).toBe(before.ahead + 1);
    const res = await dra('v1').prepare([here]);
    expect(res.claims[here.uid]?.error).toBe('');
    expect(await writes.get({ when: 'prepare' })).toBe(before.prepare);
    await dra('v1').unprepare([here]);
  });

  it('serves a cached claim without asking the apiserver, and never one allocated on another node', async () => {
    const here = await allocatedClaim(node.kube, namespace, 'cached', node.name, dongleName);
    const elsewhere = await allocatedClaim(node.kube, namespace, 'elsewhere', 'some-other-node', dongleName);
    await waitFor('the claim cached', () => daemon.handle.claims.holds(here));
    expect(daemon.handle.claims.holds(elsewhere)).toBe(false);
    const reads = daemon.handle.metrics.claimReads;
    const before = { cache: await reads.get({ source: 'cache' }), apiserver: await reads.get({ source: 'apiserver' }) };
    const res = await dra('v1').prepare([here, elsewhere]);
    expect(res.claims[here.uid]?.error).toBe('');
    expect(res.claims[elsewhere.uid]?.error).toContain("not from this node's pool");
    expect(await reads.get({ source: 'cache' })).toBe(before.cache + 1);
    expect(await reads.get({ source: 'apiserver' })).toBe(before.apiserver + 1);
    await dra('v1').unprepare([here]);
  });
});
