import type { ZodType } from 'zod';
import { BadRequestError } from '../errors/index.js';
import { apiVersionOf, describeObject, refOf, resourcePath, type KubeObject, type ObjectRef, type ResourceDescriptor } from './descriptor.js';
import { decodeObject, type Decoded } from './decode.js';
import { PatchType, type JsonPatchOp } from './patch.js';
import type { HttpMethod, RestTransport } from './rest.js';

export interface ResourceClientOptions {
  /** The field manager every write is attributed to (managedFields, server-side apply ownership). */
  fieldManager: string;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface WriteOptions extends CallOptions {
  /** Overrides the client's field manager for this write. */
  fieldManager?: string;
  dryRun?: boolean;
}

export interface PatchOptions extends WriteOptions {
  subresource?: 'status' | 'scale';
}

export interface DeleteOptions extends CallOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ListOptions extends CallOptions {
  /** Omit for all namespaces (or for cluster-scoped resources). */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Page size for the chunked list; all pages are fetched. */
  pageSize?: number;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
}

interface RawList {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: unknown[];
}

/**
 * What code that reads and writes one kind needs of the apiserver: the verbs of a ResourceClient,
 * without its transport. Reconcilers and helpers depend on this port, so a unit test can hand them an
 * in-memory kind (daemons/controller/testing) instead of a client.
 */
export type ResourcePort<T extends KubeObject> = Pick<
  ResourceClient<T>,
  'get' | 'list' | 'create' | 'replace' | 'mergePatch' | 'jsonPatch' | 'apply' | 'patchStatus' | 'delete'
>;

/**
 * A typed client for one resource: every result is validated by the zod schema (a mismatch is an
 * InvalidObjectError naming the object and field; fields the schema does not know are kept, not
 * rejected), every write names a field manager, and apiserver failures arrive as shared/errors classes.
 */
export class ResourceClient<T extends KubeObject> {
  readonly apiVersion: string;

  constructor(
    readonly rest: RestTransport,
    readonly descriptor: ResourceDescriptor,
    readonly schema: ZodType<T>,
    private readonly options: ResourceClientOptions,
  ) {
    if (options.fieldManager === '') throw new TypeError('a resource client needs a non-empty fieldManager');
    this.apiVersion = apiVersionOf(descriptor);
  }

  /**
   * Decode one object from the apiserver (apiVersion/kind are filled in when a list omits them):
   * fields the schema does not know are kept, not rejected (see decodeObject); any other mismatch is
   * an InvalidObjectError in the result.
   */
  decode(raw: unknown): Decoded<T> {
    const obj = raw !== null && typeof raw === 'object' ? { apiVersion: this.apiVersion, kind: this.descriptor.kind, ...raw } : raw;
    return decodeObject(this.schema, obj, () => {
      const meta = (obj as { metadata?: { namespace?: string; name?: string } } | null)?.metadata;
      return describeObject(this.descriptor, { namespace: meta?.namespace, name: meta?.name ?? '<unnamed>' });
    });
  }

  /** Decode one object from the apiserver, or throw its InvalidObjectError. */
  parse(raw: unknown): T {
    const decoded = this.decode(raw);
    if (decoded.ok) return decoded.value;
    throw decoded.error;
  }

  async get(ref: ObjectRef, opts: CallOptions = {}): Promise<T> {
    return this.parse(await this.call('GET', 'get', ref, opts));
  }

  /** List every page; strict: the first invalid item fails the call. */
  async list(opts: ListOptions = {}): Promise<ListResult<T>> {
    const raw = await this.listRaw(opts);
    return { items: raw.items.map((item) => this.parse(item)), resourceVersion: raw.resourceVersion };
  }

  /** List every page without validating items. */
  async listRaw(opts: ListOptions = {}): Promise<ListResult<unknown>> {
    const items: unknown[] = [];
    const resourceVersion = await this.listPages(opts, (page) => items.push(...page));
    return { items, resourceVersion };
  }

  /**
   * List every page, handing each page's raw items to `onPage` as it arrives (the informer validates
   * and trims them one page at a time, so a list of 10,000 objects never holds them all whole at
   * once); resolves with the list's resourceVersion.
   */
  async listPages(opts: ListOptions, onPage: (items: unknown[]) => void): Promise<string> {
    let resourceVersion = '';
    let token: string | undefined;
    do {
      const page = (await this.rest.request({
        method: 'GET',
        path: resourcePath(this.descriptor, { namespace: opts.namespace }),
        query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.pageSize ?? 500, continue: token },
        signal: opts.signal,
        what: `list ${this.descriptor.kind}`,
      })) as RawList;
      onPage(page.items ?? []);
      resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
      token = page.metadata?.continue || undefined;
    } while (token !== undefined);
    return resourceVersion;
  }

  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    const body = { ...obj, apiVersion: this.apiVersion, kind: this.descriptor.kind };
    const ref = { namespace: obj.metadata.namespace, name: obj.metadata.name ?? obj.metadata.generateName ?? '' };
    return this.parse(await this.call('POST', 'create', ref, opts, { body, collection: true }));
  }

  /** PUT the whole object; metadata.resourceVersion makes it conditional (409 if it moved on). */
  async replace(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.parse(await this.call('PUT', 'replace', refOf(obj), opts, { body: obj }));
  }

  /** JSON merge patch (RFC 7386); a metadata.resourceVersion in the patch makes it conditional. */
  async mergePatch(ref: ObjectRef, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    return this.patch(ref, patch, PatchType.merge, opts);
  }

  /** JSON patch (RFC 6902); `test` operations make it conditional (422 when a test fails). */
  async jsonPatch(ref: ObjectRef, ops: readonly JsonPatchOp[], opts: PatchOptions = {}): Promise<T> {
    return this.patch(ref, ops, PatchType.json, opts);
  }

  /** Server-side apply of the fields this manager owns; `force` takes over conflicting fields. */
  async apply(obj: KubeObject, opts: PatchOptions & { force?: boolean } = {}): Promise<T> {
    const body = { ...obj, apiVersion: this.apiVersion, kind: this.descriptor.kind };
    return this.patch(refOf(obj), body, PatchType.apply, opts, opts.force);
  }

  /** Write status through the `/status` subresource with a JSON merge patch. */
  async patchStatus(ref: ObjectRef, status: unknown, opts: WriteOptions = {}): Promise<T> {
    return this.patch(ref, { status }, PatchType.merge, { ...opts, subresource: 'status' });
  }

  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: opts.propagationPolicy, preconditions: opts.preconditions };
    await this.call('DELETE', 'delete', ref, opts, { body });
  }

  private async patch(ref: ObjectRef, body: unknown, contentType: string, opts: PatchOptions, force?: boolean): Promise<T> {
    const raw = await this.call('PATCH', `patch${opts.subresource ? ` ${opts.subresource} of` : ''}`, ref, opts, {
      body,
      contentType,
      subresource: opts.subresource,
      force,
    });
    return this.parse(raw);
  }

  private async call(
    method: HttpMethod,
    verb: string,
    ref: ObjectRef,
    opts: WriteOptions,
    extra: { body?: unknown; contentType?: string; subresource?: string | undefined; collection?: boolean; force?: boolean | undefined } = {},
  ): Promise<unknown> {
    if (this.descriptor.namespaced && !ref.namespace) {
      throw new BadRequestError(`${verb} ${describeObject(this.descriptor, ref)}: a namespaced resource needs a namespace`);
    }
    if (!extra.collection && ref.name === '') {
      // The path would end at the collection: a GET would list every object instead of reading one.
      throw new BadRequestError(`${verb} ${this.descriptor.kind}: an empty name addresses no object`);
    }
    const writes = method !== 'GET' && method !== 'DELETE';
    return this.rest.request({
      method,
      path: resourcePath(this.descriptor, {
        namespace: ref.namespace,
        name: extra.collection ? undefined : ref.name,
        subresource: extra.subresource,
      }),
      query: {
        fieldManager: writes ? (opts.fieldManager ?? this.options.fieldManager) : undefined,
        dryRun: opts.dryRun ? 'All' : undefined,
        force: extra.force,
      },
      body: extra.body,
      contentType: extra.contentType ?? 'application/json',
      signal: opts.signal,
      what: `${verb} ${describeObject(this.descriptor, ref)}`,
    });
  }
}
