// Turns the planner's result into the stable RebalancePlan JSON (DESIGN.md, "Plan output").
import type { Analysis } from '../analysis/analyze.js';
import { workloadName } from '../analysis/topologySpread.js';
import { selectorText } from '../model/labels.js';
import { skewTuple } from '../model/spread.js';
import type { PodInfo } from '../model/types.js';
import type { Policy } from '../policy/types.js';
import type { ClusterState } from '../scheduling/clusterState.js';
import type { Move } from './move.js';
import type {
  DegradedStrategy,
  NodeReport,
  RebalancePlan,
  SkippedPod,
  Strategy,
  TopologyReport,
  Violation,
} from '../model/plan.js';

export interface PlanReportInput {
  readonly policy: Policy;
  readonly analysis: Analysis;
  readonly state: ClusterState;
  readonly moves: readonly Move[];
  readonly skipped: ReadonlyArray<{ pod: PodInfo; strategy: Strategy; reason: string }>;
  readonly unrepairable: ReadonlyMap<string, string>;
  /** False: every report's `domains` is left empty (PlanOptions.domainCounts). */
  readonly domainCounts?: boolean;
  /** Every node's utilization class, when a utilization strategy is enabled. */
  readonly nodes?: readonly NodeReport[];
  readonly nodesMeasuredBy?: 'Requests' | 'Metrics' | 'Prometheus' | undefined;
  readonly degraded?: readonly DegradedStrategy[];
}

function sortedRecord(map: ReadonlyMap<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const key of [...map.keys()].sort()) out[key] = map.get(key)!;
  return out;
}

const NO_DOMAINS: Readonly<Record<string, number>> = Object.freeze({});

export function topologyReports(
  analysis: Analysis,
  state: ClusterState | undefined,
  unrepairable?: ReadonlyMap<string, string>,
  domainCounts = true,
): TopologyReport[] {
  return analysis.groups
    .map((g): TopologyReport => {
      const after = state?.group(g.id)?.counts ?? g.counts;
      const reason = unrepairable?.get(g.id);
      return {
        namespace: g.namespace,
        selector: selectorText(g.constraint.selector),
        topologyKey: g.constraint.topologyKey,
        whenUnsatisfiable: g.constraint.whenUnsatisfiable,
        maxSkew: g.constraint.maxSkew,
        domains: domainCounts ? sortedRecord(g.counts) : NO_DOMAINS,
        skew: g.skew,
        skewAfter: skewTuple(after, g.constraint.minDomains)[0],
        workloads: g.workloads,
        minDomains: g.constraint.minDomains,
        ...(reason !== undefined ? { unrepairable: reason } : {}),
      };
    })
    .sort(
      (a, b) =>
        a.namespace.localeCompare(b.namespace) ||
        a.selector.localeCompare(b.selector) ||
        a.topologyKey.localeCompare(b.topologyKey) ||
        a.maxSkew - b.maxSkew,
    );
}

export function violationReports(analysis: Analysis): Violation[] {
  return analysis.violations.map((v) => ({
    strategy: v.strategy,
    namespace: v.pod.namespace,
    name: v.pod.name,
    node: v.node,
    reason: v.reason,
    ...(v.soft ? { soft: true } : {}),
  }));
}

export function buildPlanReport(input: PlanReportInput): RebalancePlan {
  const { analysis, moves } = input;
  const evictions = moves.map((m) => ({
    namespace: m.pod.namespace,
    name: m.pod.name,
    node: m.from.name,
    strategy: m.strategy,
    reason: m.reason,
    priority: m.pod.priority,
    ...(m.target ? { target: m.target.name, targetTies: m.ties.map((n) => n.name) } : {}),
    workload: workloadName(m.pod),
    uid: m.pod.uid,
  }));
  const skipped: SkippedPod[] = input.skipped.map((s) => ({
    namespace: s.pod.namespace,
    name: s.pod.name,
    strategy: s.strategy,
    reason: s.reason,
  }));
  const violations = violationReports(analysis);
  const topology = input.policy.spec.strategies.topologySpread.enabled
    ? topologyReports(analysis, input.state, input.unrepairable, input.domainCounts ?? true)
    : [];
  return {
    apiVersion: 'rebalancer.dev/v1alpha1',
    kind: 'RebalancePlan',
    policy: input.policy.name,
    evictions,
    skipped,
    topology,
    violations,
    ...(input.nodes !== undefined && input.nodes.length > 0
      ? { nodes: input.nodes, ...(input.nodesMeasuredBy ? { nodesMeasuredBy: input.nodesMeasuredBy } : {}) }
      : {}),
    ...(input.degraded !== undefined && input.degraded.length > 0 ? { degraded: input.degraded } : {}),
    summary: {
      nodes: analysis.snapshot.nodes.length,
      pods: analysis.snapshot.pods.length,
      violations: violations.length,
      evictions: evictions.length,
      skipped: skipped.length,
    },
  };
}
