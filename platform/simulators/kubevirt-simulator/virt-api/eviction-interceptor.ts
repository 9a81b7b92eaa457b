/**
 * virt-api's eviction interceptor, the transport: a validating webhook over HTTPS that the apiserver
 * calls for `pods/eviction` CREATE (ValidatingWebhookConfiguration rule on `pods/eviction`; the
 * platform and the tests register it). It reads the pod and its instance, asks `judgeLauncherEviction`
 * (eviction.ts), marks the instance when told (a JSON patch adding `status.evacuationNodeName`,
 * dry-run when the eviction is) and answers the AdmissionReview. A malformed review is 400 naming
 * what is wrong; a pod that is not a running launcher is allowed untouched; a failed read or mark is a
 * 429 naming it (the drain retries), as KubeVirt answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { NotFoundError, PayloadTooLargeError } from '../../../../shared/errors/index.js';
import { readAll } from '../../../../shared/http/body.js';
import type { Logger } from '../../../../shared/log/index.js';
import type { LauncherPod, SimulatorClients } from '../kube.js';
import { judgeLauncherEviction, launcherInstanceName, type EvictionStrategy, type EvictionVerdict } from './eviction.js';

/** KubeVirt's name of the webhook (the apiserver prints it in a refusal). */
export const EVICTION_WEBHOOK_NAME = 'virt-launcher-eviction-interceptor.kubevirt.io';
export const EVICTION_WEBHOOK_PATH = '/pod-eviction-validate';
const BODY_LIMIT = 1024 * 1024;
const TOO_MANY_REQUESTS = 429;

const ReviewSchema = z.object({
  apiVersion: z.literal('admission.k8s.io/v1'),
  kind: z.literal('AdmissionReview'),
  request: z.object({
    uid: z.string().min(1),
    name: z.string().min(1),
    namespace: z.string().min(1),
    dryRun: z.boolean().optional(),
    object: z.looseObject({ deleteOptions: z.looseObject({ dryRun: z.array(z.string()).optional() }).optional() }).optional(),
  }),
});
type Review = z.infer<typeof ReviewSchema>;

export interface EvictionInterceptorOptions {
  readonly clients: Pick<SimulatorClients, 'pods' | 'kvvmis'>;
  /** The cluster's evictionStrategy (KubeVirt's configuration; ours says LiveMigrate). */
  readonly clusterStrategy?: EvictionStrategy;
  readonly tls: { readonly cert: string; readonly key: string };
  readonly host?: string;
  readonly port?: number;
  readonly log: Logger;
}

export class EvictionInterceptor {
  private server: Server | undefined;
  private served = 0;

  constructor(private readonly options: EvictionInterceptorOptions) {}

  /** How many well-formed reviews were answered (a probe that the apiserver calls it). */
  get reviews(): number {
    return this.served;
  }

  /** `https://host:port` once started. */
  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    return `https://${this.options.host ?? '127.0.0.1'}:${address?.port ?? 0}`;
  }

  async start(): Promise<void> {
    const server = createServer({ cert: this.options.tls.cert, key: this.options.tls.key }, (req, res) => void this.serve(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve());
    });
    this.options.log.info({ url: this.url }, 'eviction interceptor listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST')
      return send(res, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `${req.method ?? ''} is not served; POST an AdmissionReview` } });
    let body: Buffer;
    try {
      body = await readAll(req, { limit: BODY_LIMIT, tooLarge: () => new PayloadTooLargeError(`AdmissionReview over ${BODY_LIMIT} bytes`) });
    } catch (err: unknown) {
      const tooLarge = err instanceof PayloadTooLargeError;
      return send(res, tooLarge ? 413 : 400, { error: { code: tooLarge ? 'PAYLOAD_TOO_LARGE' : 'BAD_REQUEST', message: String((err as Error).message) } });
    }
    const review = parseReview(body);
    if (typeof review === 'string') {
      this.options.log.warn({ problem: review }, 'malformed eviction AdmissionReview refused');
      return send(res, 400, { error: { code: 'BAD_REQUEST', message: `invalid AdmissionReview: ${review}` } });
    }
    const verdict = await this.decide(review);
    this.served++;
    const { uid, namespace, name } = review.request;
    if (!verdict.allowed) this.options.log.info({ pod: `${namespace}/${name}`, message: verdict.message }, 'launcher pod eviction refused');
    send(res, 200, {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: verdict.allowed ? { uid, allowed: true } : { uid, allowed: false, status: { code: TOO_MANY_REQUESTS, message: verdict.message } },
    });
  }

  private async decide(review: Review): Promise<EvictionVerdict> {
    const { namespace, name } = review.request;
    const { pods, kvvmis } = this.options.clients;
    let pod: LauncherPod;
    try {
      pod = await pods.get({ namespace, name });
    } catch {
      // KubeVirt lets an eviction of a pod it cannot read go on: not its to judge.
      return { allowed: true };
    }
    const vmiName = launcherInstanceName(pod);
    if (vmiName === undefined) return { allowed: true };
    let verdict: EvictionVerdict;
    try {
      verdict = judgeLauncherEviction(pod, await kvvmis.get({ namespace, name: vmiName }), this.options.clusterStrategy);
    } catch (err: unknown) {
      const why = err instanceof NotFoundError ? `instance ${namespace}/${vmiName} not found` : String((err as Error).message);
      return { allowed: false, message: `kubevirt failed getting the vmi: ${why}` };
    }
    if (verdict.allowed || verdict.mark === undefined) return verdict;
    try {
      await kvvmis.jsonPatch({ namespace, name: vmiName }, [{ op: 'add', path: '/status/evacuationNodeName', value: verdict.mark }], {
        dryRun: dryRun(review),
      });
    } catch (err: unknown) {
      return { allowed: false, message: `kubevirt failed marking the vmi for eviction: ${String((err as Error).message)}` };
    }
    return { allowed: false, message: verdict.message };
  }
}

/** The review, or every problem with its path. */
function parseReview(body: Buffer): Review | string {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch (err: unknown) {
    return `body is not JSON: ${String((err as Error).message)}`;
  }
  const parsed = ReviewSchema.safeParse(json);
  if (parsed.success) return parsed.data;
  return parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}

/** As KubeVirt: the review's dryRun, or the eviction's own `deleteOptions.dryRun: [All]`. */
function dryRun(review: Review): boolean {
  return review.request.dryRun === true || review.request.object?.deleteOptions?.dryRun?.[0] === 'All';
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
