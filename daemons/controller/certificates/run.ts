/**
 * The certificate manager while this replica leads: a pass at start, again whenever a watched
 * Secret, webhook configuration, APIService or CRD changes (a hand edit is repaired at once), when the
 * next certificate is due, and at least every resync interval; failures retry with backoff.
 */
import { Backoff, EventRecorder, Informer, eventDescriptor, eventSchema, sleep, type KubeClient, type KubeObject } from '../../../shared/kube/index.js';
import type { Logger } from '../../../shared/log/index.js';
import type { ControllerConfig } from '../config.js';
import { CertificateManager, type ServingSecret } from './manager.js';
import { INJECT_LABEL, makeCertClients } from './resources.js';
import { REPORTING_CONTROLLER } from '../kube/resources.js';

export const CERT_FIELD_MANAGER = 'virtualization-certificates';

export interface RunningCertificates {
  /** Resolves after the first pass (it may have failed: the loop retries); for tests and readiness. */
  readonly firstPass: Promise<void>;
  readonly done: Promise<void>;
}

export function runCertificates(kube: KubeClient, config: ControllerConfig, signal: AbortSignal, log: Logger, identity: string): RunningCertificates {
  const clients = makeCertClients(kube, CERT_FIELD_MANAGER);
  const events = new EventRecorder({
    events: kube.resource(eventDescriptor, eventSchema, CERT_FIELD_MANAGER),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: identity,
    logger: log,
  });
  const manager = new CertificateManager({
    clients,
    namespace: config.POD_NAMESPACE,
    mode: config.CERT_ISSUER === 'external' ? 'external' : 'self',
    caSecret: config.CERT_CA_SECRET,
    serving: config.CERT_SERVING_SECRETS,
    clientCerts: config.CERT_CLIENT_SECRETS,
    sharedSecrets: config.CERT_SHARED_SECRETS,
    events,
    logger: log,
    policy: {
      caValidityMs: config.CERT_CA_VALIDITY,
      servingValidityMs: config.CERT_SERVING_VALIDITY,
      renewFraction: 2 / 3,
      caOverlapMs: config.CERT_CA_OVERLAP,
    },
  });
  let wake: (() => void) | undefined;
  let dirty = false;
  const trigger = (): void => {
    dirty = true;
    wake?.();
  };
  const selector = `${INJECT_LABEL}=true`;
  const watched = <T extends KubeObject>(inf: Informer<T>): Informer<T> => {
    inf.on('add', trigger);
    inf.on('update', trigger);
    inf.on('delete', trigger);
    return inf;
  };
  const informers = [
    watched(new Informer({ client: clients.secrets, namespace: config.POD_NAMESPACE, signal, logger: log })),
    watched(new Informer({ client: clients.validating, labelSelector: selector, signal, logger: log })),
    watched(new Informer({ client: clients.mutating, labelSelector: selector, signal, logger: log })),
    watched(new Informer({ client: clients.apiServices, labelSelector: selector, signal, logger: log })),
    watched(new Informer({ client: clients.crds, labelSelector: selector, signal, logger: log })),
  ];
  let settleFirst: () => void = () => undefined;
  const firstPass = new Promise<void>((resolve) => (settleFirst = resolve));

  const loop = async (): Promise<void> => {
    for (const inf of informers) inf.start();
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000, jitter: 0.2 });
    while (!signal.aborted) {
      dirty = false;
      let waitMs = config.CERT_RESYNC_INTERVAL;
      try {
        const report = await manager.pass(signal);
        backoff.reset();
        if (report.nextDue !== undefined) waitMs = Math.max(100, Math.min(waitMs, report.nextDue.getTime() - Date.now()));
      } catch (err: unknown) {
        if (signal.aborted) break;
        waitMs = backoff.next();
        log.warn({ err, retryInMs: waitMs }, 'certificate pass failed');
      }
      settleFirst();
      if (dirty) continue;
      const woken = new AbortController();
      wake = () => woken.abort();
      await sleep(waitMs, AbortSignal.any([signal, woken.signal]));
      wake = undefined;
    }
    settleFirst();
    await Promise.all(informers.map((inf) => inf.stop()));
  };
  return { firstPass, done: loop() };
}

/** `secret:service,secret:service` → the list; the config schema checks the shape. */
export function parseServingSecrets(text: string): ServingSecret[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((pair) => {
      const [secret = '', service = ''] = pair.split(':');
      return { secret, service };
    });
}
