// Supervised watch caches, as client-go's reflector: list, then watch from the list's resourceVersion; a watch that
// ends is opened again from the last version seen (bookmarks included); 410 Gone, as an HTTP status or as an ERROR
// event in the stream, lists again. On top of that:
//
// 1. Conversion on arrival. Every object of the stream and every listed item becomes a small `Cached` record
//    (name, namespace, resourceVersion and the compact model value) at once. The raw object (managedFields, the full
//    spec and status) is garbage as soon as the converter returns, so the cache holds only what the planner reads,
//    and holds it once: the informer keeps identities and versions only, the ClusterCache the values.
// 2. Supervision, as client-go's reflector. A failed list or watch, an ERROR event, and a "very short" watch (ended
//    within a second with no event) are failures: the next attempt waits a capped exponential backoff with jitter,
//    which only a quiet period (no failure for `resetAfterMs`) resets — never an event, a bookmark or an ERROR, so a
//    server answering every watch with an ERROR cannot drive a hot loop that takes the shared limiter's tokens from
//    evictions. A restart resumes the watch from the last resourceVersion; a 410, or `relistAfterFailures` failures
//    in a row, lists again. A watch that ends cleanly (the server's timeoutSeconds) or went silent past its idle
//    deadline (kubeClient.ts) is opened again at once: that is a dead connection, not a failing server.
// 3. Sync tracking. An informer is synced once its first list has been applied; readiness waits for all of them.
// 4. Paginated lists, as client-go's reflector: `limit` 500 and `continue`, each page converted as it arrives, so
//    no response body holds the whole collection (150,000 pods would be one string of gigabytes, past V8's limit)
//    and only the compact records of earlier pages are kept. A continue token that expired (410 while paging)
//    restarts the list from the beginning, a few times at most.
import type { Logger } from 'pino';
import { FieldError } from '../errors.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import type { Clock } from '../clock.js';
import { WatchIdleError, type LimitedWatch, type ListAnswer } from './kubeClient.js';

/** What an informer stores per object: identity, version and the compact value (undefined if it did not convert). */
export interface Cached<T> {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion?: string };
  readonly value: T | undefined;
}

export type RawList = ListAnswer;

/** One page of a list request. */
export interface ListPage {
  readonly limit: number;
  readonly continue?: string;
}

export const LIST_PAGE_SIZE = 500;
/** Restarts of one list after its continue token expired, before the list fails (and the supervisor retries). */
const MAX_LIST_RESTARTS = 3;

export interface InformerSpec<T> {
  /** Resource name for logs and metrics (`pods`, `rebalancepolicies`). */
  readonly resource: string;
  /** Collection path of the watch, e.g. `/api/v1/pods`. */
  readonly path: string;
  /** Lists one page of the collection (through the rate-limited client); a spec ignoring `page` lists everything. */
  list(page?: ListPage): Promise<RawList>;
  /** Raw object (plain JSON from a watch, or client-node's model object from a list) → compact value. */
  convert(raw: unknown): T;
  /**
   * An API the cluster may not serve (CSINode on a trimmed-down server): a 404 on the list counts as synced and
   * empty, reported once, so it never holds readiness; the informer keeps trying (backed off) in case it appears.
   */
  readonly optional?: boolean;
}

export interface InformerHandlers<T> {
  upsert(entry: Cached<T>): void;
  remove(entry: Cached<T>): void;
}

export interface InformerDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly newWatch: () => LimitedWatch;
  readonly backoff?: BackoffOptions;
  /** A failure this long after the previous one starts the backoff over (default 2 min, as client-go). */
  readonly backoffResetMs?: number;
  /** Consecutive failed watches after which the informer lists again instead of resuming (default 3). */
  readonly relistAfterFailures?: number;
}

/** client-go's reflector: 800 ms doubling to 30 s, jitter up to 100%. */
export const DEFAULT_INFORMER_BACKOFF: BackoffOptions = { initialMs: 800, maxMs: 30_000, jitter: 1 };
const DEFAULT_BACKOFF_RESET_MS = 120_000;
const DEFAULT_RELIST_AFTER_FAILURES = 3;
/** A watch that ends sooner than this without a single event is a failure, not a server timeout (client-go). */
const SHORT_WATCH_MS = 1_000;

type Obj = Record<string, unknown>;

function metadataOf(raw: unknown): Cached<never>['metadata'] {
  const meta = (raw as { metadata?: Obj } | null)?.metadata;
  const name = meta?.['name'];
  const namespace = meta?.['namespace'];
  const rv = meta?.['resourceVersion'];
  return {
    name: typeof name === 'string' ? name : '',
    ...(typeof namespace === 'string' && namespace !== '' ? { namespace } : {}),
    ...(typeof rv === 'string' ? { resourceVersion: rv } : {}),
  };
}

function statusCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; statusCode?: unknown } | null;
  const code = e?.code ?? e?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/** client-node's list parameters for one page. */
export function pageParams(page: ListPage | undefined): { limit?: number; _continue?: string } {
  if (page === undefined) return {};
  return { limit: page.limit, ...(page.continue !== undefined ? { _continue: page.continue } : {}) };
}

/** Namespace/name: the identity of an object within one resource. */
const keyOf = (m: Cached<never>['metadata']): string =>
  m.namespace === undefined ? m.name : `${m.namespace}/${m.name}`;

/** An ERROR event of a watch stream: its Status object's code and message. */
export class WatchEventError extends Error {
  readonly code: number | undefined;
  constructor(path: string, status: { code?: unknown; message?: unknown }) {
    const message = typeof status.message === 'string' ? status.message : '';
    super(`watch ${path}: ERROR event${typeof status.code === 'number' ? ` ${status.code}` : ''}: ${message}`);
    this.name = 'WatchEventError';
    this.code = typeof status.code === 'number' ? status.code : undefined;
  }
}

function retryAfterOf(err: unknown): number | undefined {
  const ms = (err as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_RETRY_AFTER_MS) : undefined;
}

/** Longest server Retry-After a restarting informer waits. */
const MAX_RETRY_AFTER_MS = 60_000;

/** An error that means "list again": 410 Gone as an HTTP status or in an ERROR event. */
const isGone = (err: unknown): boolean => statusCode(err) === 410;

export class SupervisedInformer<T> {
  /** Identity → metadata of what the handlers were given: the diff base of a relist, and the duplicate filter. */
  private readonly known = new Map<string, Cached<T>['metadata']>();
  private resourceVersion = '';
  private watch: LimitedWatch | undefined;
  private request: AbortController | undefined;
  private running = false;
  private readonly backoff: Backoff;
  /** An optional API's absence was logged (once). */
  private absentReported = false;
  private readonly stopping = new AbortController();
  private stopped = false;
  private isSynced = false;
  private restartPending = false;
  private restartCount = 0;
  /** Monotonic time of the last failure (for the backoff's reset), and failed watches in a row. */
  private lastFailureAt: number | undefined;
  private failuresInRow = 0;
  /** The open watch: when it started, how many events it delivered, the ERROR it carried. */
  private watchStartedAt = 0;
  private watchEvents = 0;
  private watchError: { code?: unknown; message?: unknown } | undefined;
  private readonly syncWaiters: Array<() => void> = [];
  private readonly log: Logger;

  constructor(
    private readonly spec: InformerSpec<T>,
    private readonly handlers: InformerHandlers<T>,
    private readonly deps: InformerDeps,
  ) {
    this.backoff = new Backoff(deps.backoff ?? DEFAULT_INFORMER_BACKOFF);
    this.log = deps.logger.child({ informer: spec.resource });
  }

  get resource(): string {
    return this.spec.resource;
  }

  /** True once the first list has been applied. */
  synced(): boolean {
    return this.isSynced;
  }

  /** Times the informer was restarted after an error. */
  restarts(): number {
    return this.restartCount;
  }

  /** Resolves when synced (or when stopped). */
  waitForSync(): Promise<void> {
    if (this.isSynced || this.stopped) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  start(): void {
    if (this.watch !== undefined) return;
    this.watch = this.deps.newWatch();
    this.run();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    this.watch?.close();
    this.request?.abort();
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  private run(): void {
    if (this.running || this.stopped) return;
    this.running = true;
    this.cycle().catch((err: unknown) => {
      this.running = false;
      if (this.spec.optional === true && statusCode(err) === 404 && this.resourceVersion === '') {
        if (!this.absentReported) {
          this.absentReported = true;
          this.log.warn(`the cluster does not serve ${this.spec.path}; read as empty until it does`);
        }
        if (!this.isSynced) {
          this.replace([]);
          this.markSynced();
        }
      }
      this.onError(err);
    });
  }

  /** Lists when there is no version to resume from, then watches; returns when the watch has been opened. */
  private async cycle(): Promise<void> {
    if (this.resourceVersion === '') {
      const listed = await this.list();
      if (this.stopped) return;
      this.replace(listed.items);
      this.resourceVersion = listed.resourceVersion ?? '';
      this.markSynced();
    }
    this.watchStartedAt = this.deps.clock.now();
    this.watchEvents = 0;
    this.watchError = undefined;
    this.request = await this.watch!.watch(
      this.spec.path,
      { resourceVersion: this.resourceVersion },
      (phase, obj) => this.onEvent(phase, obj),
      (err) => this.onWatchEnd(err),
    );
  }

  private onEvent(phase: string, obj: unknown): void {
    this.watchEvents++;
    const rv = metadataOf(obj).resourceVersion;
    switch (phase) {
      case 'ADDED':
      case 'MODIFIED':
        this.upsert(this.toCached(obj));
        break;
      case 'DELETED': {
        const entry = this.toCached(obj);
        if (this.known.delete(keyOf(entry.metadata))) this.handlers.remove(entry);
        break;
      }
      case 'BOOKMARK':
        break;
      case 'ERROR':
        // The watch is over (client-go stops reading at an ERROR): end it now, and let onWatchEnd judge it.
        this.watchError = obj ?? {};
        this.request?.abort();
        return;
      default:
        return;
    }
    if (rv !== undefined && rv !== '') this.resourceVersion = rv;
  }

  private onWatchEnd(err: unknown): void {
    this.request = undefined;
    this.running = false;
    if (this.stopped) return;
    const errorEvent = this.watchError;
    this.watchError = undefined;
    if (errorEvent !== undefined) err = new WatchEventError(this.spec.path, errorEvent);
    if (isGone(err)) {
      // The version is too old to resume from: list again, after the backoff (a server that answers every watch
      // with 410 must not make this a list loop).
      this.resourceVersion = '';
      this.onError(err);
      return;
    }
    if (err instanceof WatchIdleError) {
      this.log.info({ err: err.message }, 'watch went silent; opening it again');
      this.run();
      return;
    }
    if (err === null || err === undefined) {
      const lasted = this.deps.clock.now() - this.watchStartedAt;
      if (this.watchEvents > 0 || lasted >= SHORT_WATCH_MS) {
        this.failuresInRow = 0;
        this.run();
        return;
      }
      err = new Error(`watch ${this.spec.path}: very short watch (ended after ${Math.round(lasted)} ms, no event)`);
    }
    this.failuresInRow++;
    if (this.failuresInRow >= (this.deps.relistAfterFailures ?? DEFAULT_RELIST_AFTER_FAILURES)) {
      this.failuresInRow = 0;
      this.resourceVersion = '';
    }
    this.onError(err);
  }

  private upsert(entry: Cached<T>): void {
    const key = keyOf(entry.metadata);
    const rv = entry.metadata.resourceVersion;
    // The same version again (a relist of an unchanged object) changes nothing.
    if (rv !== undefined && this.known.get(key)?.resourceVersion === rv) return;
    if (entry.value === undefined) {
      // A version that does not convert: the value cached for an older version is stale, so it goes (client-go's
      // store always holds the newest object). The object comes back when a later version converts.
      if (this.known.delete(key)) this.handlers.remove(entry);
      return;
    }
    this.known.set(key, entry.metadata);
    this.handlers.upsert(entry);
  }

  /** Applies a full list: every listed object upserted, every known one the list lacks removed. */
  private replace(items: readonly Cached<T>[]): void {
    const listed = new Set<string>();
    for (const entry of items) listed.add(keyOf(entry.metadata));
    for (const [key, metadata] of [...this.known]) {
      if (listed.has(key)) continue;
      this.known.delete(key);
      this.handlers.remove({ metadata, value: undefined });
    }
    for (const entry of items) this.upsert(entry);
  }

  private async list(): Promise<{ items: Cached<T>[]; resourceVersion: string | undefined }> {
    const items: Cached<T>[] = [];
    let token: string | undefined;
    let rv: string | undefined;
    let pages = 0;
    for (let restarts = 0; ;) {
      let page: RawList;
      try {
        page = await this.spec.list({ limit: LIST_PAGE_SIZE, ...(token !== undefined ? { continue: token } : {}) });
      } catch (err) {
        if (token === undefined || statusCode(err) !== 410 || restarts >= MAX_LIST_RESTARTS) throw err;
        restarts++;
        this.log.info({ pages, restarts }, 'list continue token expired; listing again from the start');
        items.length = 0;
        token = undefined;
        continue;
      }
      pages++;
      for (const raw of page.items ?? []) items.push(this.toCached(raw));
      rv = page.metadata?.resourceVersion;
      const next = page.metadata?.continue ?? page.metadata?._continue;
      if (next === undefined || next === '') break;
      token = next;
    }
    this.log.debug({ objects: items.length, pages, resourceVersion: rv }, 'listed');
    return { items, resourceVersion: rv };
  }

  private toCached(raw: unknown): Cached<T> {
    const metadata = metadataOf(raw);
    try {
      return { metadata, value: this.spec.convert(raw) };
    } catch (err) {
      const detail = err instanceof FieldError ? `${err.field}: ${err.problem}` : String(err);
      this.log.warn({ object: keyOf(metadata) }, `object ignored, it does not convert: ${detail}`);
      return { metadata, value: undefined };
    }
  }

  private markSynced(): void {
    if (this.isSynced) return;
    this.isSynced = true;
    this.log.info('cache synced');
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  private onError(err: unknown): void {
    if (this.stopped || this.restartPending) return;
    this.restartPending = true;
    const now = this.deps.clock.now();
    if (
      this.lastFailureAt !== undefined &&
      now - this.lastFailureAt >= (this.deps.backoffResetMs ?? DEFAULT_BACKOFF_RESET_MS)
    ) {
      this.backoff.reset();
    }
    this.lastFailureAt = now;
    // The server's Retry-After on a refused watch (priority and fairness) is a floor under the backoff.
    const delay = Math.max(this.backoff.next(), retryAfterOf(err) ?? 0);
    const fields = {
      err: err instanceof Error ? err.message : String(err),
      status: statusCode(err),
      retryInMs: Math.round(delay),
    };
    // An expired version is routine (the watch cache moved on), not a failure: listed again, after the backoff.
    if (isGone(err)) this.log.info(fields, 'watch expired (410 Gone); listing again');
    else if (this.absentReported && statusCode(err) === 404) this.log.debug(fields, 'optional API still not served');
    else this.log.warn(fields, 'watch or list failed; restarting the informer');
    void this.deps.clock.sleep(delay, this.stopping.signal).then(() => {
      this.restartPending = false;
      if (this.stopped) return;
      if (!isGone(err)) this.restartCount++;
      this.run();
    });
  }
}
