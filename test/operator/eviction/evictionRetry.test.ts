// One eviction's retries (src/operator/eviction/evictionRetry.ts) on a manual clock: a server's Retry-After is capped
// at the backoff's ceiling and gets the same jitter as the backoff, so evictions refused together by one throttle do
// not all come back at the same instant, and an hour-long Retry-After does not stall the run for an hour.
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/kube/kubeClient.js';
import { RetryingEvictions } from '../../../src/operator/eviction/evictionRetry.js';
import type { Evictor } from '../../../src/operator/eviction/evictor.js';
import { RunHalt } from '../../../src/operator/eviction/runHalt.js';
import type { PodInfo } from '../../../src/model/types.js';
import { captureLogger, ManualClock } from '../fakes.js';

function sender(clock: ManualClock, answers: Array<Error | 'ok'>, random: () => number) {
  const calls: number[] = [];
  const evictor: Evictor = {
    evict: () => {
      calls.push(clock.now());
      const next = answers.shift() ?? 'ok';
      return next === 'ok' ? Promise.resolve() : Promise.reject(next);
    },
  };
  const retrying = new RetryingEvictions({
    evictor,
    clock,
    retry: { initialMs: 500, maxMs: 10_000, maxAttempts: 3, maxRetriesPerRun: 5, random },
    isLeader: () => true,
    gateClosed: () => undefined,
    dryRun: false,
    halt: new RunHalt(new AbortController().signal, undefined, () => undefined),
    log: captureLogger().logger,
  });
  return { retrying, calls };
}

/** The fields the call reads. */
const pod = (name: string): PodInfo => ({ namespace: 'default', name, uid: `uid-${name}` }) as PodInfo;

const unavailable = (retryAfterSeconds: number): ApiError =>
  new ApiError(
    503,
    JSON.stringify({ kind: 'Status', code: 503, message: 'unavailable' }),
    { 'retry-after': String(retryAfterSeconds) },
    'POST eviction',
  );

describe('eviction retries', () => {
  it('cap a Retry-After at the backoff ceiling and add jitter to it', async () => {
    const clock = new ManualClock();
    const { retrying, calls } = sender(clock, [unavailable(3600), 'ok'], () => 0.5);
    const start = clock.now();
    const sent = retrying.send(pod('p1'));
    await clock.advance(10_999);
    expect(calls).toHaveLength(1);
    await clock.advance(1);
    expect(await sent).toBe('ok');
    // 10 s ceiling × (1 + 0.2 × 0.5)
    expect(calls.map((t) => t - start)).toEqual([0, 11_000]);
  });

  it('spread the retries of evictions throttled together', async () => {
    const clock = new ManualClock();
    const randoms = [0, 0.5, 1];
    const runs = randoms.map((r) => sender(clock, [unavailable(2), 'ok'], () => r));
    const start = clock.now();
    const sends = runs.map(({ retrying }, i) => retrying.send(pod(`p${i}`)));
    await clock.advance(5_000);
    await Promise.all(sends);
    expect(runs.map(({ calls }) => calls[1]! - start)).toEqual([2_000, 2_200, 2_400]);
  });
});
