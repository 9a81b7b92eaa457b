/**
 * A small kubeconfig reader: what our REST transport and the rewriter's upstream need (server, CA,
 * client certificate, bearer token, impersonation), without loading @kubernetes/client-node (about
 * 80 MB of resident memory for a process that only wanted to read this file).
 *
 * Files named by the kubeconfig (CA, client certificate and key, token file) are read again on every
 * `applyToHTTPSOptions`, so a rotated service-account token or certificate is picked up; callers cache.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type https from 'node:https';
import { load } from 'js-yaml';

/** The in-cluster service-account mount. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface KubeCluster {
  readonly name: string;
  readonly server: string;
  readonly caFile?: string;
  /** Base64 PEM, as in the file. */
  readonly caData?: string;
  readonly skipTLSVerify: boolean;
  readonly tlsServerName?: string;
}

export interface KubeUser {
  readonly name: string;
  readonly certFile?: string;
  readonly certData?: string;
  readonly keyFile?: string;
  readonly keyData?: string;
  readonly token?: string;
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  readonly impersonate?: string;
  readonly impersonateGroups?: readonly string[];
}

export interface KubeContext {
  readonly name: string;
  readonly cluster: string;
  readonly user: string;
  readonly namespace?: string;
}

/**
 * What a client needs from a kubeconfig. Our `KubeConfigFile` implements it; so does
 * @kubernetes/client-node's KubeConfig, which tests may still hand to `KubeClient`.
 */
export interface KubeAccess {
  getCurrentCluster(): {
    readonly name: string;
    readonly server: string;
    readonly caFile?: string | undefined;
    readonly caData?: string | undefined;
    readonly skipTLSVerify?: boolean | undefined;
    readonly tlsServerName?: string | undefined;
  } | null;
  /** Sets ca/cert/key/rejectUnauthorized/servername and the auth headers on `options`. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

/** A parsed kubeconfig with a current context. */
export class KubeConfigFile implements KubeAccess {
  constructor(
    readonly clusters: readonly KubeCluster[],
    readonly users: readonly KubeUser[],
    readonly contexts: readonly KubeContext[],
    private currentContext: string,
    /** Where it came from, for error messages (a path or `in-cluster`). */
    readonly origin: string,
  ) {}

  getCurrentContext(): string {
    return this.currentContext;
  }

  getContextObject(name: string): KubeContext | null {
    return this.contexts.find((c) => c.name === name) ?? null;
  }

  setCurrentContext(name: string): void {
    if (this.getContextObject(name) === null)
      throw new KubeConfigError(`${this.origin}: no context "${name}" (it has: ${this.contexts.map((c) => c.name).join(', ') || 'none'})`);
    this.currentContext = name;
  }

  getCurrentCluster(): KubeCluster | null {
    const context = this.getContextObject(this.currentContext);
    return context === null ? null : (this.clusters.find((c) => c.name === context.cluster) ?? null);
  }

  getCurrentUser(): KubeUser | null {
    const context = this.getContextObject(this.currentContext);
    return context === null ? null : (this.users.find((u) => u.name === context.user) ?? null);
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    const cluster = this.getCurrentCluster();
    if (cluster === null) throw new KubeConfigError(`${this.origin}: context "${this.currentContext}" names no known cluster`);
    const user = this.getCurrentUser();
    const headers: Record<string, string | string[]> = { ...(options.headers as Record<string, string | string[]> | undefined) };
    if (cluster.skipTLSVerify) options.rejectUnauthorized = false;
    if (cluster.tlsServerName !== undefined) options.servername = cluster.tlsServerName;
    const ca = await material(cluster.caData, cluster.caFile, `cluster "${cluster.name}" certificate-authority`);
    if (ca !== undefined) options.ca = ca;
    if (user !== null) {
      const cert = await material(user.certData, user.certFile, `user "${user.name}" client-certificate`);
      const key = await material(user.keyData, user.keyFile, `user "${user.name}" client-key`);
      if (cert !== undefined) options.cert = cert;
      if (key !== undefined) options.key = key;
      const token =
        user.token ?? (user.tokenFile === undefined ? undefined : (await readNamed(user.tokenFile, `user "${user.name}" tokenFile`)).toString('utf8').trim());
      if (token !== undefined && token !== '') headers['Authorization'] = `Bearer ${token}`;
      else if (user.username !== undefined) options.auth = `${user.username}:${user.password ?? ''}`;
      if (user.impersonate !== undefined) headers['Impersonate-User'] = user.impersonate;
      if (user.impersonateGroups !== undefined && user.impersonateGroups.length > 0) headers['Impersonate-Group'] = [...user.impersonateGroups];
    }
    options.headers = headers;
  }
}

/** A kubeconfig that cannot be used; the message names the file and the field. */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

export interface KubeConfigLoad {
  /** A kubeconfig file; wins over everything else. */
  kubeconfigPath?: string | undefined;
  /** Use the pod's service account (KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA). */
  inCluster?: boolean;
  /** A context other than the file's current one. */
  context?: string | undefined;
}

/**
 * A kubeconfig from, in order: an explicit path, the in-cluster service account, or the default search
 * (the first file of KUBECONFIG, ~/.kube/config, then in-cluster).
 */
export function readKubeConfig(source: KubeConfigLoad = {}, env: NodeJS.ProcessEnv = process.env): KubeConfigFile {
  let kc: KubeConfigFile;
  if (source.kubeconfigPath) kc = readKubeConfigFile(source.kubeconfigPath);
  else if (source.inCluster) kc = inClusterConfig(env);
  else kc = defaultConfig(env);
  if (source.context) kc.setCurrentContext(source.context);
  return kc;
}

function defaultConfig(env: NodeJS.ProcessEnv): KubeConfigFile {
  const fromEnv = env['KUBECONFIG']?.split(':').find((p) => p !== '');
  if (fromEnv !== undefined) return readKubeConfigFile(fromEnv);
  const home = join(homedir(), '.kube', 'config');
  try {
    return readKubeConfigFile(home);
  } catch (err: unknown) {
    if (env['KUBERNETES_SERVICE_HOST'] !== undefined) return inClusterConfig(env);
    throw err;
  }
}

export function readKubeConfigFile(path: string): KubeConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err: unknown) {
    throw new KubeConfigError(`cannot read the kubeconfig ${path}: ${(err as Error).message}`, { cause: err });
  }
  return parseKubeConfig(text, path, dirname(path));
}

/** The pod's service account: server from KUBERNETES_SERVICE_HOST/PORT, the mounted CA and token file. */
export function inClusterConfig(env: NodeJS.ProcessEnv = process.env, dir = SERVICE_ACCOUNT_DIR): KubeConfigFile {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (host === undefined || port === undefined)
    throw new KubeConfigError('in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)');
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const cluster: KubeCluster = { name: 'in-cluster', server, caFile: join(dir, 'ca.crt'), skipTLSVerify: false };
  const user: KubeUser = { name: 'in-cluster', tokenFile: join(dir, 'token') };
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim();
  } catch {
    namespace = undefined;
  }
  const context: KubeContext = { name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', ...(namespace ? { namespace } : {}) };
  return new KubeConfigFile([cluster], [user], [context], 'in-cluster', 'in-cluster');
}

/**
 * Parse kubeconfig YAML. Relative file names resolve against `baseDir` (as kubectl does).
 * Refuses what it cannot honour (exec plugins, auth providers other than a token file) by name.
 */
export function parseKubeConfig(text: string, origin: string, baseDir = '.'): KubeConfigFile {
  let doc: unknown;
  try {
    doc = load(text);
  } catch (err: unknown) {
    throw new KubeConfigError(`${origin}: not YAML: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  const root = asObject(doc ?? {}, origin, 'the document');
  const at = (field: string): string => `${origin}: ${field}`;
  const file = (v: unknown, field: string): string | undefined => {
    const s = optString(v, at(field));
    return s === undefined || s === '' ? undefined : isAbsolute(s) ? s : join(baseDir, s);
  };
  const data = (v: unknown, field: string): string | undefined => {
    const s = optString(v, at(field));
    if (s === undefined || s === '') return undefined;
    if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(s)) throw new KubeConfigError(`${at(field)} is not valid base64`);
    return s;
  };

  const clusters = named(root['clusters'], 'cluster', at('clusters')).map(({ name, body, where }): KubeCluster => {
    const server = optString(body['server'], `${where}.server`);
    if (server === undefined || server === '') throw new KubeConfigError(`${where}.server is missing`);
    try {
      new URL(server);
    } catch {
      throw new KubeConfigError(`${where}.server is not a URL: ${server}`);
    }
    const c: { -readonly [K in keyof KubeCluster]: KubeCluster[K] } = { name, server, skipTLSVerify: body['insecure-skip-tls-verify'] === true };
    const caFile = file(body['certificate-authority'], `cluster "${name}" certificate-authority`);
    const caData = data(body['certificate-authority-data'], `cluster "${name}" certificate-authority-data`);
    const tlsServerName = optString(body['tls-server-name'], `${where}.tls-server-name`);
    if (caFile !== undefined) c.caFile = caFile;
    if (caData !== undefined) c.caData = caData;
    if (tlsServerName !== undefined) c.tlsServerName = tlsServerName;
    return c;
  });

  const users = named(root['users'], 'user', at('users')).map(({ name, body, where }): KubeUser => {
    if (body['exec'] !== undefined && body['exec'] !== null)
      throw new KubeConfigError(`${where}.exec: credential plugins are not supported; use a token, token file or client certificate`);
    const u: { -readonly [K in keyof KubeUser]: KubeUser[K] } = { name };
    const set = <K extends keyof KubeUser>(key: K, value: KubeUser[K] | undefined): void => {
      if (value !== undefined) u[key] = value;
    };
    set('certFile', file(body['client-certificate'], `user "${name}" client-certificate`));
    set('certData', data(body['client-certificate-data'], `user "${name}" client-certificate-data`));
    set('keyFile', file(body['client-key'], `user "${name}" client-key`));
    set('keyData', data(body['client-key-data'], `user "${name}" client-key-data`));
    set('token', optString(body['token'], `${where}.token`) || undefined);
    set('tokenFile', file(body['tokenFile'], `user "${name}" tokenFile`));
    set('username', optString(body['username'], `${where}.username`));
    set('password', optString(body['password'], `${where}.password`));
    set('impersonate', optString(body['as'], `${where}.as`));
    const groups = body['as-groups'];
    if (groups !== undefined && groups !== null) {
      if (!Array.isArray(groups) || !groups.every((g) => typeof g === 'string')) throw new KubeConfigError(`${where}.as-groups must be a list of strings`);
      u.impersonateGroups = groups;
    }
    const provider = body['auth-provider'];
    if (provider !== undefined && provider !== null) {
      const p = asObject(provider, `${where}.auth-provider`, 'auth-provider');
      const config = p['config'] === undefined ? {} : asObject(p['config'], `${where}.auth-provider.config`, 'config');
      if (p['name'] !== 'tokenFile') throw new KubeConfigError(`${where}.auth-provider "${String(p['name'])}" is not supported; only tokenFile is`);
      set('tokenFile', file(config['tokenFile'], `user "${name}" auth-provider tokenFile`));
    }
    return u;
  });

  const contexts = named(root['contexts'], 'context', at('contexts')).map(({ name, body, where }): KubeContext => {
    const cluster = optString(body['cluster'], `${where}.cluster`);
    if (cluster === undefined || cluster === '') throw new KubeConfigError(`${where}.cluster is missing`);
    const user = optString(body['user'], `${where}.user`) ?? '';
    const namespace = optString(body['namespace'], `${where}.namespace`);
    return { name, cluster, user, ...(namespace ? { namespace } : {}) };
  });

  const current = optString(root['current-context'], at('current-context')) ?? '';
  if (current === '') throw new KubeConfigError(`${at('current-context')} is not set`);
  const context = contexts.find((c) => c.name === current);
  if (context === undefined)
    throw new KubeConfigError(`${at('current-context')} "${current}" is not among the contexts (${contexts.map((c) => c.name).join(', ') || 'none'})`);
  if (!clusters.some((c) => c.name === context.cluster))
    throw new KubeConfigError(`${origin}: context "${current}" names cluster "${context.cluster}", which is not among the clusters`);
  if (context.user !== '' && !users.some((u) => u.name === context.user))
    throw new KubeConfigError(`${origin}: context "${current}" names user "${context.user}", which is not among the users`);
  return new KubeConfigFile(clusters, users, contexts, current, origin);
}

function named(list: unknown, key: string, where: string): { name: string; body: Record<string, unknown>; where: string }[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new KubeConfigError(`${where} must be a list`);
  return list.map((item: unknown, i) => {
    const entry = asObject(item, `${where}[${i}]`, key);
    const name = optString(entry['name'], `${where}[${i}].name`);
    if (name === undefined || name === '') throw new KubeConfigError(`${where}[${i}].name is missing`);
    const itemWhere = `${where}[${i}] "${name}"`;
    return { name, body: asObject(entry[key] ?? {}, `${itemWhere}.${key}`, key), where: `${itemWhere}.${key}` };
  });
}

function asObject(v: unknown, where: string, what: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new KubeConfigError(`${where}: ${what} must be a mapping`);
  return v as Record<string, unknown>;
}

function optString(v: unknown, where: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new KubeConfigError(`${where} must be a string`);
  return v;
}

/** Inline base64 data wins over a file, as in kubectl. */
async function material(data: string | undefined, file: string | undefined, what: string): Promise<Buffer | undefined> {
  if (data !== undefined) return Buffer.from(data, 'base64');
  if (file !== undefined) return readNamed(file, what);
  return undefined;
}

async function readNamed(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err: unknown) {
    throw new KubeConfigError(`${what}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}
