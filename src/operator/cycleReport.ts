// What a cycle reports of its run: the metrics it records through (gated by the policy's existence and this
// replica's leadership), the summary the log, the status and the Event carry, and what `run --once` says. Pure
// functions of a run's result, kept apart from the cycle (cycle.ts) so the cycle reads as its steps.
import type { Logger } from 'pino';
import { violationCounts, type RebalancerMetrics } from '../metrics/metrics.js';
import type { AbortReason, CycleResult } from '../metrics/names.js';
import type { PlanOutcome } from '../planner/plan.js';
import { countSkipReasons } from '../planner/skipReasons.js';
import type { LastPlanStatus } from './clusterCache.js';
import type { RunResult } from './eviction/runTypes.js';
import type { PolicyState } from './policyState.js';
import { rfc3339 } from './status.js';
import { stopReport } from './stoppedBy.js';

/** The largest skew of a plan's topology (0 when it has none). */
export function maxSkew(outcome: Pick<PlanOutcome, 'plan'>): number {
  let max = 0;
  for (const t of outcome.plan.topology) max = Math.max(max, t.skew);
  return max;
}

/** How an aborted cycle is named in the status (reason) and the log (text). */
export const ABORT_TEXT: Record<AbortReason, { reason: string; text: string }> = {
  spec_changed: { reason: 'SpecChanged', text: 'the spec changed' },
  deleted: { reason: 'PolicyDeleted', text: 'the policy was deleted' },
  leadership_lost: { reason: 'LeadershipLost', text: 'this replica lost the leader lease' },
  shutting_down: { reason: 'ShuttingDown', text: 'the operator is shutting down' },
};

/**
 * The metrics a run records through: nothing once its policy is deleted (its series are gone and stay gone), and no
 * picture of the cluster (skew, violations, planned evictions) once this replica no longer leads. Counters of what
 * did happen (evictions, cycles, aborts) are kept while the policy exists.
 */
export function gatedMetrics(
  metrics: RebalancerMetrics,
  exists: () => boolean,
  leads: () => boolean,
): RebalancerMetrics {
  const picture = (): boolean => exists() && leads();
  return {
    ...metrics,
    recordTopology: (...a) => (picture() ? metrics.recordTopology(...a) : undefined),
    recordViolations: (...a) => (picture() ? metrics.recordViolations(...a) : undefined),
    recordPlan: (...a) => (picture() ? metrics.recordPlan(...a) : undefined),
    recordCycleEvictions: (...a) => (picture() ? metrics.recordCycleEvictions(...a) : undefined),
    recordEviction: (...a) => (exists() ? metrics.recordEviction(...a) : undefined),
    observeCycle: (...a) => (exists() ? metrics.observeCycle(...a) : undefined),
    recordAbort: (...a) => (exists() ? metrics.recordAbort(...a) : undefined),
  };
}

/**
 * What a finished run comes to, as the status, the log and the Event say it: the status's lastPlan, the one-line
 * summary, and the log fields. Every skipped pod of the first plan is logged at debug level on the way.
 */
export function summarizeRun(
  run: RunResult,
  log: Logger,
  schedule: string | undefined,
  wall: number,
): { lastPlan: LastPlanStatus; summary: string; fields: Record<string, unknown> } {
  const { counts, halted } = run;
  const before = maxSkew(run.firstPlan);
  const after = maxSkew(run.lastPlan);
  const skipped = skippedThisRun(run);
  let found = 0;
  for (const n of Object.values(violationCounts(run.firstPlan.plan))) found += n ?? 0;
  for (const s of run.firstPlan.plan.skipped) {
    log.debug({ pod: `${s.namespace}/${s.name}`, strategy: s.strategy, reason: s.reason }, 'pod skipped');
  }
  const {
    stop,
    text: stopText,
    next,
  } = stopReport(
    { halted, degraded: run.degraded?.message, limitReached: run.limitReached, lastPlan: run.lastPlan },
    schedule,
    wall,
    rfc3339,
  );
  // What on-call reads in `kubectl get rbp`: real evictions only, and the skew the run left behind.
  const lastPlan: LastPlanStatus = {
    ...(stopText !== undefined ? { stoppedBy: stopText } : {}),
    evictions: counts.evicted,
    dryRunEvictions: counts.dry_run,
    skipped: skipped.length,
    violations: found,
    maxSkewObserved: run.projected ? before : after,
    maxSkewBefore: before,
    skippedReasons: countSkipReasons(skipped),
  };
  const summary =
    `${counts.evicted} evicted, ${counts.dry_run} dry-run, ${counts.pdb_blocked} blocked by budgets, ` +
    `${counts.failed} failed, ${counts.not_found} gone, ${skipped.length} skipped${reasonsText(lastPlan)}; ` +
    `max skew ${before} → ${after} (${run.plans} plan${run.plans === 1 ? '' : 's'})` +
    (stopText === undefined ? '' : `; stopped by ${stopText}`);
  // `skipped` is every skip the summary counts; the executor's own share is `skippedAtEviction`.
  const { skipped: skippedAtEviction, ...outcomes } = counts;
  const fields = {
    ...outcomes,
    skipped: skipped.length,
    skippedAtEviction,
    plans: run.plans,
    maxSkewBefore: before,
    maxSkewAfter: after,
    halted,
    ...(stop !== undefined ? { stoppedBy: stop } : {}),
    ...(next !== undefined ? { nextCycle: next } : {}),
  };
  return { lastPlan, summary, fields };
}

/** What `run --once` reports of a cycle: why it failed, was interrupted or left the policy Degraded; else nothing. */
export function onceOutcome(result: CycleResult, state: PolicyState): string | undefined {
  if (result === 'failed') return state.lastFailure ?? 'the cycle failed';
  if (result === 'aborted') return `the cycle was interrupted (${state.lastRunResult?.reason ?? 'Aborted'})`;
  if (state.paused !== undefined) return `Degraded: ${state.paused.message}`;
  return state.planDegraded === undefined
    ? undefined
    : `Degraded (${state.planDegraded.reason}): ${state.planDegraded.message}`;
}

/**
 * Every skip of a run, as status counts it: the first plan's skipped pods, then what the executor skipped or a budget
 * blocked at eviction time (the plan was right, the cluster had moved on).
 */
function skippedThisRun(run: RunResult): string[] {
  const reasons = run.firstPlan.plan.skipped.map((s) => s.reason);
  for (let i = 0; i < run.counts.skipped; i++) reasons.push('skipped at eviction time (a limit or several budgets)');
  for (let i = 0; i < run.counts.pdb_blocked; i++) reasons.push('PodDisruptionBudget allows 0 disruptions');
  return reasons;
}

/** ` (5 PodDisruptionBudget allows 0 disruptions, 4 pod is younger than minPodAge)`: the top reasons, for the Event. */
function reasonsText(last: LastPlanStatus): string {
  const top = last.skippedReasons.slice(0, 3).map((r) => `${r.count} ${r.reason}`);
  if (top.length === 0) return '';
  const more = last.skippedReasons.length > 3 ? ', …' : '';
  return ` (${top.join(', ')}${more})`;
}
