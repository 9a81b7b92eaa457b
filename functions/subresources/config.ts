/** The subresources function's own configuration (the host adds PORT, TLS_CERT_FILE, TLS_KEY_FILE, ...). */
import { z } from 'zod';
import { env } from '../../shared/config/index.js';

const list = z.string().transform((text) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);

export const subresourcesConfig = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig for VM lookups and the front-proxy ConfigMap; unset uses the pod service account'),
  VIRT_API_URL: z
    .string()
    .url()
    .default('https://virt-api.d8-virtualization.svc')
    .describe("virt-api's base URL; requests go to <url>/apis/subresources.kubevirt.io/v1/..."),
  VIRT_API_CA_FILE: env.optionalString().describe("PEM CA that signed virt-api's serving certificate; unset: the system roots"),
  VIRT_API_CLIENT_CERT_FILE: env.optionalString().describe('PEM client certificate this function shows virt-api (with VIRT_API_CLIENT_KEY_FILE)'),
  VIRT_API_CLIENT_KEY_FILE: env.optionalString().describe('PEM key of VIRT_API_CLIENT_CERT_FILE'),
  VIRT_API_TLS_RELOAD_MS: env.int(10_000, 0).describe('How long the virt-api TLS files are reused before they are read again (rotated Secrets)'),
  VIRT_API_REMOTE_USER: env
    .string('system:serviceaccount:d8-virtualization:subresources')
    .describe('X-Remote-User sent to virt-api (the original sends its service account; the end user goes in X-Remote-Extra-Originating-User)'),
  VIRT_API_REMOTE_GROUPS: list
    .default(['system:serviceaccounts', 'system:serviceaccounts:d8-virtualization'])
    .describe('X-Remote-Group values sent to virt-api (comma-separated)'),
  VIRT_API_TIMEOUT_MS: env.int(10_000, 100).describe('Deadline of one call to virt-api (connect and answer; streams only for the handshake)'),
  LOOKUP_TIMEOUT_MS: env.int(5_000, 100).describe('Deadline of one apiserver read (VM lookup)'),
  SESSION_LEASE_SECONDS: env.int(30, 1).describe('leaseDurationSeconds of the console/VNC session Leases (d8v-vm-<kind>-<vm>-<uid>)'),
  SESSION_RENEW_MS: env.int(10_000, 100).describe('How often an open console/VNC session renews its Lease'),
  STREAM_BUFFER_BYTES: env.int(1024 * 1024, 1024).describe('Bytes a stream may hold queued towards a slow side before reading from the other side pauses'),
});

export type SubresourcesConfig = z.infer<typeof subresourcesConfig>;
