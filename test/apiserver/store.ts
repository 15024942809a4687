// The storage layer: what etcd plus the watch cache are to the real API server. One global revision counter
// (every write takes the next value, which becomes the object's metadata.resourceVersion), per-collection maps
// indexed by namespace, a bounded per-collection event history for watches that resume from a resourceVersion,
// and synchronous fan-out of each committed event to the collection's watch sinks and to in-process listeners.
//
// Stored objects are never mutated after commit: every write stores a fresh object, so readers may hold
// references (list snapshots, watch history, controllers) without copying.

import { errors } from './errors.js';
import type { KubeObject } from './types.js';
import { objectKey } from './types.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  /** The revision of this write (also the object's metadata.resourceVersion). */
  readonly rv: number;
  readonly type: WatchEventType;
  readonly storage: string;
  /** The object after the write; for DELETED, the last state carrying the deletion's resourceVersion. */
  readonly object: KubeObject;
  /** The object before the write (MODIFIED and DELETED). */
  readonly prev: KubeObject | undefined;
}

/** Receives the events of one collection (an HTTP watch stream). */
export interface EventSink {
  deliver(event: StoreEvent): void;
}

export type StoreListener = (event: StoreEvent) => void;

class Collection {
  readonly objects = new Map<string, KubeObject>();
  readonly byNamespace = new Map<string, Map<string, KubeObject>>();
  history: StoreEvent[] = [];
  /** A watch from a resourceVersion below this has missed events: it gets 410 Expired. */
  compactedThrough = 0;
  readonly sinks = new Set<EventSink>();

  put(obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    this.objects.set(objectKey(ns, name), obj);
    let inNs = this.byNamespace.get(ns);
    if (inNs === undefined) {
      inNs = new Map();
      this.byNamespace.set(ns, inNs);
    }
    inNs.set(name, obj);
  }

  remove(obj: KubeObject): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    this.objects.delete(objectKey(ns, name));
    const inNs = this.byNamespace.get(ns);
    if (inNs !== undefined) {
      inNs.delete(name);
      if (inNs.size === 0) this.byNamespace.delete(ns);
    }
  }
}

export interface ObjectStoreOptions {
  /** Events kept per collection for watches resuming from a resourceVersion. */
  historyLimit: number;
  /** The revision of the first write minus one. */
  initialResourceVersion: number;
}

export class ObjectStore {
  private revision: number;
  private readonly collections = new Map<string, Collection>();
  private readonly listeners = new Set<StoreListener>();
  private readonly historyLimit: number;

  constructor(options: ObjectStoreOptions) {
    this.revision = options.initialResourceVersion;
    this.historyLimit = Math.max(1, options.historyLimit);
  }

  /** The current revision: the resourceVersion of lists and of bookmarks. */
  get resourceVersion(): number {
    return this.revision;
  }

  private collection(storage: string): Collection {
    let c = this.collections.get(storage);
    if (c === undefined) {
      c = new Collection();
      this.collections.set(storage, c);
    }
    return c;
  }

  get<T extends KubeObject = KubeObject>(storage: string, namespace: string | undefined, name: string): T | undefined {
    return this.collections.get(storage)?.objects.get(objectKey(namespace, name)) as T | undefined;
  }

  /** Objects of a collection, optionally of one namespace. References to stored (immutable) objects. */
  list<T extends KubeObject = KubeObject>(storage: string, namespace?: string): T[] {
    const c = this.collections.get(storage);
    if (c === undefined) return [];
    if (namespace === undefined || namespace === '') return [...c.objects.values()] as T[];
    return [...(c.byNamespace.get(namespace)?.values() ?? [])] as T[];
  }

  /** Iterates without copying (for controllers scanning one namespace). */
  *iterate<T extends KubeObject = KubeObject>(storage: string, namespace?: string): IterableIterator<T> {
    const c = this.collections.get(storage);
    if (c === undefined) return;
    const source = namespace === undefined ? c.objects.values() : (c.byNamespace.get(namespace)?.values() ?? []);
    for (const obj of source) yield obj as T;
  }

  count(storage: string, namespace?: string): number {
    const c = this.collections.get(storage);
    if (c === undefined) return 0;
    return namespace === undefined ? c.objects.size : (c.byNamespace.get(namespace)?.size ?? 0);
  }

  namespacesOf(storage: string): string[] {
    return [...(this.collections.get(storage)?.byNamespace.keys() ?? [])];
  }

  /** Stores a new object; `obj` must not be mutated afterwards. Returns it with its resourceVersion set. */
  commitCreate(storage: string, obj: KubeObject): KubeObject {
    const c = this.collection(storage);
    const rv = ++this.revision;
    const stored = withResourceVersion(obj, rv);
    c.put(stored);
    this.emit(c, { rv, type: 'ADDED', storage, object: stored, prev: undefined });
    return stored;
  }

  /** Replaces `prev` (which must be the stored object) with `obj`. */
  commitUpdate(storage: string, obj: KubeObject, prev: KubeObject): KubeObject {
    const c = this.collection(storage);
    const rv = ++this.revision;
    const stored = withResourceVersion(obj, rv);
    c.put(stored);
    this.emit(c, { rv, type: 'MODIFIED', storage, object: stored, prev });
    return stored;
  }

  /** Removes `prev`; the DELETED event carries its last state with the deletion's resourceVersion (as etcd3). */
  commitDelete(storage: string, prev: KubeObject): KubeObject {
    const c = this.collection(storage);
    const rv = ++this.revision;
    c.remove(prev);
    const tombstone = withResourceVersion(prev, rv);
    this.emit(c, { rv, type: 'DELETED', storage, object: tombstone, prev });
    return tombstone;
  }

  private emit(c: Collection, event: StoreEvent): void {
    c.history.push(event);
    if (c.history.length > this.historyLimit * 2) {
      const drop = c.history.length - this.historyLimit;
      const lastDropped = c.history[drop - 1];
      if (lastDropped !== undefined) c.compactedThrough = Math.max(c.compactedThrough, lastDropped.rv);
      c.history = c.history.slice(drop);
    }
    for (const sink of c.sinks) sink.deliver(event);
    for (const listener of this.listeners) listener(event);
  }

  /**
   * Events of a collection after `rv`, for a watch resuming there. Throws 410 Expired when some of them are no
   * longer retained, with the real watch cache's message.
   */
  eventsSince(storage: string, rv: number): StoreEvent[] {
    const c = this.collection(storage);
    if (rv < c.compactedThrough) {
      const oldest = c.history[0]?.rv ?? this.revision;
      throw errors.expired(`too old resource version: ${rv} (${Math.max(oldest - 1, c.compactedThrough)})`);
    }
    const history = c.history;
    let lo = 0;
    let hi = history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((history[mid]?.rv ?? 0) <= rv) lo = mid + 1;
      else hi = mid;
    }
    return history.slice(lo);
  }

  /** Whether a continue token or watch from `rv` is still served for this collection. */
  isCompacted(storage: string, rv: number): boolean {
    return rv < this.collection(storage).compactedThrough;
  }

  /** Forgets the history of one or all collections up to `throughRv` (default: now), like an etcd compaction. */
  compact(storage?: string, throughRv: number = this.revision): void {
    const targets = storage === undefined ? [...this.collections.values()] : [this.collection(storage)];
    for (const c of targets) {
      c.compactedThrough = Math.max(c.compactedThrough, throughRv);
      c.history = c.history.filter((e) => e.rv > throughRv);
    }
  }

  addSink(storage: string, sink: EventSink): void {
    this.collection(storage).sinks.add(sink);
  }

  removeSink(storage: string, sink: EventSink): void {
    this.collections.get(storage)?.sinks.delete(sink);
  }

  sinkCount(storage?: string): number {
    if (storage !== undefined) return this.collections.get(storage)?.sinks.size ?? 0;
    let total = 0;
    for (const c of this.collections.values()) total += c.sinks.size;
    return total;
  }

  /** Subscribes an in-process listener to every committed event; returns the unsubscribe function. */
  onEvent(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function withResourceVersion(obj: KubeObject, rv: number): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } };
}
