/**
 * The finalizer handler most reconcilers share: an object keeps its cleanup finalizer while it lives;
 * once deleted, and nothing still holds it, what must go first is released and the finalizer removed.
 */
import { addFinalizer, hasFinalizer, removeFinalizer, type KubeObject, type ResourcePort } from '../../../shared/kube/index.js';
import type { Handler, HandlerContext, HandlerOutcome, ReconcileState } from '../engine/reconciler.js';

export interface ProtectionOptions<T extends KubeObject, S extends ReconcileState<T, unknown>> {
  /** The handler's name in the chain (and its logs); `protection` unless given. */
  readonly name?: string;
  readonly finalizer: string;
  readonly client: ResourcePort<T>;
  /** Where the object as stored after adding the finalizer is remembered (the reconciler's cache). */
  readonly cache: { remember(obj: T): T };
  /** On delete: true while something still uses the object; the finalizer stays and the chain stops. */
  readonly heldBy?: (s: S, ctx: HandlerContext) => boolean;
  /** While held: look again after this long (for holders whose own events do not wake this object). */
  readonly heldRecheckMs?: number;
  /** On delete, once nothing holds it: what must go before the finalizer does (it stays if this throws). */
  readonly release?: (s: S, ctx: HandlerContext) => Promise<void>;
}

/** Adds the finalizer while the object lives; on delete waits for `heldBy`, runs `release`, lets go (no status write after). */
export function protectionHandler<T extends KubeObject, S extends ReconcileState<T, unknown>>(opts: ProtectionOptions<T, S>): Handler<S> {
  const { finalizer, client, cache } = opts;
  return {
    name: opts.name ?? 'protection',
    async handle(s, ctx): Promise<HandlerOutcome | void> {
      const obj = s.obj;
      const call = { signal: ctx.signal };
      if (obj.metadata.deletionTimestamp === undefined) {
        if (!hasFinalizer(obj, finalizer)) cache.remember(await addFinalizer(client, obj, finalizer, call));
        return;
      }
      if (opts.heldBy?.(s, ctx) === true) return opts.heldRecheckMs === undefined ? { stop: true } : { stop: true, requeueAfterMs: opts.heldRecheckMs };
      await opts.release?.(s, ctx);
      if (hasFinalizer(obj, finalizer)) await removeFinalizer(client, obj, finalizer, call);
      s.gone = true;
      return { stop: true };
    },
  };
}
