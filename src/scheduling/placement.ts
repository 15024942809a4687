// Where would the scheduler put a replacement? The scheduling cycle of kube-scheduler v1.26 (schedule_one.go) for a
// pod that was already schedulable once: the filters that depend only on the pod's spec and the node
// (NodeUnschedulable, NodeAffinity, TaintToleration, VolumeBinding: staticallyAdmitting()), then the profile's
// framework (framework/runtime.ts) — the plugins' PreFilter and Filter, then the weighted, normalised scores over the
// feasible nodes. The scheduler picks at random among the nodes sharing the top
// score, so a placement names all of them: `node` and `ties`.
//
// The evicted pod is still terminating when its replacement is scheduled (the Eviction API deletes with a grace
// period and the controller replaces it at once). Upstream, it then still holds its node's cpu, memory and pod slot
// (NodeResourcesFit counts every pod the node runs) and still counts for InterPodAffinity (which does not skip
// terminating pods), while PodTopologySpread skips it. If no node is feasible while it terminates, the scheduler
// retries once it is deleted (the deletion requeues the pending pod), so the placement is then made with it gone.
import { nodeAdmitsPod } from '../model/admission.js';
import { tolerationsText } from '../model/taints.js';
import { volumeKey, volumesReachable } from '../model/volumes.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import type { ClusterState, Placed } from './clusterState.js';
import type { EvictedView, PlacementInput } from './framework/interface.js';
import { Framework, type PodFilters } from './framework/runtime.js';
import { feasibleNodesToFind, zoneInterleaved } from './framework/sampling.js';
import { frameworkFor } from './plugins/registry.js';

export interface PlacementResult {
  /** The chosen node, or undefined when no node is feasible. */
  readonly node: NodeInfo | undefined;
  /** The OTHER feasible nodes with the same top score: the scheduler picks at random among them and `node`. */
  readonly ties: readonly NodeInfo[];
  /** When no node is feasible: the most common reason, for the skipped list. */
  readonly reason: string | undefined;
}

/** Indices (into nodeList) of nodes that pass the filters depending only on the pod's spec. */
export function staticallyAdmitting(state: ClusterState, pod: PodInfo): readonly number[] {
  const key = `admit\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}\u0000${volumeKey(pod)}`;
  return state.memo(key, () => {
    const out: number[] = [];
    for (const i of zoneInterleaved(state)) {
      const node = state.nodeList[i]!;
      if (nodeAdmitsPod(pod, node) && volumesReachable(pod, node)) out.push(i);
    }
    return out;
  });
}

/** The pod being placed with its filters run through PreFilter: what placing it on each node reads. */
interface PlacementContext {
  readonly input: PlacementInput;
  readonly filters: PodFilters;
}

function buildContext(
  state: ClusterState,
  pod: PodInfo,
  evicted: Placed | undefined,
  terminating = false,
  only?: string,
): PlacementContext {
  const input: PlacementInput = { state, pod, evicted, terminating };
  return { input, filters: frameworkFor(state.profile).preFilter(input, only) };
}

/** Why the node (at `index` in nodeList) cannot take the replacement beyond the static filters, or undefined. */
function dynamicProblem(ctx: PlacementContext, node: NodeInfo, index: number): string | undefined {
  return Framework.filter(ctx.filters, node, index);
}

/**
 * Simulates scheduling a replacement of `pod` (same spec and labels) after `evicted` was evicted: the filters, then
 * the scores over the feasible nodes. `node` is the first by name of the top-scored nodes, `ties` the others.
 *
 * In a cluster of more than 100 nodes the scheduler filters only until it has feasibleNodesToFind() nodes, walking
 * its zone-interleaved node list from where its previous pod stopped, and scores those. Where it starts is not
 * knowable here, so the walk starts at the first node: the prediction is the best of a sample of the same size that
 * covers every zone, and the ties are ties within it (see the README, "Landing prediction").
 */
export function placeReplacement(state: ClusterState, pod: PodInfo, evicted: Placed | undefined): PlacementResult {
  const admitting = staticallyAdmitting(state, pod);
  if (admitting.length === 0) {
    return {
      node: undefined,
      ties: NO_TIES,
      reason:
        pod.volumeTopology.length === 0
          ? 'no node can take a replacement (none is Ready, uncordoned, tolerated and matching its node affinity)'
          : 'no node can take a replacement (none is Ready, uncordoned, tolerated, matching its node affinity and able to reach its volumes)',
    };
  }
  const first = buildContext(state, pod, evicted, evicted !== undefined);
  const whileTerminating = place(first, admitting);
  if (whileTerminating.node !== undefined) return whileTerminating;
  const gone = evicted === undefined ? first : buildContext(state, pod, evicted, false);
  const once = evicted === undefined ? whileTerminating : place(gone, admitting);
  return once.node !== undefined ? once : { ...once, reason: whyNoNode(gone, admitting) };
}

const NO_TIES: readonly NodeInfo[] = Object.freeze([]);

/** Reused between placements: the planner places thousands of replacements per plan. */
let feasibleBuffer = new Int32Array(1024);
let totalsBuffer = new Float64Array(1024);

function place(ctx: PlacementContext, admitting: readonly number[]): PlacementResult {
  const { state } = ctx.input;
  if (feasibleBuffer.length < admitting.length) {
    feasibleBuffer = new Int32Array(admitting.length * 2);
    totalsBuffer = new Float64Array(admitting.length * 2);
  }
  const feasible = feasibleBuffer;
  const enough = feasibleNodesToFind(state.nodeList.length, state.profile.percentageOfNodesToScore);
  const nodes = state.nodeList;
  const filters = ctx.filters;
  let n = 0;
  for (let k = 0; k < admitting.length && n < enough; k++) {
    const index = admitting[k]!;
    if (Framework.filter(filters, nodes[index]!, index) === undefined) feasible[n++] = index;
  }
  if (n === 0) return { node: undefined, ties: NO_TIES, reason: undefined };
  // One feasible node: the scheduler skips scoring.
  if (n === 1) return { node: state.nodeList[feasible[0]!]!, ties: NO_TIES, reason: undefined };
  const totals = totalsBuffer;
  frameworkFor(state.profile).score(state, ctx.input.pod, evictedView(ctx), feasible.subarray(0, n), totals);
  let top = -Infinity;
  for (let k = 0; k < n; k++) if (totals[k]! > top) top = totals[k]!;
  const best: NodeInfo[] = [];
  for (let k = 0; k < n; k++) if (totals[k] === top) best.push(state.nodeList[feasible[k]!]!);
  if (best.length > 1) best.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { node: best[0], ties: best.length > 1 ? best.slice(1) : NO_TIES, reason: undefined };
}

function evictedView(ctx: PlacementContext): EvictedView {
  const { evicted, terminating } = ctx.input;
  return terminating ? { terminating: evicted, gone: undefined } : { terminating: undefined, gone: evicted };
}

/**
 * Every feasible node's weighted score per plugin and total, for a replacement placed as placeReplacement() would
 * (while the evicted pod terminates): what the scheduler logs at -v=10, for explaining a prediction.
 */
export function explainScores(
  state: ClusterState,
  pod: PodInfo,
  evicted: Placed | undefined,
): Array<{ node: string; total: number; plugins: Record<string, number> }> {
  const ctx = buildContext(state, pod, evicted, evicted !== undefined);
  const feasible = Int32Array.from(
    staticallyAdmitting(state, pod).filter((i) => dynamicProblem(ctx, state.nodeList[i]!, i) === undefined),
  );
  const totals = new Float64Array(feasible.length);
  const plugins: Array<Record<string, number>> = [];
  frameworkFor(state.profile).score(state, pod, evictedView(ctx), feasible, totals, plugins);
  return [...feasible].map((i, k) => ({ node: state.nodeList[i]!.name, total: totals[k]!, plugins: plugins[k] ?? {} }));
}

/** The most common reason the admitting nodes refused the replacement (only computed when all did). */
function whyNoNode(ctx: PlacementContext, admitting: readonly number[]): string {
  const reasons = new Map<string, number>();
  for (const index of admitting) {
    const problem = dynamicProblem(ctx, ctx.input.state.nodeList[index]!, index);
    if (problem !== undefined) reasons.set(problem, (reasons.get(problem) ?? 0) + 1);
  }
  const top = [...reasons.entries()].sort((a, b) => b[1] - a[1])[0];
  return `no node can take a replacement (${top ? `${top[1]} of ${admitting.length} admitting nodes: ${top[0]}` : 'no candidates'})`;
}

/**
 * A check of single nodes for one replacement, its context built once: `all` is every filter the scheduler
 * applies; `interPod` only pod (anti-)affinity, for nodeFit-off moves that ignore resources and spread.
 */
export function placementCheck(
  state: ClusterState,
  pod: PodInfo,
  evicted: Placed | undefined,
  scope: 'all' | 'interPod' = 'all',
): (node: NodeInfo) => boolean {
  const ctx = buildContext(state, pod, evicted, false, scope === 'all' ? undefined : 'InterPodAffinity');
  return (node) => {
    const index = state.nodeIndex.get(node.name);
    if (index === undefined || !nodeAdmitsPod(pod, node) || !volumesReachable(pod, node)) return false;
    return dynamicProblem(ctx, node, index) === undefined;
  };
}

/** Whether the scheduler could place the replacement on this particular node. */
export function canPlaceOn(state: ClusterState, pod: PodInfo, evicted: Placed | undefined, node: NodeInfo): boolean {
  return placementCheck(state, pod, evicted)(node);
}
