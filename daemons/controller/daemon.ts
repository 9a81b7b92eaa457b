import { randomBytes } from 'node:crypto';
import { metricsGuard } from '../../shared/authz/index.js';
import { KubeClient, LeaderElector, leaseDescriptor, leaseSchema, untilAborted } from '../../shared/kube/index.js';
import { childLogger, type Logger } from '../../shared/log/index.js';
import type { ControllerConfig } from './config.js';
import { startController, type RunningController } from './controller.js';
import { startHealthServer, type HealthServer } from '../../shared/daemon/health.js';
import { FIELD_MANAGER } from './kube/resources.js';
import { ControllerMetrics } from './metrics/runtime.js';

export interface DaemonOptions {
  config: ControllerConfig;
  kube: KubeClient;
  /** Stops the daemon (SIGTERM/SIGINT in the process; a test's controller otherwise). */
  signal: AbortSignal;
  logger?: Logger;
}

export interface DaemonHandle {
  readonly identity: string;
  readonly metrics: ControllerMetrics;
  /** Resolves when the daemon has stopped; lostLeadership says why. */
  readonly done: Promise<{ lostLeadership: boolean }>;
  /** Port of the health and metrics server, once it listens. */
  readonly health: Promise<HealthServer>;
  /** Whether this replica currently runs the reconcilers. */
  isLeading(): boolean;
}

/**
 * One replica: the health server, then the campaign for the Lease; the reconcilers run only while it
 * leads. Losing the lease aborts every reconcile and write at once and ends the daemon with
 * lostLeadership (the process then exits non-zero and starts again as a fresh standby).
 */
export function runDaemon(options: DaemonOptions): DaemonHandle {
  const { config, kube } = options;
  const log = options.logger ?? childLogger({ component: 'virtualization-controller' });
  const metrics = new ControllerMetrics();
  const identity = `${config.POD_NAME}-${randomBytes(3).toString('hex')}`;
  const stop = new AbortController();
  const stopSignal = AbortSignal.any([options.signal, stop.signal]);
  let running: RunningController | undefined;
  let lostLeadership = false;
  const health = startHealthServer(config.HEALTH_HOST, config.HEALTH_PORT, {
    ready: () => !stopSignal.aborted,
    metrics: async () => (await metrics.registry.expose()) + ((await running?.resourceMetrics()) ?? ''),
    metricsGuard: metricsGuard(config, kube, log.child({ component: 'metrics-auth' })),
  });

  const lead = async (signal: AbortSignal): Promise<void> => {
    metrics.leader.set({ name: config.LEADER_ELECTION_LEASE_NAME }, 1);
    log.info({ identity }, 'leading: starting the reconcilers');
    try {
      running = await startController({ kube, config, signal, metrics, logger: log });
      await untilAborted(signal);
      await withDeadline(running.stop(), config.SHUTDOWN_DEADLINE, log);
    } catch (err: unknown) {
      if (!signal.aborted) log.error({ err }, 'the reconcilers failed to start');
    } finally {
      running = undefined;
      metrics.leader.set({ name: config.LEADER_ELECTION_LEASE_NAME }, 0);
      if (!stopSignal.aborted) {
        lostLeadership = true;
        log.warn('leadership lost: stopped writing, exiting');
        stop.abort(new Error('leadership lost'));
      }
    }
  };

  const campaign = async (): Promise<{ lostLeadership: boolean }> => {
    log.info({ identity, healthPort: (await health).port }, 'started: health and metrics served');
    if (config.LEADER_ELECTION) {
      await new LeaderElector({
        leases: kube.resource(leaseDescriptor, leaseSchema, FIELD_MANAGER),
        namespace: config.POD_NAMESPACE,
        name: config.LEADER_ELECTION_LEASE_NAME,
        identity,
        leaseDurationMs: config.LEADER_ELECTION_LEASE_DURATION,
        renewDeadlineMs: config.LEADER_ELECTION_RENEW_DEADLINE,
        retryPeriodMs: config.LEADER_ELECTION_RETRY_PERIOD,
        onStartedLeading: lead,
        onNewLeader: (holder) => log.info({ holder }, 'another replica leads'),
        logger: log,
      }).run(stopSignal);
    } else {
      await lead(stopSignal);
    }
    await (await health).close();
    return { lostLeadership };
  };

  return { identity, metrics, done: campaign(), health, isLeading: () => running !== undefined };
}

async function withDeadline(work: Promise<void>, ms: number, log: Logger): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      log.warn({ deadlineMs: ms }, 'shutdown deadline passed; leaving in-flight work behind');
      resolve();
    }, ms);
  });
  await Promise.race([work, deadline]);
  clearTimeout(timer);
}
