/**
 * System test of VirtualMachineClass v1alpha3 and its conversion webhook, on an apiserver of its own
 * with the whole install applied (as certificates.test.ts): the controller's certificate manager,
 * under the install's RBAC, sets the labelled CRD's conversion to the webhook on Service
 * admission-webhook and injects the CA (the CRD file, like the original's, declares none); the
 * admission function serves `/convert` with the certificate it issued; the Service becomes an
 * ExternalName on 127.0.0.1 and `spec.conversion.webhook.clientConfig.service.port` the local
 * function's port. The real apiserver then converts in both directions.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { secretText } from '../../../daemons/controller/certificates/resources.js';
import { makeClients } from '../../../daemons/controller/kube/resources.js';
import { type ServerHandle } from '../../../shared/runtime/index.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { kubectl } from '../../env/index.js';
import { installWithCertificates, NS, type Installed } from './installed.js';

const CRD = 'virtualmachineclasses.virtualization.deckhouse.io';

let env: Installed;
let webhook: ServerHandle;

const k = (args: string[], stdin?: string): Promise<string> => env.k(args, stdin);

interface CrdConversion {
  spec: { conversion: { strategy: string; webhook: { clientConfig: { caBundle?: string; service: { port?: number } } } } };
}
const crd = async (): Promise<CrdConversion> => JSON.parse(await k(['get', 'crd', CRD, '-o', 'json'])) as CrdConversion;

const classYaml = (version: string, name: string, policy: string): string => `apiVersion: virtualization.deckhouse.io/${version}
kind: VirtualMachineClass
metadata: {name: ${name}}
spec:
  cpu: {type: Host}
  sizingPolicies:
  - {cores: {min: 1, max: 4}, ${policy}}
`;

type Policy = { coreFractions?: unknown[]; defaultCoreFraction?: unknown };
const policyOf = async (version: string, name: string): Promise<Policy> => {
  const obj = JSON.parse(await k(['get', `virtualmachineclasses.${version}.virtualization.deckhouse.io`, name, '-o', 'json'])) as {
    apiVersion: string;
    spec: { sizingPolicies: Policy[] };
  };
  expect(obj.apiVersion).toBe(`virtualization.deckhouse.io/${version}`);
  return obj.spec.sizingPolicies[0] ?? {};
};

beforeAll(async () => {
  env = await installWithCertificates('conversion');
  ({ webhook } = await env.serveAdmission());
  await waitFor('the conversion webhook set on the CRD', async () => (await crd()).spec.conversion.strategy === 'Webhook');
  await k([
    'patch',
    'crd',
    CRD,
    '--type=json',
    '-p',
    JSON.stringify([{ op: 'replace', path: '/spec/conversion/webhook/clientConfig/service/port', value: webhook.port }]),
  ]);
}, 180_000);

afterAll(async () => {
  await env?.close();
}, 60_000);

describe('VirtualMachineClass v1alpha3 through the conversion webhook', () => {
  it('serves v1alpha2 (deprecated) and v1alpha3, storing v1alpha2, with the conversion and its CA set by the certificate manager', async () => {
    const served = JSON.parse(await k(['get', 'crd', CRD, '-o', 'json'])) as {
      spec: { versions: { name: string; served: boolean; storage: boolean; deprecated?: boolean }[] };
    };
    expect(served.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated ?? false])).toEqual([
      ['v1alpha2', true, true, true],
      ['v1alpha3', true, false, false],
    ]);
    const ca = secretText(await makeClients(env.admin, 'conversion-test').secrets.get({ namespace: NS, name: 'admission-tls' }), 'ca.crt');
    await waitFor(
      'the CA bundle in the CRD conversion webhook',
      async () => (await crd()).spec.conversion.webhook.clientConfig.caBundle === Buffer.from(ca ?? '').toString('base64'),
    );
    expect((await crd()).spec.conversion.webhook.clientConfig.service).toEqual({
      namespace: NS,
      name: 'admission-webhook',
      path: '/convert',
      port: webhook.port,
    });
  });

  it('converts a v1alpha2 class to v1alpha3 on read, and warns that v1alpha2 is deprecated', async () => {
    const res = await waitFor('the class through the webhook', async () => {
      const r = await kubectl(['apply', '-f', '-'], {
        ...env.opts,
        stdin: classYaml('v1alpha2', 'old-style', 'coreFractions: [5, 20, 100], defaultCoreFraction: 20'),
      });
      return r.code === 0 && r;
    });
    expect(res.stderr).toContain('v1alpha2.VirtualMachineClass is deprecated; use v1alpha3.VirtualMachineClass');
    expect(await waitFor('v1alpha3 read', async () => policyOf('v1alpha3', 'old-style').catch(() => undefined))).toEqual({
      cores: { min: 1, max: 4 },
      coreFractions: ['5%', '20%', '100%'],
      defaultCoreFraction: '20%',
    });
  }, 60_000);

  it('converts a v1alpha3 class to v1alpha2 for storage and for v1alpha2 readers, and back unchanged', async () => {
    await k(['apply', '-f', '-'], classYaml('v1alpha3', 'new-style', 'coreFractions: ["10%", "100%"], defaultCoreFraction: "10%"'));
    expect(await policyOf('v1alpha2', 'new-style')).toEqual({ cores: { min: 1, max: 4 }, coreFractions: [10, 100], defaultCoreFraction: 10 });
    expect(await policyOf('v1alpha3', 'new-style')).toEqual({ cores: { min: 1, max: 4 }, coreFractions: ['10%', '100%'], defaultCoreFraction: '10%' });
  }, 60_000);

  it('validates a v1alpha3 class through the v1alpha3 webhook path: a default fraction outside the list is denied', async () => {
    const res = await kubectl(['apply', '-f', '-'], {
      ...env.opts,
      stdin: classYaml('v1alpha3', 'bad-default', 'coreFractions: ["10%", "100%"], defaultCoreFraction: "50%"'),
    });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('vmclass-v1alpha3.virtualization-controller.validate.d8-virtualization');
    expect(res.stderr).toContain('spec.sizingPolicies[0].defaultCoreFraction');
  }, 60_000);

  it('refuses a v1alpha3 core fraction that is not a percentage, naming the field', async () => {
    const res = await kubectl(['apply', '-f', '-'], { ...env.opts, stdin: classYaml('v1alpha3', 'bad-fraction', 'coreFractions: ["half"]') });
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('spec.sizingPolicies[0].coreFractions[0]');
  }, 60_000);
});
