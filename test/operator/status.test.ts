// RebalancePolicy.status as built from the operator's state: conditions, their transition times, the run fields.
import { describe, expect, it } from 'vitest';
import { buildStatus, type StatusInput } from '../../src/operator/status.js';

const T0 = Date.parse('2026-03-01T10:00:00Z');

function input(over: Partial<StatusInput> = {}): StatusInput {
  return {
    generation: 3,
    now: T0,
    previous: [],
    invalid: undefined,
    suspended: false,
    schedule: '*/5 * * * *',
    mode: 'Evict',
    degraded: undefined,
    lastRunTime: undefined,
    lastSuccessfulRunTime: undefined,
    lastPlan: undefined,
    totals: { evicted: 0, failed: 0 },
    ...over,
  };
}

function conditions(status: ReturnType<typeof buildStatus>): Record<string, string> {
  return Object.fromEntries(status.conditions.map((c) => [c.type, `${c.status}/${c.reason}`]));
}

describe('policy status', () => {
  it.each([
    [
      'a valid policy is Ready',
      input(),
      {
        Ready: 'True/Ready',
        Degraded: 'False/AsExpected',
        Invalid: 'False/Valid',
        Suspended: 'False/NotSuspended',
      },
    ],
    [
      'an invalid spec is Invalid and not Ready',
      input({ invalid: 'spec.mode: must be one of Evict, DryRun' }),
      {
        Ready: 'False/Invalid',
        Degraded: 'False/AsExpected',
        Invalid: 'True/InvalidSpec',
        Suspended: 'False/NotSuspended',
      },
    ],
    [
      'a suspended policy is Suspended and not Ready',
      input({ suspended: true }),
      { Ready: 'False/Suspended', Degraded: 'False/AsExpected', Invalid: 'False/Valid', Suspended: 'True/Suspended' },
    ],
    [
      'a paused policy is Degraded and not Ready',
      input({ degraded: { reason: 'ReplacementPending', message: 'x' } }),
      {
        Ready: 'False/Degraded',
        Degraded: 'True/ReplacementPending',
        Invalid: 'False/Valid',
        Suspended: 'False/NotSuspended',
      },
    ],
  ])('%s', (_name, given, expected) => {
    expect(conditions(buildStatus(given))).toEqual(expected);
  });

  it('carries observedGeneration everywhere and the run fields as given', () => {
    const status = buildStatus(
      input({
        lastRunTime: '2026-03-01T09:55:00Z',
        lastSuccessfulRunTime: '2026-03-01T09:55:02Z',
        lastPlan: { evictions: 2, skipped: 1, violations: 0, maxSkewObserved: 3, skippedReasons: [] },
        totals: { evicted: 12, failed: 1 },
      }),
    );
    expect(status).toMatchObject({
      observedGeneration: 3,
      lastRunTime: '2026-03-01T09:55:00Z',
      lastSuccessfulRunTime: '2026-03-01T09:55:02Z',
      lastPlan: { evictions: 2, skipped: 1, violations: 0, maxSkewObserved: 3, skippedReasons: [] },
      totals: { evicted: 12, failed: 1 },
    });
    expect(status.conditions.every((c) => c.observedGeneration === 3)).toBe(true);
  });

  it('keeps lastTransitionTime while a condition keeps its status, and moves it when the status flips', () => {
    const first = buildStatus(input());
    const later = buildStatus(input({ now: T0 + 60_000, previous: first.conditions }));
    expect(later.conditions.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-03-01T10:00:00Z');
    const flipped = buildStatus(input({ now: T0 + 120_000, previous: later.conditions, suspended: true }));
    expect(flipped.conditions.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-03-01T10:02:00Z');
    expect(flipped.conditions.find((c) => c.type === 'Invalid')?.lastTransitionTime).toBe('2026-03-01T10:00:00Z');
  });
});
