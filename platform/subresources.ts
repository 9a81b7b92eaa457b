/**
 * The subresources API in `npm start`: the function runs as a local process, the install's APIService
 * (knative/apiservice/) reaches it through its Service turned into an ExternalName to 127.0.0.1 (the
 * same wiring as the admission webhooks, webhook-wiring.ts) with the local port, and the controller's
 * certificate manager keeps the APIService's caBundle (Secret subresources-tls, ADR 0006). Behind it,
 * the KubeVirt simulator serves the virt-api stand-in over mutual TLS: its serving pair comes from a
 * CA made here (KubeVirt's own CA would issue it in a cluster); the function's client certificate is
 * the one the controller issues (Secret virtualization-api-proxy-tls, kept in files as kubelet keeps a
 * mounted Secret), and the stand-in trusts that Secret's CA bundle, as virt-api must in a cluster.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { issueCertificate } from '../shared/certs/index.js';
import type { KubeClient } from '../shared/kube/index.js';
import type { SecretFiles } from './secret-files.js';
import { serviceToLoopback } from './webhook-wiring.js';

export const SUBRESOURCES_SERVICE = 'subresources-api';
export const SUBRESOURCES_SECRET = 'subresources-tls';
export const API_SERVICE = 'v1alpha2.subresources.virtualization.deckhouse.io';
/** The client certificate the controller issues for the function (CERT_CLIENT_SECRETS). */
export const VIRT_API_CLIENT_SECRET = 'virtualization-api-proxy-tls';

/** Files of the virt-api stand-in's CA and its serving pair. */
export interface VirtApiPki {
  readonly caFile: string;
  readonly servingCertFile: string;
  readonly servingKeyFile: string;
}

export async function makeVirtApiPki(dir: string): Promise<VirtApiPki> {
  await mkdir(dir, { recursive: true });
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 30 * 24 * 3600 * 1000);
  const ca = issueCertificate({ commonName: 'virt-api-stand-in-ca', usage: 'ca', notBefore, notAfter });
  const serving = issueCertificate({
    commonName: 'virt-api',
    usage: 'server',
    ipAddresses: ['127.0.0.1'],
    dnsNames: ['localhost'],
    notBefore,
    notAfter,
    issuer: ca,
  });
  const pki: VirtApiPki = {
    caFile: join(dir, 'ca.crt'),
    servingCertFile: join(dir, 'virt-api.crt'),
    servingKeyFile: join(dir, 'virt-api.key'),
  };
  await Promise.all([
    writeFile(pki.caFile, ca.certPem),
    writeFile(pki.servingCertFile, serving.certPem),
    writeFile(pki.servingKeyFile, serving.keyPem, { mode: 0o600 }),
  ]);
  return pki;
}

/**
 * The simulator's keys for the stand-in, and the subresources function's keys for reaching it;
 * `client` is the files of Secret virtualization-api-proxy-tls (they appear once the controller has
 * issued it: until then calls to virt-api are 503 and the stand-in accepts no client).
 */
export function virtApiEnv(pki: VirtApiPki, port: number, client: SecretFiles): { simulator: Record<string, string>; subresources: Record<string, string> } {
  return {
    simulator: {
      VIRT_API_PORT: String(port),
      VIRT_API_TLS_CERT_FILE: pki.servingCertFile,
      VIRT_API_TLS_KEY_FILE: pki.servingKeyFile,
      VIRT_API_CLIENT_CA_FILE: client.path('ca.crt'),
    },
    subresources: {
      VIRT_API_URL: `https://127.0.0.1:${port}`,
      VIRT_API_CA_FILE: pki.caFile,
      VIRT_API_CLIENT_CERT_FILE: client.path('tls.crt'),
      VIRT_API_CLIENT_KEY_FILE: client.path('tls.key'),
      VIRT_API_TLS_RELOAD_MS: '1000',
    },
  };
}

/** Point the install's APIService at the local function: its Service to 127.0.0.1, its port to `port`. */
export async function routeApiService(kube: KubeClient, namespace: string, port: number): Promise<void> {
  await serviceToLoopback(kube, namespace, SUBRESOURCES_SERVICE);
  await kube.rest.request({
    method: 'PATCH',
    path: `/apis/apiregistration.k8s.io/v1/apiservices/${API_SERVICE}`,
    what: `point APIService ${API_SERVICE} at 127.0.0.1:${port}`,
    body: { spec: { service: { port } } },
    contentType: 'application/merge-patch+json',
  });
}
