import { NotFoundError } from '../../../shared/errors/index.js';
import { objectKey, type KubeObject } from '../../../shared/kube/index.js';
import { childLogger, type Logger } from '../../../shared/log/index.js';
import { mergeDiff } from './merge-diff.js';
import type { ReconcileFn, ReconcileResult } from './runner.js';

/** What a handler may ask for: stop the chain here, and/or another look after a delay. */
export interface HandlerOutcome {
  stop?: boolean;
  requeueAfterMs?: number | undefined;
}

export interface HandlerContext {
  readonly signal: AbortSignal;
  /** Tagged with the handler name and the object key. */
  readonly log: Logger;
  /** One clock reading per reconcile, so every condition of one pass carries the same time. */
  readonly now: Date;
}

/** One small named step of a reconciler; it reads the state and changes `state.status` in place. */
export interface Handler<S> {
  readonly name: string;
  handle(state: S, ctx: HandlerContext): Promise<HandlerOutcome | void> | HandlerOutcome | void;
}

/** The state every handler chain works on: the object as read and a mutable copy of its status. */
export interface ReconcileState<O, St> {
  readonly obj: O;
  status: St;
  /** Set when the object is (about to be) gone, e.g. the last finalizer was removed: no status write. */
  gone?: boolean;
  /**
   * Skip this pass's status write: the controller has just started work whose own event brings the
   * object back within moments (an interim status would be overwritten at once).
   */
  deferStatus?: boolean;
}

export interface ReconcilerSpec<O extends KubeObject, St, S extends ReconcileState<O, St>> {
  readonly name: string;
  /** The object for a key from the cache; undefined when it no longer exists. */
  load(key: string): O | undefined;
  /**
   * Why the latest version of the object did not match its schema (ObjectCache.invalid): such an
   * object is not reconciled (neither on its last valid copy nor as gone) until a version matches.
   */
  invalid?(key: string): Error | undefined;
  /** The state for one pass (status deep-copied from the object). */
  init(obj: O): S;
  readonly handlers: readonly Handler<S>[];
  statusOf(obj: O): St | undefined;
  /** Runs after the handlers (also when one stopped the chain or failed), before the status write: invariants of the status as a whole. */
  settle?(state: S): void;
  /** Write a JSON merge patch of the status through /status. */
  writeStatus(obj: O, statusPatch: unknown, signal: AbortSignal): Promise<void>;
  readonly logger?: Logger;
}

/**
 * A reconcile function from an ordered list of handlers: each changes the state's status copy, a
 * handler may stop the chain or fail (which also stops it), and then one place writes the status,
 * as a merge patch of exactly what changed, skipped when nothing did. The failure, if any, is
 * rethrown after the status write so the runner requeues the key.
 */
export function handlerChain<O extends KubeObject, St, S extends ReconcileState<O, St>>(spec: ReconcilerSpec<O, St, S>): ReconcileFn {
  const base = spec.logger ?? childLogger({ component: 'controller', controller: spec.name });
  return async (key: string, signal: AbortSignal): Promise<ReconcileResult> => {
    const invalid = spec.invalid?.(key);
    if (invalid !== undefined) {
      base.debug({ object: key, err: invalid }, 'not reconciled: its latest version does not match the schema');
      return {};
    }
    const obj = spec.load(key);
    // Gone: what it owned is the garbage collector's (ownerReferences), nothing to do here.
    if (obj === undefined) return {};
    const state = spec.init(obj);
    const now = new Date();
    let requeueAfterMs: number | undefined;
    let failure: unknown;
    for (const handler of spec.handlers) {
      if (signal.aborted) return {};
      const ctx = handlerContext(base, handler.name, key, signal, now);
      try {
        const outcome = await handler.handle(state, ctx);
        requeueAfterMs = earliest(requeueAfterMs, outcome?.requeueAfterMs);
        if (outcome?.stop) break;
      } catch (err: unknown) {
        failure = err;
        break;
      }
    }
    spec.settle?.(state);
    if (!state.gone && state.deferStatus !== true && !signal.aborted) failure = (await writeStatus(spec, state, signal)) ?? failure;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrowing what a handler threw, as it was
    if (failure !== undefined) throw failure;
    return { requeueAfterMs };
  };
}

async function writeStatus<O extends KubeObject, St, S extends ReconcileState<O, St>>(
  spec: ReconcilerSpec<O, St, S>,
  state: S,
  signal: AbortSignal,
): Promise<unknown> {
  const patch = mergeDiff(spec.statusOf(state.obj) ?? {}, state.status);
  if (patch === undefined) return undefined;
  try {
    await spec.writeStatus(state.obj, patch, signal);
    return undefined;
  } catch (err: unknown) {
    // Deleted meanwhile: nothing to report, the delete event ends the key.
    if (err instanceof NotFoundError) return undefined;
    return err;
  }
}

function handlerContext(base: Logger, handler: string, key: string, signal: AbortSignal, now: Date): HandlerContext {
  let log: Logger | undefined;
  return {
    signal,
    now,
    get log(): Logger {
      log ??= childLogger({ handler, object: key }, base);
      return log;
    },
  };
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** The cache key of an object (for enqueueing from mappers). */
export function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata);
}

/**
 * A deep copy of JSON data (status copies for handlers): plain objects, arrays and primitives, which
 * is all a decoded API object holds. Copied field by field, not by `structuredClone`, whose
 * serialisation round trip cost 46 against 7 µs on a VM's full object (measured on this machine)
 * and 3.5% of the controller's busy time at scale (controller-scale bench profile, 100 VMs).
 */
export function clone<T>(value: T): T {
  return copyJson(value) as T;
}

function copyJson(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copyJson);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const copy = copyJson((value as Record<string, unknown>)[key]);
    // A field named `__proto__` (JSON.parse makes it an own property) must stay one, not become the prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}
