/**
 * One parsed JSON document in the other naming, chosen by its `kind` (discovery documents, OpenAPI,
 * watch events, any object), and the byte-level test that lets bodies without any rewritable name pass
 * through unparsed.
 */
import { restoreApiGroup, restoreApiGroupDiscoveryList, restoreApiGroupList, restoreApiResourceList } from './discovery.js';
import type { BodyMode, RequestPlan } from './endpoint.js';
import { isRecord, type Direction, type Renamer } from './names.js';
import { rewriteObject } from './objects.js';
import { restoreOpenApi } from './openapi.js';

/** Rewrite a response document (restore direction) in place and return it. */
export function restoreDocument(r: Renamer, plan: RequestPlan, doc: unknown): unknown {
  if (!isRecord(doc)) return doc;
  const k = plan.endpoint.kind;
  if (k === 'openapi-v2' || k === 'openapi-v3-index' || k === 'openapi-v3-doc') {
    restoreOpenApi(r, doc);
    return doc;
  }
  switch (doc.kind) {
    case 'APIGroupList':
      restoreApiGroupList(r, doc);
      return doc;
    case 'APIGroup':
      restoreApiGroup(r, doc);
      return doc;
    case 'APIResourceList':
      restoreApiResourceList(r, doc);
      return doc;
    case 'APIGroupDiscoveryList':
      restoreApiGroupDiscoveryList(r, doc);
      return doc;
    default:
      return rewriteObject(r, doc, 'restore', plan.hintKind);
  }
}

/** One watch event (`{type, object}`) in place; BOOKMARKs only get their type meta. */
export function rewriteWatchEvent(r: Renamer, event: unknown, dir: Direction, hintKind?: string): unknown {
  if (!isRecord(event) || !isRecord(event.object)) return event;
  if (event.type === 'BOOKMARK') {
    const o = event.object;
    if (typeof o.apiVersion === 'string' && typeof o.kind === 'string') Object.assign(o, r.typeMeta(o.apiVersion, o.kind, dir));
    return event;
  }
  rewriteObject(r, event.object, dir, hintKind);
  return event;
}

/** Whether a body of `mode` has to be parsed: always for `rewrite`, on a marker for `inspect`. */
export function needsParsing(r: Renamer, mode: BodyMode, body: Buffer | string): boolean {
  if (mode === 'pass') return false;
  if (mode === 'rewrite') return true;
  return r.markers.some((m) => body.includes(m));
}
