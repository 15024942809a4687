// Maintenance windows as a cycle sees them (spec.windows): whether evictions may happen now, the gate that closes at
// the window's end, and the OutsideWindow condition. The calendar arithmetic is in ../policy/windows.ts.
//
// Outside every window a cycle runs as DryRun does (plan, report, server-side dry-run evictions). Inside, the run gets
// a gate that closes WINDOW_END_GUARD_MS before the window's end: an eviction checked just before the end could
// otherwise wait behind the rate limiter and reach the API server after it.
import type { Policy } from '../policy/types.js';
import { compileWindows, describeInstant, windowState } from '../policy/windows.js';
import type { Clock } from '../clock.js';
import type { EvictionGate } from './eviction/runTypes.js';

export const WINDOW_END_GUARD_MS = 1_000;

export type WindowNow =
  | { readonly kind: 'always' }
  | { readonly kind: 'open'; readonly since: number; readonly until: number }
  | { readonly kind: 'closed'; readonly nextStart: number | undefined };

export function windowNow(policy: Policy, now: number): WindowNow {
  const { windows, timeZone } = policy.spec;
  if (windows.length === 0) return { kind: 'always' };
  const state = windowState(compileWindows(windows, timeZone), now);
  if (state.open && now < state.until - WINDOW_END_GUARD_MS) {
    return { kind: 'open', since: state.since, until: state.until };
  }
  if (state.open) {
    // Within the guard of the end: closed already; the next start is after this period.
    const after = windowState(compileWindows(windows, timeZone), state.until);
    return { kind: 'closed', nextStart: after.open ? after.since : after.nextStart };
  }
  return { kind: 'closed', nextStart: state.nextStart };
}

/** The policy as a cycle outside every window runs it: DryRun. */
export function asDryRun(policy: Policy): Policy {
  return { ...policy, spec: { ...policy.spec, mode: 'DryRun' } };
}

/** When the window state next changes (to refresh the condition), or undefined. */
export function nextBoundary(w: WindowNow): number | undefined {
  if (w.kind === 'open') return w.until - WINDOW_END_GUARD_MS;
  if (w.kind === 'closed') return w.nextStart;
  return undefined;
}

/** A cycle's run stopped evicting because its window ended. */
export interface WindowClosedDuringCycle {
  readonly at: number;
  readonly evicted: number;
  /** The end of the window the run was in: the note belongs to that window, not to a later one. */
  readonly windowEnd: number;
}

export interface ConditionValue {
  readonly status: boolean;
  readonly reason: string;
  readonly message: string;
}

/** The OutsideWindow condition; undefined for a policy without windows. */
export function outsideWindowCondition(
  policy: Policy,
  w: WindowNow,
  closedDuringCycle: WindowClosedDuringCycle | undefined,
): ConditionValue | undefined {
  const zone = policy.spec.timeZone;
  switch (w.kind) {
    case 'always':
      return undefined;
    case 'open':
      return {
        status: false,
        reason: 'InsideWindow',
        message: `inside a maintenance window since ${describeInstant(w.since, zone)}, until ${describeInstant(w.until, zone)}`,
      };
    case 'closed': {
      const next =
        w.nextStart === undefined
          ? 'no window opens within 5 years'
          : `the next window opens at ${describeInstant(w.nextStart, zone)}`;
      if (closedDuringCycle !== undefined) {
        return {
          status: true,
          reason: 'WindowClosed',
          message:
            `the maintenance window ended at ${describeInstant(closedDuringCycle.at, zone)} during a cycle, which ` +
            `stopped evicting after ${closedDuringCycle.evicted} eviction${closedDuringCycle.evicted === 1 ? '' : 's'}; ${next}`,
        };
      }
      return {
        status: true,
        reason: 'OutsideWindow',
        message: `outside every maintenance window: cycles plan and report as DryRun; ${next}`,
      };
    }
  }
}

/** Closes `guardMs` before `until`; dispose() when the run is over. */
export function createEvictionGate(
  until: number,
  clock: Clock,
  zone: string,
  guardMs = WINDOW_END_GUARD_MS,
): EvictionGate & { dispose(): void } {
  const closes = new AbortController();
  const disposed = new AbortController();
  const closeAt = until - guardMs;
  const reason = `the maintenance window ends at ${describeInstant(until, zone)}`;
  // closeAt is an instant on the wall clock (a window's end in its time zone). A timer can fire a little before the
  // wall clock reaches its instant (the event loop's cached time, a wall clock stepped back), so the gate sleeps
  // again until the wall clock agrees: once it has closed, windowNow() says closed too.
  void (async () => {
    while (!disposed.signal.aborted && clock.wall() < closeAt) {
      await clock.sleep(Math.max(1, closeAt - clock.wall()), disposed.signal);
    }
    if (!disposed.signal.aborted) closes.abort();
  })();
  return {
    signal: closes.signal,
    closed: () => (clock.wall() >= closeAt || closes.signal.aborted ? reason : undefined),
    dispose: () => disposed.abort(),
  };
}
