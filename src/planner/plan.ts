// One planning cycle: the engine (planner.ts) clears rule violations and repairs spread groups, then the load phase
// (utilization.ts) and the housekeeping phase (housekeeping.ts) plan theirs with the same gates, and the report is
// built from the moves. See planner.ts for how a move is chosen and kept.
import { analyze, type Analysis } from '../analysis/analyze.js';
import type { ClusterSnapshot } from '../model/types.js';
import type { Policy } from '../policy/types.js';
import type { ClusterState } from '../scheduling/clusterState.js';
import { STRATEGIES } from '../strategies/registry.js';
import { canonicalOrder } from './canonicalOrder.js';
import { planHousekeeping } from './housekeeping.js';
import type { Move } from './move.js';
import { Planner, type PlanOptions } from './planner.js';
import { buildPlanReport } from './report.js';
import type { RebalancePlan } from '../model/plan.js';
import { finish, type PlanSteps } from './steps.js';
import { planLoad } from './utilization.js';

export type { Move } from './move.js';
export { compareCandidates, type PlanOptions } from './planner.js';

export interface PlanOutcome {
  readonly plan: RebalancePlan;
  readonly moves: readonly Move[];
  readonly analysis: Analysis;
  readonly state: ClusterState;
  /** Group id → why its skew cannot be repaired by any eviction. */
  readonly unrepairable: ReadonlyMap<string, string>;
}

/** Lexicographic order of what two plans leave undone, then their evictions. */
function lessUndone(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/**
 * One planning cycle: analysis, then the plan. Pure: the same snapshot and policy give the same plan, whatever the
 * order its objects were listed in (canonicalOrder.ts).
 */
export function planCycle(listed: ClusterSnapshot, policy: Policy, options: PlanOptions = {}): PlanOutcome {
  return finish(planCycleSteps(listed, policy, options));
}

/**
 * planCycle in steps (steps.ts): it yields after the analysis, after the planner's state is built and after each
 * spread group, so that an operator's paced run sends its evictions while the next step is planned.
 */
export function* planCycleSteps(
  listed: ClusterSnapshot,
  policy: Policy,
  options: PlanOptions = {},
): PlanSteps<PlanOutcome> {
  const snapshot = canonicalOrder(listed);
  const analysis = analyze(snapshot, policy.spec, options.strategies);
  yield;
  let planner = new Planner(analysis, policy.spec, options);
  yield;
  planner.fixViolations();
  yield* planner.balanceGroupSteps();
  // Rule violations are cleared first, each replacement placed by the spread counts of that moment. When that left
  // a spread group at a dead end, the plan is made again with those violations cleared after the spread groups, and
  // kept if it leaves less undone (fewer violations, then fewer groups above maxSkew, then less skew above it) or as
  // much in fewer moves.
  const postponed = planner.postponable();
  if (postponed.size > 0) {
    const other = new Planner(analysis, policy.spec, options, postponed);
    yield;
    other.fixViolations();
    yield* other.balanceGroupSteps();
    other.fixViolations(true);
    if (lessUndone([...other.leftUndone(), other.moves.length], [...planner.leftUndone(), planner.moves.length])) {
      planner = other;
    }
  }
  // Greedy steps can take one move more than another order would, or stop short where another order balances: a
  // small plan is searched for a better one (planSearch.ts).
  planner.searchFewer();
  const load = planLoad(planner, policy.spec, options.strategies ?? STRATEGIES);
  planHousekeeping(planner.housekeeping());
  const plan = buildPlanReport({
    nodes: load.nodes,
    nodesMeasuredBy: load.measuredBy,
    degraded: load.degraded,
    policy,
    analysis,
    state: planner.state,
    moves: planner.moves,
    skipped: planner.skippedList(),
    unrepairable: planner.unrepairable,
    domainCounts: options.domainCounts ?? true,
  });
  return { plan, moves: planner.moves, analysis, state: planner.state, unrepairable: planner.unrepairable };
}
