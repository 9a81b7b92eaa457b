/** Validation of the `virtualization` ModuleConfig: settings schema, CIDRs, DVCR, feature gates, migration network. */
import { VirtualizationSettingsSchema } from '../../../../shared/api/moduleconfig.js';
import { zodProblems } from '../../../../shared/config/index.js';
import { joinPath } from '../../decision.js';
import { parseQuantity } from '../../../../shared/api/k8s/quantity.js';
import { SDN_GROUP, SDN_VERSION } from '../../lookups.js';
import { onUpdate, pure, type Check } from '../check.js';
import { schemaParser, type Validator } from '../validator.js';
import { cidrOverlaps, leasedCidrsStay } from './cidrs.js';
import { MODULE_NAME, ModuleConfigSchema, dvcrPvcOf, featureGatesOf, settingsOf, systemNetworkOf, type ModuleConfig } from './view.js';

/** Minimal Kubernetes minor version per feature gate. */
export const GATE_MIN_MINOR: Readonly<Record<string, number>> = { HotplugCPUAndMemoryWithInPlaceResize: 33, GPU: 34 };

const settingsSchema: Check<ModuleConfig> = pure('the settings match the module schema', ({ object }, out) => {
  const result = VirtualizationSettingsSchema.safeParse(settingsOf(object) ?? {});
  if (result.success) return;
  for (const p of zodProblems(result.error)) out.deny(joinPath('spec.settings', p.path), p.message);
});

const dvcrStorage: Check<ModuleConfig> = onUpdate('the DVCR volume keeps its class and does not shrink', async ({ object }, old, ctx, out) => {
  const pvc = await ctx.lookups.persistentVolumeClaim(ctx.cluster.moduleNamespace, ctx.cluster.dvcrPvcName);
  if (pvc === undefined) return;
  const [now, before] = [dvcrPvcOf(object), dvcrPvcOf(old)];
  const path = 'spec.settings.dvcr.storage.persistentVolumeClaim';
  if ((now.storageClassName ?? '') !== (before.storageClassName ?? '')) {
    out.deny(`${path}.storageClassName`, 'cannot change once the DVCR volume exists');
  }
  const size = parseQuantity(now.size);
  const current = parseQuantity(pvc.size ?? before.size);
  if (size !== undefined && current !== undefined && size < current) {
    out.deny(`${path}.size`, `cannot shrink below the existing DVCR volume (${String(pvc.size ?? before.size)})`);
  }
});

const featureGates: Check<ModuleConfig> = {
  name: 'feature gates are available in this edition and Kubernetes version',
  run: async ({ object }, ctx, out) => {
    const gates = featureGatesOf(object);
    if (gates.length === 0) return;
    if (ctx.cluster.edition === 'CE') {
      out.deny('spec.settings.featureGates', 'feature gates are not available in the CE edition');
      return;
    }
    const version = await ctx.lookups.serverVersion();
    gates.forEach((gate, i) => {
      const minor = GATE_MIN_MINOR[gate];
      if (minor !== undefined && version.major === 1 && version.minor < minor) {
        out.deny(`spec.settings.featureGates[${i}]`, `${gate} needs Kubernetes 1.${minor} or newer (the cluster runs ${version.major}.${version.minor})`);
      }
    });
  },
};

const migrationNetwork: Check<ModuleConfig> = {
  name: 'the live migration system network exists and is ready',
  run: async ({ object }, { lookups }, out) => {
    const name = systemNetworkOf(object);
    if (name === undefined || name === '') return;
    const path = 'spec.settings.liveMigration.network.systemNetwork.name';
    if (!(await lookups.apiAvailable(SDN_GROUP, SDN_VERSION, 'systemnetworks'))) {
      out.deny(path, 'a SystemNetwork for live migration needs the SDN module, which is not enabled');
      return;
    }
    const network = await lookups.systemNetwork(name);
    if (network === undefined) out.deny(path, `SystemNetwork ${name} does not exist`);
    else if (!network.ready) out.deny(path, `SystemNetwork ${name} is not Ready`);
  },
};

/** Checks apply to the `virtualization` ModuleConfig only; any other is admitted as is. */
function ours(check: Check<ModuleConfig>): Check<ModuleConfig> {
  return { name: check.name, run: (input, ctx, out) => (input.object.metadata.name === MODULE_NAME ? check.run(input, ctx, out) : undefined) };
}

export const moduleConfigValidator: Validator<ModuleConfig> = {
  group: 'deckhouse.io',
  kind: 'ModuleConfig',
  parse: schemaParser(ModuleConfigSchema),
  checks: [settingsSchema, cidrOverlaps, leasedCidrsStay, dvcrStorage, featureGates, migrationNetwork].map(ours),
};
