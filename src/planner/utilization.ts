// The planner's load phase: the strategies that balance how much runs where (lowNodeUtilization,
// highNodeUtilization, removeDuplicates) plan their moves after the rules and the spread groups, through the same
// gates as every move (protections, priority threshold, PodDisruptionBudgets, limits, held workloads; Planner.attempt)
// and the same simulated reschedule. What this phase adds to each strategy's own landing rule: on every node the
// scheduler might choose (the target and its ties), the replacement breaks no rule another enabled strategy acts on,
// that is, raises no acted-on or hard spread group above max(its skew, its maxSkew) and brings no acted-on violation
// the pod does not have where it runs now. It also measures each node's utilization before and after, for the plan.
// A strategy with `usage: Metrics` is measured by metrics.k8s.io (usageMeasure.ts); without a reading it plans
// nothing and the plan says why (`degraded`), which the operator turns into the policy's Degraded condition.
import { detectionContext } from '../analysis/violations.js';
import { isPodTerminal } from '../model/pods.js';
import { skewTuple } from '../model/spread.js';
import type { NodeInfo, PodInfo, Resources } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';
import { configOf, type StrategyRegistry } from '../strategies/registry.js';
import type {
  LoadContext,
  NodeClassification,
  PrometheusSource,
  ViolationCheck,
  ViolationRecord,
} from '../strategies/types.js';
import { utilizationOf } from '../strategies/utilization.js';
import type { GroupState } from '../scheduling/clusterState.js';
import type { Planner } from './planner.js';
import { compareCandidates } from './planner.js';
import type { DegradedStrategy, NodeReport } from '../model/plan.js';
import {
  METRICS_UNAVAILABLE,
  metricsMeasure,
  metricsProblem,
  requestsMeasure,
  type UsageMeasure,
} from './usageMeasure.js';
import { prometheusMeasure, prometheusProblem } from './prometheusMeasure.js';

/** Resources every node report shows, besides those a strategy's thresholds name. */
const SHOWN = ['cpu', 'memory', 'pods'];

/** The original pods on each node (live or not: podsOn filters them by the plan's state). */
function podsByNode(planner: Planner): Map<string, PodInfo[]> {
  const out = new Map<string, PodInfo[]>();
  for (const pod of planner.analysis.snapshot.pods) {
    if (pod.nodeName === undefined || isPodTerminal(pod)) continue;
    const list = out.get(pod.nodeName);
    if (list) list.push(pod);
    else out.set(pod.nodeName, [pod]);
  }
  return out;
}

/**
 * Why a replacement of `pod`, moved from `from` to `target`, would break a rule another enabled strategy acts on
 * (or a hard spread constraint, which the scheduler enforces whatever the policy); undefined when it breaks none.
 */
interface RuleWatch {
  readonly planner: Planner;
  readonly spec: PolicySpec;
  readonly strategies: StrategyRegistry;
  /** The enabled rule strategies' detectors. */
  readonly checks: readonly { strategy: string; check: ViolationCheck; actsOnSoft: boolean }[];
}

/**
 * For one attempt at moving `pod` off `from`: why its replacement on a given node would break a rule another enabled
 * strategy acts on (or a hard spread constraint, which the scheduler enforces whatever the policy); undefined when it
 * breaks none. Built once per attempt because the state stands still while the attempt asks about every possible
 * landing (over a thousand nodes where the scheduler samples): the groups' skews before, the pod's violations where it
 * runs now, and each group's skew per landing domain are worked out once, not once per node.
 */
function ruleBreaker(
  { planner, spec, strategies, checks }: RuleWatch,
  pod: PodInfo,
  from: NodeInfo,
): (target: NodeInfo) => string | undefined {
  const state = planner.state;
  const groups: Array<{ g: GroupState; before: number; after: Map<string | undefined, number> }> = [];
  for (const g of state.groupsSelecting(pod.namespace, pod.labels)) {
    const c = g.group.constraint;
    const actedOn =
      c.whenUnsatisfiable === 'DoNotSchedule' ||
      strategies.skew.some((s) => s.actsOn(g.group, configOf(spec.strategies, s)));
    if (actedOn) groups.push({ g, before: skewTuple(g.counts, c.minDomains)[0], after: new Map() });
  }
  const found = (node: NodeInfo): ViolationRecord[] => {
    const out: ViolationRecord[] = [];
    for (const c of checks) c.check(pod, node, out);
    return out.filter((v) => !v.soft || checks.find((c) => c.strategy === v.strategy)?.actsOnSoft);
  };
  let already: Set<string> | undefined;
  return (target) => {
    for (const { g, before, after: byDomain } of groups) {
      const c = g.group.constraint;
      // The skew after the move depends on the landing's domain only (the group selects the pod).
      const domain = g.group.domainsByNode.get(target.name);
      let after = byDomain.get(domain);
      if (after === undefined) {
        after = state.tupleAfter(g, pod, from, target)[0];
        byDomain.set(domain, after);
      }
      if (after > Math.max(before, c.maxSkew)) {
        return `its replacement on ${target.name} would raise the skew of ${c.topologyKey} spread (${g.group.workloads.join(', ')}) to ${after}`;
      }
    }
    already ??= new Set(found(from).map((v) => v.strategy));
    const broken = found(target).find((v) => !already!.has(v.strategy));
    return broken === undefined
      ? undefined
      : `its replacement on ${target.name} would break ${broken.strategy}: ${broken.reason}`;
  };
}

/** Where the policy's enabled `usage: Prometheus` strategy reads (the operator queries it for the cycle), if any. */
export function prometheusSourceOf(spec: PolicySpec, strategies: StrategyRegistry): PrometheusSource | undefined {
  for (const s of strategies.load) {
    const config = configOf(spec.strategies, s);
    if (config.enabled && s.usage?.(config) === 'Prometheus') return s.prometheus?.(config);
  }
  return undefined;
}

/** Whether a policy has an enabled strategy measuring by metrics.k8s.io (the operator then reads it for the cycle). */
export function usesMetrics(spec: PolicySpec, strategies: StrategyRegistry): boolean {
  return strategies.load.some((s) => {
    const config = configOf(spec.strategies, s);
    return config.enabled && s.usage?.(config) === 'Metrics';
  });
}

/** What the load phase adds to the plan. */
export interface LoadOutcome {
  /** Each node's class and utilization, by the first classifying strategy and its measure. */
  readonly nodes: NodeReport[];
  /** How `nodes` was measured. */
  readonly measuredBy: 'Requests' | 'Metrics' | 'Prometheus' | undefined;
  /** The strategies that could not plan (`usage: Metrics` without metrics), and why. */
  readonly degraded: DegradedStrategy[];
}

/**
 * Runs the enabled load strategies on the planner's state, in registration order, and returns each node's report
 * (the first classifying strategy's classes; utilization before the phase and after the whole plan).
 */
export function planLoad(planner: Planner, spec: PolicySpec, strategies: StrategyRegistry): LoadOutcome {
  const enabled = strategies.load.filter((s) => configOf(spec.strategies, s).enabled);
  const degraded: DegradedStrategy[] = [];
  if (enabled.length === 0) return { nodes: [], measuredBy: undefined, degraded };
  const nodes = planner.state.nodeList;
  const byRequests = requestsMeasure(planner);
  const requestedBefore = new Map(nodes.map((n) => [n.name, byRequests.of(n)]));
  let metrics: UsageMeasure | undefined;
  const byNode = podsByNode(planner);
  const analysis = planner.analysis;
  const detection = detectionContext({
    spec,
    inScope: analysis.inScope,
    nodes: analysis.nodes,
    index: analysis.index,
    namespaceLabels: analysis.namespaceLabels,
  });
  const checks = strategies.rules
    .filter((s) => configOf(spec.strategies, s).enabled)
    .map((s) => {
      const config = configOf(spec.strategies, s);
      return { strategy: s.name, check: s.detector(detection, config), actsOnSoft: s.actsOnSoft(config) };
    });
  const watch: RuleWatch = { planner, spec, strategies, checks };
  let first: { classification: NodeClassification; measure: UsageMeasure; before: Map<string, Resources> } | undefined;
  for (const s of enabled) {
    const config = configOf(spec.strategies, s);
    let measure = byRequests;
    if (s.usage?.(config) === 'Metrics') {
      const problem = metricsProblem(analysis.snapshot);
      const reading = analysis.snapshot.metrics;
      if (problem !== undefined || reading === undefined || !reading.available) {
        degraded.push({ strategy: s.name, reason: METRICS_UNAVAILABLE, message: problem ?? '' });
        continue;
      }
      measure = metrics ??= metricsMeasure(planner, reading);
    } else if (s.usage?.(config) === 'Prometheus') {
      // One query per policy (the strategy's own), read by the operator for the cycle.
      const problem = prometheusProblem(analysis.snapshot);
      const usage = analysis.snapshot.nodeUsage;
      if (problem !== undefined || usage === undefined || !usage.available) {
        degraded.push({ strategy: s.name, reason: METRICS_UNAVAILABLE, message: problem ?? '' });
        continue;
      }
      measure = prometheusMeasure(planner, usage);
    }
    const before = first === undefined ? new Map(nodes.map((n) => [n.name, measure.of(n)])) : undefined;
    const ctx: LoadContext = {
      nodes: measure.nodes,
      requested: (node) => measure.of(node),
      amountOf: (pod) => measure.amountOf(pod),
      podsOn: (node) => (byNode.get(node.name) ?? []).filter((p) => planner.state.isLive(p)),
      compare: compareCandidates,
      move(pod, reason, lands) {
        const from = planner.state.nodeOf(pod);
        if (from === undefined) return 'pod is already planned for eviction';
        // The attempt asks about the target and each tie more than once (the strategy's rule, then every possible
        // landing alone): each node is judged once per attempt.
        const breaks = ruleBreaker(watch, pod, from);
        const ownVerdicts = new Map<NodeInfo, string | undefined>();
        const ruleVerdicts = new Map<NodeInfo, string | undefined>();
        const memo = (
          verdicts: Map<NodeInfo, string | undefined>,
          t: NodeInfo,
          why: (t: NodeInfo) => string | undefined,
        ): string | undefined => {
          if (verdicts.has(t)) return verdicts.get(t);
          const verdict = why(t);
          verdicts.set(t, verdict);
          return verdict;
        };
        const judge = (targets: readonly NodeInfo[]): string | undefined => {
          for (const t of targets) {
            const own = memo(ownVerdicts, t, (n) => lands([n]));
            if (own !== undefined) return own;
          }
          for (const t of targets) {
            const broken = memo(ruleVerdicts, t, breaks);
            if (broken !== undefined) return broken;
          }
          return undefined;
        };
        const result = planner.attempt(pod, {
          strategy: s.name,
          helps: (_p, target, _from, ties) => (target === undefined ? 'no target node' : judge([target, ...ties])),
          // Without nodeFit: the first node where the landing helps, resources and scores aside.
          fallbackTarget: () => nodes.find((n) => n !== from && judge([n]) === undefined),
        });
        if (!result.ok) return result.reason;
        if (result.target === undefined) return 'no node where the replacement would help';
        planner.commit(pod, result, s.name, reason);
        return { target: result.target, ties: result.ties };
      },
      mark: () => planner.moves.length,
      undo: (mark, why) => (why === undefined ? planner.takeBack(mark) : planner.rollback(mark, why)),
      skip: (pod, reason) => planner.skip(pod, s.name, reason),
      get cycleFull() {
        return planner.limits.cycleFull;
      },
    };
    const c = s.plan(ctx, config);
    if (c !== undefined && first === undefined && before !== undefined) first = { classification: c, measure, before };
  }
  // A utilization strategy that could not measure leaves no classification: the nodes are not reported by requests
  // in its stead. Without one at all (removeDuplicates alone), every node is reported by requests, unclassified.
  if (first === undefined && degraded.length > 0) return { nodes: [], measuredBy: undefined, degraded };
  const { classification, measure, before } = first ?? { measure: byRequests, before: requestedBefore };
  const resources = [...new Set([...SHOWN, ...(classification?.resources ?? [])])];
  // A node the measure cannot see (no NodeMetrics) is reported by its requests, and not classified.
  const seen = new Set(measure.nodes.map((n) => n.name));
  const report = nodes.map((n) => {
    const measured = seen.has(n.name);
    return {
      name: n.name,
      class: classification?.classes.get(n.name) ?? 'appropriate',
      utilization: rounded(utilizationOf(n, (measured ? before : requestedBefore).get(n.name)!, resources)),
      utilizationAfter: rounded(utilizationOf(n, (measured ? measure : byRequests).of(n), resources)),
    };
  });
  return { nodes: report, measuredBy: measure.source, degraded };
}

function rounded(u: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [r, v] of Object.entries(u)) out[r] = Math.round(v * 1e4) / 1e4;
  return out;
}
