import type { Server } from 'node:http';
import type { z } from 'zod';
import type { HostedFunction } from './context.js';
import { within, type Drain } from './drain.js';
import type { FunctionContext, FunctionDefinition } from './types.js';

/** The shutdown hook always gets at least this long, even when draining used the whole deadline. */
const MIN_HOOK_MS = 1_000;

export interface ShutdownReport {
  /** Every in-flight request finished before the deadline. */
  readonly drained: boolean;
  /** The shutdown hook (if any) finished in time without throwing. */
  readonly hookCompleted: boolean;
  readonly clean: boolean;
}

export interface ShutdownParts<C extends z.ZodObject, S> extends HostedFunction<C, S> {
  readonly server: Server;
  readonly drain: Drain;
  readonly deadlineMs: number;
}

/** Stop accepting, finish in-flight requests within the deadline, then run the shutdown hook. */
export async function shutdown<C extends z.ZodObject, S>(parts: ShutdownParts<C, S>): Promise<ShutdownReport> {
  const { ctx, server, drain, deadlineMs } = parts;
  const started = Date.now();
  const draining = drain.drain(server, deadlineMs);
  ctx.log.info({ inFlight: drain.inFlight, deadlineMs }, 'draining: no new connections');
  const drained = await draining;
  if (!drained) ctx.log.warn({ deadlineMs }, 'drain deadline passed; open connections were cut');
  const hookMs = Math.max(deadlineMs - (Date.now() - started), MIN_HOOK_MS);
  const hookCompleted = await runShutdownHook(parts.def, ctx, hookMs);
  ctx.log.info({ drained, hookCompleted, ms: Date.now() - started }, 'stopped');
  return { drained, hookCompleted, clean: drained && hookCompleted };
}

async function runShutdownHook<C extends z.ZodObject, S>(def: FunctionDefinition<C, S>, ctx: FunctionContext<z.infer<C>, S>, ms: number): Promise<boolean> {
  const hook = def.shutdown;
  if (hook === undefined) return true;
  let failed = false;
  const work = (async (): Promise<void> => hook(ctx))().catch((err: unknown) => {
    failed = true;
    ctx.log.error({ err }, 'shutdown hook failed');
  });
  const inTime = await within(work, ms);
  if (!inTime) ctx.log.warn({ ms }, 'shutdown hook did not finish in time');
  return inTime && !failed;
}
