// The token bucket: burst, sustained rate, FIFO order, priorities (an Event never holds an eviction; Events still go
// out while evictions stream), bounded queues, aborts; and, as a property over random
// arrival patterns, that no interval of length T ever sees more than burst + qps × T grants.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createRateLimiter,
  DEFAULT_LOW_MAX_WAIT_MS,
  LimiterQueueFullError,
  RateLimiterConfigError,
} from '../../src/kube/rateLimiter.js';
import { ManualClock } from '../operator/fakes.js';

async function grantTimes(clock: ManualClock, qps: number, burst: number, arrivals: number[]): Promise<number[]> {
  const limiter = createRateLimiter({ qps, burst, clock });
  const start = clock.now();
  const times: number[] = [];
  const pending: Promise<void>[] = [];
  let elapsed = 0;
  for (const at of [...arrivals].sort((a, b) => a - b)) {
    await clock.advance(at - elapsed);
    elapsed = at;
    pending.push(limiter.acquire().then(() => void times.push(clock.now() - start)));
  }
  await clock.advance(100_000);
  await Promise.all(pending);
  return times;
}

describe('rate limiter', () => {
  it('lets a burst through at once, then one request per 1/qps', async () => {
    const clock = new ManualClock();
    const times = await grantTimes(clock, 10, 3, [0, 0, 0, 0, 0, 0]);
    expect(times).toEqual([0, 0, 0, 100, 200, 300]);
  });

  it('refills while idle, never beyond the burst', async () => {
    const clock = new ManualClock();
    const times = await grantTimes(clock, 10, 2, [0, 0, 5000, 5000, 5000]);
    expect(times).toEqual([0, 0, 5000, 5000, 5100]);
  });

  it('serves waiters in arrival order', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 1, clock });
    const order: number[] = [];
    const all = [1, 2, 3, 4].map((i) => limiter.acquire().then(() => void order.push(i)));
    await clock.advance(1000);
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('grants a low-priority request (an Event) only when no normal request waits', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 100, burst: 1, clock });
    const order: string[] = [];
    const all = [
      limiter.acquire(undefined, 'low').then(() => void order.push('event-1')),
      limiter.acquire().then(() => void order.push('evict-1')),
      limiter.acquire(undefined, 'low').then(() => void order.push('event-2')),
      limiter.acquire().then(() => void order.push('evict-2')),
    ];
    await clock.advance(1000);
    await Promise.all(all);
    // The first low request took the one token available at once; after that, normal requests go first.
    expect(order).toEqual(['event-1', 'evict-1', 'evict-2', 'event-2']);
    expect(limiter.granted()).toBe(4);
  });

  it('a low-priority request takes a token only from a full bucket, so the normal ones find the whole burst', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 10, burst: 4, clock });
    const times: Array<[string, number]> = [];
    const start = clock.now();
    const events = [1, 2, 3].map((i) =>
      limiter.acquire(undefined, 'low').then(() => void times.push([`event-${i}`, clock.now() - start])),
    );
    // One Event from the full bucket (4 → 3); the next waits for it to be full again.
    await clock.advance(0);
    expect(times).toEqual([['event-1', 0]]);
    // Four evictions due at once find three tokens at once and the fourth after one refill (100 ms).
    const evictions = [1, 2, 3, 4].map((i) =>
      limiter.acquire().then(() => void times.push([`evict-${i}`, clock.now() - start])),
    );
    await clock.advance(0);
    expect(times.slice(1)).toEqual([
      ['evict-1', 0],
      ['evict-2', 0],
      ['evict-3', 0],
    ]);
    // From then on an Event waits until the bucket holds all 4 tokens again: 400 ms after the empty bucket at 100 ms,
    // then one refill (100 ms) per Event after it.
    await clock.advance(1000);
    await Promise.all([...events, ...evictions]);
    expect(times.slice(4)).toEqual([
      ['evict-4', 100],
      ['event-2', 500],
      ['event-3', 600],
    ]);
  });

  it('an eviction arriving while the limiter sleeps for an Event is granted at its own token time', async () => {
    // 20 qps, burst 40: an Event waits up to 2 s for a full bucket. The eviction that comes 10 ms later needs one
    // token, refilled 50 ms after the bucket emptied; it must not sleep out the Event's wait.
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 20, burst: 40, clock });
    const start = clock.now();
    for (let i = 0; i < 40; i++) await limiter.acquire();
    const event = limiter.acquire(undefined, 'low');
    await clock.advance(10);
    let evictedAt: number | undefined;
    const eviction = limiter.acquire().then(() => void (evictedAt = clock.now() - start));
    await clock.advance(40);
    await eviction;
    expect(evictedAt).toBe(50);
    expect(evictedAt! - 10).toBeLessThanOrEqual(1000 / 20);
    await clock.advance(10_000);
    await event;
  });

  it('during a stream of 100 evictions at 5 qps, evictions stay at most 2/qps apart and Events go out', async () => {
    const clock = new ManualClock();
    const qps = 5;
    const limiter = createRateLimiter({ qps, burst: 10, clock });
    const start = clock.now();
    const evicted: number[] = [];
    const recorded: number[] = [];
    const events: Promise<void>[] = [];
    // The executor keeps evictions due back to back; each one it sends is recorded by an Event.
    const stream = (async () => {
      for (let i = 0; i < 100; i++) {
        await limiter.acquire();
        evicted.push(clock.now() - start);
        events.push(limiter.acquire(undefined, 'low').then(() => void recorded.push(clock.now() - start)));
      }
    })();
    for (let t = 0; t < 120_000 && evicted.length < 100; t += 50) await clock.advance(50);
    await stream;
    const gaps = evicted.slice(1).map((t, i) => t - evicted[i]!);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(2 * (1000 / qps) + 1);
    const last = evicted[evicted.length - 1]!;
    const duringStream = recorded.filter((t) => t < last);
    expect(duringStream.length).toBeGreaterThan(20);
    expect(recorded[0]).toBeLessThanOrEqual(DEFAULT_LOW_MAX_WAIT_MS + 2 * (1000 / qps));
    await clock.advance(120_000);
    await Promise.all(events);
    expect(recorded).toHaveLength(100);
  });

  it('refuses a request beyond the queue bound of its priority, and keeps serving the others', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 1, burst: 1, clock, maxWaiting: 2 });
    await limiter.acquire();
    const waiting = [limiter.acquire(), limiter.acquire()];
    await expect(limiter.acquire()).rejects.toBeInstanceOf(LimiterQueueFullError);
    const low = limiter.acquire(undefined, 'low');
    await clock.advance(10_000);
    await Promise.all([...waiting, low]);
    expect(limiter.granted()).toBe(4);
  });

  it('an aborted wait resolves at once and uses no token', async () => {
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 1, burst: 1, clock });
    await limiter.acquire();
    const abort = new AbortController();
    const aborted = limiter.acquire(abort.signal);
    const next = limiter.acquire();
    abort.abort();
    await aborted;
    expect(limiter.granted()).toBe(1);
    await clock.advance(1000);
    await next;
    expect(limiter.granted()).toBe(2);
  });

  it('rejects a zero rate or a fractional burst', () => {
    const clock = new ManualClock();
    expect(() => createRateLimiter({ qps: 0, burst: 1, clock })).toThrow(RateLimiterConfigError);
    expect(() => createRateLimiter({ qps: 5, burst: 1.5, clock })).toThrow(RateLimiterConfigError);
  });

  it('never grants more than burst + qps × T in any interval T (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 60 }),
        async (qps, burst, arrivals) => {
          const times = await grantTimes(new ManualClock(), qps, burst, arrivals);
          expect(times).toHaveLength(arrivals.length);
          for (const from of times) {
            for (const to of times) {
              if (to < from) continue;
              const inside = times.filter((t) => t >= from && t <= to).length;
              expect(inside).toBeLessThanOrEqual(burst + Math.floor((qps * (to - from)) / 1000));
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it.each([
    ['forward', 3_600_000],
    ['backward', -3_600_000],
  ])('a wall-clock step of 1 h %s changes no grant time', async (_, step) => {
    const arrivals = [0, 0, 0, 0, 0, 0, 0, 0, 150, 150, 900];
    const steady = await grantTimes(new ManualClock(), 10, 3, arrivals);
    const clock = new ManualClock();
    const limiter = createRateLimiter({ qps: 10, burst: 3, clock });
    const times: number[] = [];
    const pending: Promise<void>[] = [];
    let elapsed = 0;
    for (const at of arrivals) {
      await clock.advance(at - elapsed);
      elapsed = at;
      clock.jumpWall(step);
      pending.push(limiter.acquire().then(() => void times.push(clock.now())));
    }
    await clock.advance(100_000);
    await Promise.all(pending);
    const start = Date.parse('2026-01-01T00:00:00Z');
    expect(times.map((t) => t - start)).toEqual(steady);
  });
});
