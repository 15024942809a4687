// Shared helpers for the parity suites: upstream kube-scheduler and descheduler test cases re-expressed as
// snapshots (raw objects through the real loader), asserted through analyze(), the placement filter and planCycle().
import { analyze, type Analysis } from '../../src/analysis/analyze.js';
import type { SpreadGroup } from '../../src/analysis/topologySpread.js';
import type { ClusterSnapshot, PodInfo } from '../../src/model/types.js';
import { DEFAULT_POLICY, parsePolicy } from '../../src/policy/parse.js';
import type { Policy } from '../../src/policy/types.js';
import { planCycle } from '../../src/planner/plan.js';
import type { RebalancePlan } from '../../src/model/plan.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { canPlaceOn } from '../../src/scheduling/placement.js';
import { buildSnapshot, makePolicy, RULE_STRATEGIES } from '../builders.js';

export type Built = Parameters<typeof buildSnapshot>[0][number];
type Json = Record<string, unknown>;

/** Deep-merges `extra` into `base` (objects only; arrays and scalars replace). */
function merge(base: Json, extra: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(extra)) {
    const b = out[k];
    out[k] =
      typeof v === 'object' &&
      v !== null &&
      !Array.isArray(v) &&
      typeof b === 'object' &&
      b !== null &&
      !Array.isArray(b)
        ? merge(b as Json, v as Json)
        : v;
  }
  return out;
}

/**
 * A policy as permissive as the descheduler's defaults: no rate limits worth the name, no minimum age, bare pods
 * and local storage evictable, nodeFit on (the planner's simulation), everything else as `spec` says.
 */
export function permissivePolicy(spec: Json = {}): Policy {
  const base: Json = {
    mode: 'Evict',
    // The descheduler's plugins of these rules, all enabled in its tests.
    strategies: { ...RULE_STRATEGIES, podAffinity: { enabled: true } },
    eviction: {
      maxPerCycle: 1000,
      maxPerNode: 1000,
      maxPerNamespace: 1000,
      maxPerWorkload: 1000,
      minPodAge: '0s',
      nodeFit: true,
    },
  };
  return parsePolicy(makePolicy('parity', merge(base, spec)), { file: 'parity-policy.yaml' });
}

export function snapshotOf(objects: readonly Built[]): ClusterSnapshot {
  return buildSnapshot(objects);
}

export function podNamed(snapshot: ClusterSnapshot, name: string, namespace = 'default'): PodInfo {
  const pod = snapshot.pods.find((p) => p.name === name && p.namespace === namespace);
  if (!pod) throw new Error(`no pod ${namespace}/${name} in the snapshot`);
  return pod;
}

/** What the scheduler's PreFilter state holds for one constraint of a pod: domain counts, min, skew. */
export interface GroupView {
  readonly topologyKey: string;
  readonly whenUnsatisfiable: string;
  readonly domains: Record<string, number>;
  readonly min: number;
  readonly skew: number;
}

function view(g: SpreadGroup): GroupView {
  return {
    topologyKey: g.constraint.topologyKey,
    whenUnsatisfiable: g.constraint.whenUnsatisfiable,
    domains: Object.fromEntries([...g.counts].sort(([a], [b]) => (a < b ? -1 : 1))),
    min: g.min,
    skew: g.skew,
  };
}

/** The spread groups the analysis builds for a pod's constraints (in the pod's constraint order). */
export function groupsOf(objects: readonly Built[], podName: string, policy: Policy = DEFAULT_POLICY): GroupView[] {
  const snapshot = snapshotOf(objects);
  const pod = podNamed(snapshot, podName);
  const analysis = analyze(snapshot, policy.spec);
  const mine = analysis.groups.filter((g) => g.members.includes(pod));
  const order = (g: SpreadGroup): number => {
    const i = pod.spreadConstraints.indexOf(g.constraint);
    return i >= 0 ? i : pod.spreadConstraints.length;
  };
  return mine.sort((a, b) => order(a) - order(b)).map(view);
}

/** The analysis and a fresh cluster state (the planner's scheduler simulation) for a snapshot. */
export function stateOf(
  objects: readonly Built[],
  policy: Policy = DEFAULT_POLICY,
): {
  snapshot: ClusterSnapshot;
  analysis: Analysis;
  state: ClusterState;
} {
  const snapshot = snapshotOf(objects);
  const analysis = analyze(snapshot, policy.spec);
  return { snapshot, analysis, state: new ClusterState(analysis) };
}

/**
 * The scheduler's Filter verdict for an incoming (pending) pod on every node, as our placement simulation computes
 * it: all filters together (node affinity, taints, resources, inter-pod affinity, topology spread).
 */
export function fitsOn(
  objects: readonly Built[],
  podName: string,
  policy: Policy = DEFAULT_POLICY,
  namespace = 'default',
): Record<string, boolean> {
  const { snapshot, state } = stateOf(objects, policy);
  const pod = podNamed(snapshot, podName, namespace);
  return Object.fromEntries(snapshot.nodes.map((n) => [n.name, canPlaceOn(state, pod, undefined, n)]));
}

export interface PlanResult {
  readonly plan: RebalancePlan;
  /** Names of the evicted pods, in plan order. */
  readonly evicted: string[];
  /** Evictions per source domain of `key` (node label), when given. */
  readonly fromDomains: Record<string, number>;
}

/** Runs one planning cycle; `key` groups the evictions by the source node's label value. */
export function planOf(objects: readonly Built[], policy: Policy, key?: string): PlanResult {
  const snapshot = snapshotOf(objects);
  const { plan } = planCycle(snapshot, policy);
  const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
  const fromDomains: Record<string, number> = {};
  if (key !== undefined) {
    for (const e of plan.evictions) {
      const domain = nodes.get(e.node)?.labels[key] ?? '<none>';
      fromDomains[domain] = (fromDomains[domain] ?? 0) + 1;
    }
  }
  return { plan, evicted: plan.evictions.map((e) => e.name), fromDomains };
}
