/**
 * System test of the install's certificates, with no dev script: on an apiserver of its own (the
 * install's webhooks would intercept every VM write of the shared one), the whole install is applied,
 * the controller's certificate manager runs under the install's RBAC (impersonating its
 * ServiceAccount), and the admission function serves the certificate it issued, read from files kept
 * in sync with the Secret the way kubelet keeps a mounted Secret (platform/secret-files.ts, as in
 * npm start). The apiserver calls the webhook through the install's own configurations, by Service
 * reference: the Service is rewritten to ExternalName 127.0.0.1 and the port to the local function's
 * (platform/webhook-wiring.ts), so the apiserver still checks the certificate against
 * `admission-webhook.d8-virtualization.svc` and the injected caBundle.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VirtApi } from '../../../functions/subresources/backend.js';
import { VirtApiStandIn } from '../../../platform/simulators/kubevirt-simulator/virt-api/virt-api-stand-in.js';
import { CertificateManager } from '../../../daemons/controller/certificates/manager.js';
import { makeCertClients, secretText } from '../../../daemons/controller/certificates/resources.js';
import { issueCertificate } from '../../../shared/certs/index.js';
import { makeClients, type Clients, type Secret } from '../../../daemons/controller/kube/resources.js';
import { rootLogger } from '../../../shared/log/index.js';
import { type ServerHandle } from '../../../shared/runtime/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { getTestEnv, kubectl } from '../../env/index.js';
import { SecretFiles } from '../../../platform/secret-files.js';
import { CONTROLLER_SA, installWithCertificates, NS, type Installed } from './installed.js';

let env: Installed;
let c: Clients;
let webhook: ServerHandle;
let testNs = '';

const k = (args: string[], stdin?: string): Promise<string> => env.k(args, stdin);

const vmYaml = (name: string, spec: string): string => `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachine
metadata: {name: ${name}, namespace: ${testNs}}
spec:
  cpu: {cores: 2}
  memory: {size: 2Gi}
${spec}`;

const GOOD_VM = '  blockDeviceRefs: [{kind: VirtualDisk, name: root}]\n';
const BAD_VM = '  virtualMachineClassName: generic\n  blockDeviceRefs: [{kind: VirtualDisk, name: root}, {kind: VirtualDisk, name: root}]\n';

async function caBundles(): Promise<string[]> {
  const out: string[] = [];
  for (const kind of ['validatingwebhookconfiguration', 'mutatingwebhookconfiguration']) {
    const cfg = JSON.parse(await k(['get', kind, 'virtualization-admission', '-o', 'json'])) as { webhooks: { clientConfig: { caBundle?: string } }[] };
    out.push(...cfg.webhooks.map((w) => w.clientConfig.caBundle ?? ''));
  }
  return out;
}

const servedFingerprint = async (): Promise<string> => {
  const s = await c.secrets.get({ namespace: NS, name: 'admission-tls' });
  return new X509Certificate(secretText(s, 'tls.crt') ?? '').fingerprint256;
};

beforeAll(async () => {
  // The controller's shipped defaults but one: the CA overlap (2 minutes, for many apiservers and
  // kubelet's sync period) is 3 s here, where one apiserver picks a new caBundle up within milliseconds.
  env = await installWithCertificates('certificates', { CERT_CA_OVERLAP: '3s' });
  c = makeClients(env.admin, 'certificates-test');
  testNs = `certs-${randomBytes(3).toString('hex')}`;
  await k(['create', 'namespace', testNs]);
}, 180_000);

afterAll(async () => {
  await env?.close();
}, 60_000);

describe('certificates from the install, with no manual step', () => {
  it('issues the CA and the serving Secrets, and injects the CA into the labelled webhook configurations', async () => {
    const ca = await waitFor('the CA Secret', () => c.secrets.get({ namespace: NS, name: 'virtualization-ca' }));
    const serving = await c.secrets.get({ namespace: NS, name: 'admission-tls' });
    expect([ca.type, serving.type]).toEqual(['kubernetes.io/tls', 'kubernetes.io/tls']);
    const cert = new X509Certificate(secretText(serving, 'tls.crt') ?? '');
    expect(cert.subjectAltName).toContain('DNS:admission-webhook.d8-virtualization.svc');
    expect(cert.verify(new X509Certificate(secretText(ca, 'tls.crt') ?? '').publicKey)).toBe(true);
    const bundle = Buffer.from(secretText(serving, 'ca.crt') ?? '').toString('base64');
    await waitFor('caBundle in every webhook', async () => (await caBundles()).every((b) => b === bundle));
    // The subresources Secret exists too, for the APIService the subresources unit will add.
    expect((await c.secrets.get({ namespace: NS, name: 'subresources-tls' })).data?.['tls.crt']).toBeDefined();
    // What Knative's queue-proxy serves where the webhooks call (docs/adr/0023): the same names and CA.
    const queueProxy = new X509Certificate(secretText(await c.secrets.get({ namespace: NS, name: 'serving-certs' }), 'tls.crt') ?? '');
    expect(queueProxy.subjectAltName).toContain('DNS:admission-webhook.d8-virtualization.svc');
    expect(queueProxy.verify(new X509Certificate(secretText(ca, 'tls.crt') ?? '').publicKey)).toBe(true);
  });

  it('issues the client certificate the subresources API shows virt-api: a virt-api trusting the CA takes its calls, refuses them without it', async () => {
    const secret = await waitFor('the client Secret', () => c.secrets.get({ namespace: NS, name: 'virtualization-api-proxy-tls' }));
    const caSecret = await c.secrets.get({ namespace: NS, name: 'virtualization-ca' });
    const cert = new X509Certificate(secretText(secret, 'tls.crt') ?? '');
    expect([secret.type, cert.subject]).toEqual(['kubernetes.io/tls', 'CN=virtualization-api-proxy']);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.verify(new X509Certificate(secretText(caSecret, 'tls.crt') ?? '').publicKey)).toBe(true);
    // virt-api (the stand-in) trusts our CA bundle for clients; it serves with a pair of KubeVirt's own CA.
    const dir = join(getTestEnv().workDir, `virt-api-client-${randomBytes(3).toString('hex')}`);
    const [notBefore, notAfter] = [new Date(Date.now() - 60_000), new Date(Date.now() + 3_600_000)];
    const kubevirtCa = issueCertificate({ commonName: 'kubevirt-ca', usage: 'ca', notBefore, notAfter });
    const serving = issueCertificate({ commonName: 'virt-api', usage: 'server', ipAddresses: ['127.0.0.1'], issuer: kubevirtCa, notBefore, notAfter });
    const virtApi = new VirtApiStandIn({ tls: { cert: serving.certPem, key: serving.keyPem, clientCa: secretText(secret, 'ca.crt') ?? '' }, log: rootLogger });
    await virtApi.start();
    // The function's files, kept in sync with the Secret as kubelet keeps a mounted one.
    const files = new SecretFiles(join(dir, 'client'), { kube: env.admin, namespace: NS, name: 'virtualization-api-proxy-tls', intervalMs: 100 });
    await files.start();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'kubevirt-ca.crt'), kubevirtCa.certPem);
    const backend = (withCert: boolean): VirtApi =>
      new VirtApi({
        url: virtApi.url,
        caFile: join(dir, 'kubevirt-ca.crt'),
        certFile: withCert ? files.path('tls.crt') : undefined,
        keyFile: withCert ? files.path('tls.key') : undefined,
        reloadMs: 0,
        remoteUser: 'system:serviceaccount:d8-virtualization:subresources',
        remoteGroups: [],
        timeoutMs: 5_000,
      });
    const freeze = '/apis/subresources.kubevirt.io/v1/namespaces/vms/virtualmachineinstances/vm1/freeze';
    const alice = { name: 'alice', uid: undefined, groups: [], extra: {} };
    try {
      const answer = await backend(true).call('PUT', freeze, Buffer.from('{}'), alice);
      expect(answer.status).toBe(200);
      expect(virtApi.calls.at(-1)).toMatchObject({ subresource: 'freeze', originatingUser: 'alice' });
      await expect(backend(false).call('PUT', freeze, Buffer.from('{}'), alice)).rejects.toThrow(/virt-api at .* is unreachable/);
      expect(virtApi.calls).toHaveLength(1);
    } finally {
      files.stop();
      await virtApi.stop();
    }
  });

  it('lets the real apiserver call the admission function with the issued certificate: a VM is validated and defaulted', async () => {
    const serving = await env.serveAdmission();
    webhook = serving.webhook;
    expect(serving.routed).toBeGreaterThan(0);
    await waitFor(
      'the ModuleConfig through the webhook',
      async () =>
        (
          await kubectl(['apply', '-f', '-'], {
            ...env.opts,
            stdin: `apiVersion: deckhouse.io/v1alpha1
kind: ModuleConfig
metadata: {name: virtualization}
spec:
  enabled: true
  version: 1
  settings:
    dvcr: {storage: {type: PersistentVolumeClaim, persistentVolumeClaim: {size: 50Gi}}}
    virtualMachineCIDRs: [10.66.0.0/16]
`,
          })
        ).code === 0,
    );
    await k(
      ['apply', '-f', '-'],
      `apiVersion: virtualization.deckhouse.io/v1alpha2
kind: VirtualMachineClass
metadata:
  name: generic
  annotations: {virtualmachineclass.virtualization.deckhouse.io/is-default-class: "true"}
spec:
  cpu: {type: Model, model: Nehalem}
  sizingPolicies:
  - {cores: {min: 1, max: 4}, coreFractions: [10, 50, 100], defaultCoreFraction: 10}
`,
    );
    const denied = await waitFor('the webhook to answer', async () => {
      const res = await kubectl(['apply', '-f', '-'], { ...env.opts, stdin: vmYaml('bad', BAD_VM) });
      return res.stderr.includes('denied the request') && res.stderr;
    });
    expect(denied).toContain('spec.blockDeviceRefs[1]: VirtualDisk/root is already listed at spec.blockDeviceRefs[0]');
    await k(['apply', '-f', '-'], vmYaml('good', GOOD_VM));
    const vm = JSON.parse(await k(['-n', testNs, 'get', 'virtualmachine', 'good', '-o', 'json'])) as { spec: { virtualMachineClassName: string } };
    expect(vm.spec.virtualMachineClassName).toBe('generic');
  }, 120_000);

  it('rotates the serving certificate and then the CA while the apiserver keeps calling the webhook without a failed request', async () => {
    const failures: string[] = [];
    let calls = 0;
    let running = true;
    const caller = (async (): Promise<void> => {
      while (running) {
        const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], { ...env.opts, stdin: vmYaml(`probe-${calls}`, GOOD_VM) });
        calls++;
        if (res.code !== 0) failures.push(res.stderr);
      }
    })();
    try {
      const before = await servedFingerprint();
      await k(['-n', NS, 'annotate', 'secret', 'admission-tls', 'virtualization.deckhouse.io/rotate=now']);
      const rotated = await waitFor('a new serving certificate', async () => ((await servedFingerprint()) !== before ? servedFingerprint() : undefined));
      await waitFor('the function serves it', async () => (await presentedBy(webhook.port)) === rotated);

      const oldCa = secretText(await c.secrets.get({ namespace: NS, name: 'virtualization-ca' }), 'tls.crt');
      await k(['-n', NS, 'annotate', 'secret', 'virtualization-ca', 'virtualization.deckhouse.io/rotate=now']);
      const newLeaf = await waitFor('a serving certificate from the new CA', async () => {
        const fp = await servedFingerprint();
        return fp !== rotated && fp;
      });
      await waitFor('the function serves it', async () => (await presentedBy(webhook.port)) === newLeaf);
      const caNow = secretText(await c.secrets.get({ namespace: NS, name: 'virtualization-ca' }), 'tls.crt');
      expect(caNow).not.toBe(oldCa);
      const callsAfterRotation = calls;
      await waitFor('more calls after the rotations', () => calls >= callsAfterRotation + 3);
    } finally {
      running = false;
      await caller;
    }
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(3);
  }, 180_000);

  it('replaces a CA Secret edited to garbage, with a Warning event, and the webhook keeps working', async () => {
    await k([
      '-n',
      NS,
      'patch',
      'secret',
      'virtualization-ca',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { 'tls.crt': Buffer.from('garbage').toString('base64') } }),
    ]);
    await waitFor('a sound CA again', async () => {
      const pem = secretText(await c.secrets.get({ namespace: NS, name: 'virtualization-ca' }), 'tls.crt') ?? '';
      return pem.includes('BEGIN CERTIFICATE');
    });
    const events = await waitFor('the Warning event', async () => {
      const out = await k(['-n', NS, 'get', 'events.events.k8s.io', '-o', 'json']);
      const list = JSON.parse(out) as { items: { reason?: string; type?: string; regarding?: { name?: string }; note?: string }[] };
      const hits = list.items.filter((e) => e.reason === 'CertificateReplaced' && e.regarding?.name === 'virtualization-ca');
      return hits.length > 0 && hits;
    });
    expect(events[0]).toMatchObject({ type: 'Warning', note: expect.stringMatching(/unusable/) as unknown });
    const served = await waitFor('the reissued serving certificate served', async () => {
      const fp = await servedFingerprint();
      return (await presentedBy(webhook.port)) === fp && fp;
    });
    expect(served).toMatch(/:/);
    const res = await kubectl(['apply', '--dry-run=server', '-f', '-'], { ...env.opts, stdin: vmYaml('after-garbage', GOOD_VM) });
    expect(res).toMatchObject({ code: 0 });
  }, 120_000);

  it('keeps the USB/IP shared secret filled: made at start, remade when cut short or asked to rotate', async () => {
    const read = (): Promise<Secret> => c.secrets.get({ namespace: NS, name: 'virtualization-dra-usbip' });
    const key = (s: Secret): Buffer => Buffer.from(s.data?.['secret'] ?? '', 'base64');
    const first = await waitFor('the shared secret', () => read());
    expect(first.type).toBe('Opaque');
    expect(key(first)).toHaveLength(48);
    // Edited by hand to a key the DRA daemons would refuse (under 32 bytes): replaced.
    await c.secrets.replace({ ...first, data: { secret: Buffer.from('short').toString('base64') } });
    const remade = await waitFor('a sound key again', async () => {
      const s = await read();
      return key(s).length === 48 ? s : undefined;
    });
    expect(key(remade).equals(key(first))).toBe(false);
    await c.secrets.replace({ ...remade, metadata: { ...remade.metadata, annotations: { 'virtualization.deckhouse.io/rotate': 'now' } } });
    const rotated = await waitFor('a rotated key', async () => {
      const s = await read();
      return s.metadata.annotations?.['virtualization.deckhouse.io/rotate'] === undefined && !key(s).equals(key(remade)) ? s : undefined;
    });
    expect(key(rotated)).toHaveLength(48);
  });

  it('in external mode (Deckhouse or cert-manager fill the Secrets) issues nothing and injects what it finds', async () => {
    await env.stopCertificates();
    const now = Date.now();
    const theirCa = issueCertificate({ commonName: 'platform-ca', usage: 'ca', notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000) });
    const theirs = issueCertificate({
      commonName: 'admission-webhook.d8-virtualization.svc',
      dnsNames: ['admission-webhook.d8-virtualization.svc'],
      usage: 'server',
      issuer: theirCa,
      notBefore: new Date(now - 60_000),
      notAfter: new Date(now + 86_400_000),
    });
    const b64 = (text: string): string => Buffer.from(text).toString('base64');
    const current = await c.secrets.get({ namespace: NS, name: 'admission-tls' });
    await c.secrets.replace({ ...current, data: { 'tls.crt': b64(theirs.certPem), 'tls.key': b64(theirs.keyPem), 'ca.crt': b64(theirCa.certPem) } });
    const caBefore = await c.secrets.get({ namespace: NS, name: 'virtualization-ca' });
    const external = new CertificateManager({
      clients: makeCertClients(env.impersonating(CONTROLLER_SA), 'virtualization-certificates'),
      namespace: NS,
      mode: 'external',
      caSecret: 'virtualization-ca',
      serving: [{ secret: 'admission-tls', service: 'admission-webhook' }],
      policy: { caValidityMs: 86_400_000, servingValidityMs: 86_400_000, renewFraction: 2 / 3, caOverlapMs: 0 },
    });
    const report = await external.pass(new AbortController().signal);
    expect(report.issued).toEqual([]);
    expect([...report.injected].sort()).toEqual([
      'CustomResourceDefinition/virtualmachineclasses.virtualization.deckhouse.io',
      'MutatingWebhookConfiguration/virtualization-admission',
      'ValidatingWebhookConfiguration/virtualization-admission',
    ]);
    expect((await caBundles()).every((b) => b === b64(theirCa.certPem))).toBe(true);
    expect((await c.secrets.get({ namespace: NS, name: 'virtualization-ca' })).metadata.resourceVersion).toBe(caBefore.metadata.resourceVersion);
    expect((await external.pass(new AbortController().signal)).injected).toEqual([]);
  });
});

/** The SHA-256 fingerprint of the certificate the local function presents (no verification). */
async function presentedBy(port: number): Promise<string> {
  const { connect } = await import('node:tls');
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'admission-webhook.d8-virtualization.svc' }, () => {
      resolve(socket.getPeerX509Certificate()?.fingerprint256 ?? '');
      socket.end();
    });
    socket.on('error', () => resolve(''));
  });
}
