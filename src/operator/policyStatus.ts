// The status a policy's state composes to: the conditions (Degraded's reason in order of precedence: the pause, a
// failed cycle, unreliable predictions, strategies that cannot plan), the persisted cooldowns and pause, the last run.
// Kept apart from the cycle so what `kubectl get rbp` shows is read in one place; the write and its merge on a
// conflict stay with the controller (cycle.ts), which owns the order of writes.
import type { Clock } from '../clock.js';
import type { PolicyEntry } from './clusterCache.js';
import type { EventTarget } from './events.js';
import { PREDICTIONS_UNRELIABLE } from './landingRecord.js';
import { outsideWindowCondition, type WindowNow } from './maintenanceWindows.js';
import type { PolicyState } from './policyState.js';
import {
  buildStatus,
  POLICY_GROUP,
  POLICY_VERSION,
  rfc3339,
  type CooldownStatus,
  type PolicyStatus,
} from './status.js';

/** The policy as the object an Event is about. */
export function policyTarget(entry: Pick<PolicyEntry, 'name' | 'uid'>): EventTarget {
  return {
    apiVersion: `${POLICY_GROUP}/${POLICY_VERSION}`,
    kind: 'RebalancePolicy',
    name: entry.name,
    ...(entry.uid !== '' ? { uid: entry.uid } : {}),
  };
}

/** Why an invalid policy will not run (its spec's problems, one line); undefined for a valid one. */
export function problemsText(entry: PolicyEntry): string | undefined {
  if (entry.policy !== undefined) return undefined;
  return entry.problems.map((p) => (p.field === '' ? p.problem : `${p.field}: ${p.problem}`)).join('; ');
}

/** The status of a policy as its state says it should be; `window` is where the policy stands now (wall time). */
export function composeStatus(
  entry: PolicyEntry,
  state: PolicyState,
  window: WindowNow | undefined,
  { clock, schedulerConfig }: { readonly clock: Clock; readonly schedulerConfig: string },
): PolicyStatus {
  const policy = entry.policy;
  const unreliable = state.landing.unreliableFor(entry.generation, schedulerConfig);
  const degraded =
    state.paused !== undefined
      ? { reason: state.paused.reason, message: state.paused.message }
      : state.lastFailure !== undefined
        ? { reason: 'CycleFailed', message: state.lastFailure }
        : unreliable !== undefined
          ? { reason: PREDICTIONS_UNRELIABLE, message: unreliable.message }
          : state.planDegraded;
  const now = clock.now();
  const cooldowns: CooldownStatus[] = [];
  for (const [workload, c] of state.cooldowns) {
    if (c.until > now) cooldowns.push({ workload, until: rfc3339(c.untilWall), reason: c.reason });
  }
  const p = state.paused;
  return buildStatus({
    generation: entry.generation,
    now: clock.wall(),
    previous: entry.status.conditions,
    invalid: problemsText(entry),
    suspended: policy?.spec.suspend ?? false,
    schedule: policy?.spec.schedule,
    mode: policy?.spec.mode,
    degraded,
    lastRunTime: state.lastRunTime,
    lastSuccessfulRunTime: state.lastSuccessfulRunTime,
    lastPlan: state.lastPlan,
    // A copy: the run keeps counting while this status is on the wire, and the write must say what it carried.
    totals: { ...state.totals },
    ...(policy !== undefined && window !== undefined
      ? { outsideWindow: outsideWindowCondition(policy, window, state.windowClosed) }
      : {}),
    cooldowns,
    pause:
      p === undefined
        ? undefined
        : {
            pod: `${p.pod.namespace}/${p.pod.name}`,
            podUid: p.pod.uid,
            workload: p.workload,
            since: rfc3339(p.since),
            reason: p.reason,
            message: p.message,
          },
    lastRunResult: state.lastRunResult,
    scope: state.scope,
    landing: state.landing.status(),
  });
}
