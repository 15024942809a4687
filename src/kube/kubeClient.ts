// The only module that talks to the API server. Every request the operator sends goes through one shared token
// bucket (rateLimiter.ts), except leader election's, which gets a set of clients of its own (operator.ts).
//
// Requests are Node's own http(s) with plain JSON, not client-node's typed clients: importing client-node evaluates
// every generated model and API class (about 50 MiB resident for code never called), and its clients deserialize each
// answer a second time into model objects. The surface the operator uses is small (lists, watches, evictions, Events,
// status patches, the Lease) and named here as client-node names it. Credentials come from credentials.ts.
//
// Connections: one shared keep-alive agent per set of TLS options (CA, client certificate, servername...; keyed by a
// hash of them, so rotated credentials get a new pool), with at most `maxSockets` connections, which also bounds the
// requests in flight. Watches, which hold their connection, get agents of their own.
//
// Fencing: an eviction is checked against `fence` (the leader elector's renew deadline) after it got its token, and
// again by the request itself once a socket is connected, immediately before a byte is written (httpRequest.ts): a
// request queued in the agent behind 32 slow list pages goes out only if this replica still leads at that instant.
// When leadership is lost (`fenceSignal`), every eviction not yet written is withdrawn at once: no eviction waits in
// a queue that outlives the renew deadline.
//
// The request policy (requestPolicy.ts) decides priority and retries: Events and status writes go at low priority
// on the same bucket (rateLimiter.ts), so they never delay an eviction; a 429 with Retry-After is retried for any
// request but an eviction (whose retries are the executor's alone), a 5xx with Retry-After and a reused connection
// found closed only for idempotent ones. A PodDisruptionBudget's refusal (429 with a DisruptionBudget cause) is an
// answer, not a throttle, handed to the executor untouched.
//
// Deadlines: every request has one, counted from the call: the wait for a token, for a socket and for a Retry-After
// all count. When it passes, the request is destroyed and its socket freed. Callers may pass their own signal (the
// Lease calls do).
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import { createInterface } from 'node:readline';
import type { Credentials } from './credentials.js';
import { RequestEndedError, requestText, StaleConnectionError, type TextAnswer } from './httpRequest.js';
import { systemClock, type Clock } from '../clock.js';
import { retryAfterMs, statusOf } from './evictionErrors.js';
import type { RateLimiter, RequestPriority } from './rateLimiter.js';
import { isEviction, isIdempotent, priorityOf, retryWaitMs } from './requestPolicy.js';

/** Called when the server throttled a request and the limiter paused (for logs and tests). */
export type ThrottleListener = (info: { url: string; retryAfterMs: number; status: number }) => void;

export interface LimitedHttpOptions {
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  /** Times a request answered with Retry-After (requestPolicy.ts) is sent again before the answer is returned (default 5). */
  readonly maxThrottleRetries?: number;
  readonly userAgent?: string;
  readonly onThrottle?: ThrottleListener;
  /** Connections kept to the API server (default 32). */
  readonly maxSockets?: number;
  /** Checked immediately before an eviction is sent; false refuses to send it (FencedError). */
  readonly fence?: () => boolean;
  /**
   * Aborted when leadership is lost: evictions still waiting for a token stop waiting and fail the fence at once,
   * instead of draining a long queue at the limiter's rate.
   */
  readonly fenceSignal?: () => AbortSignal;
  /** Deadline of one request, from the call to the end of its answer (default 60 s). */
  readonly requestTimeoutMs?: number;
  /** Largest answer read (default httpRequest.ts's 256 MiB). */
  readonly maxResponseBytes?: number;
  /** Longest Retry-After honoured before a throttled request is sent again (default 30 s). */
  readonly maxRetryAfterMs?: number;
  /** Random source in [0, 1) for the jitter of throttled retries (default Math.random). */
  readonly random?: () => number;
}

/** An eviction that was not sent because this replica's leadership could not be confirmed at send time. */
export class FencedError extends Error {
  readonly code = 'E_FENCED' as const;
  constructor(url: string) {
    super(`not sent: leadership not confirmed at send time (${url})`);
    this.name = 'FencedError';
  }
}

const AGENT_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** Shared keep-alive agents, one per distinct set of TLS options (rotated credentials get a new pool). */
class AgentPool {
  private readonly agents = new Map<string, http.Agent>();

  constructor(
    private readonly maxSockets: number,
    private readonly keepAlive: boolean,
  ) {}

  forRequest(options: https.RequestOptions, secure: boolean): http.Agent {
    const hash = createHash('sha256').update(secure ? 'https' : 'http');
    const o = options as Record<string, unknown>;
    for (const key of AGENT_KEYS) hash.update(`\u0000${key}=${String(o[key])}`);
    const id = hash.digest('hex');
    let pooled = this.agents.get(id);
    if (pooled === undefined) {
      const settings: https.AgentOptions = { keepAlive: this.keepAlive, maxSockets: this.maxSockets };
      for (const key of AGENT_KEYS) if (o[key] !== undefined) (settings as Record<string, unknown>)[key] = o[key];
      pooled = secure ? new https.Agent(settings) : new http.Agent(settings);
      this.agents.set(id, pooled);
    }
    return pooled;
  }

  /**
   * One pooled agent per proxy and TLS options, for the proxy agent client-node built for this one request (it
   * builds a new one, without keep-alive, on every call: a CONNECT and a TLS handshake per request). The pooled agent
   * is of the same class, made with keep-alive and the pool's limit; the per-request one is dropped.
   */
  forProxy(given: http.Agent, options: https.RequestOptions, secure: boolean): http.Agent {
    const proxy: unknown = (given as { proxy?: unknown }).proxy;
    if (!(proxy instanceof URL)) return given;
    const hash = createHash('sha256').update(`${given.constructor.name}\u0000${proxy.href}\u0000${String(secure)}`);
    const o = options as Record<string, unknown>;
    for (const key of AGENT_KEYS) hash.update(`\u0000${key}=${String(o[key])}`);
    const id = hash.digest('hex');
    let pooled = this.agents.get(id);
    if (pooled === undefined) {
      const settings: Record<string, unknown> = { keepAlive: this.keepAlive, maxSockets: this.maxSockets, proxy };
      for (const key of AGENT_KEYS) if (o[key] !== undefined) settings[key] = o[key];
      pooled = new (given.constructor as new (o: Record<string, unknown>) => http.Agent)(settings);
      this.agents.set(id, pooled);
    }
    if (pooled !== given) given.destroy();
    return pooled;
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** The kubeconfig's credentials could not be applied (an exec plugin failed, a file is unreadable). */
export class CredentialsError extends Error {
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'CredentialsError';
  }
}

/** A non-2xx answer, shaped as client-node's ApiException (`code`, `body` text, `headers`), which callers read. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    readonly headers: http.IncomingHttpHeaders,
    what: string,
  ) {
    const message = statusOf(body)?.message;
    super(`${what}: HTTP ${code}${typeof message === 'string' && message !== '' ? `: ${message}` : ''}`);
    this.name = 'ApiError';
  }
}

export interface KubeRequest {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, e.g. `/api/v1/pods?limit=500`. */
  readonly path: string;
  readonly body?: unknown;
  /** Of the body (default application/json; a JSON patch names its own). */
  readonly contentType?: string;
  /** Aborting it destroys the request and frees its socket (the Lease calls' own deadline). */
  readonly signal?: AbortSignal;
}

export type KubeAnswer = TextAnswer;

/** An answer that takes longer than this is aborted (a hung connection must not hold an eviction slot for ever). */
const REQUEST_TIMEOUT_MS = 60_000;
const MAX_RETRY_AFTER_MS = 30_000;
/** Fraction of a Retry-After added at random, so throttled clients do not come back together. */
const RETRY_JITTER = 0.2;

/**
 * Requests to the API server over Node's own http(s), behind the shared limiter, with Retry-After honoured and
 * evictions fenced. Bodies are read as text and parsed once, into plain objects: nothing is deserialized into model
 * classes, so a list page costs one JSON.parse and its objects are garbage once converted.
 */
export class KubeTransport {
  private readonly pool: AgentPool;
  private readonly server: string;

  constructor(
    private readonly credentials: Credentials,
    private readonly opts: LimitedHttpOptions,
  ) {
    const cluster = credentials.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    this.server = cluster.server.replace(/\/+$/, '');
    this.pool = new AgentPool(opts.maxSockets ?? 32, true);
  }

  /** Closes the pooled connections. */
  close(): void {
    this.pool.destroy();
  }

  /** The answer, whatever its status; throws only when there was none (network, deadline) or the eviction was fenced. */
  async request(req: KubeRequest): Promise<KubeAnswer> {
    const pathname = req.path.split('?')[0]!;
    const what = `${req.method} ${pathname}`;
    const priority = priorityOf(req.method, pathname);
    const fenced = this.opts.fence !== undefined && isEviction(pathname);
    const maxRetries = this.opts.maxThrottleRetries ?? 5;
    const url = `${this.server}${req.path}`;
    const clock = this.opts.clock;
    const timeoutMs = this.opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    const startedAt = clock.now();
    const random = this.opts.random ?? Math.random;
    for (let attempt = 0; ; attempt++) {
      const fenceSignal = fenced ? this.opts.fenceSignal?.() : undefined;
      await this.token(priority, timeoutMs - (clock.now() - startedAt), anySignal(fenceSignal, req.signal));
      if (req.signal?.aborted === true) throw abortError(req.signal, url);
      if (fenced && (fenceSignal?.aborted === true || this.opts.fence?.() === false)) throw new FencedError(url);
      const left = timeoutMs - (clock.now() - startedAt);
      if (left <= 0) {
        throw new RequestEndedError(`${what}: no answer within ${timeoutMs / 1000} s (waiting to be sent)`, false);
      }
      const answer = await this.send(req, fenced, fenceSignal, url, left);
      const wait = retryWaitMs(req.method, pathname, answer, clock.wall());
      if (wait === undefined || attempt >= maxRetries) return answer;
      const delay = Math.round(
        Math.min(wait, this.opts.maxRetryAfterMs ?? MAX_RETRY_AFTER_MS) * (1 + RETRY_JITTER * random()),
      );
      // The deadline counts from the call: a retry that could not end within it is not made, the answer in hand is
      // the truth.
      if (clock.now() - startedAt + delay >= timeoutMs) return answer;
      this.opts.onThrottle?.({ url, retryAfterMs: delay, status: answer.status });
      await clock.sleep(delay, anySignal(fenceSignal, req.signal));
    }
  }

  /**
   * A token from the limiter within `leftMs`: at once when one is there; otherwise the wait is bounded by the
   * deadline (a request that could not be sent in time ends without a token).
   */
  private async token(priority: RequestPriority, leftMs: number, signal: AbortSignal | undefined): Promise<void> {
    const { limiter, clock } = this.opts;
    if (limiter.tryAcquire(priority)) return;
    const deadline = new AbortController();
    const stop = new AbortController();
    const startedAt = clock.now();
    void clock.sleep(Math.max(0, leftMs), stop.signal).then(() => {
      if (!stop.signal.aborted && clock.now() - startedAt >= leftMs) deadline.abort();
    });
    try {
      await limiter.acquire(anySignal(signal, deadline.signal), priority);
    } finally {
      stop.abort();
    }
  }

  /** The parsed body of a 2xx answer; ApiError otherwise. */
  async json(req: KubeRequest): Promise<unknown> {
    const answer = await this.request(req);
    if (answer.status < 200 || answer.status >= 300) {
      throw new ApiError(answer.status, answer.text, answer.headers, `${req.method} ${req.path.split('?')[0]}`);
    }
    return answer.text === '' ? undefined : (JSON.parse(answer.text) as unknown);
  }

  /** Request options for `path`, authenticated, on a pooled agent. */
  async options(
    method: string,
    path: string,
    headers: Record<string, string>,
    pool: AgentPool = this.pool,
  ): Promise<{ url: URL; options: https.RequestOptions }> {
    const url = new URL(`${this.server}${path}`);
    const options: https.RequestOptions = {
      method,
      headers: {
        Accept: 'application/json',
        ...(this.opts.userAgent !== undefined ? { 'User-Agent': this.opts.userAgent } : {}),
        ...headers,
      },
    };
    try {
      await this.credentials.applyToHTTPSOptions(options);
    } catch (err) {
      throw new CredentialsError(err);
    }
    // client-node's KubeConfig sets a new agent on every request: a plain one is swapped for the pooled agent of the
    // same TLS options, a proxy agent for the pooled one of the same proxy.
    const given = options.agent;
    const plain =
      given === undefined ||
      given === null ||
      (given instanceof http.Agent && (given.constructor === http.Agent || given.constructor === https.Agent));
    if (plain) options.agent = pool.forRequest(options, url.protocol === 'https:');
    else if (given instanceof http.Agent) options.agent = pool.forProxy(given, options, url.protocol === 'https:');
    return { url, options };
  }

  private async send(
    req: KubeRequest,
    fenced: boolean,
    fenceSignal: AbortSignal | undefined,
    url: string,
    timeoutMs: number,
  ): Promise<KubeAnswer> {
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const fence = this.opts.fence;
    const started = this.opts.clock.now();
    for (let resent = false; ; resent = true) {
      const { url: target, options } = await this.options(
        req.method,
        req.path,
        body === undefined ? {} : { 'Content-Type': req.contentType ?? 'application/json' },
      );
      try {
        return await requestText(target, options, body, {
          timeoutMs: Math.max(1, timeoutMs - (this.opts.clock.now() - started)),
          ...(req.signal !== undefined ? { signal: req.signal } : {}),
          ...(this.opts.maxResponseBytes !== undefined ? { maxBytes: this.opts.maxResponseBytes } : {}),
          ...(fenced
            ? {
                ...(fenceSignal !== undefined ? { withdraw: fenceSignal } : {}),
                beforeWrite: () => (fence?.() === false ? new FencedError(url) : undefined),
              }
            : {}),
        });
      } catch (err) {
        // Withdrawn by the fence before it was written: fenced, not a network failure.
        if (err instanceof RequestEndedError && !err.written && fenceSignal?.aborted === true) {
          throw new FencedError(url);
        }
        // A pooled connection the server had closed: an idempotent request is sent once more, on a new one.
        if (err instanceof StaleConnectionError && !resent && isIdempotent(req.method)) continue;
        throw err;
      }
    }
  }
}

/** A signal aborted when any given one is (undefined when none is given). */
function anySignal(...signals: ReadonlyArray<AbortSignal | undefined>): AbortSignal | undefined {
  const given = signals.filter((s): s is AbortSignal => s !== undefined);
  return given.length <= 1 ? given[0] : AbortSignal.any(given);
}

function abortError(signal: AbortSignal, url: string): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new RequestEndedError(`${url}: aborted`, false);
}

export interface LimitedWatchOptions {
  readonly limiter: RateLimiter;
  /**
   * The shortest server-side timeout of a watch: each watch asks for a random `timeoutSeconds` between this and
   * twice this (default 300, so 5 to 10 minutes, as client-go's reflector), so informers started together do not
   * all reconnect together.
   */
  readonly timeoutSeconds?: number;
  /**
   * A watch that receives nothing (no event, no bookmark) for this long is closed and reported as WatchIdleError
   * (default 150 s: the API server sends a bookmark about once a minute). A dead peer would otherwise be found only
   * by TCP keepalive, about 12 minutes on Node 20, with the cache stale meanwhile.
   */
  readonly idleTimeoutMs?: number;
  /** Measures the idle deadline (default: the system clock). */
  readonly clock?: Clock;
  /** Random source in [0, 1) for timeoutSeconds (default Math.random). */
  readonly random?: () => number;
}

export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 150_000;

/**
 * An error answer to a watch request; `statusCode` 410 tells the informer to list again. The Status message is kept
 * (it says why: a missing grant, a priority-and-fairness rejection) and so is the server's Retry-After, which the
 * informer waits at least before it tries again.
 */
export class WatchStatusError extends Error {
  constructor(
    readonly statusCode: number,
    path: string,
    detail = '',
    readonly retryAfterMs: number | undefined = undefined,
  ) {
    super(`watch ${path}: HTTP ${statusCode}${detail !== '' ? `: ${detail}` : ''}`);
    this.name = 'WatchStatusError';
  }
}

/** A watch that received nothing for its idle deadline: closed, to be opened again from the last version seen. */
export class WatchIdleError extends Error {
  readonly code = 'E_WATCH_IDLE' as const;
  constructor(path: string, ms: number) {
    super(`watch ${path}: nothing received for ${ms / 1000} s; closed`);
    this.name = 'WatchIdleError';
  }
}

/** Called with each event of a watch stream: its type and its object, parsed from one line. */
export type WatchCallback = (phase: string, object: unknown) => void;

/**
 * Watches behind the shared limiter, each a streamed GET read line by line (one JSON event a line). Bookmarks are
 * requested (so a resumed watch rarely needs a relist and a live one is never silent for long), the server is asked
 * to close each watch after a randomised `timeoutSeconds`, and a watch silent past its idle deadline is closed here,
 * so a dead connection is replaced within that deadline. `close()` aborts the open watch and any that was about
 * to start: a stopped informer leaves no stream behind. The returned promise never rejects; the end of the stream or
 * a failure is reported once through `done` (null for a clean end).
 */
export class LimitedWatch {
  private current: AbortController | undefined;
  private closed = false;
  private readonly closing = new AbortController();

  constructor(
    private readonly transport: KubeTransport,
    private readonly pool: AgentPool,
    private readonly opts: LimitedWatchOptions,
  ) {}

  async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    let finished = false;
    const finish = (err: unknown): void => {
      if (finished) return;
      finished = true;
      controller.abort();
      if (!this.closed) done(err);
    };
    await this.opts.limiter.acquire(this.closing.signal).catch(() => undefined);
    if (this.closed) {
      controller.abort();
      return controller;
    }
    this.current = controller;
    const query = new URLSearchParams({ watch: 'true', allowWatchBookmarks: 'true' });
    for (const [key, value] of Object.entries(queryParams)) if (value !== undefined) query.set(key, String(value));
    const minTimeout = this.opts.timeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    query.set('timeoutSeconds', String(Math.floor(minTimeout * (1 + (this.opts.random ?? Math.random)()))));
    const idle = this.idleWatchdog(path, controller.signal, finish);
    try {
      const { url, options } = await this.transport.options('GET', `${path}?${query.toString()}`, {}, this.pool);
      options.signal = controller.signal;
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, options, (res) => {
        res.on('error', finish);
        if (res.statusCode !== 200) {
          // A short error body (a Status) is read for its message; a long one is cut, the watch ends either way.
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if ((size += chunk.length) <= 64 * 1024) chunks.push(chunk);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = statusOf(text);
            const message = typeof status?.message === 'string' ? status.message : '';
            const wall = (this.opts.clock ?? systemClock).wall();
            finish(new WatchStatusError(res.statusCode ?? 0, path, message, retryAfterMs(res.headers, status, wall)));
          });
          return;
        }
        res.socket.setKeepAlive(true, 30_000);
        res.on('data', idle);
        const lines = createInterface({ input: res, crlfDelay: Infinity });
        lines.on('line', (line) => {
          if (finished || line === '') return;
          let event: { type?: unknown; object?: unknown };
          try {
            event = JSON.parse(line) as { type?: unknown; object?: unknown };
          } catch {
            return; // a torn line of a dropped connection: the watch ends next and resumes
          }
          if (typeof event.type === 'string') callback(event.type, event.object);
        });
        lines.on('close', () => finish(null));
        // readline passes the stream's errors on (a dropped connection): without a listener they would be thrown.
        lines.on('error', finish);
      });
      // Our own abort comes after finish (a no-op then) or with close() (which reports nothing).
      request.on('error', finish);
      request.end();
    } catch (err) {
      // Credentials that cannot be applied (an exec plugin failing): reported like any failed watch.
      finish(err);
    }
    return controller;
  }

  close(): void {
    this.closed = true;
    this.closing.abort();
    this.current?.abort();
  }

  /**
   * Ends the watch with WatchIdleError when nothing arrives for the idle deadline (the headers count: a server that
   * never answers is as dead as one that went silent). Returns the function to call on each chunk received.
   */
  private idleWatchdog(path: string, signal: AbortSignal, finish: (err: unknown) => void): () => void {
    const clock = this.opts.clock ?? systemClock;
    const idleMs = this.opts.idleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    let last = clock.now();
    void (async () => {
      while (!signal.aborted) {
        await clock.sleep(last + idleMs - clock.now(), signal);
        if (signal.aborted) return;
        if (clock.now() - last >= idleMs) finish(new WatchIdleError(path, idleMs));
      }
    })();
    return () => {
      last = clock.now();
    };
  }
}

type Params = Record<string, string | number | boolean | undefined>;

/** A list answer, as far as the informers read it. */
export interface ListAnswer {
  readonly items?: readonly unknown[];
  /** `continue` in JSON; client-node's typed V1ListMeta names it `_continue`. */
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string; readonly _continue?: string };
}

/** `?a=1&b=2` from the defined values (client-node's `_continue` is the API's `continue`). */
function query(params: Params): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) q.set(key === '_continue' ? 'continue' : key, String(value));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

const enc = encodeURIComponent;

/**
 * The requests the operator makes, named and shaped as client-node's typed clients name them (so readers and test
 * fakes know them), answering plain JSON. The whole surface is here: nothing else talks to the API server.
 */
export function kubeApi(t: KubeTransport) {
  const get = (path: string, params: Params = {}): Promise<unknown> =>
    t.json({ method: 'GET', path: path + query(params) });
  const list = (path: string, params: Params): Promise<ListAnswer> => get(path, params) as Promise<ListAnswer>;
  return {
    core: {
      listNode: (p: Params = {}) => list('/api/v1/nodes', p),
      listNamespace: (p: Params = {}) => list('/api/v1/namespaces', p),
      listPodForAllNamespaces: (p: Params = {}) => list('/api/v1/pods', p),
      listPersistentVolume: (p: Params = {}) => list('/api/v1/persistentvolumes', p),
      listPersistentVolumeClaimForAllNamespaces: (p: Params = {}) => list('/api/v1/persistentvolumeclaims', p),
      createNamespacedPodEviction: (p: { name: string; namespace: string; dryRun?: string; body: unknown }) =>
        t.json({
          method: 'POST',
          path: `/api/v1/namespaces/${enc(p.namespace)}/pods/${enc(p.name)}/eviction${query({ dryRun: p.dryRun })}`,
          body: p.body,
        }),
      createNamespacedEvent: (p: { namespace: string; body: unknown }) =>
        t.json({ method: 'POST', path: `/api/v1/namespaces/${enc(p.namespace)}/events`, body: p.body }),
      patchNamespacedEvent: (p: { namespace: string; name: string; body: unknown }) =>
        t.json({
          method: 'PATCH',
          path: `/api/v1/namespaces/${enc(p.namespace)}/events/${enc(p.name)}`,
          body: p.body,
          contentType: 'application/json-patch+json',
        }),
    },
    policy: {
      listPodDisruptionBudgetForAllNamespaces: (p: Params = {}) => list('/apis/policy/v1/poddisruptionbudgets', p),
    },
    scheduling: {
      listPriorityClass: (p: Params = {}) => list('/apis/scheduling.k8s.io/v1/priorityclasses', p),
    },
    storage: {
      listStorageClass: (p: Params = {}) => list('/apis/storage.k8s.io/v1/storageclasses', p),
      listCSINode: (p: Params = {}) => list('/apis/storage.k8s.io/v1/csinodes', p),
    },
    custom: {
      listClusterCustomObject: (p: { group: string; version: string; plural: string } & Params) => {
        const { group, version, plural, ...rest } = p;
        return list(`/apis/${group}/${version}/${plural}`, rest);
      },
      patchClusterCustomObjectStatus: (p: {
        group: string;
        version: string;
        plural: string;
        name: string;
        body: unknown;
      }) =>
        t.json({
          method: 'PATCH',
          path: `/apis/${p.group}/${p.version}/${p.plural}/${enc(p.name)}/status`,
          body: p.body,
          contentType: 'application/json-patch+json',
        }),
    },
    coordination: {
      readNamespacedLease: (p: { namespace: string; name: string; signal?: AbortSignal }) =>
        t.json({
          method: 'GET',
          path: `/apis/coordination.k8s.io/v1/namespaces/${enc(p.namespace)}/leases/${enc(p.name)}`,
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        }),
      createNamespacedLease: (p: { namespace: string; body: unknown; signal?: AbortSignal }) =>
        t.json({
          method: 'POST',
          path: `/apis/coordination.k8s.io/v1/namespaces/${enc(p.namespace)}/leases`,
          body: p.body,
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        }),
      replaceNamespacedLease: (p: { namespace: string; name: string; body: unknown; signal?: AbortSignal }) =>
        t.json({
          method: 'PUT',
          path: `/apis/coordination.k8s.io/v1/namespaces/${enc(p.namespace)}/leases/${enc(p.name)}`,
          body: p.body,
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        }),
    },
  };
}

export type KubeApi = ReturnType<typeof kubeApi>;

/** The operator's clients, all sharing one limiter. */
export interface KubeClients extends KubeApi {
  /** A fresh rate-limited watch (one per informer, so each can be closed on its own). */
  newWatch(): LimitedWatch;
  /** Closes pooled connections (after everything stopped). */
  close(): void;
}

export interface KubeClientOptions extends LimitedHttpOptions {
  /** LimitedWatchOptions.timeoutSeconds. */
  readonly watchTimeoutSeconds?: number;
  /** LimitedWatchOptions.idleTimeoutMs. */
  readonly watchIdleTimeoutMs?: number;
}

export function createKubeClients(credentials: Credentials, opts: KubeClientOptions): KubeClients {
  const transport = new KubeTransport(credentials, opts);
  // Watches hold their connection for minutes: they get agents of their own, outside the request pool's limit.
  const watchPool = new AgentPool(Infinity, false);
  return {
    ...kubeApi(transport),
    newWatch: () =>
      new LimitedWatch(transport, watchPool, {
        limiter: opts.limiter,
        clock: opts.clock,
        ...(opts.watchTimeoutSeconds !== undefined ? { timeoutSeconds: opts.watchTimeoutSeconds } : {}),
        ...(opts.watchIdleTimeoutMs !== undefined ? { idleTimeoutMs: opts.watchIdleTimeoutMs } : {}),
        ...(opts.random !== undefined ? { random: opts.random } : {}),
      }),
    close: () => {
      transport.close();
      watchPool.destroy();
    },
  };
}
