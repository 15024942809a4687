// The only module that builds Kubernetes clients. Every request the operator sends goes through one shared token
// bucket (rateLimiter.ts): the typed API clients get it as their HTTP library (a wrapper around client-node's
// fetch library, the documented `httpApi` extension point of `createConfiguration`), and watches, which client-node
// opens with its own fetch call, get it through a Watch wrapper with the same `watch()` signature.
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
  ServerConfiguration,
  Watch,
  createConfiguration,
} from '@kubernetes/client-node';
import type { HttpLibrary, RequestContext } from '@kubernetes/client-node';
import type { Clock } from './clock.js';
import { retryAfterMs, statusOf } from './evictionErrors.js';
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
}

function hasDisruptionBudgetCause(body: string): boolean {
  const causes = statusOf(body)?.details?.causes;
  return (
    Array.isArray(causes) &&
    causes.some((c) => {
      const cause = c as { reason?: unknown; type?: unknown } | null;
      return cause !== null && (cause.reason === 'DisruptionBudget' || cause.type === 'DisruptionBudget');
    })
  );
}

/** A response whose body was read once already, served again from memory. */
function replay(response: ResponseContext, text: string): ResponseContext {
  return new ResponseContext(response.httpStatusCode, response.headers, {
    text: () => Promise.resolve(text),
    binary: () => Promise.resolve(Buffer.from(text)),
  });
}

/** client-node's fetch library behind the shared limiter, with Retry-After honoured. */
export class RateLimitedHttpLibrary implements HttpLibrary {
  private readonly inner = new IsomorphicFetchHttpLibrary();

  constructor(private readonly opts: LimitedHttpOptions) {}

  send(request: RequestContext): Observable<ResponseContext> {
    return new Observable(this.sendLimited(request));
  }

  private async sendLimited(request: RequestContext): Promise<ResponseContext> {
    if (this.opts.userAgent !== undefined) request.setHeaderParam('User-Agent', this.opts.userAgent);
    const maxRetries = this.opts.maxThrottleRetries ?? 5;
    for (let attempt = 0; ; attempt++) {
      await this.opts.limiter.acquire();
      const response = await this.inner.send(request).toPromise();
      if (response.httpStatusCode !== 429) return response;
      const text = await response.body.text();
      const replayed = replay(response, text);
      const wait = retryAfterMs(response.headers, statusOf(text), this.opts.clock.now());
      if (wait === undefined || attempt >= maxRetries || hasDisruptionBudgetCause(text)) return replayed;
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
  readonly custom: CustomObjectsApi;
  readonly coordination: CoordinationV1Api;
  /** A fresh rate-limited Watch (one per informer, so each can be closed on its own). */
  newWatch(): LimitedWatch;
}

export interface KubeClientOptions extends LimitedHttpOptions {
  readonly watchTimeoutSeconds?: number;
}

export function createKubeClients(kc: KubeConfig, opts: KubeClientOptions): KubeClients {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new KubeConfigError('the kubeconfig has no current cluster');
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    httpApi: new RateLimitedHttpLibrary(opts),
  });
  return {
    core: new CoreV1Api(configuration),
    policy: new PolicyV1Api(configuration),
    scheduling: new SchedulingV1Api(configuration),
    custom: new CustomObjectsApi(configuration),
    coordination: new CoordinationV1Api(configuration),
    newWatch: () => new LimitedWatch(kc, { limiter: opts.limiter, timeoutSeconds: opts.watchTimeoutSeconds }),
  };
}
