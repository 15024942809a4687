// Capped exponential backoff with injected randomness.
import { describe, expect, it } from 'vitest';
import { Backoff, backoffDelay } from '../../src/kube/backoff.js';

describe('backoff', () => {
  it('doubles from the initial delay up to the cap, jitter on top but never past the cap', () => {
    const opts = { initialMs: 100, maxMs: 1000, random: () => 0 };
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffDelay(a, opts))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(1, { ...opts, random: () => 0.5, jitter: 0.2 })).toBe(220);
    expect(backoffDelay(10, { ...opts, random: () => 0.99 })).toBe(1000);
  });

  it('remembers attempts until reset', () => {
    const b = new Backoff({ initialMs: 10, maxMs: 100, random: () => 0 });
    expect([b.next(), b.next(), b.next()]).toEqual([10, 20, 40]);
    b.reset();
    expect(b.next()).toBe(10);
  });
});
