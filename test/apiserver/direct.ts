// Direct, in-process access to the server's storage for seeding and assertions — the equivalent of writing to
// etcd: no admission, defaulting, status/spec split or validation; writes still take a resourceVersion, emit
// watch events and wake the controllers. Objects go in and come out as copies.

import type { KubeApi } from './api.js';
import { rfc3339 } from './clock.js';
import { errors } from './errors.js';
import { deepClone, deepEqual, mergePatch } from './patch.js';
import type { ResourceDef } from './resources.js';
import { apiVersionOf, groupResource } from './resources.js';
import type { StoreEvent } from './store.js';
import type { KubeObject } from './types.js';

export interface StoreListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

export interface StoreChange<T extends KubeObject = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  /** Plural resource name (`pods`, `poddisruptionbudgets`, ...). */
  resource: string;
  object: T;
  prev: T | undefined;
  resourceVersion: number;
}

export class TestStore {
  constructor(private readonly api: KubeApi) {}

  private def(resource: string): ResourceDef {
    return this.api.resource(resource);
  }

  private defFor(obj: KubeObject): ResourceDef {
    const candidates = this.api.registry.all.filter((d) => d.kind === obj.kind && !d.view);
    const def = candidates.find((d) => apiVersionOf(d) === obj.apiVersion) ?? candidates[0];
    if (def === undefined) throw new Error(`no resource serves ${obj.apiVersion ?? '?'}/${obj.kind ?? '?'}`);
    return def;
  }

  /**
   * Stores `obj` as given (status included). Fills apiVersion/kind, namespace `default` for namespaced kinds
   * without one, uid, creationTimestamp and generation 1 (for kinds that track it) when missing.
   * Throws a 409 ApiError if it exists.
   */
  create<T extends KubeObject>(obj: T): T {
    const def = this.defFor(obj);
    const copy = deepClone(obj) as KubeObject;
    copy.apiVersion = apiVersionOf(def);
    copy.kind = def.kind;
    const meta = (copy.metadata = { ...(copy.metadata ?? {}) });
    if (def.namespaced) meta.namespace ??= 'default';
    else delete meta.namespace;
    if (!meta.name) {
      if (!meta.generateName) throw new Error('store.create: metadata.name or generateName is required');
      meta.name = `${meta.generateName}${this.api.randomSuffix()}`;
    }
    if (this.api.store.get(def.storage, meta.namespace, meta.name) !== undefined) {
      throw errors.alreadyExists(groupResource(def), meta.name);
    }
    meta.uid ??= this.api.uid();
    meta.creationTimestamp ??= rfc3339(this.api.now());
    if (def.generation !== 'none') meta.generation ??= 1;
    delete meta.resourceVersion;
    return deepClone(this.api.store.commitCreate(def.storage, copy)) as T;
  }

  /** Creates several objects in order. */
  createAll<T extends KubeObject>(objs: T[]): T[] {
    return objs.map((obj) => this.create(obj));
  }

  /** A copy of the object, or undefined. `namespace` defaults to `default` for namespaced resources. */
  get<T extends KubeObject = KubeObject>(resource: string, name: string, namespace?: string): T | undefined {
    const def = this.def(resource);
    const stored = this.api.store.get(def.storage, def.namespaced ? (namespace ?? 'default') : undefined, name);
    return stored === undefined ? undefined : (deepClone(this.api.view(def, stored)) as T);
  }

  /** Like `get`, but throws a 404 ApiError when missing. */
  require<T extends KubeObject = KubeObject>(resource: string, name: string, namespace?: string): T {
    const found = this.get<T>(resource, name, namespace);
    if (found === undefined) throw errors.notFound(groupResource(this.def(resource)), name);
    return found;
  }

  /** Copies of the objects matching the options (all namespaces unless `namespace` is given), unsorted. */
  list<T extends KubeObject = KubeObject>(resource: string, options: StoreListOptions = {}): T[] {
    const def = this.def(resource);
    const matches = this.api.matcher(def, options);
    const ns = def.namespaced ? options.namespace : undefined;
    return this.api.store
      .list(def.storage, ns)
      .filter(matches)
      .map((obj) => deepClone(this.api.view(def, obj)) as T);
  }

  count(resource: string, namespace?: string): number {
    const def = this.def(resource);
    return this.api.store.count(def.storage, def.namespaced ? namespace : undefined);
  }

  /**
   * Replaces the stored object with `obj` (status included). A non-empty metadata.resourceVersion must match
   * (409 Conflict otherwise). uid and creationTimestamp are kept; generation grows when the kind tracks it and
   * the tracked part changed.
   */
  update<T extends KubeObject>(obj: T): T {
    const def = this.defFor(obj);
    const meta = obj.metadata;
    const ns = def.namespaced ? (meta.namespace ?? 'default') : undefined;
    const existing = this.api.store.get(def.storage, ns, meta.name ?? '');
    if (existing === undefined) throw errors.notFound(groupResource(def), meta.name ?? '');
    if (meta.resourceVersion && meta.resourceVersion !== existing.metadata.resourceVersion) {
      throw errors.modified(groupResource(def), meta.name ?? '');
    }
    const next = deepClone(obj) as KubeObject;
    next.apiVersion = existing.apiVersion;
    next.kind = existing.kind;
    next.metadata = {
      ...next.metadata,
      namespace: existing.metadata.namespace,
      uid: existing.metadata.uid,
      creationTimestamp: existing.metadata.creationTimestamp,
      resourceVersion: existing.metadata.resourceVersion,
    };
    if (!def.namespaced) delete next.metadata.namespace;
    if (def.generation !== 'none') {
      const tracked = (o: KubeObject): unknown => {
        if (def.generation === 'spec') return o.spec;
        const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o;
        return rest;
      };
      const generation = existing.metadata.generation ?? 1;
      next.metadata.generation = deepEqual(tracked(next), tracked(existing)) ? generation : generation + 1;
    }
    if (deepEqual(next, existing)) return deepClone(existing) as T;
    return deepClone(this.api.store.commitUpdate(def.storage, next, existing)) as T;
  }

  /** Applies a JSON merge patch to the stored object (any field, status included). */
  patch<T extends KubeObject = KubeObject>(
    resource: string,
    name: string,
    namespace: string | undefined,
    patch: object,
  ): T {
    const current = this.require<T>(resource, name, namespace);
    const patched = mergePatch(current, patch) as T;
    patched.metadata.resourceVersion = current.metadata.resourceVersion;
    return this.update(patched);
  }

  /** Read-modify-write: `fn` edits a copy of the stored object, which is then written back. */
  mutate<T extends KubeObject = KubeObject>(
    resource: string,
    name: string,
    namespace: string | undefined,
    fn: (obj: T) => void,
  ): T {
    const current = this.require<T>(resource, name, namespace);
    fn(current);
    return this.update(current);
  }

  /** Removes the object at once (no grace period, finalizers ignored). Returns its last state, if it existed. */
  delete<T extends KubeObject = KubeObject>(resource: string, name: string, namespace?: string): T | undefined {
    const def = this.def(resource);
    const existing = this.api.store.get(def.storage, def.namespaced ? (namespace ?? 'default') : undefined, name);
    if (existing === undefined) return undefined;
    return deepClone(this.api.store.commitDelete(def.storage, existing)) as T;
  }

  /** The current resourceVersion (the global revision counter). */
  resourceVersion(): number {
    return this.api.store.resourceVersion;
  }

  /**
   * Drops watch history up to now (one resource, or all): a watch from an older resourceVersion, or a continue
   * token from before, gets 410 Expired — as after an etcd compaction.
   */
  compact(resource?: string): void {
    this.api.store.compact(resource === undefined ? undefined : this.def(resource).storage);
  }

  /** Calls `listener` synchronously for every committed write; returns the unsubscribe function. */
  onChange(listener: (change: StoreChange) => void): () => void {
    return this.api.store.onEvent((event: StoreEvent) => {
      const def = this.api.registry.forStorage(event.storage);
      listener({
        type: event.type,
        resource: def?.resource ?? event.storage,
        object: deepClone(event.object),
        prev: event.prev === undefined ? undefined : deepClone(event.prev),
        resourceVersion: event.rv,
      });
    });
  }
}
