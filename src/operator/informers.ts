// Supervised watch caches. Each informer is client-node's ListWatch (list, then watch from the list's
// resourceVersion; relist on 410 Gone, whether it comes as an HTTP status or as an ERROR event in the stream),
// with three additions:
//
// 1. Conversion on arrival. The Watch handed to ListWatch converts every object of the stream, and the list
//    function every listed item, into a small `Cached` record (name, namespace, resourceVersion and the compact
//    model value) before ListWatch stores it. The raw object (managedFields, the full spec and status) is
//    garbage as soon as the converter returns, so the cache holds only what the planner reads.
// 2. Supervision. In client-node 1.4 (dist/cache.js, doneHandler) any watch or list error other than 410 is
//    emitted as `error` and the ListWatch stays stopped. The supervisor restarts it after a capped exponential
//    backoff (reset once a list succeeds or an event arrives); a restart resumes the watch from the last
//    resourceVersion, and a 410 then relists.
// 3. Sync tracking. An informer is synced once its first list has been applied; readiness waits for all of them.
// 4. Paginated lists, as client-go's reflector: `limit` 500 and `continue`, each page converted as it arrives, so
//    no response body holds the whole collection (150,000 pods would be one string of gigabytes, past V8's limit)
//    and only the compact records of earlier pages are kept. A continue token that expired (410 while paging)
//    restarts the list from the beginning, a few times at most.
import { ADD, DELETE, ERROR, ListWatch, UPDATE, Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { FieldError } from '../errors.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import type { Clock } from './clock.js';
import type { LimitedWatch } from './kubeClient.js';

/** What an informer stores per object: identity, version and the compact value (undefined if it did not convert). */
export interface Cached<T> {
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly resourceVersion?: string };
  readonly value: T | undefined;
}

export interface RawList {
  readonly items?: readonly unknown[];
  /** `continue` in JSON; client-node's typed V1ListMeta names it `_continue`. */
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string; readonly _continue?: string };
}

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
}

export const DEFAULT_INFORMER_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000 };

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

export class SupervisedInformer<T> {
  private listWatch: ListWatch<Cached<T>> | undefined;
  private watch: LimitedWatch | undefined;
  private readonly backoff: Backoff;
  private readonly stopping = new AbortController();
  private stopped = false;
  private isSynced = false;
  private restartPending = false;
  private listedSinceWatch = false;
  private restartCount = 0;
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
    if (this.listWatch !== undefined) return;
    this.watch = this.deps.newWatch();
    const lw = new ListWatch<Cached<T>>(this.spec.path, this.convertingWatch(this.watch), () => this.list(), false);
    lw.on(ADD, (entry) => this.handlers.upsert(entry));
    lw.on(UPDATE, (entry) => this.handlers.upsert(entry));
    lw.on(DELETE, (entry) => this.handlers.remove(entry));
    lw.on(ERROR, (err) => this.onError(err));
    this.listWatch = lw;
    this.run();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopping.abort();
    this.watch?.close();
    void this.listWatch?.stop();
    for (const resolve of this.syncWaiters.splice(0)) resolve();
  }

  private run(): void {
    this.listWatch?.start().catch((err: unknown) => this.onError(err));
  }

  private async list(): Promise<{ items: Cached<T>[]; metadata: { resourceVersion?: string } }> {
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
    this.listedSinceWatch = true;
    this.backoff.reset();
    this.log.debug({ objects: items.length, pages, resourceVersion: rv }, 'listed');
    return { items, metadata: rv === undefined ? {} : { resourceVersion: rv } };
  }

  private toCached(raw: unknown): Cached<T> {
    const metadata = metadataOf(raw);
    try {
      return { metadata, value: this.spec.convert(raw) };
    } catch (err) {
      const detail = err instanceof FieldError ? `${err.field}: ${err.problem}` : String(err);
      this.log.warn(
        { object: metadata.namespace === undefined ? metadata.name : `${metadata.namespace}/${metadata.name}` },
        `object ignored, it does not convert: ${detail}`,
      );
      return { metadata, value: undefined };
    }
  }

  /** The Watch given to ListWatch: converts objects of ADDED/MODIFIED/DELETED events; marks the sync. */
  private convertingWatch(inner: LimitedWatch): Watch {
    return new ConvertingWatch(inner, {
      // ListWatch opens the watch right after applying a list: the cache now holds a full state.
      opening: () => {
        if (!this.listedSinceWatch) return;
        this.listedSinceWatch = false;
        this.markSynced();
      },
      received: () => this.backoff.reset(),
      convert: (raw) => this.toCached(raw),
    });
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
    const delay = this.backoff.next();
    const status =
      (err as { statusCode?: unknown; code?: unknown } | null)?.statusCode ?? (err as { code?: unknown })?.code;
    this.log.warn(
      { err: err instanceof Error ? err.message : String(err), status, retryInMs: Math.round(delay) },
      'watch or list failed; restarting the informer',
    );
    void this.deps.clock.sleep(delay, this.stopping.signal).then(() => {
      this.restartPending = false;
      if (this.stopped) return;
      this.restartCount++;
      this.run();
    });
  }
}

interface ConvertingHooks {
  opening(): void;
  received(): void;
  convert(raw: unknown): unknown;
}

/** A Watch that hands ListWatch converted records instead of the raw objects of the stream. */
class ConvertingWatch extends Watch {
  constructor(
    private readonly inner: LimitedWatch,
    private readonly hooks: ConvertingHooks,
  ) {
    super(inner.config);
  }

  override watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    this.hooks.opening();
    return this.inner.watch(
      path,
      queryParams,
      (phase, obj, raw) => {
        this.hooks.received();
        const converted = phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED';
        callback(phase, converted ? this.hooks.convert(obj) : obj, raw);
      },
      done,
    );
  }
}
