import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type https from 'node:https';
import { KubeConfigError, applyCredentials, loadKubeConfig } from './kubeconfig.js';

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

let dir: string;
let files = 0;
/** `text` written as a kubeconfig file in the test directory; its path. */
async function file(text: string): Promise<string> {
  const path = join(dir, `kubeconfig-${files++}`);
  await writeFile(path, text);
  return path;
}

async function applied(text: string, options: https.RequestOptions = {}): Promise<https.RequestOptions> {
  await applyCredentials(loadKubeConfig({ kubeconfigPath: await file(text) }), options);
  return options;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kubeconfig-test-'));
  await writeFile(join(dir, 'ca.crt'), 'CA-FROM-FILE');
  await writeFile(join(dir, 'token'), 'file-token\n');
  await writeFile(join(dir, 'client.crt'), 'CERT');
  await writeFile(join(dir, 'client.key'), 'KEY');
  // An exec credential plugin, and one that fails as plugins do: exit 1 with a message on stderr.
  await writeFile(
    join(dir, 'plugin.mjs'),
    `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'from-' + process.argv[2] } }));`,
  );
  await writeFile(join(dir, 'broken-plugin.mjs'), `process.stderr.write('no session: run login first\\n'); process.exit(1);`);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('loadKubeConfig and applyCredentials', () => {
  it('read server, CA data, inline client certificate and key, and the context namespace', async () => {
    const kc = loadKubeConfig({ kubeconfigPath: await file(doc(`client-certificate-data: ${b64('CERT')}\n    client-key-data: ${b64('KEY')}`)) });
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'c', server: 'https://10.0.0.1:6443' });
    expect(kc.getContextObject('main')?.namespace).toBe('ns1');
    const o = await applied(doc(`client-certificate-data: ${b64('CERT')}\n    client-key-data: ${b64('KEY')}`));
    expect(String(o.ca)).toBe('CA-PEM');
    expect(String(o.cert)).toBe('CERT');
    expect(o.key).toEqual(Buffer.from('KEY'));
    expect(o.headers).toEqual({});
  });

  it('read files relative to the kubeconfig, a token file by absolute path (the tokenFile auth provider, newline trimmed) and skip-verify', async () => {
    const cluster = 'server: https://h:1\n    certificate-authority: ca.crt\n    insecure-skip-tls-verify: true\n    tls-server-name: api.local';
    const o = await applied(
      doc(
        `client-certificate: client.crt\n    client-key: client.key\n    auth-provider: {name: tokenFile, config: {tokenFile: "${join(dir, 'token')}"}}`,
        cluster,
      ),
    );
    expect(String(o.ca)).toBe('CA-FROM-FILE');
    expect(String(o.cert)).toBe('CERT');
    expect(o.rejectUnauthorized).toBe(false);
    expect(o.servername).toBe('api.local');
    expect(o.headers).toEqual({ Authorization: 'Bearer file-token' });
  });

  it('send a token and the impersonation header, and keep headers already set', async () => {
    const o = await applied(doc('token: abc\n    as: alice'), { headers: { Accept: 'application/json' } });
    expect(o.headers).toEqual({ Accept: 'application/json', Authorization: 'Bearer abc', 'Impersonate-User': 'alice' });
  });

  it('run an exec credential plugin for the token', async () => {
    const o = await applied(
      doc(`exec: {apiVersion: client.authentication.k8s.io/v1, command: "${process.execPath}", args: ["${join(dir, 'plugin.mjs')}", "plugin"]}`),
    );
    expect(o.headers).toEqual({ Authorization: 'Bearer from-plugin' });
  });

  it('name the exec plugin and pass on its message when it fails', async () => {
    const broken = doc(`exec: {apiVersion: client.authentication.k8s.io/v1, command: "${process.execPath}", args: ["${join(dir, 'broken-plugin.mjs')}"]}`);
    const failure = applied(broken);
    await expect(failure).rejects.toThrow(KubeConfigError);
    await expect(failure).rejects.toThrow(`credentials for user "u" (exec plugin ${process.execPath}) failed: no session: run login first`);
    await expect(applied(doc('exec: {apiVersion: client.authentication.k8s.io/v1, command: /nonexistent/plugin}'))).rejects.toThrow(
      /user "u" \(exec plugin \/nonexistent\/plugin\) failed: .*ENOENT/,
    );
  });

  it('switch context by name and refuse an unknown one by name', async () => {
    const path = await file(doc('token: abc'));
    expect(loadKubeConfig({ kubeconfigPath: path, context: 'other' }).getCurrentContext()).toBe('other');
    expect(() => loadKubeConfig({ kubeconfigPath: path, context: 'nope' })).toThrow('no context "nope" (it has: main, other)');
  });

  it.each([
    ['not YAML', 'a: [b', /not YAML|unexpected end|flow collection/],
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
    ['a server that is not a URL', doc('token: a', 'server: "::::"'), /cluster "c" server is not a URL/],
    ['a missing server', doc('token: a', 'insecure-skip-tls-verify: true'), /clusters\[0\].cluster.server is missing/],
    ['an exec plugin without a command', doc('exec: {apiVersion: client.authentication.k8s.io/v1}'), /user "u" exec: command is missing/],
  ])('refuse %s with a message naming the file and the field', async (_what, text, message) => {
    const path = await file(text);
    expect(() => loadKubeConfig({ kubeconfigPath: path })).toThrow(KubeConfigError);
    expect(() => loadKubeConfig({ kubeconfigPath: path })).toThrow(`cannot read the kubeconfig ${path}: `);
    expect(() => loadKubeConfig({ kubeconfigPath: path })).toThrow(message);
  });

  it('name an unreadable kubeconfig, and an unreadable file it names when the credentials are applied', async () => {
    expect(() => loadKubeConfig({ kubeconfigPath: join(dir, 'absent') })).toThrow(`cannot read the kubeconfig ${join(dir, 'absent')}: ENOENT`);
    await expect(applied(doc('token: a', 'server: https://h:1\n    certificate-authority: missing-ca.crt'))).rejects.toThrow(
      `credentials for user "u" failed: ENOENT: no such file or directory, open '${join(dir, 'missing-ca.crt')}'`,
    );
  });
});

describe('loadKubeConfig from the environment', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const key of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) {
      if (saved[key] === undefined) delete process.env[key];
      else process.env[key] = saved[key];
    }
  });

  it('merges the files of KUBECONFIG, the first one naming the current context', async () => {
    const first = await file(doc('token: abc'));
    const second = await file(
      doc('token: b').replaceAll('main', 'second').replaceAll('other', 'third').replace('name: c', 'name: c2').replace('name: u', 'name: u2'),
    );
    process.env['KUBECONFIG'] = `${first}:${second}`;
    const kc = loadKubeConfig({ context: 'third' });
    expect(kc.contexts.map((c) => c.name)).toEqual(['main', 'other', 'second', 'third']);
    expect(kc.getCurrentContext()).toBe('third');
  });

  it('builds the in-cluster config from the environment and the service-account files', async () => {
    const prefix = join(dir, 'pod');
    const sa = join(prefix, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'ca.crt'), 'SA-CA');
    await writeFile(join(sa, 'token'), 'sa-token');
    await writeFile(join(sa, 'namespace'), 'sa-ns');
    delete process.env['KUBERNETES_SERVICE_HOST'];
    expect(() => loadKubeConfig({ inCluster: true }, prefix)).toThrow(
      'cannot read the kubeconfig in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set',
    );
    process.env['KUBERNETES_SERVICE_HOST'] = 'fd00::1';
    process.env['KUBERNETES_SERVICE_PORT'] = '443';
    const kc = loadKubeConfig({ inCluster: true }, prefix);
    expect(kc.getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('sa-ns');
    const o: https.RequestOptions = {};
    await applyCredentials(kc, o);
    expect(String(o.ca)).toBe('SA-CA');
    expect(o.headers).toEqual({ Authorization: 'Bearer sa-token' });
  });
});
