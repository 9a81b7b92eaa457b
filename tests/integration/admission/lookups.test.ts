/**
 * The kube-backed lookups against the real apiserver: what exists is read and typed, what does not is
 * `undefined`, and a read the apiserver refuses becomes a denial that names what could not be read.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ZodType } from 'zod';
import { KubeClient, descriptorOf, type KubeObject, type ResourceClient } from '../../../shared/kube/index.js';
import { API_VERSION } from '../../../shared/api/resources/common.js';
import {
  virtualMachineIPAddress,
  virtualMachineIPAddressLease,
  VirtualMachineIPAddressLeaseSchema,
  VirtualMachineIPAddressSchema,
} from '../../../shared/api/resources/addresses.js';
import { virtualDisk, VirtualDiskSchema } from '../../../shared/api/resources/virtualdisk.js';
import { virtualMachine, VirtualMachineSchema } from '../../../shared/api/resources/virtualmachine.js';
import { virtualMachineClass, VirtualMachineClassSchema } from '../../../shared/api/resources/virtualmachineclass.js';
import { virtualMachineBlockDeviceAttachment, VirtualMachineBlockDeviceAttachmentSchema } from '../../../shared/api/resources/vmbda.js';
import { virtualMachineOperation, VirtualMachineOperationSchema } from '../../../shared/api/resources/vmop.js';
import type { Lookups } from '../../../functions/admission/lookups.js';
import { FakeLookups, emptyWorld } from '../../../functions/admission/testing/fake-lookups.js';
import { validate } from '../../../functions/admission/admit.js';
import { clusterFacts } from '../../../functions/admission/index.js';
import { admissionConfig } from '../../../functions/admission/config.js';
import { KubeLookups } from '../../../functions/admission/kube/lookups.js';
import { LookupCache } from '../../../shared/cache/lookup-cache.js';
import { virtualMachineValidator } from '../../../functions/admission/rules/virtualmachine/index.js';
import { request, vm, vmClass } from '../../../functions/admission/testing/objects.js';
import { freshNamespace, getTestEnv, issueCert, kubectl } from '../../env/index.js';

const clients: KubeClient[] = [];
let ns = '';

function lookupsFor(kubeconfigPath: string): KubeLookups {
  const kube = KubeClient.fromSource({ kubeconfigPath }, { requestTimeoutMs: 5_000 });
  clients.push(kube);
  return new KubeLookups(kube, new LookupCache({ ttlMs: 0, maxEntries: 100 }));
}

/** A kubeconfig for a user no role is bound to. */
async function nobodyKubeconfig(): Promise<string> {
  const env = getTestEnv();
  const dir = join(env.workDir, 'admission-lookups');
  const user = `nobody-${randomBytes(3).toString('hex')}`;
  const cert = await issueCert({ name: 'client', certPath: env.clientCaPath, keyPath: env.clientCaKeyPath }, dir, user, { commonName: user, usage: 'client' });
  const path = join(dir, `${user}.kubeconfig`);
  await writeFile(
    path,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${env.server}", certificate-authority: "${env.servingCaPath}"}}]
users: [{name: u, user: {client-certificate: "${cert.certPath}", client-key: "${cert.keyPath}"}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
  );
  return path;
}

beforeAll(async () => {
  ns = await freshNamespace('adm-lookups');
  const res = await kubectl(['apply', '-f', '-'], {
    stdin: `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineBlockDeviceAttachment
metadata: {name: attach-data, namespace: ${ns}}
spec: {blockDeviceRef: {kind: VirtualDisk, name: data}, virtualMachineName: vm1}
`,
  });
  if (res.code !== 0) throw new Error(res.stderr);
});

afterAll(() => {
  for (const c of clients) c.close();
});

describe('kube-backed lookups', () => {
  it('reads existing objects typed, and missing ones as undefined', async () => {
    const lookups = lookupsFor(getTestEnv().kubeconfigPath);
    const attachments = await lookups.attachments(ns);
    expect(attachments.map((a) => [a.metadata.name, a.spec.blockDeviceRef.name])).toEqual([['attach-data', 'data']]);
    expect(await lookups.virtualMachineClass(`missing-${randomBytes(3).toString('hex')}`)).toBeUndefined();
    expect(await lookups.virtualMachine(ns, 'missing')).toBeUndefined();
    expect(await lookups.apiAvailable('virtualization.deckhouse.io', 'v1alpha2', 'virtualmachines')).toBe(true);
    expect(await lookups.apiAvailable('network.deckhouse.io', 'v1alpha1', 'networks')).toBe(false);
    expect((await lookups.serverVersion()).minor).toBeGreaterThanOrEqual(30);
  });

  it('never reads a whole list for an empty name: the lookup fails naming the object instead', async () => {
    const lookups = lookupsFor(getTestEnv().kubeconfigPath);
    await expect(lookups.virtualMachine(ns, '')).rejects.toThrow(`could not read VirtualMachine ${ns}/: get VirtualMachine: an empty name addresses no object`);
    await expect(lookups.virtualMachineClass('')).rejects.toThrow('an empty name addresses no object');
  });

  it('denies naming what it could not read when the apiserver refuses the read', async () => {
    const lookups = lookupsFor(await nobodyKubeconfig());
    const cluster = clusterFacts(admissionConfig.parse({}));
    const bad = vm((o) => void (o.metadata.namespace = ns));
    const { decision, failures } = await validate(virtualMachineValidator, request(bad), { lookups, cluster });
    expect(failures).toEqual([]);
    expect(decision.allowed).toBe(false);
    expect(decision.violations).toContainEqual({
      path: '',
      message: expect.stringMatching(
        /^cannot check that .*: could not read VirtualMachineBlockDeviceAttachments in adm-lookups-\w+: list VirtualMachineBlockDeviceAttachment.*forbidden/,
      ),
    });
  });

  it('caches objects without managedFields, and decides the same from them as from the whole objects', async () => {
    const env = getTestEnv();
    const id = randomBytes(3).toString('hex');
    const space = await freshNamespace('adm-trim');
    const className = `trim-${id}`;
    const kube = KubeClient.fromSource({ kubeconfigPath: env.kubeconfigPath });
    clients.push(kube);
    const raw = <T extends KubeObject>(def: Parameters<typeof descriptorOf>[0], schema: ZodType<T>): ResourceClient<T> =>
      kube.resource(descriptorOf(def), schema, 'admission-lookups-test');
    const cls = vmClass((c) => void (c.metadata.name = className));
    delete cls.metadata.annotations; // not a second default class for other tests
    await raw(virtualMachineClass, VirtualMachineClassSchema).create(VirtualMachineClassSchema.parse(cls));
    await raw(virtualMachineIPAddress, VirtualMachineIPAddressSchema).create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineIPAddress',
      metadata: { name: 'ip1', namespace: space },
      spec: { type: 'Auto' },
    });
    await raw(virtualDisk, VirtualDiskSchema).create({
      apiVersion: API_VERSION,
      kind: 'VirtualDisk',
      metadata: { name: 'data', namespace: space },
      spec: { persistentVolumeClaim: { size: '1Gi' } },
    });
    const inSpace = (change?: Parameters<typeof vm>[0]) =>
      vm((o) => {
        o.metadata.namespace = space;
        o.spec.virtualMachineClassName = className;
        change?.(o);
      });
    await raw(virtualMachine, VirtualMachineSchema).create(VirtualMachineSchema.parse(inSpace()));
    await raw(virtualMachineBlockDeviceAttachment, VirtualMachineBlockDeviceAttachmentSchema).create({
      apiVersion: API_VERSION,
      kind: 'VirtualMachineBlockDeviceAttachment',
      metadata: { name: 'attach-data', namespace: space },
      spec: { blockDeviceRef: { kind: 'VirtualDisk', name: 'data' }, virtualMachineName: 'vm1' },
    });

    // The whole objects, as the apiserver serves them.
    const full = {
      classes: [await raw(virtualMachineClass, VirtualMachineClassSchema).get({ name: className })],
      vms: (await raw(virtualMachine, VirtualMachineSchema).list({ namespace: space })).items,
      vmips: (await raw(virtualMachineIPAddress, VirtualMachineIPAddressSchema).list({ namespace: space })).items,
      leases: (await raw(virtualMachineIPAddressLease, VirtualMachineIPAddressLeaseSchema).list()).items,
      attachments: (await raw(virtualMachineBlockDeviceAttachment, VirtualMachineBlockDeviceAttachmentSchema).list({ namespace: space })).items,
      operations: (await raw(virtualMachineOperation, VirtualMachineOperationSchema).list({ namespace: space })).items,
      disks: (await raw(virtualDisk, VirtualDiskSchema).list({ namespace: space })).items,
    };
    const managed = (o: KubeObject): unknown => (o.metadata as Record<string, unknown>)['managedFields'];
    expect(full.classes.every((o) => managed(o) !== undefined)).toBe(true);

    // What the cache holds: the same objects, managedFields dropped.
    const trimmed = lookupsFor(env.kubeconfigPath);
    const drop = (o: KubeObject): KubeObject => ({ ...o, metadata: Object.fromEntries(Object.entries(o.metadata).filter(([k]) => k !== 'managedFields')) });
    expect(await trimmed.virtualMachineClass(className)).toEqual(drop(full.classes[0]));
    expect(await trimmed.virtualMachines(space)).toEqual(full.vms.map(drop));
    expect(await trimmed.virtualMachineIPAddress(space, 'ip1')).toEqual(drop(full.vmips[0]));
    expect(await trimmed.attachments(space)).toEqual(full.attachments.map(drop));
    expect(await trimmed.virtualDisk(space, 'data')).toEqual(drop(full.disks[0]));

    // The reference: the module's objects whole (in memory), everything else read as the function reads it.
    const whole = new FakeLookups({ ...emptyWorld(), ...full });
    const ofModule = new Set<string>([
      'virtualMachineClass',
      'virtualMachine',
      'virtualMachines',
      'virtualMachineIPAddress',
      'ipAddressLease',
      'ipAddressLeases',
      'attachments',
      'operations',
      'virtualDisk',
    ]);
    const reference = new Proxy(trimmed, {
      get: (target, prop: string) => {
        const source = (ofModule.has(prop) ? whole : target) as unknown as Record<string, unknown>;
        const value = source[prop];
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(source) : value;
      },
    }) as unknown as Lookups;
    const cluster = clusterFacts(admissionConfig.parse({}));
    const reviews = [
      request(inSpace((o) => void ((o.metadata.name = 'vm2'), (o.spec.virtualMachineIPAddressName = 'ip1')))),
      request(inSpace((o) => void ((o.metadata.name = 'vm3'), (o.spec.cpu = { cores: 3, coreFraction: '7%' })))),
      request(inSpace((o) => void ((o.metadata.name = 'ip1'), (o.spec.blockDeviceRefs = [{ kind: 'VirtualDisk', name: 'data' }])))),
      request(
        inSpace((o) => void o.spec.blockDeviceRefs.push({ kind: 'VirtualDisk', name: 'data' })),
        { oldObject: inSpace() },
      ),
    ];
    const decisions = [];
    for (const review of reviews) {
      const fromTrimmed = await validate(virtualMachineValidator, review, { lookups: trimmed, cluster });
      const fromWhole = await validate(virtualMachineValidator, review, { lookups: reference, cluster });
      expect(fromTrimmed).toEqual(fromWhole);
      decisions.push(fromTrimmed.decision);
    }
    // Decisions worth comparing: each turns on what a looked-up object says (the class's sizing
    // policy, the existing address, the attachment of the disk).
    const messages = decisions.flatMap((d) => d.violations.map((v) => v.message)).join('\n');
    expect(messages).toMatch(/in the sizing policy for 1-4 cores/);
    expect(messages).toMatch(/a VirtualMachineIPAddress named ip1 already exists/);
    expect(messages).toMatch(/already attached by VirtualMachineBlockDeviceAttachment attach-data/);
    await raw(virtualMachineClass, VirtualMachineClassSchema).delete({ name: className });
  });
});
