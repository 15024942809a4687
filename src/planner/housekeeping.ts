// The housekeeping phase of a plan (podLifeTime, tooManyRestarts, failedPods): after the rules and the spread groups,
// each enabled housekeeping strategy selects pods from their own status, and each one goes through the gates every
// eviction passes (held workloads, opt-outs, priority, minPodAge, budgets, limits) in the strategy's order. No
// landing is required: a pod its owner recreates is replaced wherever the scheduler puts it (the plan shows where
// the simulation does, and with nodeFit a replacement no node can take is not planned, as the descheduler's nodeFit
// does); a Failed pod has already been replaced and only goes away.
import type { Analysis } from '../analysis/analyze.js';
import { matchesSelector } from '../model/labels.js';
import { isCounted } from '../model/pods.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';
import type { ClusterState } from '../scheduling/clusterState.js';
import { deletedAtOnce } from '../scheduling/deletion.js';
import { placeReplacement } from '../scheduling/placement.js';
import { configOf, type StrategyRegistry } from '../strategies/registry.js';
import type { HousekeepingStrategy } from '../strategies/types.js';
import { workloadKey, type DisruptionBudgets, type EvictionLimits } from './budget.js';
import { protectionReason, type EvictabilityContext } from './evictability.js';
import type { Move } from './move.js';
import { pendingOf } from './pendingMoves.js';

/** What the planner lends the housekeeping phase: the same state, gates and list of moves. */
export interface HousekeepingPlanner {
  readonly analysis: Analysis;
  readonly spec: PolicySpec;
  readonly strategies: StrategyRegistry;
  readonly state: ClusterState;
  readonly budgets: DisruptionBudgets;
  readonly limits: EvictionLimits;
  readonly evictability: EvictabilityContext;
  readonly held: ReadonlyMap<string, string> | undefined;
  readonly moves: Move[];
  /** PlanOptions.pendingLandings: each replacement is pending for the ones placed after it. */
  readonly pendingLandings: boolean;
  skip(pod: PodInfo, strategy: string, reason: string): void;
}

export function planHousekeeping(p: HousekeepingPlanner): void {
  const enabled = p.strategies.housekeeping.filter((s) => configOf(p.spec.strategies, s).enabled);
  if (enabled.length === 0) return;
  // The pods the policy looks at, on nodes the snapshot has (the descheduler lists pods node by node too).
  const pods = p.analysis.snapshot.pods.filter(
    (pod) =>
      pod.nodeName !== undefined &&
      p.state.nodes.has(pod.nodeName) &&
      p.analysis.inScope(pod.namespace) &&
      matchesSelector(p.evictability.podSelector, pod.labels),
  );
  const ctx = { now: p.analysis.snapshot.now, pods };
  for (const s of enabled) housekeep(p, s, ctx);
}

function housekeep(
  p: HousekeepingPlanner,
  s: HousekeepingStrategy,
  ctx: { readonly now: number; readonly pods: readonly PodInfo[] },
): void {
  const config = configOf(p.spec.strategies, s);
  const gates: EvictabilityContext = { ...p.evictability, phases: s.phases(config) };
  const candidates = s.select(ctx, config);
  for (let i = 0; i < candidates.length; i++) {
    const { pod, reason } = candidates[i]!;
    if (p.state.isRemoved(pod) || p.moves.some((m) => m.pod === pod)) continue;
    if (p.limits.cycleFull) {
      // One line for what is left, not one per pod: a cluster can have thousands of Failed pods.
      const left = candidates.length - i;
      const later = p.limits.stepFull ? 'later steps' : 'the next cycles';
      p.skip(pod, s.name, `${p.limits.exceeded(pod) ?? 'limit reached'}; ${left} pod(s) left for ${later}`);
      return;
    }
    const refusal = gate(p, pod, gates);
    if (refusal !== undefined) {
      p.skip(pod, s.name, refusal);
      continue;
    }
    const from = p.state.nodes.get(pod.nodeName!)!;
    let target: NodeInfo | undefined = undefined;
    let ties: readonly NodeInfo[] = [];
    let slack: number | undefined;
    if (isCounted(pod)) {
      // Its owner recreates it: where the scheduler would put the replacement (nodeFit: somewhere, or not at all).
      if (p.spec.eviction.nodeFit) {
        const atOnce = deletedAtOnce(pod, p.spec.eviction.gracePeriodSeconds);
        const placement = placeReplacement(p.state, pod, { pod, node: from }, atOnce);
        if (placement.node === undefined) {
          p.skip(pod, s.name, placement.reason ?? 'no node can take a replacement');
          continue;
        }
        target = placement.node;
        ties = placement.ties;
        slack = placement.slack;
      }
      p.state.commit(pod, target);
    }
    p.budgets.consume(pod);
    p.limits.consume(pod);
    const move = {
      pod,
      from,
      target,
      ties,
      ...(slack === undefined ? {} : { slack }),
      strategy: s.name,
      reason: reason(),
    };
    // The operator's runs: the replacement is pending for what is placed after it (PlanOptions.pendingLandings).
    if (p.pendingLandings && target !== undefined) p.state.addPending(pendingOf(p.state, move));
    p.moves.push(move);
  }
}

/** Why the pod must not be evicted now (the gates of every eviction), or undefined. */
function gate(p: HousekeepingPlanner, pod: PodInfo, gates: EvictabilityContext): string | undefined {
  return (
    p.held?.get(workloadKey(pod)) ?? protectionReason(pod, gates) ?? p.budgets.refusal(pod) ?? p.limits.exceeded(pod)
  );
}
