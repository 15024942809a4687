// The safety rule behind maintenance windows, as properties: a window is reported open exactly when one of its starts
// lies in (now − duration, now], and never otherwise. Checked against a brute-force oracle that walks every minute
// with its own offset arithmetic, in zones without daylight saving time (fixed offsets), and, in zones with it,
// against the weaker rule that every reported start is a matching wall time or a DST transition.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileWindows, windowState } from '../../src/policy/windows.js';

const MINUTE = 60_000;
/** Zones with one offset all year (minutes east of UTC), so the oracle needs no time-zone database. */
const FIXED: ReadonlyArray<readonly [string, number]> = [
  ['UTC', 0],
  ['Asia/Kolkata', 330],
  ['Asia/Tokyo', 540],
  ['Etc/GMT+5', -300],
];

const subset = (max: number) =>
  fc
    .uniqueArray(fc.integer({ min: 0, max }), { minLength: 1, maxLength: 4 })
    .map((xs) => [...xs].sort((a, b) => a - b));

/** A cron built from explicit sets, so the oracle reads the sets rather than parsing the expression. */
const cronArb = fc.record({
  minutes: subset(59),
  hours: fc.oneof(fc.constant(undefined), subset(23)),
  weekdays: fc.oneof(fc.constant(undefined), subset(6)),
});
type Cron = { minutes: number[]; hours: number[] | undefined; weekdays: number[] | undefined };

const expression = (c: Cron): string =>
  `${c.minutes.join(',')} ${c.hours?.join(',') ?? '*'} * * ${c.weekdays?.join(',') ?? '*'}`;

function matchesAt(c: Cron, instant: number, offsetMinutes: number): boolean {
  const wall = new Date(instant + offsetMinutes * MINUTE);
  return (
    c.minutes.includes(wall.getUTCMinutes()) &&
    (c.hours === undefined || c.hours.includes(wall.getUTCHours())) &&
    (c.weekdays === undefined || c.weekdays.includes(wall.getUTCDay()))
  );
}

const nowArb = fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2027-12-31T00:00:00Z') });
const durationArb = fc.integer({ min: 1, max: 600 }).map((m) => m * MINUTE);

describe('window properties', () => {
  it('fixed-offset zones: open exactly when a start lies in (now − duration, now]; since, until and next agree', () => {
    fc.assert(
      fc.property(cronArb, durationArb, nowArb, fc.constantFrom(...FIXED), (cron, duration, now, [zone, offset]) => {
        const state = windowState(compileWindows([{ schedule: expression(cron), durationMs: duration }], zone), now);
        const firstMinute = Math.floor((now - duration) / MINUTE + 1) * MINUTE;
        const starts: number[] = [];
        for (let m = firstMinute; m <= now; m += MINUTE) if (matchesAt(cron, m, offset)) starts.push(m);
        expect(state.open).toBe(starts.length > 0);
        if (state.open) {
          expect(state.since).toBe(starts[0]);
          expect(state.until).toBeGreaterThanOrEqual(starts.at(-1)! + duration);
          expect(state.until).toBeGreaterThan(now);
        } else if (state.nextStart !== undefined) {
          expect(state.nextStart).toBeGreaterThan(now);
          expect(matchesAt(cron, state.nextStart, offset)).toBe(true);
          // No start between now and the reported next one (checked over the first day at most).
          for (
            let m = Math.floor(now / MINUTE + 1) * MINUTE;
            m < Math.min(state.nextStart, now + 1_440 * MINUTE);
            m += MINUTE
          ) {
            expect(matchesAt(cron, m, offset)).toBe(false);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('DST zones: a reported start is a matching wall time, or the first instant after a skipped hour', () => {
    const offsetAt = (zone: string, instant: number): number => {
      const parts = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
      }).formatToParts(new Date(instant));
      const get = (type: string): number => Number(parts.find((p) => p.type === type)!.value);
      const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'));
      return Math.round((wall - Math.floor(instant / MINUTE) * MINUTE) / MINUTE);
    };
    // Around the 2026 and 2027 transitions of each zone, where the interesting cases are.
    const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Sydney'];
    const nearTransitions = fc.oneof(
      nowArb,
      fc
        .constantFrom(
          Date.parse('2026-03-29T01:00:00Z'),
          Date.parse('2026-10-25T01:00:00Z'),
          Date.parse('2026-03-08T07:00:00Z'),
          Date.parse('2026-11-01T06:00:00Z'),
          Date.parse('2026-04-04T16:00:00Z'),
          Date.parse('2026-10-03T16:00:00Z'),
        )
        .chain((t) => fc.integer({ min: -3 * 60, max: 3 * 60 }).map((m) => t + m * MINUTE)),
    );
    fc.assert(
      fc.property(cronArb, durationArb, nearTransitions, fc.constantFrom(...zones), (cron, duration, now, zone) => {
        const state = windowState(compileWindows([{ schedule: expression(cron), durationMs: duration }], zone), now);
        const start = state.open ? state.since : state.nextStart;
        if (start === undefined) return;
        if (state.open) expect(start).toBeLessThanOrEqual(now);
        else expect(start).toBeGreaterThan(now);
        const matches = matchesAt(cron, start, offsetAt(zone, start));
        const afterGap = offsetAt(zone, start - MINUTE) < offsetAt(zone, start);
        expect(matches || afterGap).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
