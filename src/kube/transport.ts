// The only module that talks to the API server. Every request the operator sends goes through one shared token
// bucket (rateLimiter.ts), except leader election's and the Events', which get a set of clients each, with a bucket
// of their own (operator.ts, ADR 0019).
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
// The request policy (requestPolicy.ts) decides priority and retries: status writes (and Events, in their own
// bucket) go at low priority (rateLimiter.ts), so they never delay an eviction; a 429 with Retry-After is retried for any
// request but an eviction (whose retries are the executor's alone), a 5xx with Retry-After and a reused connection
// found closed only for idempotent ones. A PodDisruptionBudget's refusal (429 with a DisruptionBudget cause) is an
// answer, not a throttle, handed to the executor untouched.
//
// Deadlines: every request has one, counted from the call: the wait for a token, for a socket and for a Retry-After
// all count. When it passes, the request is destroyed and its socket freed. Callers may pass their own signal (the
// Lease calls do).
import * as http from 'node:http';
import * as https from 'node:https';
import { AgentPool } from './agentPool.js';
import type { Credentials } from './credentials.js';
import { RequestEndedError, requestText, StaleConnectionError, type TextAnswer } from './httpRequest.js';
import type { Clock } from '../clock.js';
import { statusOf } from './evictionErrors.js';
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
