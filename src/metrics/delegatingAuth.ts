// Authentication and authorization of /metrics requests, delegated to the API server as kube-scheduler, the
// descheduler and controller-runtime's metrics filter do (k8s.io/apiserver authenticatorfactory/authorizerfactory):
// the bearer token is checked with a TokenReview, the user it names with a SubjectAccessReview for the HTTP verb on
// the non-resource URL (`get` on `/metrics`). Decisions are cached briefly, keyed by a hash of the token (never the
// token itself) and by the full user and request, so a scrape every few seconds costs one review pair per cache
// period, and concurrent requests with the same token share one review in flight. Answers, not errors, are cached:
// an API server that did not answer leaves nothing behind, and the request gets 500 rather than a wrong 401/403.
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The two review calls (src/operator/authReviews.ts makes them through the operator's API client). */
export interface AuthReviewApi {
  createTokenReview(p: { body: unknown }): Promise<unknown>;
  createSubjectAccessReview(p: { body: unknown }): Promise<unknown>;
}

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AuthDecision =
  | { readonly status: 200; readonly user: UserInfo }
  | { readonly status: 401 | 403 | 500; readonly reason: string; readonly user?: UserInfo };

export interface DelegatingAuthOptions {
  readonly api: AuthReviewApi;
  /** Milliseconds, monotonic (default performance.now via Date.now). */
  readonly now?: () => number;
  /** How long a TokenReview answer (authenticated or not) is reused; the apiserver's default is 10 s. */
  readonly tokenTtlMs?: number;
  /** How long an allowed / denied SubjectAccessReview answer is reused; 10 s each by default, as kube-scheduler's. */
  readonly allowTtlMs?: number;
  readonly denyTtlMs?: number;
  /** Most cached answers of each kind; the oldest go first (bounds memory against a flood of random tokens). */
  readonly maxEntries?: number;
}

interface Cached<T> {
  readonly value: T;
  readonly expires: number;
}

/** A small TTL cache with in-flight sharing, insertion-ordered so the oldest entry is evicted first. */
class ReviewCache<T> {
  private readonly entries = new Map<string, Cached<T>>();
  private readonly inFlight = new Map<string, Promise<T>>();

  constructor(
    private readonly now: () => number,
    private readonly max: number,
  ) {}

  get(key: string, load: () => Promise<T>, ttlOf: (value: T) => number): Promise<T> {
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.expires > this.now()) return Promise.resolve(hit.value);
    if (hit !== undefined) this.entries.delete(key);
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

type TokenAnswer =
  | { readonly authenticated: true; readonly user: UserInfo }
  | { readonly authenticated: false; readonly reason: string };
type AccessAnswer = { readonly allowed: boolean; readonly reason: string };

export interface DelegatingAuth {
  /** The decision for one request to `path` (200 allowed, 401 unauthenticated, 403 denied, 500 review failed). */
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

  async function authenticate(token: string): Promise<TokenAnswer> {
    const key = createHash('sha256').update(token).digest('hex');
    return tokens.get(
      key,
      async () =>
        readTokenReview(
          await opts.api.createTokenReview({
            body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
          }),
        ),
      () => tokenTtl,
    );
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
      async () =>
        readAccessReview(
          await opts.api.createSubjectAccessReview({
            body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec },
          }),
        ),
      (answer) => (answer.allowed ? allowTtl : denyTtl),
    );
  }

  return {
    async check(req, path) {
      const token = bearerToken(req);
      if (token === undefined) return { status: 401, reason: 'no bearer token' };
      let who: TokenAnswer;
      try {
        who = await authenticate(token);
      } catch (err) {
        return { status: 500, reason: `TokenReview failed: ${err instanceof Error ? err.message : String(err)}` };
      }
      if (!who.authenticated) return { status: 401, reason: who.reason };
      const verb = verbOf(req.method);
      let decision: AccessAnswer;
      try {
        decision = await authorize(who.user, verb, path);
      } catch (err) {
        return {
          status: 500,
          user: who.user,
          reason: `SubjectAccessReview failed: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
      if (!decision.allowed) {
        const why = decision.reason !== '' ? `: ${decision.reason}` : '';
        return { status: 403, user: who.user, reason: `${who.user.username} may not ${verb} ${path}${why}` };
      }
      return { status: 200, user: who.user };
    },
    cached: () => ({ tokens: tokens.size, access: access.size }),
  };
}
