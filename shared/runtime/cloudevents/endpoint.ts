import { randomUUID } from 'node:crypto';
import { errorBody } from '../http/errors.js';
import type { Endpoint } from '../http/exchange.js';
import { sendReply } from '../http/reply.js';
import { requestContext, type RequestContext } from '../context.js';
import type { CloudEventHandler, FunctionContext } from '../types.js';
import { decodeCloudEvents, type BatchItem } from './decode.js';
import { encodeBatchReply, encodeReply, type BatchResult } from './encode.js';

/** The endpoint that decodes CloudEvents, calls the function's `handle` and encodes the reply. */
export function cloudEventEndpoint<Cfg, S>(handle: CloudEventHandler<Cfg, S>, base: FunctionContext<Cfg, S>): Endpoint {
  return async ({ req, res, body }) => {
    const decoded = decodeCloudEvents({ headers: req.headers, body });
    if (decoded.mode === 'batch') {
      const ctx = requestContext(base, batchId, res);
      sendReply(res, encodeBatchReply(await handleBatch(decoded.items, handle, ctx)));
      return;
    }
    const reply = await handle(decoded.event, requestContext(base, decoded.event.id, res));
    sendReply(res, encodeReply(decoded.mode, reply));
  };
}

const batchId = (): string => `batch-${randomUUID()}`;

/** Elements are handled one after another, in order; each gets its own result. */
async function handleBatch<Cfg, S>(items: readonly BatchItem[], handle: CloudEventHandler<Cfg, S>, batchCtx: RequestContext<Cfg, S>): Promise<BatchResult[]> {
  const results: BatchResult[] = [];
  for (const [index, item] of items.entries()) {
    if (!item.ok) {
      results.push(failure(index, item.id, item.error));
      continue;
    }
    const ctx = batchCtx.forEvent(item.event.id);
    try {
      const event = (await handle(item.event, ctx)) ?? undefined;
      results.push({ index, id: item.event.id, status: event === undefined ? 204 : 200, event });
    } catch (err: unknown) {
      const result = failure(index, item.event.id, err);
      if (result.status >= 500) ctx.log.error({ err, index }, 'batch element failed');
      results.push(result);
    }
  }
  return results;
}

function failure(index: number, id: string | undefined, err: unknown): BatchResult {
  const { status, body } = errorBody(err);
  return { index, id, status, error: body };
}
