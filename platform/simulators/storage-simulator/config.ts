import { z } from 'zod';
import { env, parseConfig } from '../../../shared/config/index.js';
import { LOOPBACK_PREFIX } from './addresses.js';
import { SIMULATED_CLASS_NAMES } from './classes.js';

/** The controller's helper pods (importer, uploader) carry this label (daemons/controller/.../importer.ts). */
export const HELPER_POD_SELECTOR = 'virtualization.deckhouse.io/helper';

/** Environment of the storage simulator: every key documented, with a default. */
export const StorageSimulatorConfigSchema = z.object({
  KUBECONFIG: env.optionalString().describe('Kubeconfig file; in-cluster service account when unset.'),
  WATCH_NAMESPACE: env.optionalString().describe('Play the pods and claims of this namespace only; every namespace when unset.'),
  VOLUMES_DIR: z.string().min(1).describe('Directory under which each simulated volume is a directory (`<namespace>/<claim>`); required.'),
  STORAGE_CLASSES: env
    .list(SIMULATED_CLASS_NAMES.join(','), (c) => c !== '', '')
    .describe('Comma-separated storage classes whose claims get a simulated volume.'),
  POD_SELECTOR: env.string(HELPER_POD_SELECTOR).describe("Label selector of the pods run as the importer program (the controller's helper pods)."),
  REQUIRE_NODE: env.bool(true).describe('Run a pod only once the scheduler bound it to a node (false where no scheduler runs: the tests).'),
  POD_IP_PREFIX: env
    .optionalString()
    .refine((v) => v === undefined || LOOPBACK_PREFIX.test(v), 'must be 127.<1-254>')
    .describe('Pod IPs are drawn from <prefix>.0.0/16 (127.<n>); a random 127.<n> when unset.'),
  IMPORTER_PROGRAM: env
    .optionalString()
    .describe('The importer program run for each pod: daemons/importer/main.ts (default, with tsx) or a bundled .js of it.'),
  LOG_LEVEL: env.logLevel().describe('Log level.'),
});

export type StorageSimulatorConfig = Readonly<z.infer<typeof StorageSimulatorConfigSchema>>;

export function loadConfig(source: Readonly<Record<string, string | undefined>> = process.env): StorageSimulatorConfig {
  return parseConfig(StorageSimulatorConfigSchema, source);
}
