// Maintenance windows as a cycle sees them: open/closed with the end guard, the policy a closed window runs (DryRun),
// the OutsideWindow condition, and the gate that closes before the window's end (manual clock).
import { describe, expect, it } from 'vitest';
import {
  asDryRun,
  createEvictionGate,
  nextBoundary,
  outsideWindowCondition,
  WINDOW_END_GUARD_MS,
  windowNow,
} from '../../src/operator/maintenanceWindows.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { makePolicy } from '../builders.js';
import { ManualClock } from './fakes.js';

const t = (iso: string): number => Date.parse(iso);
const policy = (spec: Record<string, unknown>) =>
  parsePolicy(makePolicy('p', { mode: 'Evict', ...spec }), { file: 'p' });
const nightly = policy({ windows: [{ schedule: '0 22 * * *', duration: '2h' }] });

describe('windowNow', () => {
  it.each([
    ['no windows: always', policy({}), '2026-11-24T12:00:00Z', { kind: 'always' }],
    [
      'inside',
      nightly,
      '2026-11-24T23:00:00Z',
      { kind: 'open', since: t('2026-11-24T22:00:00Z'), until: t('2026-11-25T00:00:00Z') },
    ],
    ['before', nightly, '2026-11-24T21:00:00Z', { kind: 'closed', nextStart: t('2026-11-24T22:00:00Z') }],
    [
      'within the guard before the end: already closed, the next start is tomorrow',
      nightly,
      new Date(t('2026-11-25T00:00:00Z') - WINDOW_END_GUARD_MS / 2).toISOString(),
      { kind: 'closed', nextStart: t('2026-11-25T22:00:00Z') },
    ],
  ])('%s', (_name, p, now, expected) => {
    expect(windowNow(p, t(now))).toEqual(expected);
  });

  it('the next boundary is the guard before the end, or the next start', () => {
    expect(nextBoundary(windowNow(nightly, t('2026-11-24T23:00:00Z')))).toBe(
      t('2026-11-25T00:00:00Z') - WINDOW_END_GUARD_MS,
    );
    expect(nextBoundary(windowNow(nightly, t('2026-11-24T21:00:00Z')))).toBe(t('2026-11-24T22:00:00Z'));
    expect(nextBoundary(windowNow(policy({}), 0))).toBeUndefined();
  });
});

describe('outsideWindowCondition', () => {
  it('is absent without windows', () => {
    expect(outsideWindowCondition(policy({}), { kind: 'always' }, undefined)).toBeUndefined();
  });

  it('is False inside, True outside with the next start in UTC and in the zone', () => {
    const berlin = policy({ windows: [{ schedule: '0 22 * * *', duration: '2h' }], timeZone: 'Europe/Berlin' });
    expect(outsideWindowCondition(berlin, windowNow(berlin, t('2026-11-24T21:30:00Z')), undefined)).toEqual({
      status: false,
      reason: 'InsideWindow',
      message:
        'inside a maintenance window since 2026-11-24T21:00:00Z (2026-11-24 22:00:00 Europe/Berlin), until 2026-11-24T23:00:00Z (2026-11-25 00:00:00 Europe/Berlin)',
    });
    expect(outsideWindowCondition(berlin, windowNow(berlin, t('2026-11-24T12:00:00Z')), undefined)).toEqual({
      status: true,
      reason: 'OutsideWindow',
      message:
        'outside every maintenance window: cycles plan and report as DryRun; the next window opens at 2026-11-24T21:00:00Z (2026-11-24 22:00:00 Europe/Berlin)',
    });
  });

  it('says WindowClosed after a cycle was stopped by the end of its window', () => {
    const closed = windowNow(nightly, t('2026-11-25T00:00:05Z'));
    expect(
      outsideWindowCondition(nightly, closed, {
        at: t('2026-11-24T23:59:59Z'),
        evicted: 2,
        windowEnd: t('2026-11-25T00:00:00Z'),
      }),
    ).toEqual({
      status: true,
      reason: 'WindowClosed',
      message:
        'the maintenance window ended at 2026-11-24T23:59:59Z during a cycle, which stopped evicting after 2 evictions; the next window opens at 2026-11-25T22:00:00Z',
    });
  });
});

describe('asDryRun', () => {
  it('changes the mode only', () => {
    const dry = asDryRun(nightly);
    expect(dry.spec.mode).toBe('DryRun');
    expect({ ...dry.spec, mode: 'Evict' }).toEqual(nightly.spec);
    expect(nightly.spec.mode).toBe('Evict');
  });
});

describe('createEvictionGate', () => {
  it('is open until the guard before the end, then closed, with its signal aborted', async () => {
    const clock = new ManualClock(t('2026-11-24T23:59:50Z'));
    const gate = createEvictionGate(t('2026-11-25T00:00:00Z'), clock, 'UTC');
    expect(gate.closed()).toBeUndefined();
    await clock.advance(10_000 - WINDOW_END_GUARD_MS - 1);
    expect(gate.closed()).toBeUndefined();
    expect(gate.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(gate.closed()).toBe('the maintenance window ends at 2026-11-25T00:00:00Z');
    expect(gate.signal.aborted).toBe(true);
  });

  it('closes only once the wall clock has reached the guard: a timer that wakes early sleeps again', async () => {
    const clock = new ManualClock(t('2026-11-24T23:59:50Z'));
    const gate = createEvictionGate(t('2026-11-25T00:00:00Z'), clock, 'UTC');
    // The wall clock steps back 300 ms after the gate armed its timer: the timer wakes 300 ms early on the wall.
    clock.jumpWall(-300);
    await clock.advance(10_000 - WINDOW_END_GUARD_MS);
    expect(gate.signal.aborted).toBe(false);
    expect(gate.closed()).toBeUndefined();
    await clock.advance(299);
    expect(gate.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(gate.signal.aborted).toBe(true);
    expect(gate.closed()).toBe('the maintenance window ends at 2026-11-25T00:00:00Z');
    expect(windowNow(nightly, clock.wall()).kind).toBe('closed');
  });

  it('dispose stops its timer', async () => {
    const clock = new ManualClock(0);
    const gate = createEvictionGate(60_000, clock, 'UTC');
    expect(clock.waiting).toBe(1);
    gate.dispose();
    await clock.advance(0);
    expect(clock.waiting).toBe(0);
    expect(gate.signal.aborted).toBe(false);
  });
});
