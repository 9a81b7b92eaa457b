/**
 * System test: a real kube-apiserver with its audit webhook pointed at the audit function, its
 * kubeconfig carrying the token of the install's `audit-webhook` ServiceAccount (the function checks
 * senders, SENDER_AUTH=kubernetes as shipped). Creating,
 * updating and deleting a VirtualMachine, creating a VirtualMachineOperation and a forbidden request
 * by an unprivileged user each yield the expected record on the function's output.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCA, freshNamespace, getTestEnv, issueCert, startExtraApiServer, type ExtraApiServer } from '../../env/index.js';
import { serveAudit, type ServedAudit } from '../../../functions/audit/testing/serve.js';
import { waitFor } from '../../../shared/testing/wait.js';
import { applySenderRbac, applyYaml, AUDIT_WEBHOOK, installDeckhouseCrds, kc, userKubeconfig, vmManifest } from './fixtures.js';
import { KubeClient } from '../../../shared/kube/index.js';
import { serviceAccountToken } from '../metrics-auth/fixtures.js';

const VM_KEYS =
  'type,level,name,datetime,uid,request_subject,action_type,node_network_address,virtual_machine_name,virtual_machine_namespace,virtualmachine_uid,virtualmachine_os,storageclasses,qemu_version,libvirt_version,operation_result';
const FORBID_KEYS = 'type,level,name,datetime,uid,request_subject,operation_result,is_admin,source_ip,forbid_reason';
const RFC3339_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

describe('the apiserver audit webhook feeding the audit function', () => {
  let audit: ServedAudit;
  let apiserver: ExtraApiServer;
  let ns: string;
  let on: { kubeconfigPath: string };

  /** The one record whose sentence is `name`, once it has arrived. */
  const recordNamed = (name: string): Promise<Record<string, unknown>> =>
    waitFor(`the record "${name}"`, () => {
      const found = audit.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r['name'] === name);
      if (found.length > 1) throw new Error(`record "${name}" written ${found.length} times`);
      return found[0];
    });

  beforeAll(async () => {
    await installDeckhouseCrds();
    ns = await freshNamespace('audit-sys');
    await applySenderRbac();
    const admin = KubeClient.fromSource({ kubeconfigPath: getTestEnv().kubeconfigPath });
    const token = await serviceAccountToken(admin, AUDIT_WEBHOOK.namespace, AUDIT_WEBHOOK.name).finally(() => admin.close());
    // Over TLS: the apiserver sends its webhook kubeconfig's credentials only to an https server.
    const pki = join(getTestEnv().workDir, 'audit-webhook-pki');
    const ca = await createCA(pki, 'audit-webhook-ca');
    const cert = await issueCert(ca, pki, 'audit', { commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'], usage: 'server' });
    audit = await serveAudit(
      {
        KUBECONFIG: getTestEnv().kubeconfigPath,
        AUDIT_SYNC_WAIT_MS: '20000',
        SENDER_AUTH: 'kubernetes',
        TLS_CERT_FILE: cert.certPath,
        TLS_KEY_FILE: cert.keyPath,
      },
      null,
    );
    const webhookConfig = join(getTestEnv().workDir, `audit-webhook-${audit.server.port}.kubeconfig`);
    await writeFile(
      webhookConfig,
      `apiVersion: v1
kind: Config
clusters: [{name: audit, cluster: {server: "${audit.server.url}/audit-webhook", certificate-authority: "${ca.certPath}"}}]
users: [{name: apiserver, user: {token: "${token}"}}]
contexts: [{name: audit, context: {cluster: audit, user: apiserver}}]
current-context: audit
`,
    );
    apiserver = await startExtraApiServer({
      extraArgs: [
        `--audit-webhook-config-file=${webhookConfig}`,
        '--audit-webhook-mode=batch',
        '--audit-webhook-batch-max-wait=200ms',
        '--audit-webhook-batch-throttle-enable=false',
      ],
    });
    on = { kubeconfigPath: apiserver.kubeconfigPath };
  }, 120_000);

  afterAll(async () => {
    await apiserver?.stop();
    await audit?.close();
  });

  it('records a VirtualMachine created, updated and deleted through the apiserver', async () => {
    await applyYaml(`apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualDisk\nmetadata: {name: root, namespace: ${ns}}\nspec: {}\n`, on);
    await kc(['-n', ns, 'create', '-f', '-'], { ...on, stdin: vmManifest(ns, 'vm-sys', 'root') });
    const created = await recordNamed("Virtual machine 'vm-sys' has been created by 'admin'");
    expect(Object.keys(created).join(',')).toBe(VM_KEYS);
    expect(created).toMatchObject({ type: 'Manage VM', level: 'info', action_type: 'create', request_subject: 'admin', operation_result: 'allow' });
    expect(created['datetime']).toMatch(RFC3339_SECONDS);

    const uid = (await kc(['-n', ns, 'get', 'virtualmachine', 'vm-sys', '-o', 'jsonpath={.metadata.uid}'], on)).trim();
    await kc(['-n', ns, 'label', 'virtualmachine', 'vm-sys', 'tier=db'], on);
    const updated = await recordNamed("Virtual machine 'vm-sys' has been updated by 'admin'");
    expect(updated).toMatchObject({
      type: 'Manage VM',
      level: 'info',
      action_type: 'patch',
      virtual_machine_name: 'vm-sys',
      virtual_machine_namespace: ns,
      virtualmachine_uid: uid,
    });

    await kc(['-n', ns, 'delete', 'virtualmachine', 'vm-sys', '--wait=true'], on);
    const deleted = await recordNamed("Virtual machine 'vm-sys' has been deleted by 'admin'");
    // The VM is gone from the informer by then: its details come from the deleted-objects cache.
    expect(deleted).toMatchObject({ level: 'warn', action_type: 'delete', virtualmachine_uid: uid, virtual_machine_namespace: ns });
  });

  it('records a VirtualMachineOperation created through generateName', async () => {
    await kc(['-n', ns, 'create', '-f', '-'], {
      ...on,
      stdin: `apiVersion: virtualization.deckhouse.io/v1alpha2\nkind: VirtualMachineOperation\nmetadata: {generateName: stop-, namespace: ${ns}}\nspec: {type: Stop, virtualMachineName: vm-ops}\n`,
    });
    const record = await recordNamed("Virtual machine 'vm-ops' has been stopped by 'admin'");
    expect(Object.keys(record).join(',')).toBe(VM_KEYS);
    expect(record).toMatchObject({ type: 'Control VM', level: 'warn', action_type: 'stop', operation_result: 'allow' });
  });

  it('records a forbidden request by an unprivileged user', async () => {
    const eve = await userKubeconfig('eve', apiserver.server);
    const res = await kc(['-n', ns, 'get', 'virtualmachines'], { kubeconfigPath: eve }).then(
      () => 'allowed',
      (err: unknown) => String(err),
    );
    expect(res).toMatch(/forbidden/i);
    const record = await recordNamed(`User 'eve' attempted to perform a forbidden operation 'list' on resource 'virtualmachines/${ns}'.`);
    expect(Object.keys(record).join(',')).toBe(FORBID_KEYS);
    expect(record).toMatchObject({
      type: 'Forbidden operation',
      level: 'warn',
      request_subject: 'eve',
      operation_result: 'forbid',
      is_admin: false,
      source_ip: '127.0.0.1',
    });
    expect(record['forbid_reason']).not.toBe('');
  });
});
