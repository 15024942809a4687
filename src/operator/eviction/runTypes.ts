// What a policy run is given and what it hands back: the contract between a cycle (cycle.ts) and the run
// (executor.ts). Kept apart from the run's coordination so the cycle, the tests and the CLI read the contract without
// the machinery, and executor.ts stays a size one can read in a sitting.
import type { Logger } from 'pino';
import type { RebalancerMetrics } from '../../metrics/metrics.js';
import type { NodeUsageQuery, UsageMetrics } from '../../model/types.js';
import type { PlanOutcome } from '../../planner/plan.js';
import type { Policy } from '../../policy/types.js';
import type { SchedulerSetting } from '../../scheduling/profile.js';
import type { Clock } from '../../clock.js';
import type { ClusterCache } from '../clusterCache.js';
import type { EventRecorder, EventTarget } from '../events.js';
import type { RunCounts } from './evictionOutcomes.js';
import type { RetryOptions } from './evictionRetry.js';
import type { Evictor } from './evictor.js';
import type { InFlightEvictions } from './inFlight.js';
import type { Landing } from './landing.js';
import type { LoopDetection } from './pacing.js';
import type { PdbLedger } from './pdbLedger.js';
import type { Halt } from './runHalt.js';

export interface RunDeps {
  readonly cache: ClusterCache;
  readonly evictor: Evictor;
  readonly clock: Clock;
  readonly metrics: RebalancerMetrics;
  readonly events: EventRecorder;
  readonly ledger: PdbLedger;
  /** Evictions in flight per workload, shared by every run of every policy (maxPerWorkload holds across them). */
  readonly inFlight: InFlightEvictions;
  readonly isLeader: () => boolean;
  readonly retry: RetryOptions;
  /** Least time between two plans of one run while lanes are still active (default 1 s). */
  readonly minReplanIntervalMs: number;
  /** `run --scheduler-config`: the scheduler configuration replacements are predicted by. */
  readonly schedulerProfile?: SchedulerSetting;
  /** False: no closed loop and no landing checks (operator.ts, `landingChecks`). Default true. */
  readonly landingChecks?: boolean;
}

export interface RunOptions {
  readonly policy: Policy;
  readonly policyTarget: EventTarget;
  readonly logger: Logger;
  /**
   * Aborts the run: no eviction starts after it fires (the one in flight completes). Its `reason` (an AbortReason)
   * is reported as the run's `halted`.
   */
  readonly signal: AbortSignal;
  /** Workloads held when the run starts (cooldowns), with the reason. */
  readonly held: ReadonlyMap<string, string>;
  /** A replacement landed back: the caller holds the workload for the policy's cooldown. */
  readonly onLoop: (loop: LoopDetection) => void;
  /** The first plan, as soon as it exists (topology metrics, status). */
  readonly onFirstPlan?: (outcome: RunPlan) => void;
  /** Closes when the maintenance window ends (maintenanceWindows.ts): no eviction is sent after, the run halts. */
  readonly gate?: EvictionGate;
  /**
   * The cycle's metrics.k8s.io reading, for `usage: Metrics` (read once per cycle: the metrics API has no watch).
   * Every plan of the run uses it; the planner brings it up to date with the pods evicted and replaced since.
   */
  readonly metrics?: UsageMetrics;
  /** The cycle's Prometheus reading, for `usage: Prometheus` (the policy's query, read once per cycle). */
  readonly nodeUsage?: NodeUsageQuery;
  /** A replacement's landing was checked against its prediction (paced runs). */
  readonly onLanding?: (landing: Landing) => void;
  /**
   * Why the policy's predictions are unreliable (PredictionsUnreliable), or undefined; asked at every plan of the run,
   * so the verdict stops a run that reaches it. No move made by prediction is executed then; housekeeping, which asks
   * for a new pod rather than another place, still is.
   */
  readonly predictionsUnreliable?: () => string | undefined;
}

export interface EvictionGate {
  /** Why evictions must stop now, or undefined while they may go on. */
  closed(): string | undefined;
  /** Aborts when the gate closes. */
  readonly signal: AbortSignal;
}

export interface Degradation {
  readonly reason: 'ReplacementPending';
  readonly message: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly workload: string;
}

/**
 * What a run keeps of a plan: the report and the moves. Not the planner's analysis and simulated cluster state, which
 * reference every group's per-domain counts: at 10,000 pods with a hostname spread they held about 50 MiB per plan,
 * and a run holds its first and its last plan for its whole length (issue 24).
 */
export type RunPlan = Pick<PlanOutcome, 'plan' | 'moves'>;

export interface RunResult {
  readonly firstPlan: RunPlan;
  /** The last plan made: with pacing, one made after the last eviction, so its skew is the cluster's now. */
  readonly lastPlan: RunPlan;
  readonly plans: number;
  readonly counts: RunCounts;
  readonly degraded: Degradation | undefined;
  /** Why the run stopped early, if it did. */
  readonly halted: Halt | undefined;
  /** The first of the run's own limits that held an eviction back (`limit maxPerNode (2) reached on node a`). */
  readonly limitReached: string | undefined;
  /** A DryRun run that stepped through a projection: its last plan is what Evict would leave, not the cluster. */
  readonly projected: boolean;
}
