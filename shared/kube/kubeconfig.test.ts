import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type https from 'node:https';
import { KubeConfigError, inClusterConfig, parseKubeConfig, readKubeConfig } from './kubeconfig.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function doc(user: string, cluster = `server: https://10.0.0.1:6443\n    certificate-authority-data: ${b64('CA-PEM')}`): string {
  return `apiVersion: v1
kind: Config
current-context: main
clusters:
- name: c
  cluster:
    ${cluster}
users:
- name: u
  user:
    ${user}
contexts:
- name: main
  context: {cluster: c, user: u, namespace: ns1}
- name: other
  context: {cluster: c, user: u}
`;
}

async function applied(text: string, baseDir = '.'): Promise<https.RequestOptions> {
  const options: https.RequestOptions = {};
  await parseKubeConfig(text, 'test.kubeconfig', baseDir).applyToHTTPSOptions(options);
  return options;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
  await writeFile(join(dir, 'ca.crt'), 'CA-FROM-FILE');
  await writeFile(join(dir, 'token'), 'file-token\n');
  await writeFile(join(dir, 'client.crt'), 'CERT');
  await writeFile(join(dir, 'client.key'), 'KEY');
  await writeFile(join(dir, 'namespace'), 'sa-ns');
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('parseKubeConfig', () => {
  it('reads server, CA data, inline client certificate and key, and the context namespace', async () => {
    const kc = parseKubeConfig(doc(`client-certificate-data: ${b64('CERT')}\n    client-key-data: ${b64('KEY')}`), 'x');
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'c', server: 'https://10.0.0.1:6443' });
    expect(kc.getContextObject('main')?.namespace).toBe('ns1');
    const o = await applied(doc(`client-certificate-data: ${b64('CERT')}\n    client-key-data: ${b64('KEY')}`));
    expect(String(o.ca)).toBe('CA-PEM');
    expect(String(o.cert)).toBe('CERT');
    expect(o.key).toEqual(Buffer.from('KEY'));
    expect(o.headers).toEqual({});
  });

  it('reads files relative to the kubeconfig, a token file (also as the tokenFile auth provider) and skip-verify', async () => {
    const cluster = 'server: https://h:1\n    certificate-authority: ca.crt\n    insecure-skip-tls-verify: true\n    tls-server-name: api.local';
    const o = await applied(doc('client-certificate: client.crt\n    client-key: client.key\n    tokenFile: token', cluster), dir);
    expect(String(o.ca)).toBe('CA-FROM-FILE');
    expect(String(o.cert)).toBe('CERT');
    expect(o.rejectUnauthorized).toBe(false);
    expect(o.servername).toBe('api.local');
    expect(o.headers).toEqual({ Authorization: 'Bearer file-token' });
    const viaProvider = await applied(doc(`auth-provider: {name: tokenFile, config: {tokenFile: "${join(dir, 'token')}"}}`));
    expect(viaProvider.headers).toEqual({ Authorization: 'Bearer file-token' });
  });

  it('sends a token, impersonation headers, and keeps headers already set', async () => {
    const options: https.RequestOptions = { headers: { Accept: 'application/json' } };
    await parseKubeConfig(doc('token: abc\n    as: alice\n    as-groups: [g1, g2]'), 'x').applyToHTTPSOptions(options);
    expect(options.headers).toEqual({
      Accept: 'application/json',
      Authorization: 'Bearer abc',
      'Impersonate-User': 'alice',
      'Impersonate-Group': ['g1', 'g2'],
    });
  });

  it('switches context by name and refuses an unknown one by name', () => {
    const kc = parseKubeConfig(doc('token: abc'), 'x');
    kc.setCurrentContext('other');
    expect(kc.getCurrentContext()).toBe('other');
    expect(() => kc.setCurrentContext('nope')).toThrow('no context "nope" (it has: main, other)');
  });

  it.each([
    ['not YAML', 'a: [b', /test.kubeconfig: not YAML/],
    ['no current context', doc('token: a').replace('current-context: main', ''), /current-context is not set/],
    [
      'a missing current context',
      doc('token: a').replace('current-context: main', 'current-context: gone'),
      /current-context "gone" is not among the contexts \(main, other\)/,
    ],
    ['a context naming an unknown cluster', doc('token: a').replace('{cluster: c, user: u, namespace: ns1}', '{cluster: zz, user: u}'), /names cluster "zz"/],
    ['a context naming an unknown user', doc('token: a').replace('{cluster: c, user: u, namespace: ns1}', '{cluster: c, user: who}'), /names user "who"/],
    [
      'bad base64 CA data',
      doc('token: a', 'server: https://h:1\n    certificate-authority-data: "%%%"'),
      /cluster "c" certificate-authority-data is not valid base64/,
    ],
    ['bad base64 key data', doc('client-key-data: "not base64!"'), /user "u" client-key-data is not valid base64/],
    ['a server that is not a URL', doc('token: a', 'server: "::::"'), /server is not a URL/],
    ['a missing server', doc('token: a', 'insecure-skip-tls-verify: true'), /"c".cluster.server is missing/],
    ['an exec plugin', doc('exec: {command: aws}'), /exec: credential plugins are not supported/],
    ['another auth provider', doc('auth-provider: {name: oidc}'), /auth-provider "oidc" is not supported/],
    ['a token of the wrong type', doc('token: [1]'), /"u".user.token must be a string/],
    ['clusters that are not a list', 'clusters: {a: 1}\ncurrent-context: x', /clusters must be a list/],
  ])('refuses %s with a message naming the field', (_what, text, message) => {
    expect(() => parseKubeConfig(text, 'test.kubeconfig')).toThrow(KubeConfigError);
    expect(() => parseKubeConfig(text, 'test.kubeconfig')).toThrow(message);
  });

  it('names an unreadable file when the credentials are applied', async () => {
    await expect(applied(doc('tokenFile: /nonexistent/token'))).rejects.toThrow('user "u" tokenFile: cannot read /nonexistent/token');
    await expect(applied(doc('token: a', 'server: https://h:1\n    certificate-authority: missing-ca.crt'), dir)).rejects.toThrow(
      `cluster "c" certificate-authority: cannot read ${join(dir, 'missing-ca.crt')}`,
    );
  });
});

describe('readKubeConfig', () => {
  it('names an unreadable kubeconfig file', () => {
    expect(() => readKubeConfig({ kubeconfigPath: join(dir, 'absent') })).toThrow(`cannot read the kubeconfig ${join(dir, 'absent')}`);
  });

  it('reads the first KUBECONFIG file, and the context asked for', async () => {
    const path = join(dir, 'config');
    await writeFile(path, doc('token: abc'));
    const kc = readKubeConfig({ context: 'other' }, { KUBECONFIG: `${path}:/elsewhere` });
    expect(kc.getCurrentContext()).toBe('other');
    expect(() => readKubeConfig({ kubeconfigPath: path, context: 'nope' })).toThrow('no context "nope"');
  });

  it('builds the in-cluster config from the environment and the service-account files', async () => {
    const kc = inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir);
    expect(kc.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    expect(kc.getContextObject('in-cluster')?.namespace).toBe('sa-ns');
    const o: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    expect(String(o.ca)).toBe('CA-FROM-FILE');
    expect(o.headers).toEqual({ Authorization: 'Bearer file-token' });
    expect(() => inClusterConfig({}, dir)).toThrow('KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set');
  });
});
