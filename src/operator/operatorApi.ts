// What createOperator returns: the operator as run.ts, `run --once`, the HTTPS serving and the tests use it. Apart
// from operator.ts, which assembles it, so that its users read the contract without the wiring.
import type { AuthReviewClients } from '../kube/authReviews.js';
import type { RateLimiter } from '../kube/rateLimiter.js';
import type { RebalancerMetrics } from '../metrics/metrics.js';
import type { ClusterCache } from './clusterCache.js';
import type { RequestHandler } from './httpServer.js';

/** How one policy's cycle of `run --once` ended. */
export interface OnceResult {
  readonly policy: string;
  /** Why it failed (an invalid spec, a failed or interrupted cycle, a Degraded pause); undefined when it succeeded. */
  readonly failure: string | undefined;
  readonly skipped?: 'suspended';
}

export interface Operator {
  readonly cache: ClusterCache;
  readonly metrics: RebalancerMetrics;
  readonly limiter: RateLimiter;
  /** /healthz, /readyz, /metrics. */
  readonly httpHandler: RequestHandler;
  /** /healthz and /readyz alone (--health-addr). */
  readonly probeHandler: RequestHandler;
  /** /metrics alone (--metrics-addr; run.ts puts it behind authentication unless --metrics-secure=false). */
  readonly metricsHandler: RequestHandler;
  /** TokenReview and SubjectAccessReview through the operator's API transport (authReviews.ts). */
  readonly authReviews: AuthReviewClients;
  /** Starts the informers and the leader election. */
  start(): void;
  /** Resolves when every cache has synced. */
  waitForSync(): Promise<void>;
  /** Resolves, with the one-line message naming it, when a list finds the RebalancePolicy CRD missing. */
  crdMissing(): Promise<string>;
  ready(): boolean;
  isLeader(): boolean;
  /** Runs a cycle of the policy now, as a cron tick would (same leader and overlap rules). */
  tick(policy: string): Promise<void>;
  /** The schedule a policy currently runs on. */
  scheduleOf(policy: string): string | undefined;
  /** One cycle of every policy in turn, by name (`run --once`; build the operator with `once: true`). */
  runAllOnce(): Promise<OnceResult[]>;
  /**
   * Stops: no new cycle or eviction starts, the eviction in flight completes, running cycles end and write their
   * status, Events in flight are flushed, the Lease is released (unless `releaseLease: false`, which simulates a
   * crash for tests), informers stop.
   */
  shutdown(opts?: { releaseLease?: boolean; graceMs?: number }): Promise<void>;
}
