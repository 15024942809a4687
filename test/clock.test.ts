// The wall clock's sleep: delays beyond setTimeout's 32-bit limit (a maintenance window a year away) are slept in
// steps instead of firing after 1 ms, and an abort still wakes the sleeper at once.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../src/clock.js';

const DAY = 86_400_000;

describe('systemClock.sleep', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it.each([
    ['a second', 1_000],
    ['40 days (past the 24.8-day setTimeout limit)', 40 * DAY],
    ['a year', 365 * DAY],
  ])('sleeps %s, not less', async (_name, ms) => {
    let woke = false;
    void systemClock.sleep(ms).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(ms - 1);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(woke).toBe(true);
  });

  it('wakes at once on abort, also during a long sleep', async () => {
    const abort = new AbortController();
    let woke = false;
    void systemClock.sleep(100 * DAY, abort.signal).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(30 * DAY);
    expect(woke).toBe(false);
    abort.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(woke).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});
