// Sending one eviction: retried on retryable answers (evictionErrors.ts) with capped exponential backoff, at most
// `maxAttempts` per eviction and `maxRetriesPerRun` across one run; leadership and the maintenance window are checked
// immediately before every attempt (and leadership again by the HTTP layer when the request is sent: kubeClient.ts).
import type { Logger } from 'pino';
import type { PodInfo } from '../../model/types.js';
import { backoffDelay } from '../../kube/backoff.js';
import type { Clock } from '../../clock.js';
import { classifyEvictionError, type EvictionError } from '../../kube/evictionErrors.js';
import type { Evictor } from './evictor.js';
import { FencedError } from '../../kube/kubeClient.js';
import type { RunHalt } from './runHalt.js';

export interface RetryOptions {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Attempts per eviction, the first included. */
  readonly maxAttempts: number;
  /** Retries (attempts after the first) in one run, across all evictions. */
  readonly maxRetriesPerRun: number;
  readonly random?: () => number;
}

const RETRY_JITTER = 0.2;

export const DEFAULT_RETRY: RetryOptions = { initialMs: 500, maxMs: 10_000, maxAttempts: 4, maxRetriesPerRun: 50 };

export interface EvictionSender {
  readonly evictor: Evictor;
  readonly clock: Clock;
  readonly retry: RetryOptions;
  readonly isLeader: () => boolean;
  /** Why evictions must stop now (the maintenance window closed), or undefined. */
  readonly gateClosed: () => string | undefined;
  readonly dryRun: boolean;
  /** The policy's eviction.gracePeriodSeconds, sent with each Eviction; undefined: the pod's own. */
  readonly gracePeriodSeconds?: number;
  readonly halt: RunHalt;
  readonly log: Logger;
}

/** One run's eviction calls, sharing the run's retry allowance. */
export class RetryingEvictions {
  private retriesLeft: number;

  constructor(private readonly s: EvictionSender) {
    this.retriesLeft = s.retry.maxRetriesPerRun;
  }

  /** The call, retried on retryable answers: 'ok', the final error, or 'halted' (nothing more may be sent). */
  async send(pod: PodInfo): Promise<EvictionError | 'ok' | 'halted'> {
    const { retry, halt } = this.s;
    for (let attempt = 0; ; attempt++) {
      if (halt.reason !== undefined) return 'halted';
      if (!this.s.isLeader()) {
        halt.halt('leadership_lost');
        return 'halted';
      }
      if (!this.s.dryRun && this.s.gateClosed() !== undefined) {
        halt.halt('window_closed');
        return 'halted';
      }
      try {
        const grace = this.s.gracePeriodSeconds;
        const target = { namespace: pod.namespace, name: pod.name, uid: pod.uid };
        await this.s.evictor.evict(
          grace === undefined ? target : { ...target, gracePeriodSeconds: grace },
          this.s.dryRun,
        );
        return 'ok';
      } catch (err) {
        if (err instanceof FencedError) {
          halt.halt('leadership_lost');
          return 'halted';
        }
        const error = classifyEvictionError(err, this.s.clock.wall());
        if (!error.retryable || attempt + 1 >= retry.maxAttempts || this.retriesLeft <= 0) return error;
        this.retriesLeft--;
        // The server's Retry-After, capped at the backoff's ceiling, or the backoff; both with jitter, so the
        // evictions a throttle refused together do not come back together.
        const delay =
          error.retryAfterMs !== undefined
            ? Math.min(error.retryAfterMs, retry.maxMs) * (1 + RETRY_JITTER * (retry.random ?? Math.random)())
            : backoffDelay(attempt, { ...retry, jitter: RETRY_JITTER });
        this.s.log.info(
          {
            pod: `${pod.namespace}/${pod.name}`,
            code: error.code,
            status: error.status,
            err: error.message,
            retryInMs: Math.round(delay),
          },
          'eviction failed, retrying',
        );
        await this.s.clock.sleep(delay, halt.signal);
      }
    }
  }
}
