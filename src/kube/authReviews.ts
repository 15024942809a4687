// The two requests /metrics authentication sends to the API server (src/serving/delegatingAuth.ts): a TokenReview
// and a SubjectAccessReview, named as client-node's AuthenticationV1Api and AuthorizationV1Api name them. They go
// through the operator's API transport (kubeClient.ts: its credentials, TLS, timeouts and error answers) on a token
// bucket of their own, as leader election has: a scrape must not wait behind a thousand queued evictions (its
// answer would come after Prometheus gave up), and scrapes must not take tokens from evictions. The grant is
// manifests/clusterrole.yaml's `create` on tokenreviews and subjectaccessreviews.
import type { Credentials } from './credentials.js';
import type { Clock } from '../clock.js';
import { KubeTransport } from './kubeClient.js';
import { createRateLimiter } from './rateLimiter.js';

/** Answers are cached (10 s per token and per user), so a few reviews per second cover many scrapers. */
const REVIEW_QPS = 5;
const REVIEW_BURST = 10;
const REVIEW_TIMEOUT_MS = 4_000;

/** The two review calls, as /metrics authentication (src/serving/delegatingAuth.ts) sends them. */
export interface AuthReviewApi {
  createTokenReview(p: { body: unknown }): Promise<unknown>;
  createSubjectAccessReview(p: { body: unknown }): Promise<unknown>;
}

export function authReviewApi(t: KubeTransport): AuthReviewApi {
  return {
    createTokenReview: (p: { body: unknown }) =>
      t.json({ method: 'POST', path: '/apis/authentication.k8s.io/v1/tokenreviews', body: p.body }),
    createSubjectAccessReview: (p: { body: unknown }) =>
      t.json({ method: 'POST', path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', body: p.body }),
  };
}

export interface AuthReviewClients extends AuthReviewApi {
  close(): void;
}

export function createAuthReviewClients(
  credentials: Credentials,
  opts: { readonly clock: Clock; readonly userAgent: string },
): AuthReviewClients {
  const transport = new KubeTransport(credentials, {
    limiter: createRateLimiter({ qps: REVIEW_QPS, burst: REVIEW_BURST, clock: opts.clock }),
    clock: opts.clock,
    userAgent: opts.userAgent,
    maxSockets: 4,
    // Shorter than the check's own deadline (delegatingAuth.ts, 5 s), itself half a scrape's timeout: a review the
    // API server is slow to answer is cancelled, not left holding a socket.
    requestTimeoutMs: REVIEW_TIMEOUT_MS,
  });
  return { ...authReviewApi(transport), close: () => transport.close() };
}
