// The client-side rate limiter every API request goes through (lists, watches, evictions, status, events, leases):
// a token bucket of `qps` tokens per second holding at most `burst`, as client-go's flowcontrol limiter.
//
// Waiters queue in arrival order; a token is handed out only when it exists at the moment of the grant. So even
// when the process stalls (a long plan, a GC pause), what goes out afterwards is at most the `burst` the bucket
// refilled, never the backlog of everything that became due during the stall: in any interval of length T at most
// burst + qps × T requests are granted.
// pauseUntil() holds every request until an instant (the server's Retry-After on a throttling 429), including those
// already waiting.
// Two priorities share the one bucket: a 'low' request (an Event) is granted only when no 'normal' request is
// waiting and the bucket is full, so recording what happened never takes a token an eviction, a status write or a
// Lease renewal could use: a full bucket would discard its next refill anyway. Events go out in the gaps longer than
// the bucket takes to fill (pacing leaves some) and after a busy run; evictions that become due together
// (replacements turning Ready at once) find the whole burst less at most one token. Measured on the 10,000-pod
// real-control-plane bench, a reserve of half the burst was not enough: every Event sent during the run cost the
// evictions one token, 1/qps seconds each (bench/RESULTS.md, issue 22).
import type { Clock } from '../clock.js';

export interface RateLimiterOptions {
  /** Sustained requests per second; must be > 0. */
  readonly qps: number;
  /** Requests that may be sent back to back after an idle period; must be >= 1. */
  readonly burst: number;
  readonly clock: Clock;
}

export type RequestPriority = 'normal' | 'low';

export interface RateLimiter {
  /** Resolves when the caller may send one request (or at once when `signal` aborts; no token is used then). */
  acquire(signal?: AbortSignal, priority?: RequestPriority): Promise<void>;
  /** No request starts before `instant` (epoch ms). */
  pauseUntil(instant: number): void;
  /** Requests granted so far (for tests and debugging). */
  granted(): number;
  /** Requests waiting for a token. */
  waiting(): number;
}

export class RateLimiterConfigError extends Error {
  readonly code = 'E_RATE_LIMIT_CONFIG' as const;
  constructor(message: string) {
    super(message);
    this.name = 'RateLimiterConfigError';
  }
}

interface Waiter {
  readonly resolve: () => void;
  done: boolean;
  /** Detaches the abort listener (a long-lived signal must not collect one per request). */
  release?: () => void;
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
  const queue: Waiter[] = [];
  const lowQueue: Waiter[] = [];
  let timer: AbortController | undefined;

  function refill(now: number): void {
    tokens = Math.min(burst, tokens + (now - last) / msPerToken);
    last = now;
  }

  /** Grants what can be granted now; otherwise sleeps until the next token (or the end of a pause). */
  function pump(): void {
    for (;;) {
      while (queue.length > 0 && queue[0]!.done) queue.shift();
      while (lowQueue.length > 0 && lowQueue[0]!.done) lowQueue.shift();
      const from = queue.length > 0 ? queue : lowQueue;
      const head = from[0];
      if (head === undefined) return;
      // A low request needs a full bucket (taking one token leaves burst − 1, refilled in 1/qps).
      const needed = from === lowQueue ? burst : 1;
      const now = clock.now();
      refill(now);
      if (now >= notBefore && tokens >= needed) {
        tokens -= 1;
        from.shift();
        head.done = true;
        head.release?.();
        count++;
        head.resolve();
        continue;
      }
      if (timer !== undefined) return;
      const wait = Math.max(notBefore - now, (needed - tokens) * msPerToken, 0);
      const sleeping = new AbortController();
      timer = sleeping;
      void clock.sleep(Math.max(1, Math.ceil(wait)), sleeping.signal).then(() => {
        if (timer === sleeping) timer = undefined;
        pump();
      });
      return;
    }
  }

  function acquire(signal?: AbortSignal, priority: RequestPriority = 'normal'): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = { resolve, done: false };
      (priority === 'low' ? lowQueue : queue).push(waiter);
      if (signal !== undefined) {
        const onAbort = (): void => {
          if (waiter.done) return;
          waiter.done = true;
          resolve();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.release = () => signal.removeEventListener('abort', onAbort);
      }
      pump();
    });
  }

  return {
    acquire,
    pauseUntil: (instant) => {
      if (instant <= notBefore) return;
      notBefore = instant;
      // A sleeper scheduled for an earlier token must not grant during the pause: it re-checks when it wakes.
    },
    granted: () => count,
    waiting: () => queue.filter((w) => !w.done).length + lowQueue.filter((w) => !w.done).length,
  };
}
