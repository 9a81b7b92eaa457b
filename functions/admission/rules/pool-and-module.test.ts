/** VirtualMachinePool (and /scale) and ModuleConfig rules: one conforming and one violating case each. */
import { emptyWorld, type World } from '../testing/fake-lookups.js';
import { moduleConfig, pool, typed } from '../testing/objects.js';
import { ruleTable } from '../testing/rule-table.js';
import { moduleConfigValidator } from './moduleconfig/index.js';
import { vmPoolScaleValidator, vmPoolValidator } from './vmpool.js';

function poolWorld(): World {
  const w = emptyWorld();
  w.classes.push(typed.vmClass());
  w.storageClasses.push({ name: 'fast', provisioner: 'csi.example', isDefault: true });
  return w;
}

ruleTable(vmPoolValidator, poolWorld, [
  {
    rule: 'a pool name is at most 57 characters',
    good: { object: pool((o) => void (o.metadata.name = 'p'.repeat(57))) },
    bad: { object: pool((o) => void (o.metadata.name = 'p'.repeat(58))) },
    expect: { deny: 'metadata.name', message: /no more than 57/ },
  },
  {
    rule: 'the VM template passes the VM checks',
    good: { object: pool((o) => void (o.spec.virtualMachineTemplate.spec.cpu.coreFraction = '20%')) },
    bad: { object: pool((o) => void (o.spec.virtualMachineTemplate.spec.cpu.coreFraction = '30%')) },
    expect: { deny: 'spec.virtualMachineTemplate.spec.cpu.coreFraction', message: /must be one of 5%, 10%, 20%, 50%, 100%/ },
  },
  {
    rule: 'disk templates pass the disk checks',
    good: {
      object: pool((o) => void (o.spec.virtualDiskTemplates[0] = { name: 'root', spec: { persistentVolumeClaim: { size: '1Gi', storageClassName: 'fast' } } })),
    },
    bad: { object: pool((o) => void (o.spec.virtualDiskTemplates[0] = { name: 'root', spec: { persistentVolumeClaim: { storageClassName: 'fast' } } })) },
    expect: { deny: 'spec.virtualDiskTemplates[0].spec.persistentVolumeClaim.size', message: /required for a blank disk/ },
  },
]);

const scale = (replicas: number): Record<string, unknown> => ({
  apiVersion: 'autoscaling/v1',
  kind: 'Scale',
  metadata: { name: 'web', namespace: 'ns1' },
  spec: { replicas },
});
const explicitPool = (w: World): void => void w.pools.push(typed.pool((p) => void (p.spec.scaleDownPolicy = 'Explicit')));

ruleTable(vmPoolScaleValidator, poolWorld, [
  {
    rule: 'an Explicit pool is not scaled down through /scale',
    good: { object: scale(4), old: scale(3), world: explicitPool },
    bad: { object: scale(2), old: scale(3), world: explicitPool },
    expect: { deny: 'spec.replicas', message: /cannot decrease from 3 to 2: the pool has scaleDownPolicy Explicit/ },
  },
]);

const cidrs = (...list: string[]): Record<string, unknown> => moduleConfig({ virtualMachineCIDRs: list });
const withLease =
  (ip: string) =>
  (w: World): void =>
    void w.leases.push(typed.lease(ip));

ruleTable(moduleConfigValidator, emptyWorld, [
  {
    rule: 'the settings match the module schema',
    good: { object: moduleConfig({ logLevel: 'debug' }) },
    bad: { object: moduleConfig({ logLevel: 'loud', unknown: true }) },
    expect: { deny: 'spec.settings.logLevel', message: /debug/ },
  },
  {
    rule: 'virtualMachineCIDRs do not overlap each other',
    good: { object: cidrs('10.66.0.0/16', '10.67.0.0/16') },
    bad: { object: cidrs('10.66.0.0/16', '10.66.128.0/24') },
    expect: { deny: 'spec.settings.virtualMachineCIDRs[1]', message: /10.66.128.0\/24 overlaps 10.66.0.0\/16/ },
  },
  {
    rule: 'virtualMachineCIDRs do not overlap the pod subnet',
    good: { object: cidrs('10.66.0.0/16') },
    bad: { object: cidrs('10.111.0.0/24') },
    expect: { deny: 'spec.settings.virtualMachineCIDRs[0]', message: /overlaps the pod subnet 10.111.0.0\/16/ },
  },
  {
    rule: 'virtualMachineCIDRs do not overlap the service subnet',
    good: { object: cidrs('10.66.0.0/16') },
    bad: { object: cidrs('10.222.10.0/24') },
    expect: { deny: 'spec.settings.virtualMachineCIDRs[0]', message: /overlaps the service subnet/ },
  },
  {
    rule: 'virtualMachineCIDRs do not contain node addresses',
    good: { object: cidrs('10.66.0.0/16'), world: (w) => void w.nodes.push({ name: 'n1', addresses: ['192.168.1.10'], annotations: {} }) },
    bad: { object: cidrs('192.168.1.0/24'), world: (w) => void w.nodes.push({ name: 'n1', addresses: ['192.168.1.10'], annotations: {} }) },
    expect: { deny: 'spec.settings.virtualMachineCIDRs[0]', message: /contains 192.168.1.10, an address of node n1/ },
  },
  {
    rule: 'a subnet with leases is not removed',
    good: { object: cidrs('10.66.0.0/16'), old: cidrs('10.66.0.0/16', '10.77.0.0/16'), world: withLease('10.66.0.5') },
    bad: { object: cidrs('10.77.0.0/16'), old: cidrs('10.66.0.0/16', '10.77.0.0/16'), world: withLease('10.66.0.5') },
    expect: { deny: 'spec.settings.virtualMachineCIDRs', message: /cannot remove 10.66.0.0\/16: 1 address lease\(s\) still use it \(ip-10-66-0-5\)/ },
  },
  {
    rule: 'virtualMachineCIDRs are not cleared once set',
    good: { object: cidrs('10.77.0.0/16'), old: cidrs('10.66.0.0/16') },
    bad: { object: moduleConfig({}), old: cidrs('10.66.0.0/16') },
    expect: { deny: 'spec.settings.virtualMachineCIDRs', message: /cannot be cleared once set/ },
  },
  {
    rule: 'the DVCR volume keeps its storage class',
    good: { object: dvcr('slow', '60Gi'), old: dvcr('slow', '50Gi'), world: dvcrPvc },
    bad: { object: dvcr('fast', '50Gi'), old: dvcr('slow', '50Gi'), world: dvcrPvc },
    expect: { deny: 'spec.settings.dvcr.storage.persistentVolumeClaim.storageClassName', message: /cannot change once the DVCR volume exists/ },
  },
  {
    rule: 'the DVCR volume does not shrink',
    good: { object: dvcr('slow', '60Gi'), old: dvcr('slow', '50Gi'), world: dvcrPvc },
    bad: { object: dvcr('slow', '40Gi'), old: dvcr('slow', '50Gi'), world: dvcrPvc },
    expect: { deny: 'spec.settings.dvcr.storage.persistentVolumeClaim.size', message: /cannot shrink below the existing DVCR volume \(50Gi\)/ },
  },
  {
    rule: 'feature gates are not in CE',
    good: { object: moduleConfig({ featureGates: ['HotplugCPUWithLiveMigration'] }) },
    bad: { object: moduleConfig({ featureGates: ['HotplugCPUWithLiveMigration'] }), facts: { edition: 'CE' } },
    expect: { deny: 'spec.settings.featureGates', message: /not available in the CE edition/ },
  },
  {
    rule: 'feature gates need their Kubernetes version',
    good: { object: moduleConfig({ featureGates: ['GPU'] }) },
    bad: { object: moduleConfig({ featureGates: ['HotplugCPUWithLiveMigration', 'GPU'] }), world: (w) => void (w.version = { major: 1, minor: 33 }) },
    expect: { deny: 'spec.settings.featureGates[1]', message: /GPU needs Kubernetes 1.34 or newer \(the cluster runs 1.33\)/ },
  },
  {
    rule: 'the live migration system network exists and is Ready',
    good: {
      object: migrationNet('mig'),
      world: (w) => void (w.apis.push('network.deckhouse.io/v1alpha1/systemnetworks'), w.systemNetworks.push({ name: 'mig', ready: true })),
    },
    bad: {
      object: migrationNet('mig'),
      world: (w) => void (w.apis.push('network.deckhouse.io/v1alpha1/systemnetworks'), w.systemNetworks.push({ name: 'mig', ready: false })),
    },
    expect: { deny: 'spec.settings.liveMigration.network.systemNetwork.name', message: /SystemNetwork mig is not Ready/ },
  },
  {
    rule: 'a live migration system network needs the SDN module',
    good: { object: moduleConfig({ liveMigration: { network: {} } }) },
    bad: { object: migrationNet('mig') },
    expect: { deny: 'spec.settings.liveMigration.network.systemNetwork.name', message: /needs the SDN module/ },
  },
]);

function dvcr(storageClassName: string, size: string): Record<string, unknown> {
  return moduleConfig({ dvcr: { storage: { type: 'PersistentVolumeClaim', persistentVolumeClaim: { storageClassName, size } } } });
}

function dvcrPvc(w: World): void {
  w.pvcs.push({ namespace: 'd8-virtualization', name: 'dvcr', storageClassName: 'slow', size: '50Gi', accessModes: ['ReadWriteOnce'] });
}

function migrationNet(name: string): Record<string, unknown> {
  return moduleConfig({ liveMigration: { network: { type: 'SystemNetwork', systemNetwork: { name } } } });
}
