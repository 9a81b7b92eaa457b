/**
 * The self-managed CA (docs/adr/0006-certificates.md): one pass reads the CA and serving Secrets,
 * replaces what is missing, broken, due or asked to rotate, and writes the trust bundle into every
 * webhook configuration, APIService and CRD conversion webhook labelled for injection. Order within a
 * pass: CA Secret, then the bundles of the injection targets, then the serving Secrets, so the
 * apiserver trusts a new CA before any certificate signed by it can be served.
 */
import { randomBytes } from 'node:crypto';
import { childLogger, type Logger } from '../../../shared/log/index.js';
import { NotFoundError } from '../../../shared/errors/index.js';
import type { EventRecorder, JsonPatchOp, KubeObject } from '../../../shared/kube/index.js';
import type { Secret } from '../kube/resources.js';
import {
  clientLeaf,
  decideCa,
  decideLeaf,
  nextRenewal,
  SHARED_SECRET_BYTES,
  SHARED_SECRET_KEY,
  sharedSecretProblem,
  servingLeaf,
  trustBundle,
  type CertPolicy,
  type Decision,
  type KeyPair,
  type LeafTarget,
  type Stored,
} from './decide.js';
import {
  CERTIFICATE_LABEL,
  CONVERSION_WEBHOOK_ANNOTATION,
  INJECT_FROM_ANNOTATION,
  INJECT_LABEL,
  ROTATE_ANNOTATION,
  secretText,
  type CertClients,
  type Crd,
  type WebhookConfiguration,
} from './resources.js';

export interface ServingSecret {
  /** Secret name (type kubernetes.io/tls: tls.crt, tls.key, ca.crt). */
  readonly secret: string;
  /** Service whose DNS names the certificate covers. */
  readonly service: string;
}

export interface ClientSecret {
  /** Secret name (type kubernetes.io/tls: tls.crt, tls.key, ca.crt). */
  readonly secret: string;
  /** The certificate's common name: the identity its holder shows a peer that trusts our CA. */
  readonly commonName: string;
}

export interface CertManagerOptions {
  readonly clients: CertClients;
  readonly namespace: string;
  /** `self`: issue and rotate; `external`: the Secrets are filled by someone else, only inject. */
  readonly mode: 'self' | 'external';
  readonly caSecret: string;
  readonly serving: readonly ServingSecret[];
  /** Client certificates to issue from the same CA (e.g. the subresources API's for virt-api). */
  readonly clientCerts?: readonly ClientSecret[];
  /** Opaque Secrets kept filled with a random key under SHARED_SECRET_KEY (e.g. the USB/IP handshake's). */
  readonly sharedSecrets?: readonly string[];
  readonly policy: CertPolicy;
  readonly events?: EventRecorder;
  readonly now?: () => Date;
  readonly logger?: Logger;
}

export interface PassReport {
  /** Secrets written, with why. */
  readonly issued: readonly { secret: string; why: string }[];
  /** Injection targets patched (`Kind/name`). */
  readonly injected: readonly string[];
  /** When the next certificate is due (undefined: nothing issued by us). */
  readonly nextDue: Date | undefined;
}

export class CertificateManager {
  private readonly log: Logger;
  private readonly now: () => Date;

  constructor(private readonly options: CertManagerOptions) {
    this.log = options.logger ?? childLogger({ component: 'certificates' });
    this.now = options.now ?? ((): Date => new Date());
  }

  /** One idempotent pass; a second pass right after writes nothing. */
  async pass(signal: AbortSignal): Promise<PassReport> {
    const { namespace, policy } = this.options;
    const now = this.now();
    const issued: { secret: string; why: string }[] = [];
    const bundles = new Map<string, string>();
    const writes: (() => Promise<void>)[] = [];
    let issuedCerts: string[] = [];
    const rechecks: Date[] = [];
    if (this.options.mode === 'self') {
      const caSecret = await this.read(this.options.caSecret, signal);
      const leaves: { secret: string; role: 'serving' | 'client'; leaf: LeafTarget }[] = [
        ...this.options.serving.map((s) => ({ secret: s.secret, role: 'serving' as const, leaf: servingLeaf({ service: s.service, namespace }) })),
        ...(this.options.clientCerts ?? []).map((c) => ({ secret: c.secret, role: 'client' as const, leaf: clientLeaf(c.commonName) })),
      ];
      const servingSecrets = await Promise.all(leaves.map((s) => this.read(s.secret, signal)));
      const ca = decideCa(stored(caSecret), now, policy, `virtualization-ca.${namespace}`);
      const previous = [secretText(caSecret, 'ca.crt'), secretText(caSecret, 'tls.crt'), ...servingSecrets.map((s) => secretText(s, 'ca.crt'))];
      const bundle = trustBundle(ca.pair.certPem, previous, now);
      if (ca.why !== undefined || secretText(caSecret, 'ca.crt') !== bundle) {
        await this.write(caSecret, this.options.caSecret, 'ca', ca.pair, bundle, signal);
        issued.push({ secret: this.options.caSecret, why: ca.why ?? 'trust bundle changed' });
        await this.warnIfBroken(ca, this.options.caSecret);
      }
      issuedCerts = [ca.pair.certPem];
      leaves.forEach((target, i) => {
        const current = servingSecrets[i];
        const leaf = decideLeaf(stored(current), ca.pair, target.leaf, now, policy);
        bundles.set(target.secret, bundle);
        issuedCerts.push(leaf.pair.certPem);
        if (leaf.recheckAt !== undefined) rechecks.push(leaf.recheckAt);
        if (leaf.why === undefined && secretText(current, 'ca.crt') === bundle) return;
        issued.push({ secret: target.secret, why: leaf.why ?? 'trust bundle changed' });
        writes.push(async () => {
          await this.write(current, target.secret, target.role, leaf.pair, bundle, signal);
          await this.warnIfBroken(leaf, target.secret);
        });
      });
    }
    if (this.options.mode === 'self') {
      for (const name of this.options.sharedSecrets ?? []) {
        const current = await this.read(name, signal);
        const why = sharedSecretProblem({
          exists: current !== undefined,
          type: current?.type,
          value: current?.data?.[SHARED_SECRET_KEY],
          rotate: current?.metadata.annotations?.[ROTATE_ANNOTATION] !== undefined,
        });
        if (why === undefined) continue;
        issued.push({ secret: name, why });
        writes.push(() => this.writeShared(current, name, signal));
      }
    }
    const injected = await this.inject(bundles, signal);
    for (const w of writes) await w();
    for (const i of issued) this.log.info({ secret: i.secret, why: i.why }, 'certificate material written');
    const due = [nextRenewal(issuedCerts, policy.renewFraction), ...rechecks].filter((d) => d !== undefined);
    return { issued, injected, nextDue: due.length === 0 ? undefined : new Date(Math.min(...due.map((d) => d.getTime()))) };
  }

  private async read(name: string, signal: AbortSignal): Promise<Secret | undefined> {
    try {
      return await this.options.clients.secrets.get({ namespace: this.options.namespace, name }, { signal });
    } catch (err: unknown) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  }

  /** Create or replace (conditional on the version read) the Secret with this pair and bundle. */
  private async write(current: Secret | undefined, name: string, role: string, pair: KeyPair, bundle: string, signal: AbortSignal): Promise<void> {
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const data = { 'tls.crt': b64(pair.certPem), 'tls.key': b64(pair.keyPem), 'ca.crt': b64(bundle) };
    await this.writeSecret(current, name, role, 'kubernetes.io/tls', data, signal);
  }

  /** A new random key in the Opaque Secret `name`. */
  private async writeShared(current: Secret | undefined, name: string, signal: AbortSignal): Promise<void> {
    const data = { [SHARED_SECRET_KEY]: randomBytes(SHARED_SECRET_BYTES).toString('base64') };
    await this.writeSecret(current, name, 'shared-secret', 'Opaque', data, signal);
  }

  /**
   * Our Secret `name` with this role label, type and data, keeping the rest of `current`'s metadata
   * but the rotate annotation: created, or replaced conditional on the version read (a Secret of
   * another type is deleted first, its type cannot change).
   */
  private async writeSecret(
    current: Secret | undefined,
    name: string,
    role: string,
    type: string,
    data: Record<string, string>,
    signal: AbortSignal,
  ): Promise<void> {
    const annotations = { ...current?.metadata.annotations };
    delete annotations[ROTATE_ANNOTATION];
    const secret: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        ...(current?.metadata ?? {}),
        name,
        namespace: this.options.namespace,
        labels: { ...current?.metadata.labels, [CERTIFICATE_LABEL]: role, 'app.kubernetes.io/managed-by': 'virtualization-controller' },
        annotations,
      },
      type,
      data,
    };
    if (current === undefined) await this.options.clients.secrets.create(secret, { signal });
    else if (current.type !== undefined && current.type !== secret.type) {
      await this.options.clients.secrets.delete({ namespace: this.options.namespace, name }, { signal });
      await this.options.clients.secrets.create({ ...secret, metadata: { ...secret.metadata, resourceVersion: undefined, uid: undefined } }, { signal });
    } else await this.options.clients.secrets.replace(secret, { signal });
  }

  private async warnIfBroken(d: Decision, secret: string): Promise<void> {
    if (!d.broken) return;
    this.log.warn({ secret, why: d.why }, 'replaced unusable certificate material');
    const regarding: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { namespace: this.options.namespace, name: secret } };
    await this.options.events?.record(regarding, { type: 'Warning', reason: 'CertificateReplaced', action: 'Issue', note: d.why });
  }

  private async conversionPatch(crd: Crd, b64: string | undefined, signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const service = crd.spec?.conversion?.strategy === 'Webhook' ? undefined : conversionService(crd);
    const exists =
      service !== undefined &&
      (await this.options.clients.services.list({ namespace: this.options.namespace, signal })).items.some((s) => s.metadata.name === service);
    return conversionPatchFor(crd, b64, this.options.namespace, exists);
  }

  /** Write each target's bundle (from `bundles`, else from its Secret's ca.crt) where it differs. */
  private async inject(bundles: Map<string, string>, signal: AbortSignal): Promise<string[]> {
    const { clients } = this.options;
    const selector = `${INJECT_LABEL}=true`;
    const bundleFor = async (obj: KubeObject): Promise<string | undefined> => {
      const from = obj.metadata.annotations?.[INJECT_FROM_ANNOTATION];
      if (from === undefined) return undefined;
      const known = bundles.get(from) ?? secretText(await this.read(from, signal), 'ca.crt');
      if (known === undefined) this.log.warn({ target: obj.metadata.name, secret: from }, 'no ca.crt to inject yet');
      return known === undefined ? undefined : Buffer.from(known).toString('base64');
    };
    const patched: string[] = [];
    for (const [kind, client] of [
      ['ValidatingWebhookConfiguration', clients.validating],
      ['MutatingWebhookConfiguration', clients.mutating],
    ] as const) {
      for (const cfg of (await client.list({ labelSelector: selector, signal })).items) {
        const b64 = await bundleFor(cfg);
        if (b64 === undefined) continue;
        const ops = webhookOps(cfg, b64);
        if (ops.length === 0) continue;
        await client.jsonPatch({ name: cfg.metadata.name ?? '' }, ops, { signal });
        patched.push(`${kind}/${cfg.metadata.name ?? ''}`);
      }
    }
    for (const svc of (await clients.apiServices.list({ labelSelector: selector, signal })).items) {
      const b64 = await bundleFor(svc);
      if (b64 === undefined || svc.spec?.caBundle === b64) continue;
      await clients.apiServices.mergePatch(
        { name: svc.metadata.name ?? '' },
        { metadata: { resourceVersion: svc.metadata.resourceVersion }, spec: { caBundle: b64 } },
        { signal },
      );
      patched.push(`APIService/${svc.metadata.name ?? ''}`);
    }
    for (const crd of (await clients.crds.list({ labelSelector: selector, signal })).items) {
      const patch = await this.conversionPatch(crd, await bundleFor(crd), signal);
      if (patch === undefined) continue;
      await clients.crds.mergePatch(
        { name: crd.metadata.name ?? '' },
        { metadata: { resourceVersion: crd.metadata.resourceVersion }, spec: { conversion: patch } },
        { signal },
      );
      patched.push(`CustomResourceDefinition/${crd.metadata.name ?? ''}`);
    }
    for (const p of patched) this.log.info({ target: p }, 'CA bundle injected');
    return patched;
  }
}

/**
 * What a labelled CRD's `spec.conversion` needs: as the original does at controller start, a CRD
 * annotated with its conversion webhook gets `strategy: Webhook` on Service `<service>` (port 443) of
 * our namespace with the bundle, once that Service exists (an apiserver without the install keeps
 * `None` rather than failing every request that needs a conversion); an existing Webhook conversion
 * only gets the bundle (its Service reference, port included, is left as found).
 */
export function conversionPatchFor(crd: Crd, b64: string | undefined, namespace: string, serviceExists: boolean): Record<string, unknown> | undefined {
  if (b64 === undefined) return undefined;
  const conversion = crd.spec?.conversion;
  if (conversion?.strategy === 'Webhook') {
    return conversion.webhook?.clientConfig?.caBundle === b64 ? undefined : { webhook: { clientConfig: { caBundle: b64 } } };
  }
  const target = crd.metadata.annotations?.[CONVERSION_WEBHOOK_ANNOTATION];
  const slash = target?.indexOf('/') ?? -1;
  if (target === undefined || slash <= 0 || !serviceExists) return undefined;
  const service = { namespace, name: target.slice(0, slash), path: target.slice(slash), port: 443 };
  return { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { service, caBundle: b64 } } };
}

/** The Service named by a CRD's conversion-webhook annotation, if any. */
export function conversionService(crd: Crd): string | undefined {
  const target = crd.metadata.annotations?.[CONVERSION_WEBHOOK_ANNOTATION];
  const slash = target?.indexOf('/') ?? -1;
  return target === undefined || slash <= 0 ? undefined : target.slice(0, slash);
}

/** JSON Patch setting every webhook's caBundle, each guarded by a test of the webhook's name. */
export function webhookOps(cfg: WebhookConfiguration, b64: string): JsonPatchOp[] {
  return (cfg.webhooks ?? []).flatMap((w, i): JsonPatchOp[] =>
    w.clientConfig.caBundle === b64
      ? []
      : [
          { op: 'test', path: `/webhooks/${i}/name`, value: w.name },
          { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value: b64 },
        ],
  );
}

function stored(secret: Secret | undefined): Stored {
  return {
    certPem: secretText(secret, 'tls.crt'),
    keyPem: secretText(secret, 'tls.key'),
    rotate: secret?.metadata.annotations?.[ROTATE_ANNOTATION] !== undefined,
  };
}
