/** `npm start -- [flags]`: parsed once into a frozen object; every problem reported together. */
import { isAlignedCIDR } from '../shared/api/ipv4.js';
import { cronProblem } from '../shared/cron/index.js';

/** The original's DVCR garbage collection schedule when `dvcr.gc` is set without one (daily, 02:00 UTC). */
export const DEFAULT_DVCR_GC_SCHEDULE = '0 2 * * *';

export interface PlatformFlags {
  readonly help: boolean;
  /** undefined: on for a fresh local platform, off with --kubeconfig. */
  readonly demo: boolean | undefined;
  readonly exitAfterDemo: boolean;
  readonly kubeconfig: string | undefined;
  readonly nodes: number;
  readonly vmCidr: string;
  readonly workDir: string | undefined;
  readonly keep: boolean;
  /** undefined: the live view on a TTY, plain lines otherwise. */
  readonly plain: boolean | undefined;
  /** Guests: `auto` (QEMU processes where qemu-system-x86_64 is installed), `qemu` (required), `simulated`. */
  readonly guests: 'auto' | 'qemu' | 'simulated';
  /** DVCR garbage collection: the ModuleConfig's `dvcr.gc.schedule` (five-field cron, UTC); undefined: off. */
  readonly dvcrGcSchedule: string | undefined;
}

export const HELP = `npm start [-- flags]: the virtualization module running locally, with a demo.

Starts a local control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler),
simulated nodes and pods (kwok) and the KubeVirt simulator, applies the install's CRDs, roles,
component RBAC and webhook configurations, and runs every function and daemon of the module as a
local process under its own ServiceAccount token. Ctrl-C stops everything.

Flags:
  --demo               run the demo (default on a fresh local platform; off with --kubeconfig)
  --no-demo            do not run the demo
  --exit-after-demo    stop everything when the demo is done; exit 0 if it succeeded
  --kubeconfig PATH    use the cluster of PATH (the install must be applied there): no local control
                       plane, nodes or simulator; our functions and daemons run out-of-cluster
  --nodes N            simulated nodes (default 2, at least 2 for the demo's migration)
  --vm-cidr CIDR       virtualMachineCIDRs of the ModuleConfig (default 10.66.0.0/16)
  --work-dir DIR       logs, certificates, kubeconfigs and etcd data (default: a new directory
                       under /dev/shm or the temp dir; removed after a clean stop unless --keep)
  --keep               keep the work directory after a clean stop
  --plain              plain log lines instead of the live view (default when stdout is no TTY)
  --guests MODE        auto (default): every running VM a real QEMU guest where qemu-system-x86_64
                       is installed, simulated otherwise; qemu: QEMU required; simulated: no QEMU
  --dvcr-gc-schedule CRON
                       DVCR garbage collection schedule of the ModuleConfig (five-field cron, UTC;
                       default "0 2 * * *"); off: no collection
  --help               this text
`;

/** `--dvcr-gc-schedule`: `off`, or a five-field cron schedule (a problem otherwise). */
function gcScheduleFlag(v: string, problems: string[]): string | undefined {
  if (v === 'off') return undefined;
  const problem = cronProblem(v);
  if (problem !== undefined) problems.push(`--dvcr-gc-schedule must be a five-field cron schedule (or off), got ${problem}`);
  return v.trim();
}

export class FlagError extends Error {
  constructor(readonly problems: string[]) {
    super(`bad flags:\n  ${problems.join('\n  ')}\n(npm start -- --help lists them)`);
    this.name = 'FlagError';
  }
}

export function parseFlags(argv: readonly string[]): PlatformFlags {
  const problems: string[] = [];
  let help = false;
  let demo: boolean | undefined;
  let exitAfterDemo = false;
  let kubeconfig: string | undefined;
  let nodes = 2;
  let vmCidr = '10.66.0.0/16';
  let workDir: string | undefined;
  let keep = false;
  let plain: boolean | undefined;
  let guests: PlatformFlags['guests'] = 'auto';
  let dvcrGcSchedule: string | undefined = DEFAULT_DVCR_GC_SCHEDULE;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => {
      if (inline !== undefined) return inline;
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) {
        problems.push(`${name} needs a value`);
        return undefined;
      }
      i++;
      return next;
    };
    switch (name) {
      case '--help':
      case '-h':
        help = true;
        break;
      case '--demo':
        demo = true;
        break;
      case '--no-demo':
        demo = false;
        break;
      case '--exit-after-demo':
        exitAfterDemo = true;
        break;
      case '--kubeconfig':
        kubeconfig = value();
        break;
      case '--nodes': {
        const v = value();
        if (v !== undefined) {
          nodes = Number(v);
          if (!Number.isInteger(nodes) || nodes < 1 || nodes > 50) problems.push(`--nodes must be a whole number from 1 to 50, got ${v}`);
        }
        break;
      }
      case '--vm-cidr': {
        const v = value();
        if (v !== undefined) {
          vmCidr = v;
          if (!isAlignedCIDR(v)) problems.push(`--vm-cidr must be an IPv4 subnet aligned to its mask, such as 10.66.0.0/16, got ${v}`);
        }
        break;
      }
      case '--work-dir':
        workDir = value();
        break;
      case '--keep':
        keep = true;
        break;
      case '--plain':
        plain = true;
        break;
      case '--guests': {
        const v = value();
        if (v === 'auto' || v === 'qemu' || v === 'simulated') guests = v;
        else if (v !== undefined) problems.push(`--guests must be auto, qemu or simulated, got ${v}`);
        break;
      }
      case '--dvcr-gc-schedule': {
        const v = value();
        if (v !== undefined) dvcrGcSchedule = gcScheduleFlag(v, problems);
        break;
      }
      default:
        problems.push(`unknown flag ${arg}`);
    }
  }
  if (exitAfterDemo && demo === false) problems.push('--exit-after-demo with --no-demo: there is no demo to wait for');
  if (demo === true && nodes < 2) problems.push('the demo migrates a VM between nodes: --nodes must be at least 2');
  if (problems.length > 0) throw new FlagError(problems);
  return Object.freeze({ help, demo, exitAfterDemo, kubeconfig, nodes, vmCidr, workDir, keep, plain, guests, dvcrGcSchedule });
}
