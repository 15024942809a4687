// Maintenance-window arithmetic (spec.windows, spec.timeZone): pure functions of a time in milliseconds, no clock.
//
// A window opens at each start its cron schedule names, read as wall-clock time in the policy's IANA zone, and stays
// open for its duration, counted in elapsed time (a 6h window across a DST change is still 6 hours long). Windows that
// overlap or touch form one open period.
//
// Daylight saving time, as cron users expect (and as RFC 5545 and Temporal's "compatible" disambiguation do):
// - a start in the hour the clocks skip (02:30 on a spring-forward night) opens at the first instant after the gap;
// - a start in the hour that repeats (01:30 on a fall-back night) opens once, at its first occurrence.
//
// The cron fields come from node-cron's own parser (so a schedule means what it means for `spec.schedule`); day of
// month and day of week combine as in Vixie cron: when both are restricted, a day matching either is a start day.
// Specials: `L` in day of month (the month's last day) and `D#N` in day of week (the Nth such weekday of the month).
import { parse as parseCron } from 'node-cron';
import type { MaintenanceWindow } from './types.js';

const SECOND = 1000;
const DAY = 86_400_000;
/** How far ahead a next start is looked for; a schedule with no start within it (`0 0 30 2 *`) never opens. */
const HORIZON_DAYS = 366 * 5;
/** Most windows chained into one open period (`* * * * * *` with a 1h duration never closes). */
const MAX_CHAIN = 1_000;

// ---- time zones -----------------------------------------------------------------------------------------------------

const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+){0,2}$/;
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Why `zone` is not a time zone this process knows (Intl's database), or undefined. */
export function timeZoneProblem(zone: string): string | undefined {
  if (zone.length > 64 || !ZONE_NAME.test(zone)) {
    return `${JSON.stringify(zone.slice(0, 64))} is not an IANA time zone name such as "Europe/Berlin" or "UTC"`;
  }
  try {
    formatter(zone);
    return undefined;
  } catch {
    return `${JSON.stringify(zone)} is not a known IANA time zone (e.g. "Europe/Berlin", "America/New_York", "UTC")`;
  }
}

/** Wall-clock time in `zone` at `instant`, as a zone-less millisecond value (Date.UTC of the wall fields). */
function wallAt(zone: string, instant: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const wall = Date.UTC(
    parts['year']!,
    parts['month']! - 1,
    parts['day'],
    parts['hour'],
    parts['minute'],
    parts['second'],
  );
  return wall + (instant - Math.floor(instant / SECOND) * SECOND);
}

function offsetAt(zone: string, instant: number): number {
  return wallAt(zone, instant) - instant;
}

/**
 * The instant a wall-clock time (whole seconds) in `zone` stands for: the earlier one when it occurs twice, the first
 * instant after the gap when it does not occur. Non-decreasing in `wall`, which the search below relies on.
 */
function instantOf(zone: string, wall: number): number {
  const before = offsetAt(zone, wall - DAY);
  const after = offsetAt(zone, wall + DAY);
  const candidates = [wall - before, wall - after].filter((i) => wallAt(zone, i) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  // A gap: the transition lies between the two readings; find its first second by bisection.
  let lo = Math.min(wall - before, wall - after);
  let hi = Math.max(wall - before, wall - after);
  while (hi - lo > SECOND) {
    const mid = lo + Math.floor((hi - lo) / 2 / SECOND) * SECOND;
    if (wallAt(zone, mid) >= wall) hi = mid;
    else lo = mid;
  }
  return hi;
}

// ---- cron -----------------------------------------------------------------------------------------------------------

interface CronFields {
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly days: ReadonlySet<number>;
  readonly lastDay: boolean;
  readonly weekdays: ReadonlySet<number>;
  /** `D#N`: weekday D, Nth of its month. */
  readonly nthWeekdays: ReadonlyArray<{ readonly weekday: number; readonly nth: number }>;
  readonly months: ReadonlySet<number>;
  readonly dayRestricted: boolean;
  readonly weekdayRestricted: boolean;
}

export class CronError extends Error {}

function compileCron(expression: string): CronFields {
  let parsed;
  try {
    parsed = parseCron(expression);
  } catch (err) {
    throw new CronError(`${JSON.stringify(expression)} is not a valid cron expression (${(err as Error).message})`);
  }
  const days = new Set<number>();
  let lastDay = false;
  for (const d of parsed.dayOfMonth) {
    if (typeof d === 'number') days.add(d);
    else if (d === 'L') lastDay = true;
    else throw new CronError(`day of month ${JSON.stringify(d)} is not supported in a window (use numbers or L)`);
  }
  const weekdays = new Set<number>();
  const nthWeekdays: Array<{ weekday: number; nth: number }> = [];
  for (const d of parsed.dayOfWeek) {
    const nth = typeof d === 'string' ? /^([0-7])#([1-5])$/.exec(d) : null;
    if (typeof d === 'number') weekdays.add(d % 7);
    else if (nth !== null) nthWeekdays.push({ weekday: Number(nth[1]) % 7, nth: Number(nth[2]) });
    else
      throw new CronError(`day of week ${JSON.stringify(d)} is not supported in a window (use numbers, names or D#N)`);
  }
  const sorted = (xs: readonly number[]): number[] => [...new Set(xs)].sort((a, b) => a - b);
  return {
    seconds: sorted(parsed.second),
    minutes: sorted(parsed.minute),
    hours: sorted(parsed.hour),
    days,
    lastDay,
    weekdays,
    nthWeekdays,
    months: new Set(parsed.month),
    dayRestricted: lastDay || days.size < 31,
    weekdayRestricted: nthWeekdays.length > 0 || weekdays.size < 7,
  };
}

/** Whether the calendar day of `wallDay` (a wall value at 00:00) is a start day. */
function dayMatches(c: CronFields, wallDay: number): boolean {
  const date = new Date(wallDay);
  if (!c.months.has(date.getUTCMonth() + 1)) return false;
  const day = date.getUTCDate();
  const monthLength = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  const byDay = c.days.has(day) || (c.lastDay && day === monthLength);
  const weekday = date.getUTCDay();
  const byWeekday =
    c.weekdays.has(weekday) || c.nthWeekdays.some((n) => n.weekday === weekday && Math.ceil(day / 7) === n.nth);
  if (c.dayRestricted && c.weekdayRestricted) return byDay || byWeekday;
  return byDay && byWeekday;
}

/** Matching wall times at or after `from` (a wall value), in order, until the horizon. */
function* wallStarts(c: CronFields, from: number): Generator<number> {
  const firstDay = Math.floor(from / DAY) * DAY;
  for (let day = firstDay; day < firstDay + HORIZON_DAYS * DAY; day += DAY) {
    if (!dayMatches(c, day)) continue;
    for (const h of c.hours) {
      if (day + (h + 1) * 3_600_000 <= from) continue;
      for (const m of c.minutes) {
        if (day + h * 3_600_000 + (m + 1) * 60_000 <= from) continue;
        for (const s of c.seconds) {
          const wall = day + h * 3_600_000 + m * 60_000 + s * SECOND;
          if (wall >= from) yield wall;
        }
      }
    }
  }
}

// ---- windows --------------------------------------------------------------------------------------------------------

interface CompiledWindow {
  readonly cron: CronFields;
  readonly durationMs: number;
}

export interface Windows {
  readonly timeZone: string;
  readonly windows: readonly CompiledWindow[];
}

/** Compiles a policy's windows; throws CronError for a schedule the window arithmetic cannot follow. */
export function compileWindows(windows: readonly MaintenanceWindow[], timeZone: string): Windows {
  return { timeZone, windows: windows.map((w) => ({ cron: compileCron(w.schedule), durationMs: w.durationMs })) };
}

/** Why a window schedule cannot be used, or undefined (for the policy parser). */
export function windowScheduleProblem(expression: string): string | undefined {
  try {
    compileCron(expression);
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}

/** The first start of one window at or after `t` (ms), or undefined when none comes within the horizon. */
export function nextStart(w: CompiledWindow, zone: string, t: number): number | undefined {
  // Begin one second before `t` in wall time: a start in a gap that ends exactly at `t` maps to `t`.
  const second = Math.ceil(t / SECOND) * SECOND;
  const from = wallAt(zone, second - SECOND) + SECOND;
  for (const wall of wallStarts(w.cron, from)) {
    const instant = instantOf(zone, wall);
    if (instant >= t) return instant;
  }
  return undefined;
}

export type WindowState =
  | { readonly open: true; readonly since: number; readonly until: number }
  | { readonly open: false; readonly nextStart: number | undefined };

/** Whether `now` is inside a window: since when and until when (overlapping windows merged), or when the next opens. */
export function windowState(ws: Windows, now: number): WindowState {
  let since: number | undefined;
  let until = -Infinity;
  let next: number | undefined;
  // Where each window's chain below resumes: after its first start in the period, or after now.
  const cursors = ws.windows.map(() => now);
  ws.windows.forEach((w, k) => {
    // A window containing `now` started in (now − duration, now].
    const start = nextStart(w, ws.timeZone, now - w.durationMs + 1);
    if (start === undefined) return;
    if (start <= now) {
      cursors[k] = start;
      since = since === undefined ? start : Math.min(since, start);
      until = Math.max(until, start + w.durationMs);
    } else if (next === undefined || start < next) {
      next = start;
    }
  });
  if (since === undefined) return { open: false, nextStart: next };
  // Chain the later starts that come before the period ends (touching counts), so `until` is the real end.
  let steps = 0;
  for (let grew = true; grew && steps < MAX_CHAIN;) {
    grew = false;
    ws.windows.forEach((w, k) => {
      let s = nextStart(w, ws.timeZone, cursors[k]! + 1);
      while (s !== undefined && s <= until && steps++ < MAX_CHAIN) {
        if (s + w.durationMs > until) [until, grew] = [s + w.durationMs, true];
        cursors[k] = s;
        s = nextStart(w, ws.timeZone, s + 1);
      }
    });
  }
  return { open: true, since, until };
}

/** `2026-11-24T22:00:00Z (22:00 Europe/Berlin)`, for conditions and logs. */
export function describeInstant(instant: number, zone: string): string {
  const iso = new Date(instant).toISOString().replace(/\.\d{3}Z$/, 'Z');
  if (zone === 'UTC' || zone === 'Etc/UTC') return iso;
  const wall = new Date(wallAt(zone, instant)).toISOString();
  return `${iso} (${wall.slice(0, 10)} ${wall.slice(11, 19)} ${zone})`;
}
