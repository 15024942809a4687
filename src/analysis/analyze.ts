// The analysis: a pure function from a snapshot and a policy to spread groups and violations.
import type { ClusterSnapshot, Labels, NodeInfo } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';
import { STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';
import type { ViolationRecord } from '../strategies/types.js';
import { EligibilityCache } from './eligibility.js';
import { PodIndex } from './podIndex.js';
import { namespaceScope, type NamespaceScope } from './scope.js';
import { analyzeTopologySpread, type SpreadGroup } from './topologySpread.js';
import { analyzeViolations } from './violations.js';

export interface Analysis {
  readonly snapshot: ClusterSnapshot;
  readonly nodes: ReadonlyMap<string, NodeInfo>;
  readonly index: PodIndex;
  readonly eligibility: EligibilityCache;
  readonly inScope: NamespaceScope;
  readonly namespaceLabels: (namespace: string) => Labels;
  /** Every constraint group in scope, hard and soft (measured whether or not the policy acts on spread). */
  readonly groups: readonly SpreadGroup[];
  readonly violations: readonly ViolationRecord[];
}

/** Labels of a namespace; one missing from the snapshot still has the label the API server always sets. */
export function namespaceLabelLookup(snapshot: ClusterSnapshot): (namespace: string) => Labels {
  const byName = new Map(snapshot.namespaces.map((ns) => [ns.name, ns.labels]));
  const synthesized = new Map<string, Labels>();
  return (name) => {
    const known = byName.get(name);
    if (known) return known;
    let labels = synthesized.get(name);
    if (!labels) {
      labels = { 'kubernetes.io/metadata.name': name };
      synthesized.set(name, labels);
    }
    return labels;
  };
}

/** `strategies`: whose rules are checked (the built-in strategies unless a caller registered others). */
export function analyze(
  snapshot: ClusterSnapshot,
  spec: PolicySpec,
  strategies: StrategyRegistry = STRATEGIES,
): Analysis {
  const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
  const index = new PodIndex(snapshot.pods, (name) => nodes.has(name));
  const eligibility = new EligibilityCache(snapshot.nodes);
  const namespaceLabels = namespaceLabelLookup(snapshot);
  const inScope = namespaceScope(spec, namespaceLabels);
  // Groups are measured even when the policy does not act on spread: the scheduler still enforces the pods'
  // DoNotSchedule constraints, so the simulation of any replacement needs them.
  const groups = analyzeTopologySpread(
    snapshot.pods,
    spec.strategies.topologySpread.defaultConstraints,
    inScope,
    index,
    eligibility,
  );
  const violations = analyzeViolations(snapshot.pods, { spec, inScope, nodes, index, namespaceLabels }, strategies);
  return { snapshot, nodes, index, eligibility, inScope, namespaceLabels, groups, violations };
}
