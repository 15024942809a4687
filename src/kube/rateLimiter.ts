// The client-side rate limiter every API request goes through (lists, watches, evictions, status, events, leases):
// a token bucket of `qps` tokens per second holding at most `burst`, as client-go's flowcontrol limiter.
//
// Waiters queue in arrival order; a token is handed out only when it exists at the moment of the grant. So even
// when the process stalls (a long plan, a GC pause), what goes out afterwards is at most the `burst` the bucket
// refilled, never the backlog of everything that became due during the stall: in any interval of length T at most
// burst + qps × T requests are granted.
//
// Two priorities share the one bucket. A 'low' request (an Event, a status write: the record of what happened) is
// granted at once only from a full bucket and when no 'normal' request waits, so it takes no token an eviction or a
// list could use (a full bucket would discard its next refill anyway). Measured on the 10,000-pod bench, a reserve
// of half the burst was not enough: every Event sent during a run cost the evictions a token (bench/RESULTS.md,
// issue 22). But a stream of evictions keeps the bucket from ever filling, and the record must still go out within
// seconds: a low request that has waited `lowMaxWaitMs` takes the next token, at most one between two normal grants,
// so an eviction stream is slowed to no less than half the rate while the record catches up, and never waits
// behind more than one Event.
//
// Each wait is timed for the request at the head of the queue: a normal request arriving while the limiter sleeps
// for a low one's full bucket reschedules the wake-up for its own token (it used to sleep out the Event's 2 s).
// Queues are bounded: a request beyond `maxWaiting` is refused (LimiterQueueFullError), not held.
import type { Clock } from '../clock.js';

export interface RateLimiterOptions {
  /** Sustained requests per second; must be > 0. */
  readonly qps: number;
  /** Requests that may be sent back to back after an idle period; must be >= 1. */
  readonly burst: number;
  readonly clock: Clock;
  /** A low request waiting this long takes the next token like a normal one (default 1,000 ms). */
  readonly lowMaxWaitMs?: number;
  /** Requests of one priority that may wait at once (default 10,000); more are refused. */
  readonly maxWaiting?: number;
}

export type RequestPriority = 'normal' | 'low';

export interface RateLimiter {
  /**
   * Resolves when the caller may send one request (or at once when `signal` aborts; no token is used then).
   * Rejects with LimiterQueueFullError when too many requests of that priority wait already.
   */
  acquire(signal?: AbortSignal, priority?: RequestPriority): Promise<void>;
  /** Takes a token now if the request would be granted at once (no one ahead of it, a token there); else nothing. */
  tryAcquire(priority?: RequestPriority): boolean;
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

export class LimiterQueueFullError extends Error {
  readonly code = 'E_LIMITER_QUEUE_FULL' as const;
  constructor(priority: RequestPriority, max: number) {
    super(`${max} ${priority}-priority requests already wait for a rate-limit token; refused`);
    this.name = 'LimiterQueueFullError';
  }
}

interface Waiter {
  readonly resolve: () => void;
  /** When it started waiting (monotonic ms). */
  readonly since: number;
  done: boolean;
  /** Detaches the abort listener (a long-lived signal must not collect one per request). */
  release?: () => void;
}

export const DEFAULT_LOW_MAX_WAIT_MS = 1000;
export const DEFAULT_MAX_WAITING = 10_000;

export function createRateLimiter(opts: RateLimiterOptions): RateLimiter {
  const { qps, burst, clock } = opts;
  if (!(qps > 0) || !Number.isFinite(qps))
    throw new RateLimiterConfigError(`qps must be a positive number (got ${qps})`);
  if (!Number.isInteger(burst) || burst < 1) {
    throw new RateLimiterConfigError(`burst must be an integer >= 1 (got ${burst})`);
  }
  const lowMaxWait = opts.lowMaxWaitMs ?? DEFAULT_LOW_MAX_WAIT_MS;
  const maxWaiting = opts.maxWaiting ?? DEFAULT_MAX_WAITING;
  const msPerToken = 1000 / qps;
  let tokens = burst;
  let last = clock.now();
  let count = 0;
  const queue: Waiter[] = [];
  const lowQueue: Waiter[] = [];
  const live = { normal: 0, low: 0 };
  /** Whether the last grant was an aged low request taken while normal ones waited (the next goes to a normal). */
  let lowJumped = false;
  let timer: { readonly at: number; readonly stop: AbortController } | undefined;

  function refill(now: number): void {
    tokens = Math.min(burst, tokens + (now - last) / msPerToken);
    last = now;
  }

  function grant(from: Waiter[], low: boolean): void {
    const head = from.shift()!;
    tokens -= 1;
    head.done = true;
    head.release?.();
    count++;
    if (low) live.low--;
    else live.normal--;
    head.resolve();
  }

  /** Sleeps until `at` unless an earlier wake-up is already set; a later one is replaced. */
  function wakeAt(at: number, now: number): void {
    if (timer !== undefined && timer.at <= at) return;
    timer?.stop.abort();
    const stop = new AbortController();
    const mine = { at, stop };
    timer = mine;
    void clock.sleep(Math.max(1, Math.ceil(at - now)), stop.signal).then(() => {
      if (timer !== mine) return;
      timer = undefined;
      pump();
    });
  }

  /** Grants what can be granted now; otherwise sleeps until the head of the line can be served. */
  function pump(): void {
    for (;;) {
      while (queue.length > 0 && queue[0]!.done) queue.shift();
      while (lowQueue.length > 0 && lowQueue[0]!.done) lowQueue.shift();
      const normal = queue[0];
      const low = lowQueue[0];
      if (normal === undefined && low === undefined) return;
      const now = clock.now();
      refill(now);
      const lowAged = low !== undefined && now - low.since >= lowMaxWait;
      if (normal !== undefined && !(lowAged && !lowJumped)) {
        if (tokens >= 1) {
          grant(queue, false);
          lowJumped = false;
          continue;
        }
        wakeAt(now + (1 - tokens) * msPerToken, now);
        return;
      }
      // The head is a low request: from a full bucket, or from any token once it has waited long enough.
      const needed = lowAged ? 1 : burst;
      if (tokens >= needed) {
        grant(lowQueue, true);
        lowJumped = normal !== undefined;
        continue;
      }
      const full = now + (needed - tokens) * msPerToken;
      wakeAt(lowAged ? full : Math.min(full, low!.since + lowMaxWait), now);
      return;
    }
  }

  function acquire(signal?: AbortSignal, priority: RequestPriority = 'normal'): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve();
    const isLow = priority === 'low';
    if ((isLow ? live.low : live.normal) >= maxWaiting) {
      return Promise.reject(new LimiterQueueFullError(priority, maxWaiting));
    }
    return new Promise<void>((resolve) => {
      const waiter: Waiter = { resolve, since: clock.now(), done: false };
      (isLow ? lowQueue : queue).push(waiter);
      if (isLow) live.low++;
      else live.normal++;
      if (signal !== undefined) {
        const onAbort = (): void => {
          if (waiter.done) return;
          waiter.done = true;
          if (isLow) live.low--;
          else live.normal--;
          resolve();
          pump();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.release = () => signal.removeEventListener('abort', onAbort);
      }
      pump();
    });
  }

  function tryAcquire(priority: RequestPriority = 'normal'): boolean {
    const isLow = priority === 'low';
    if ((isLow ? live.low : live.normal) >= maxWaiting) return false;
    let granted = false;
    const waiter: Waiter = { resolve: () => (granted = true), since: clock.now(), done: false };
    (isLow ? lowQueue : queue).push(waiter);
    if (isLow) live.low++;
    else live.normal++;
    pump();
    if (!granted) {
      waiter.done = true;
      if (isLow) live.low--;
      else live.normal--;
    }
    return granted;
  }

  return {
    acquire,
    tryAcquire,
    granted: () => count,
    waiting: () => live.normal + live.low,
  };
}
