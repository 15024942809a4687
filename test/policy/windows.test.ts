// Maintenance-window arithmetic: tables of (windows, zone, now) → open since/until, or the next start. Times are
// written as UTC instants; the zone columns show where DST moves the wall clock.
import { describe, expect, it } from 'vitest';
import {
  compileWindows,
  describeInstant,
  timeZoneProblem,
  windowScheduleProblem,
  windowState,
} from '../../src/policy/windows.js';
import { parseDuration } from '../../src/policy/duration.js';

const t = (iso: string): number => Date.parse(iso);
const windows = (zone: string, ...specs: Array<[string, string]>) =>
  compileWindows(
    specs.map(([schedule, duration]) => ({ schedule, durationMs: parseDuration(duration) })),
    zone,
  );

type Row = [name: string, zone: string, specs: Array<[string, string]>, now: string, expected: string];

// expected: "open <since> <until>" or "closed <next start | never>"
const ROWS: Row[] = [
  [
    'weeknight window, inside',
    'UTC',
    [['0 22 * * 1-5', '6h']],
    '2026-11-24T03:00:00Z',
    'open 2026-11-23T22:00:00Z 2026-11-24T04:00:00Z',
  ],
  [
    'weeknight window, after it closed',
    'UTC',
    [['0 22 * * 1-5', '6h']],
    '2026-11-24T05:00:00Z',
    'closed 2026-11-24T22:00:00Z',
  ],
  ['the end is exclusive', 'UTC', [['0 22 * * 1-5', '6h']], '2026-11-24T04:00:00Z', 'closed 2026-11-24T22:00:00Z'],
  [
    'the start is inclusive',
    'UTC',
    [['0 22 * * 1-5', '6h']],
    '2026-11-24T22:00:00Z',
    'open 2026-11-24T22:00:00Z 2026-11-25T04:00:00Z',
  ],
  [
    "Friday's window runs into Saturday",
    'UTC',
    [['0 22 * * 1-5', '6h']],
    '2026-11-28T01:00:00Z',
    'open 2026-11-27T22:00:00Z 2026-11-28T04:00:00Z',
  ],
  ['weekend: next is Monday', 'UTC', [['0 22 * * 1-5', '6h']], '2026-11-28T05:00:00Z', 'closed 2026-11-30T22:00:00Z'],
  [
    'in the zone: 22:00 Berlin is 21:00Z in winter',
    'Europe/Berlin',
    [['0 22 * * *', '1h']],
    '2026-11-24T21:30:00Z',
    'open 2026-11-24T21:00:00Z 2026-11-24T22:00:00Z',
  ],
  [
    'in the zone: 22:00 Berlin is 20:00Z in summer',
    'Europe/Berlin',
    [['0 22 * * *', '1h']],
    '2026-07-01T20:30:00Z',
    'open 2026-07-01T20:00:00Z 2026-07-01T21:00:00Z',
  ],
  [
    'spring forward: 02:30 does not exist, opens at 03:00 CEST',
    'Europe/Berlin',
    [['30 2 * * *', '1h']],
    '2026-03-29T00:30:00Z',
    'closed 2026-03-29T01:00:00Z',
  ],
  [
    'spring forward: the day before is 02:30 CET',
    'Europe/Berlin',
    [['30 2 * * *', '1h']],
    '2026-03-28T00:00:00Z',
    'closed 2026-03-28T01:30:00Z',
  ],
  [
    'fall back: 02:30 happens twice, opens once (the first)',
    'Europe/Berlin',
    [['30 2 * * *', '30m']],
    '2026-10-25T00:00:00Z',
    'closed 2026-10-25T00:30:00Z',
  ],
  [
    'fall back: not again in the repeated hour',
    'Europe/Berlin',
    [['30 2 * * *', '30m']],
    '2026-10-25T01:40:00Z',
    'closed 2026-10-26T01:30:00Z',
  ],
  [
    'duration is elapsed time across a DST change',
    'Europe/Berlin',
    [['0 0 * * *', '6h']],
    '2026-03-29T04:59:00Z',
    'open 2026-03-28T23:00:00Z 2026-03-29T05:00:00Z',
  ],
  [
    'New York weekend window (60h from Friday 22:00 EST)',
    'America/New_York',
    [['0 22 * * 5', '60h']],
    '2026-11-29T12:00:00Z',
    'open 2026-11-28T03:00:00Z 2026-11-30T15:00:00Z',
  ],
  [
    'touching windows form one period',
    'UTC',
    [['0 0-3 * * *', '1h']],
    '2026-11-24T01:30:00Z',
    'open 2026-11-24T01:00:00Z 2026-11-24T04:00:00Z',
  ],
  [
    'every start before now counts for the end, not only the first (found by the property test)',
    'UTC',
    [['0 8-12 * * *', '5h']],
    '2026-11-24T12:30:00Z',
    'open 2026-11-24T08:00:00Z 2026-11-24T17:00:00Z',
  ],
  [
    'overlapping windows of two schedules',
    'UTC',
    [
      ['0 1 * * *', '2h'],
      ['0 2 * * *', '3h'],
    ],
    '2026-11-24T01:30:00Z',
    'open 2026-11-24T01:00:00Z 2026-11-24T05:00:00Z',
  ],
  [
    'two schedules: the earliest next start',
    'UTC',
    [
      ['0 22 * * *', '1h'],
      ['0 6 * * *', '1h'],
    ],
    '2026-11-24T05:00:00Z',
    'closed 2026-11-24T06:00:00Z',
  ],
  [
    'seconds field',
    'UTC',
    [['*/30 * * * * *', '10s']],
    '2026-11-24T12:00:05Z',
    'open 2026-11-24T12:00:00Z 2026-11-24T12:00:10Z',
  ],
  [
    'seconds field, between windows',
    'UTC',
    [['*/30 * * * * *', '10s']],
    '2026-11-24T12:00:15Z',
    'closed 2026-11-24T12:00:30Z',
  ],
  [
    'last day of the month (L)',
    'UTC',
    [['0 0 L * *', '24h']],
    '2026-02-28T12:00:00Z',
    'open 2026-02-28T00:00:00Z 2026-03-01T00:00:00Z',
  ],
  ['second Sunday (0#2)', 'UTC', [['0 0 * * 0#2', '1h']], '2026-11-01T00:00:00Z', 'closed 2026-11-08T00:00:00Z'],
  [
    'day of month and weekday both set: either matches',
    'UTC',
    [['0 0 13 * 5', '1h']],
    '2026-11-07T00:00:00Z',
    'closed 2026-11-13T00:00:00Z',
  ],
  [
    'day of month and weekday both set: a Friday',
    'UTC',
    [['0 0 13 * 5', '1h']],
    '2026-11-14T00:00:00Z',
    'closed 2026-11-20T00:00:00Z',
  ],
  [
    'leap days only: the next is in 2028',
    'UTC',
    [['0 0 29 2 *', '1h']],
    '2026-11-24T00:00:00Z',
    'closed 2028-02-29T00:00:00Z',
  ],
];

function describeState(state: ReturnType<typeof windowState>): string {
  const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
  if (state.open) return `open ${iso(state.since)} ${iso(state.until)}`;
  return `closed ${state.nextStart === undefined ? 'never' : iso(state.nextStart)}`;
}

describe('windowState', () => {
  it.each(ROWS)('%s', (_name, zone, specs, now, expected) => {
    expect(describeState(windowState(windows(zone, ...specs), t(now)))).toBe(expected);
  });

  it('is open exactly on [start, start + duration) around a boundary, to the millisecond', () => {
    const ws = windows('UTC', ['0 22 * * *', '90m']);
    expect(windowState(ws, t('2026-11-24T21:59:59.999Z')).open).toBe(false);
    expect(windowState(ws, t('2026-11-24T22:00:00.000Z')).open).toBe(true);
    expect(windowState(ws, t('2026-11-24T23:29:59.999Z')).open).toBe(true);
    expect(windowState(ws, t('2026-11-24T23:30:00.000Z')).open).toBe(false);
  });
});

describe('windows that never close', () => {
  it('hourly one-hour windows are one open period; its end is reported a bounded 1,000 starts ahead', () => {
    const state = windowState(windows('UTC', ['0 * * * *', '1h']), t('2026-11-24T12:30:00Z'));
    expect(state).toEqual({
      open: true,
      since: t('2026-11-24T12:00:00Z'),
      until: t('2026-11-24T12:00:00Z') + 1_001 * 3_600_000,
    });
  });
});

describe('window inputs', () => {
  it.each([
    ['UTC', undefined],
    ['Europe/Berlin', undefined],
    ['America/Argentina/Buenos_Aires', undefined],
    ['Etc/GMT+2', undefined],
    ['Mars/Olympus_Mons', 'not a known IANA time zone'],
    ['Central European Time', 'not an IANA time zone name'],
    ['', 'not an IANA time zone name'],
  ])('time zone %j', (zone, problem) => {
    const found = timeZoneProblem(zone);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it.each([
    ['0 22 * * 1-5', undefined],
    ['0 0 L * *', undefined],
    ['0 0 * * 5#2', undefined],
    ['0 0 15W * *', 'not supported in a window'],
  ])('schedule %j', (schedule, problem) => {
    const found = windowScheduleProblem(schedule);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  it('describes an instant in UTC and in the zone', () => {
    expect(describeInstant(t('2026-11-24T21:00:00Z'), 'UTC')).toBe('2026-11-24T21:00:00Z');
    expect(describeInstant(t('2026-11-24T21:00:00Z'), 'Europe/Berlin')).toBe(
      '2026-11-24T21:00:00Z (2026-11-24 22:00:00 Europe/Berlin)',
    );
  });
});
