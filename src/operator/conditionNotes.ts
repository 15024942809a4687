// The Events and log lines that go with a policy's condition changing between cycles: the Degraded pause lifted when
// its Pending replacement is scheduled or gone, strategies that cannot plan (and plan again), a scope that selects
// nothing. Each is said when it starts and when it ends, not every cycle in between; the conditions themselves are
// composed in policyStatus.ts from the state these set.
import type { Logger } from 'pino';
import { isPendingForScheduler } from '../model/pods.js';
import type { RebalancePlan } from '../model/plan.js';
import type { Policy } from '../policy/types.js';
import type { ClusterCache, PolicyEntry } from './clusterCache.js';
import type { EventRecorder } from './events.js';
import { policyTarget } from './policyStatus.js';
import type { PolicyState } from './policyState.js';
import { scopeProblem } from './scopeCheck.js';

/** What the notes read (the cache) and where they go (Events). */
export interface NoteDeps {
  readonly cache: ClusterCache;
  readonly events: EventRecorder;
}

/** Lifts the pause when the Pending replacement was scheduled or is gone; true when the policy may run. */
export function mayRun({ cache, events }: NoteDeps, entry: PolicyEntry, state: PolicyState, log: Logger): boolean {
  const paused = state.paused;
  if (paused === undefined) return true;
  const pod = cache.pod(paused.pod.namespace, paused.pod.name);
  const stillPending =
    pod !== undefined && (paused.pod.uid === '' || pod.uid === paused.pod.uid) && isPendingForScheduler(pod);
  if (stillPending) {
    log.info({ replacement: `${paused.pod.namespace}/${paused.pod.name}` }, 'policy paused (Degraded); cycle skipped');
    return false;
  }
  state.paused = undefined;
  const message = `replacement ${paused.pod.namespace}/${paused.pod.name} is no longer Pending; evictions resume`;
  log.info(message);
  events.record(policyTarget(entry), 'Normal', 'Resumed', message);
  return true;
}

/** A scope that selects nothing: a warning and an Event when it starts (or changes), the condition meanwhile. */
export function noteScope(
  { cache, events }: NoteDeps,
  entry: PolicyEntry,
  policy: Policy,
  state: PolicyState,
  log: Logger,
): void {
  const before = state.scope;
  state.scope = scopeProblem(policy, cache.scopeView());
  if (state.scope !== undefined && state.scope !== before) {
    log.warn(state.scope);
    events.record(policyTarget(entry), 'Warning', 'ScopeSelectsNothing', state.scope);
  }
}

/**
 * A strategy that could not plan (no metrics.k8s.io for `usage: Metrics`) makes the policy Degraded with its reason;
 * an Event says so when it starts and when it ends, not every cycle in between.
 */
export function notePlanDegraded(
  events: EventRecorder,
  entry: PolicyEntry,
  state: PolicyState,
  log: Logger,
  plan: RebalancePlan,
): void {
  const list = plan.degraded ?? [];
  const before = state.planDegraded;
  state.planDegraded =
    list.length === 0
      ? undefined
      : { reason: list[0]!.reason, message: list.map((d) => `${d.strategy}: ${d.message}`).join('; ') };
  const now = state.planDegraded;
  if (now !== undefined && (before === undefined || before.reason !== now.reason)) {
    log.warn({ reason: now.reason }, `strategies cannot plan: ${now.message}`);
    events.record(policyTarget(entry), 'Warning', now.reason, now.message);
  } else if (now === undefined && before !== undefined) {
    const message = `strategies plan again (${before.reason} cleared)`;
    log.info(message);
    events.record(policyTarget(entry), 'Normal', 'Recovered', message);
  }
}
