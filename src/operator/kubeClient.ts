// The only module that builds Kubernetes clients. Every request the operator sends goes through one shared token
// bucket (rateLimiter.ts), except leader election's, which gets a set of clients of its own (operator.ts): the typed API clients get it as their HTTP library (a wrapper around client-node's
// fetch library, the documented `httpApi` extension point of `createConfiguration`), and watches, which client-node
// opens with its own fetch call, get it through a Watch wrapper with the same `watch()` signature.
//
// Connections: client-node 1.x builds a new http(s).Agent for every request (KubeConfig.applySecurityAuthentication),
// so nothing is reused: each call is a new TCP connection (and TLS handshake), and a burst of evictions opens
// thousands of sockets at once. The library swaps that agent for a shared keep-alive agent built from the same
// options (CA, client certificate, servername...; keyed by a hash of them, so rotated credentials get a new pool),
// with at most `maxSockets` connections, which also bounds the requests in flight.
//
// Fencing: an eviction is checked against `fence` (the leader elector's renew deadline) *after* it got its token and
// immediately before it is written to the socket, and again before each throttled retry. Checking when the request
// was queued is not enough: at 20 QPS a thousand queued evictions drain for 50 s, long after a Lease may be lost.
//
// Events are sent at low priority on the same bucket (rateLimiter.ts): they never delay an eviction.
//
// Throttling answers: a 429 carrying Retry-After that is not a PodDisruptionBudget refusal (API priority and
// fairness, max-in-flight) pauses the whole limiter until the instant the server named and the request is sent
// again (bounded). An eviction refused by a budget (429 with a DisruptionBudget cause, which may also carry
// Retry-After while the budget's status is stale) is handed to the executor untouched: it is an answer, not a throttle.
import {
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  IsomorphicFetchHttpLibrary,
  KubeConfig,
  Observable,
  PolicyV1Api,
  ResponseContext,
  SchedulingV1Api,
  StorageV1Api,
  ServerConfiguration,
  Watch,
  createConfiguration,
} from '@kubernetes/client-node';
import type { HttpLibrary, RequestContext } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Clock } from './clock.js';
import { hasDisruptionBudgetCause, retryAfterMs, statusOf } from './evictionErrors.js';
import type { RateLimiter } from './rateLimiter.js';

export interface KubeConfigSource {
  /** A kubeconfig file; when absent, in-cluster credentials if `inCluster`, else the default kubeconfig lookup. */
  readonly kubeconfig?: string;
  /** True when running in a pod (KUBERNETES_SERVICE_HOST is set); read by the entry point, not here. */
  readonly inCluster: boolean;
}

export class KubeConfigError extends Error {
  readonly code = 'E_KUBECONFIG' as const;
  constructor(message: string) {
    super(message);
    this.name = 'KubeConfigError';
  }
}

/** In cluster: the service account; outside: --kubeconfig, else $KUBECONFIG / ~/.kube/config (client-node's lookup). */
export function loadKubeConfig(source: KubeConfigSource): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (source.kubeconfig !== undefined && source.kubeconfig !== '') kc.loadFromFile(source.kubeconfig);
    else if (source.inCluster) kc.loadFromCluster();
    else kc.loadFromDefault();
  } catch (err) {
    const where = source.kubeconfig ?? (source.inCluster ? 'in-cluster service account' : 'default kubeconfig');
    throw new KubeConfigError(`cannot load Kubernetes credentials from ${where}: ${(err as Error).message}`);
  }
  if (kc.getCurrentCluster() === null) {
    throw new KubeConfigError('the kubeconfig has no current cluster (set current-context, or pass --kubeconfig)');
  }
  return kc;
}

/** Called when the server throttled a request and the limiter paused (for logs and tests). */
export type ThrottleListener = (info: { url: string; retryAfterMs: number }) => void;

export interface LimitedHttpOptions {
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  /** Times a throttled (429 + Retry-After) request is sent again before its answer is returned (default 5). */
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
}

/** An eviction that was not sent because this replica's leadership could not be confirmed at send time. */
export class FencedError extends Error {
  readonly code = 'E_FENCED' as const;
  constructor(url: string) {
    super(`not sent: leadership not confirmed at send time (${url})`);
    this.name = 'FencedError';
  }
}

/** policy/v1 Eviction subresource of a pod. */
const EVICTION_PATH = /\/pods\/[^/]+\/eviction$/;

const AGENT_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** Shared keep-alive agents, one per distinct set of TLS options. */
class AgentPool {
  private readonly agents = new Map<string, http.Agent>();

  constructor(private readonly maxSockets: number) {}

  /** The pooled equivalent of client-node's per-request agent (proxy agents are left alone). */
  forRequest(agent: unknown): http.Agent | undefined {
    const isHttps = agent instanceof https.Agent && agent.constructor === https.Agent;
    const isHttp = agent instanceof http.Agent && agent.constructor === http.Agent;
    if (!isHttps && !isHttp) return undefined;
    const options = (agent as http.Agent & { options: Record<string, unknown> }).options;
    const hash = createHash('sha256').update(isHttps ? 'https' : 'http');
    for (const key of AGENT_KEYS) hash.update(`\u0000${key}=${String(options[key])}`);
    const id = hash.digest('hex');
    let pooled = this.agents.get(id);
    if (pooled === undefined) {
      const settings = { ...options, keepAlive: true, maxSockets: this.maxSockets, timeout: 30_000 };
      pooled = isHttps ? new https.Agent(settings) : new http.Agent(settings);
      this.agents.set(id, pooled);
    }
    return pooled;
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** A response whose body was read once already, served again from memory. */
function replay(response: ResponseContext, text: string): ResponseContext {
  return new ResponseContext(response.httpStatusCode, response.headers, {
    text: () => Promise.resolve(text),
    binary: () => Promise.resolve(Buffer.from(text)),
  });
}

/** Event writes (core/v1 events, a collection or one Event): sent at low priority, after any other waiting request. */
const EVENTS_PATH = /\/events(\/[^/]+)?$/;

/** client-node's fetch library behind the shared limiter, with Retry-After honoured. */
export class RateLimitedHttpLibrary implements HttpLibrary {
  private readonly inner = new IsomorphicFetchHttpLibrary();
  private readonly pool: AgentPool;

  constructor(private readonly opts: LimitedHttpOptions) {
    this.pool = new AgentPool(opts.maxSockets ?? 32);
  }

  /** Closes the pooled connections. */
  close(): void {
    this.pool.destroy();
  }

  send(request: RequestContext): Observable<ResponseContext> {
    return new Observable(this.sendLimited(request));
  }

  private async sendLimited(request: RequestContext): Promise<ResponseContext> {
    if (this.opts.userAgent !== undefined) request.setHeaderParam('User-Agent', this.opts.userAgent);
    const pooled = this.pool.forRequest(request.getAgent());
    if (pooled !== undefined) request.setAgent(pooled);
    const maxRetries = this.opts.maxThrottleRetries ?? 5;
    const path = new URL(request.getUrl()).pathname;
    const priority = EVENTS_PATH.test(path) ? 'low' : 'normal';
    const fenced = this.opts.fence !== undefined && EVICTION_PATH.test(path);
    for (let attempt = 0; ; attempt++) {
      await this.opts.limiter.acquire(fenced ? this.opts.fenceSignal?.() : undefined, priority);
      if (fenced && this.opts.fence?.() === false) throw new FencedError(request.getUrl());
      const response = await this.inner.send(request).toPromise();
      if (response.httpStatusCode !== 429) return response;
      const text = await response.body.text();
      const replayed = replay(response, text);
      const status = statusOf(text);
      const wait = retryAfterMs(response.headers, status, this.opts.clock.wall());
      if (wait === undefined || attempt >= maxRetries || hasDisruptionBudgetCause(status)) return replayed;
      this.opts.limiter.pauseUntil(this.opts.clock.now() + wait);
      this.opts.onThrottle?.({ url: request.getUrl(), retryAfterMs: wait });
    }
  }
}

export interface LimitedWatchOptions {
  readonly limiter: RateLimiter;
  /** Asks the server to end each watch after this many seconds (a fresh watch resumes from the last version). */
  readonly timeoutSeconds?: number;
}

/**
 * client-node's Watch behind the shared limiter. Bookmarks are requested (so a resumed watch rarely needs a relist),
 * and the server is asked to close each watch after `timeoutSeconds`, so a silently dead connection is replaced.
 * `close()` aborts the open watch and any that was about to start: a stopped informer leaves no stream behind.
 * The returned promise never rejects; failures are reported through `done`, as ListWatch expects.
 */
export class LimitedWatch extends Watch {
  private current: AbortController | undefined;
  private closed = false;
  private readonly closing = new AbortController();

  constructor(
    kc: KubeConfig,
    private readonly opts: LimitedWatchOptions,
  ) {
    super(kc);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: (phase: string, apiObj: unknown, watchObj?: unknown) => void,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const idle = new AbortController();
    await this.opts.limiter.acquire(this.closing.signal);
    if (this.closed) {
      idle.abort();
      return idle;
    }
    const params: Record<string, string | number | boolean | undefined> = { allowWatchBookmarks: true };
    for (const [key, value] of Object.entries(queryParams)) params[key] = value;
    if (this.opts.timeoutSeconds !== undefined) params['timeoutSeconds'] = this.opts.timeoutSeconds;
    try {
      const controller = await super.watch(
        path,
        params,
        (phase, obj, raw) => {
          if (!this.closed) callback(phase, obj, raw);
        },
        (err) => {
          if (!this.closed) done(err);
        },
      );
      this.current = controller;
      if (this.closed) controller.abort();
      return controller;
    } catch (err) {
      // Watch.watch throws only before connecting (no current cluster, credentials that cannot be loaded).
      if (!this.closed) done(err);
      idle.abort();
      return idle;
    }
  }

  close(): void {
    this.closed = true;
    this.closing.abort();
    this.current?.abort();
  }
}

/** The typed clients the operator uses, all sharing one limiter. */
export interface KubeClients {
  readonly core: CoreV1Api;
  readonly policy: PolicyV1Api;
  readonly scheduling: SchedulingV1Api;
  readonly storage: StorageV1Api;
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  /** A fresh rate-limited Watch (one per informer, so each can be closed on its own). */
  newWatch(): LimitedWatch;
  /** Closes pooled connections (after everything stopped). */
  close(): void;
}

export interface KubeClientOptions extends LimitedHttpOptions {
  readonly watchTimeoutSeconds?: number;
}

export function createKubeClients(kc: KubeConfig, opts: KubeClientOptions): KubeClients {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeConfigError('the kubeconfig has no current cluster');
  const httpApi = new RateLimitedHttpLibrary(opts);
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    httpApi,
  });
  return {
    core: new CoreV1Api(configuration),
    policy: new PolicyV1Api(configuration),
    scheduling: new SchedulingV1Api(configuration),
    storage: new StorageV1Api(configuration),
    custom: new CustomObjectsApi(configuration),
    coordination: new CoordinationV1Api(configuration),
    newWatch: () => new LimitedWatch(kc, { limiter: opts.limiter, timeoutSeconds: opts.watchTimeoutSeconds }),
    close: () => httpApi.close(),
  };
}
