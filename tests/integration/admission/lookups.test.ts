/**
 * The kube-backed lookups against the real apiserver: what exists is read and typed, what does not is
 * `undefined`, and a read the apiserver refuses becomes a denial that names what could not be read.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeClient } from '../../../shared/kube/index.js';
import { validate } from '../../../functions/admission/admit.js';
import { clusterFacts } from '../../../functions/admission/index.js';
import { admissionConfig } from '../../../functions/admission/config.js';
import { KubeLookups } from '../../../functions/admission/kube/lookups.js';
import { TtlCache } from '../../../shared/cache/ttl-cache.js';
import { virtualMachineValidator } from '../../../functions/admission/rules/virtualmachine/index.js';
import { request, vm } from '../../../functions/admission/testing/objects.js';
import { freshNamespace, getTestEnv, issueCert, kubectl } from '../../env/index.js';

const clients: KubeClient[] = [];
let ns = '';

function lookupsFor(kubeconfigPath: string): KubeLookups {
  const kube = KubeClient.fromSource({ kubeconfigPath }, { requestTimeoutMs: 5_000 });
  clients.push(kube);
  return new KubeLookups(kube, new TtlCache({ ttlMs: 0, maxEntries: 100 }));
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
});
