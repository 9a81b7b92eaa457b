import { match, type MatchFunction } from 'path-to-regexp';
import { BadRequestError } from '../../errors/index.js';

/** Path parameters: `:name` gives a string, a wildcard `*rest` the list of its segments. */
export type Params = Record<string, string | string[]>;

export interface RouteEntry<T> {
  /** GET, POST...: upper case, as Node reports `req.method`. */
  readonly method: string;
  /** An express 5 path pattern (path-to-regexp 8): `/objects/:name`, `/apis/*rest`, `/health/readiness`. */
  readonly path: string;
  readonly value: T;
}

export interface Found<T> {
  readonly value: T;
  readonly params: Params;
}

interface Compiled<T> {
  readonly value: T;
  /** What a literal route's match returns, made once (no parameters). */
  readonly found: Found<T>;
  /** Set for a pattern without parameters: compared as a string, lower case, no trailing slash. */
  readonly literal: string | undefined;
  readonly match: MatchFunction<Params> | undefined;
}

const PATTERN_SYNTAX = /[:*{}()[\]?+!\\]/;

/**
 * The routes of one server, compiled once: for each method the routes in declaration order, the first
 * that matches wins. Matching is express 5's (the router package's defaults): case-insensitive, one
 * optional trailing slash, parameters percent-decoded (a malformed escape is a 400), and HEAD served
 * by the GET route. Patterns without parameters are plain string comparisons.
 */
export class Router<T> {
  private readonly byMethod = new Map<string, Array<Compiled<T>>>();

  constructor(routes: ReadonlyArray<RouteEntry<T>>) {
    for (const route of routes) {
      const list = this.byMethod.get(route.method) ?? [];
      list.push(compile(route));
      this.byMethod.set(route.method, list);
    }
  }

  /** The first route for `method` whose pattern matches the raw (still percent-encoded) `path`. */
  find(method: string, path: string): Found<T> | undefined {
    const list = this.byMethod.get(method) ?? (method === 'HEAD' ? this.byMethod.get('GET') : undefined);
    if (list === undefined) return undefined;
    let literal: string | undefined;
    for (const route of list) {
      if (route.literal !== undefined) {
        literal ??= looseLiteral(path);
        if (route.literal === literal) return route.found;
        continue;
      }
      const matched = route.match?.(path);
      if (matched !== undefined && matched !== false) return { value: route.value, params: matched.params };
    }
    return undefined;
  }
}

const NO_PARAMS: Params = Object.freeze({});

function compile<T>({ path, value }: RouteEntry<T>): Compiled<T> {
  const found = { value, params: NO_PARAMS };
  // As express's router: a pattern's trailing slashes are dropped, the request may have one.
  const loose = path === '/' ? path : path.replace(/\/+$/, '');
  if (!PATTERN_SYNTAX.test(loose)) return { value, found, literal: loose.toLowerCase(), match: undefined };
  return { value, found, literal: undefined, match: match<Params>(loose, { sensitive: false, end: true, trailing: true, decode: decodeParam }) };
}

/** A literal path as the loose match compares it: lower case, one trailing slash dropped. */
function looseLiteral(path: string): string {
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

function decodeParam(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch (err: unknown) {
    throw new BadRequestError(`failed to decode path parameter "${value}"`, { cause: err });
  }
}
