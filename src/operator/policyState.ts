// A policy's leader state: what outlives a cycle (cooldowns, the Degraded pause, totals, the last-run fields of the
// status), how it is rebuilt from a status read back, and how it is merged with the live status after a conflicting
// write. Kept apart from the cycle (cycle.ts) because it is the part a leader change touches: the state must be
// rebuilt from the API server, never carried over from a follower's view.
//
// Cooldowns, the pause and the totals live in the policy's status, so they outlive this process. Only the leader
// holds per-policy state: when a replica starts leading it first reads every policy from the API server (not its
// watch cache, which may lag) and rebuilds the state from the status found there (freshState). On a conflict the live
// status is read again and merged (mergeLiveStatus): totals add what this replica counted but has not written,
// cooldowns are the union, the pause is this replica's own view (it has seen the latest cycle).
import type { Clock } from '../clock.js';
import { METRICS_UNAVAILABLE } from '../planner/usageMeasure.js';
import type { LastPlanStatus, PolicyEntry } from './clusterCache.js';
import type { Degradation } from './eviction/runTypes.js';
import { LandingRecord } from './landingRecord.js';
import type { WindowClosedDuringCycle } from './maintenanceWindows.js';
import type { LastRunResult, PersistedState } from './status.js';

export interface Cooldown {
  /** Monotonic deadline. */
  readonly until: number;
  /** The same instant on the wall clock, for the status. */
  readonly untilWall: number;
  readonly reason: string;
}

export type Pause = Degradation & { readonly since: number };

export interface PolicyState {
  readonly uid: string;
  readonly cooldowns: Map<string, Cooldown>;
  paused: Pause | undefined;
  lastFailure: string | undefined;
  /**
   * The last cycle's strategies that could not plan (`usage: Metrics` without metrics.k8s.io): the policy is
   * Degraded with their reason until a cycle plans with metrics again.
   */
  planDegraded: { readonly reason: string; readonly message: string } | undefined;
  totals: { evicted: number; failed: number };
  /** Counted by this replica and not yet written (added to the live totals when a write conflicts). */
  unwritten: { evicted: number; failed: number };
  lastRunTime: string | undefined;
  lastSuccessfulRunTime: string | undefined;
  lastPlan: LastPlanStatus | undefined;
  lastRunResult: LastRunResult | undefined;
  /** The object version the next status write is conditional on. */
  resourceVersion: string;
  cycles: number;
  run: AbortController | undefined;
  /** Status writes of this policy, one at a time. */
  writes: Promise<void>;
  /** The policy (this uid) was deleted: nothing of it is recorded any more. */
  deleted: boolean;
  /** Monotonic time of the last status write started by a run's checkpoint. */
  checkpointAt: number;
  /** The last cycle stopped evicting because its maintenance window ended (until a window opens again). */
  windowClosed: WindowClosedDuringCycle | undefined;
  /** Wakes at the next window boundary to refresh the OutsideWindow condition. */
  windowTimer: AbortController | undefined;
  /** What the last cycle found wrong with the scope (it selects nothing), for the Ready condition's message. */
  scope: string | undefined;
  /** How the policy's predictions held (status.landing), PredictionsUnreliable included. */
  readonly landing: LandingRecord;
}

function splitPod(text: string): { namespace: string; name: string } {
  const slash = text.indexOf('/');
  return { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
}

/** A state built from a status read back (the remaining cooldown time measured on this replica's clock). */
export function freshState(entry: PolicyEntry, persisted: PersistedState, clock: Clock): PolicyState {
  const now = clock.now();
  const wall = clock.wall();
  const cooldowns = new Map<string, Cooldown>();
  for (const c of persisted.cooldowns) {
    const untilWall = Date.parse(c.until);
    // The remaining time is measured on this replica's monotonic clock from here on.
    if (untilWall > wall) cooldowns.set(c.workload, { until: now + (untilWall - wall), untilWall, reason: c.reason });
  }
  const p = persisted.pause;
  const paused: Pause | undefined =
    p === undefined
      ? undefined
      : {
          reason: 'ReplacementPending',
          message: p.message,
          pod: { ...splitPod(p.pod), uid: p.podUid },
          workload: p.workload,
          since: Date.parse(p.since),
        };
  const seen = entry.status;
  // A new leader keeps a MetricsUnavailable it finds (and sends no second Event) until its own cycle reads again.
  const metricsDown = seen.conditions.find(
    (c) => c.type === 'Degraded' && c.status === 'True' && c.reason === METRICS_UNAVAILABLE,
  );
  return {
    uid: entry.uid,
    cooldowns,
    paused,
    lastFailure: undefined,
    planDegraded: metricsDown === undefined ? undefined : { reason: metricsDown.reason, message: metricsDown.message },
    totals: { ...(persisted.totals ?? { evicted: 0, failed: 0 }) },
    unwritten: { evicted: 0, failed: 0 },
    lastRunTime: seen.lastRunTime,
    lastSuccessfulRunTime: seen.lastSuccessfulRunTime,
    lastPlan: seen.lastPlan,
    lastRunResult: undefined,
    resourceVersion: entry.resourceVersion,
    cycles: 0,
    run: undefined,
    writes: Promise.resolve(),
    deleted: false,
    checkpointAt: clock.now(),
    windowClosed: undefined,
    windowTimer: undefined,
    scope: undefined,
    landing: new LandingRecord(persisted.landing),
  };
}

/** The live status merged into this replica's state, after a status write that conflicted. */
export function mergeLiveStatus(state: PolicyState, current: PolicyEntry, clock: Clock): void {
  const persisted = current.status.persisted;
  const base = persisted.totals ?? { evicted: 0, failed: 0 };
  state.totals = { evicted: base.evicted + state.unwritten.evicted, failed: base.failed + state.unwritten.failed };
  const theirs = freshState(current, persisted, clock);
  for (const [workload, c] of theirs.cooldowns) {
    const mine = state.cooldowns.get(workload);
    if (mine === undefined || mine.until < c.until) state.cooldowns.set(workload, c);
  }
  state.resourceVersion = current.resourceVersion;
}
