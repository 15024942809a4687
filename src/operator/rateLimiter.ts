// The client-side rate limiter every API request goes through (lists, watches, evictions, status, events, leases):
// a token bucket of `qps` tokens per second holding at most `burst`, as client-go's flowcontrol limiter.
//
// acquire() reserves a token at once (the bucket may go negative) and then sleeps until that reservation matures,
// so callers are served strictly in arrival order and the long-run rate is exactly `qps` without a timer loop.
// pauseUntil() holds every request until an instant (the server's Retry-After on a throttling 429): requests already
// waiting for a token wait for the pause too.
import type { Clock } from './clock.js';

export interface RateLimiterOptions {
  /** Sustained requests per second; must be > 0. */
  readonly qps: number;
  /** Requests that may be sent back to back after an idle period; must be >= 1. */
  readonly burst: number;
  readonly clock: Clock;
}

export interface RateLimiter {
  /** Resolves when the caller may send one request (or at once when `signal` aborts). */
  acquire(signal?: AbortSignal): Promise<void>;
  /** No request starts before `instant` (epoch ms). */
  pauseUntil(instant: number): void;
  /** Requests granted so far (for tests and debugging). */
  granted(): number;
}

export class RateLimiterConfigError extends Error {
  readonly code = 'E_RATE_LIMIT_CONFIG' as const;
  constructor(message: string) {
    super(message);
    this.name = 'RateLimiterConfigError';
  }
}

export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  const { qps, burst, clock } = opts;
  if (!(qps > 0) || !Number.isFinite(qps))
    throw new RateLimiterConfigError(`qps must be a positive number (got ${qps})`);
  if (!Number.isInteger(burst) || burst < 1) {
    throw new RateLimiterConfigError(`burst must be an integer >= 1 (got ${burst})`);
  }
  const msPerToken = 1000 / qps;
  let tokens = burst;
  let last = clock.now();
  let notBefore = 0;
  let count = 0;

  function reserve(): number {
    const now = clock.now();
    tokens = Math.min(burst, tokens + (now - last) / msPerToken);
    last = now;
    tokens -= 1;
    // The reservation matures when the deficit has been refilled.
    return tokens >= 0 ? now : now + -tokens * msPerToken;
  }

  async function acquire(signal?: AbortSignal): Promise<void> {
    const ready = reserve();
    for (;;) {
      if (signal?.aborted === true) return;
      const until = Math.max(ready, notBefore);
      const wait = until - clock.now();
      if (wait <= 0) break;
      await clock.sleep(wait, signal);
    }
    count++;
  }

  return {
    acquire,
    pauseUntil: (instant) => {
      notBefore = Math.max(notBefore, instant);
    },
    granted: () => count,
  };
}
