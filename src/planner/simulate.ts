// `simulate`: plan → "evict" → place replacements where the scheduler simulation put them → repeat, so a person
// can watch skew converge before letting the operator act. Time advances one schedule interval per cycle, so
// replacements age like real ones (minPodAge applies to them too).
import { analyze } from '../analysis/analyze.js';
import { isPodTerminal } from '../model/pods.js';
import type { ClusterSnapshot, PodInfo } from '../model/types.js';
import { usageAfterMoves } from './usageMeasure.js';
import { nodeUsageAfterMoves } from './prometheusMeasure.js';
import type { Policy } from '../policy/types.js';
import type { SchedulerSetting } from '../scheduling/profile.js';
import type { StrategyRegistry } from '../strategies/registry.js';
import { planCycle, type Move } from './plan.js';
import { topologyReports, violationReports } from './report.js';
import type { RebalancePlan, TopologyReport, Violation } from '../model/plan.js';

export interface SimulationResult {
  readonly cycles: readonly RebalancePlan[];
  readonly final: { readonly topology: readonly TopologyReport[]; readonly violations: readonly Violation[] };
  /**
   * True when the last cycle planned no eviction and no acted-on DoNotSchedule constraint is left above its maxSkew
   * except those reported unrepairable; false when --cycles ran out first or the planner stalled.
   */
  readonly converged: boolean;
  /** The last cycle planned nothing although such a constraint is still above its maxSkew (see its skipped pods). */
  readonly stalled: boolean;
}

/** Hard spread constraints the plan acts on that are still above maxSkew and not reported unrepairable. */
export function repairableSkew(plan: RebalancePlan): TopologyReport[] {
  return plan.topology.filter(
    (t) => t.whenUnsatisfiable === 'DoNotSchedule' && t.skewAfter > t.maxSkew && t.unrepairable === undefined,
  );
}

export interface SimulationOptions {
  readonly cycles: number;
  /** Time between cycles; defaults to 5 minutes (the policy's default schedule). */
  readonly intervalMs?: number;
  /** Called before each cycle is planned (1-based), for a progress line. */
  readonly onCycle?: (cycle: number, of: number) => void;
  /** The strategies to plan with: the built-in ones unless a caller registered others. */
  readonly strategies?: StrategyRegistry;
  /** The scheduler configuration replacements are placed by (`--scheduler-config`); v1.26's defaults when absent. */
  readonly schedulerProfile?: SchedulerSetting;
}

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

/** A deterministic stand-in for the random suffix a ReplicaSet gives new pods. */
function suffix(seed: number): string {
  let x = (seed * 2654435761) >>> 0;
  let out = '';
  for (let i = 0; i < 5; i++) {
    out += NAME_CHARS[x % NAME_CHARS.length];
    x = Math.floor(x / NAME_CHARS.length) + (i + 1) * 7919;
  }
  return out;
}

function replacementOf(move: Move, now: number, seed: number): PodInfo {
  const pod = move.pod;
  // A StatefulSet recreates the pod under the same name; other controllers generate a new one.
  const name = pod.owner?.kind === 'StatefulSet' ? pod.name : `${pod.owner?.name ?? pod.name}-${suffix(seed)}`;
  return {
    ...pod,
    uid: `${pod.uid}-r${seed}`,
    name,
    nodeName: move.target?.name,
    phase: move.target ? 'Running' : 'Pending',
    ready: move.target !== undefined,
    terminating: false,
    createdAt: now,
    // A new pod: no restarts, nothing waiting or terminated yet.
    restarts: 0,
    initRestarts: 0,
    statusDetail: undefined,
    // Its conditions have only just transitioned: none is old enough for a podLifeTime conditions filter to match.
    conditions: undefined,
  };
}

/**
 * Applies a cycle's moves: evicted pods are gone, replacements run where the simulation placed them — on `target`,
 * also when the scheduler scores other nodes equal (`targetTies`; the plan kept the move only if it is right on each).
 */
export function applyMoves(snapshot: ClusterSnapshot, moves: readonly Move[], seedBase: number): ClusterSnapshot {
  const evicted = new Set(moves.map((m) => m.pod.uid));
  const pods = snapshot.pods.filter((p) => !evicted.has(p.uid));
  const replaced: Array<{ move: Move; replacement: PodInfo | undefined }> = [];
  // A Failed pod was replaced when it failed (or, a Job's, not at all): its eviction brings no new pod.
  moves.forEach((m, i) => {
    const replacement = isPodTerminal(m.pod) ? undefined : replacementOf(m, snapshot.now, seedBase + i);
    if (replacement !== undefined) pods.push(replacement);
    replaced.push({ move: m, replacement });
  });
  const metrics = snapshot.metrics?.available === true ? usageAfterMoves(snapshot.metrics, replaced) : undefined;
  const nodeUsage =
    snapshot.nodeUsage?.available === true ? nodeUsageAfterMoves(snapshot.nodeUsage, snapshot, replaced) : undefined;
  return {
    ...snapshot,
    pods,
    ...(metrics !== undefined ? { metrics } : {}),
    ...(nodeUsage !== undefined ? { nodeUsage } : {}),
  };
}

export function simulate(snapshot: ClusterSnapshot, policy: Policy, options: SimulationOptions): SimulationResult {
  const interval = options.intervalMs ?? 5 * 60_000;
  const cycles: RebalancePlan[] = [];
  let current = snapshot;
  let converged = false;
  let stalled = false;
  for (let i = 0; i < options.cycles; i++) {
    options.onCycle?.(i + 1, options.cycles);
    const outcome = planCycle(current, policy, {
      strategies: options.strategies,
      schedulerProfile: options.schedulerProfile,
    });
    cycles.push(outcome.plan);
    if (outcome.moves.length === 0) {
      stalled = repairableSkew(outcome.plan).length > 0;
      converged = !stalled;
      break;
    }
    current = applyMoves(current, outcome.moves, (i + 1) * 1000);
    current = { ...current, now: current.now + interval };
  }
  const analysis = analyze(current, policy.spec, options.strategies);
  return {
    cycles,
    final: {
      topology: policy.spec.strategies.topologySpread.enabled ? topologyReports(analysis, undefined) : [],
      violations: violationReports(analysis),
    },
    converged,
    stalled,
  };
}
