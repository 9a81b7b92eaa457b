/**
 * A typical VirtualMachine review for benchmarks: a VM as users write them (three block devices,
 * cloud-init, placement, labels), and the world its lookups find (the generic class, CIDRs).
 */
import { emptyWorld, type World } from './fake-lookups.js';
import { request, typed, vm, type VmIn } from './objects.js';

const CLOUD_CONFIG = `#cloud-config
users:
  - name: cloud
    sudo: ALL=(ALL) NOPASSWD:ALL
    shell: /bin/bash
    ssh_authorized_keys:
      - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx3c2VydmVyLWJlbmNobWFyay1rZXktZm9yLXRlc3Rz cloud@bench
package_update: true
packages: [qemu-guest-agent, nginx]
runcmd:
  - systemctl enable --now qemu-guest-agent
  - systemctl enable --now nginx
`;

export function typicalVirtualMachine(namespace = 'ns1', name = 'web-0'): VmIn {
  return vm((o) => {
    o.metadata = {
      name,
      namespace,
      labels: { app: 'web', tier: 'frontend', 'app.kubernetes.io/part-of': 'shop' },
      annotations: { 'shop.example.com/owner': 'team-web', description: 'frontend VM' },
    };
    o.spec = {
      virtualMachineClassName: 'generic',
      runPolicy: 'AlwaysOnUnlessStoppedManually',
      osType: 'Generic',
      bootloader: 'EFI',
      cpu: { cores: 4, coreFraction: '50%' },
      memory: { size: '8Gi' },
      blockDeviceRefs: [
        { kind: 'VirtualDisk', name: `${name}-root` },
        { kind: 'VirtualDisk', name: `${name}-data` },
        { kind: 'ClusterVirtualImage', name: 'ubuntu-iso' },
      ],
      provisioning: { type: 'UserData', userData: CLOUD_CONFIG },
      networks: [{ type: 'Main', id: 1 }],
      nodeSelector: { 'node-role.kubernetes.io/worker': '' },
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'virtualization', effect: 'NoSchedule' }],
      affinity: {
        virtualMachineAndPodAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 100, virtualMachineAndPodAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'web' } } } },
          ],
        },
      },
      disruptions: { restartApprovalMode: 'Automatic' },
      liveMigrationPolicy: 'PreferSafe',
    };
  });
}

/** The AdmissionReview (CREATE) of the typical VM, as the apiserver sends it. */
export function typicalReview(namespace = 'ns1'): string {
  const req = {
    ...request(typicalVirtualMachine(namespace)),
    resource: { group: 'virtualization.deckhouse.io', version: 'v1alpha2', resource: 'virtualmachines' },
  };
  return JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: req });
}

/** What the typical VM's lookups find: the generic class and the module CIDRs (no attachments, no address yet). */
export function typicalWorld(): World {
  const w = emptyWorld();
  w.classes.push(typed.vmClass());
  return w;
}
