// Authentication and authorization of /metrics requests, delegated to the API server as kube-scheduler, the
// descheduler and controller-runtime's metrics filter do (k8s.io/apiserver authenticatorfactory/authorizerfactory):
// the bearer token is checked with a TokenReview, the user it names with a SubjectAccessReview for the HTTP verb on
// the non-resource URL (`get` on `/metrics`). Decisions are cached briefly, keyed by a hash of the token (never the
// token itself) and by the full user and request, so a scrape every few seconds costs one review pair per cache
// period, and concurrent requests with the same token share one review in flight. Answers, not errors, are cached:
// an API server that did not answer leaves nothing behind, and the request gets 500 rather than a wrong 401/403.
//
// Starvation: anyone who can reach the port can send tokens. The caches are LRU (a scraper's entry, used every
// scrape, stays while random tokens push each other out), and reviews pass a gate with a few in flight and two
// bounded queues: tokens this process saw authenticated before (Prometheus's) go ahead of unknown ones, and a queue
// that is full answers 503 at once instead of growing. Each check has a deadline (5 s by default, half Prometheus's
// 10 s scrape timeout) after which it answers 503, so a scrape fails fast instead of timing out behind a flood.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AuthReviewApi } from '../kube/authReviews.js';

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AuthDecision =
  | { readonly status: 200; readonly user: UserInfo }
  | { readonly status: 401 | 403 | 500 | 503; readonly reason: string; readonly user?: UserInfo };

export interface DelegatingAuthOptions {
  readonly api: AuthReviewApi;
  /** Milliseconds, monotonic (default performance.now via Date.now). */
  readonly now?: () => number;
  /** How long a TokenReview answer (authenticated or not) is reused; the apiserver's default is 10 s. */
  readonly tokenTtlMs?: number;
  /** How long an allowed / denied SubjectAccessReview answer is reused; 10 s each by default, as kube-scheduler's. */
  readonly allowTtlMs?: number;
  readonly denyTtlMs?: number;
  /** Most cached answers of each kind; the least recently used go first (bounds memory against a flood). */
  readonly maxEntries?: number;
  /** Reviews sent at once (default 4). */
  readonly maxInFlight?: number;
  /** Reviews that may wait for a known token / an unknown one (default 64 / 256); beyond, 503 at once. */
  readonly maxQueuedKnown?: number;
  readonly maxQueuedUnknown?: number;
  /** How long one check may take, reviews and queueing included, before it answers 503 (default 5 s). */
  readonly reviewTimeoutMs?: number;
  /** Sleeps for the deadline (default setTimeout). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** The review queue is full, or the review did not finish within the check's deadline: 503, try again later. */
export class ReviewUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReviewUnavailableError';
  }
}

interface Cached<T> {
  readonly value: T;
  readonly expires: number;
}

/** A small TTL cache with in-flight sharing; a hit moves its entry to the back, so the least recently used goes. */
class ReviewCache<T> {
  private readonly entries = new Map<string, Cached<T>>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly now: () => number,
    private readonly max: number,
  ) {}

  get(key: string, load: () => Promise<T>, ttlOf: (value: T) => number): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined) this.entries.delete(key);
    if (hit !== undefined && hit.expires > this.now()) {
      this.entries.set(key, hit);
      return Promise.resolve(hit.value);
    }
    const pending = this.inFlight.get(key);
    if (pending !== undefined) return pending;
    const loading = load().then(
      (value) => {
        this.inFlight.delete(key);
        this.entries.set(key, { value, expires: this.now() + ttlOf(value) });
        while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
        return value;
      },
      (err: unknown) => {
        this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, loading);
    return loading;
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Reviews in flight at most `max`; the rest wait in two bounded queues, known tokens first. `run` rejects with
 * ReviewUnavailableError when its queue is full.
 */
class ReviewGate {
  private active = 0;
  private readonly known: Array<() => void> = [];
  private readonly unknown: Array<() => void> = [];

  constructor(
    private readonly max: number,
    private readonly maxKnown: number,
    private readonly maxUnknown: number,
  ) {}

  async run<T>(known: boolean, review: () => Promise<T>): Promise<T> {
    if (this.active >= this.max) {
      const queue = known ? this.known : this.unknown;
      if (queue.length >= (known ? this.maxKnown : this.maxUnknown)) {
        throw new ReviewUnavailableError('too many authentication reviews waiting');
      }
      await new Promise<void>((resolve) => queue.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await review();
    } finally {
      // The slot passes straight to the next waiter (known tokens first), or is freed.
      const next = this.known.shift() ?? this.unknown.shift();
      if (next !== undefined) next();
      else this.active--;
    }
  }
}

/** Remembers (by hash) tokens that were authenticated, for the gate's first queue; bounded, least recent out. */
class KnownTokens {
  private readonly seen = new Map<string, true>();
  constructor(private readonly max: number) {}
  has(key: string): boolean {
    return this.seen.has(key);
  }
  add(key: string): void {
    this.seen.delete(key);
    this.seen.set(key, true);
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
  }
}

type TokenAnswer =
  | { readonly authenticated: true; readonly user: UserInfo }
  | { readonly authenticated: false; readonly reason: string };
type AccessAnswer = { readonly allowed: boolean; readonly reason: string };

export interface DelegatingAuth {
  /**
   * The decision for one request to `path`: 200 allowed, 401 unauthenticated, 403 denied, 500 review failed, 503
   * reviews queue full or not answered within the deadline.
   */
  check(req: IncomingMessage, path: string): Promise<AuthDecision>;
  /** Cached answers (for tests). */
  cached(): { tokens: number; access: number };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The bearer token of a request (RFC 6750: `Authorization: Bearer <token>`), or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function readTokenReview(answer: unknown): TokenAnswer {
  const status = isObject(answer) && isObject(answer['status']) ? answer['status'] : {};
  const user = isObject(status['user']) ? status['user'] : {};
  if (status['authenticated'] === true && typeof user['username'] === 'string') {
    return {
      authenticated: true,
      user: {
        username: user['username'],
        ...(typeof user['uid'] === 'string' ? { uid: user['uid'] } : {}),
        ...(Array.isArray(user['groups']) ? { groups: user['groups'].map(String) } : {}),
        ...(isObject(user['extra']) ? { extra: user['extra'] as Record<string, string[]> } : {}),
      },
    };
  }
  const error = typeof status['error'] === 'string' && status['error'] !== '' ? status['error'] : 'token not accepted';
  return { authenticated: false, reason: error };
}

function readAccessReview(answer: unknown): AccessAnswer {
  const status = isObject(answer) && isObject(answer['status']) ? answer['status'] : {};
  const reason = typeof status['reason'] === 'string' ? status['reason'] : '';
  return { allowed: status['allowed'] === true && status['denied'] !== true, reason };
}

/** HTTP method → authorizer verb for a non-resource URL (the apiserver's RequestInfo). */
function verbOf(method: string | undefined): string {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return 'get';
  }
}

export function createDelegatingAuth(opts: DelegatingAuthOptions): DelegatingAuth {
  const now = opts.now ?? Date.now;
  const max = opts.maxEntries ?? 1024;
  const tokenTtl = opts.tokenTtlMs ?? 10_000;
  const allowTtl = opts.allowTtlMs ?? 10_000;
  const denyTtl = opts.denyTtlMs ?? 10_000;
  const tokens = new ReviewCache<TokenAnswer>(now, max);
  const access = new ReviewCache<AccessAnswer>(now, max);
  const known = new KnownTokens(max);
  const gate = new ReviewGate(opts.maxInFlight ?? 4, opts.maxQueuedKnown ?? 64, opts.maxQueuedUnknown ?? 256);
  const timeoutMs = opts.reviewTimeoutMs ?? 5_000;
  const sleep =
    opts.sleep ??
    ((ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      }));

  async function authenticate(token: string): Promise<TokenAnswer> {
    const key = createHash('sha256').update(token).digest('hex');
    const answer = await tokens.get(
      key,
      () =>
        gate.run(known.has(key), async () =>
          readTokenReview(
            await opts.api.createTokenReview({
              body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
            }),
          ),
        ),
      () => tokenTtl,
    );
    if (answer.authenticated) known.add(key);
    return answer;
  }

  /** The review's answer, or ReviewUnavailableError once the check's deadline passed (the review goes on). */
  async function withinDeadline<T>(review: Promise<T>, deadline: AbortSignal): Promise<T> {
    if (deadline.aborted) throw new ReviewUnavailableError(`no review answer within ${timeoutMs / 1000} s`);
    let onAbort: (() => void) | undefined;
    const late = new Promise<never>((_, reject) => {
      onAbort = () => reject(new ReviewUnavailableError(`no review answer within ${timeoutMs / 1000} s`));
      deadline.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([review, late]);
    } finally {
      deadline.removeEventListener('abort', onAbort!);
    }
  }

  async function authorize(user: UserInfo, verb: string, path: string): Promise<AccessAnswer> {
    const spec = {
      user: user.username,
      ...(user.uid !== undefined ? { uid: user.uid } : {}),
      ...(user.groups !== undefined ? { groups: user.groups } : {}),
      ...(user.extra !== undefined ? { extra: user.extra } : {}),
      nonResourceAttributes: { path, verb },
    };
    return access.get(
      JSON.stringify(spec),
      // The user was authenticated: its review goes with the known tokens'.
      () =>
        gate.run(true, async () =>
          readAccessReview(
            await opts.api.createSubjectAccessReview({
              body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
            }),
          ),
        ),
      (answer) => (answer.allowed ? allowTtl : denyTtl),
    );
  }

  const failed = (what: string, err: unknown, user?: UserInfo): AuthDecision => ({
    status: err instanceof ReviewUnavailableError ? 503 : 500,
    ...(user !== undefined ? { user } : {}),
    reason: `${what} failed: ${err instanceof Error ? err.message : String(err)}`,
  });

  async function check(req: IncomingMessage, path: string, deadline: AbortSignal): Promise<AuthDecision> {
    const token = bearerToken(req);
    if (token === undefined) return { status: 401, reason: 'no bearer token' };
    let who: TokenAnswer;
    try {
      who = await withinDeadline(authenticate(token), deadline);
    } catch (err) {
      return failed('TokenReview', err);
    }
    if (!who.authenticated) return { status: 401, reason: who.reason };
    const verb = verbOf(req.method);
    let decision: AccessAnswer;
    try {
      decision = await withinDeadline(authorize(who.user, verb, path), deadline);
    } catch (err) {
      return failed('SubjectAccessReview', err, who.user);
    }
    if (!decision.allowed) {
      const why = decision.reason !== '' ? `: ${decision.reason}` : '';
      return { status: 403, user: who.user, reason: `${who.user.username} may not ${verb} ${path}${why}` };
    }
    return { status: 200, user: who.user };
  }

  return {
    async check(req, path) {
      const deadline = new AbortController();
      const stop = new AbortController();
      void sleep(timeoutMs, stop.signal).then(() => {
        if (!stop.signal.aborted) deadline.abort();
      });
      try {
        return await check(req, path, deadline.signal);
      } finally {
        stop.abort();
      }
    },
    cached: () => ({ tokens: tokens.size, access: access.size }),
  };
}
