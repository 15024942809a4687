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
// A pod deleted at once (grace period 0, deletion.ts) may be either when its replacement is scored: the landings
// are then those of both views.
import { nodeAdmitsPod } from '../model/admission.js';
import { matchesRequiredNodeAffinity } from '../model/nodeAffinity.js';
import { DO_NOT_SCHEDULE_EFFECTS, findUntoleratedTaint, isTolerated, tolerationsText } from '../model/taints.js';
import { volumeKey, volumesReachable } from '../model/volumes.js';
import type { Taint } from '../model/types.js';
import type { SchedulerProfile } from './profile.js';
import { missingNodeFeature } from './plugins/nodeDeclaredFeatures/filter.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import type { ClusterState, Placed } from './clusterState.js';
import type { EvictedView, PlacementInput } from './framework/interface.js';
import { Framework, type PodFilters } from './framework/runtime.js';
import { feasibleNodesToFind, zoneInterleaved } from './framework/sampling.js';
import { frameworkFor } from './plugins/registry.js';
import { landingSlack, lowestBest, maybeFeasible, scoreBounds, type ScoreBounds, type Spans } from './pending.js';

export interface PlacementResult {
  /** The chosen node, or undefined when no node is feasible. */
  readonly node: NodeInfo | undefined;
  /** The OTHER feasible nodes with the same top score: the scheduler picks at random among them and `node`. */
  readonly ties: readonly NodeInfo[];
  /** When no node is feasible: the most common reason, for the skipped list. */
  readonly reason: string | undefined;
  /**
   * How many more replacements than the plan allowed for (its pending ones) may land on these nodes first with the
   * prediction still standing (pending.ts, landingSlack). Undefined where it is not worked out (a sampled search, an
   * uncertain feasible set): the landing order then allows one fewer than the nodes named.
   */
  readonly slack?: number;
}

const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' };
const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' };

/**
 * The filters that depend only on the pod's spec and the node: NodeUnschedulable, TaintToleration (the node lifecycle
 * controller's not-ready taint included), NodeAffinity (with the profile's addedAffinity) and VolumeBinding (a bound
 * volume's node affinity), each unless the profile disables it.
 */
function admits(profile: SchedulerProfile, pod: PodInfo, node: NodeInfo): boolean {
  const disabled = profile.disabledFilters;
  const added = profile.addedAffinity?.required;
  if (disabled === undefined && added === undefined) return nodeAdmitsPod(pod, node) && volumesReachable(pod, node);
  const on = (name: string): boolean => disabled === undefined || !disabled.includes(name);
  if (on('NodeUnschedulable') && node.unschedulable && !isTolerated(UNSCHEDULABLE_TAINT, pod.tolerations)) {
    return false;
  }
  if (on('TaintToleration')) {
    if (!node.ready && !isTolerated(NOT_READY_TAINT, pod.tolerations)) return false;
    if (findUntoleratedTaint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) !== undefined) return false;
  }
  if (on('NodeAffinity')) {
    if (!matchesRequiredNodeAffinity(pod.requiredNodeAffinity, node)) return false;
    if (added !== undefined && !matchesRequiredNodeAffinity(added, node)) return false;
  }
  return !on('VolumeBinding') || volumesReachable(pod, node);
}

/** NodeDeclaredFeatures (a filter from 1.36), unless the profile disables it. */
function nodeFeaturesAdmit(state: ClusterState, profile: SchedulerProfile, pod: PodInfo, node: NodeInfo): boolean {
  if (pod.requiredFeatures === undefined) return true;
  if (profile.disabledFilters?.includes('NodeDeclaredFeatures') === true) return true;
  return missingNodeFeature(state.kubeVersion, pod, node) === undefined;
}

/**
 * Indices (into nodeList) of nodes that pass the filters depending only on the pod's spec and its profile (none when
 * the configuration has no profile of its scheduler).
 */
export function staticallyAdmitting(state: ClusterState, pod: PodInfo): readonly number[] {
  const profile = state.profileFor(pod);
  if (profile === undefined) return [];
  const features = pod.requiredFeatures?.join(',') ?? '';
  const key = `admit\u0000${pod.schedulerName ?? ''}\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}\u0000${volumeKey(pod)}\u0000${features}`;
  return state.memo(key, () => {
    const out: number[] = [];
    for (const i of zoneInterleaved(state)) {
      const node = state.nodeList[i]!;
      if (admits(profile, pod, node) && nodeFeaturesAdmit(state, profile, pod, node)) out.push(i);
    }
    return out;
  });
}

/** The pod being placed with its filters run through PreFilter: what placing it on each node reads. */
interface PlacementContext {
  readonly input: PlacementInput;
  /** The pod's own profile (its spec.schedulerName's). */
  readonly profile: SchedulerProfile;
  readonly filters: PodFilters;
}

function buildContext(
  state: ClusterState,
  profile: SchedulerProfile,
  pod: PodInfo,
  evicted: Placed | undefined,
  terminating = false,
  only?: string,
): PlacementContext {
  const input: PlacementInput = { state, pod, evicted, terminating };
  return { input, profile, filters: frameworkFor(profile).preFilter(input, only) };
}

/** Why the node (at `index` in nodeList) cannot take the replacement beyond the static filters, or undefined. */
function dynamicProblem(ctx: PlacementContext, node: NodeInfo, index: number): string | undefined {
  return Framework.filter(ctx.filters, node, index);
}

/**
 * Simulates scheduling a replacement of `pod` (same spec and labels) after `evicted` was evicted: the filters, then
 * the scores over the feasible nodes. `node` is the first by name of the top-scored nodes, `ties` the others.
 *
 * In a cluster of more than 100 nodes the scheduler filters only until it has feasibleNodesToFind() feasible nodes,
 * walking its zone-interleaved node list from where its previous pod stopped, and scores those. Where it starts is
 * not observable, so the prediction is every node that has the top score in some window the scheduler may score
 * (framework/windows.ts): `node` and `ties` are all the possible landings (see the README, "Landing prediction").
 * `deletedAtOnce` (deletion.ts): the evicted pod may already be gone when the replacement is scored, so the top nodes
 * of that view are possible landings too.
 */
export function placeReplacement(
  state: ClusterState,
  pod: PodInfo,
  evicted: Placed | undefined,
  deletedAtOnce = false,
): PlacementResult {
  const profile = state.profileFor(pod);
  // Another scheduler places it, by rules the prediction does not know: no landing is predicted.
  if (profile === undefined) return { node: undefined, ties: NO_TIES, reason: state.unknownScheduler(pod) };
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
  const first = buildContext(state, profile, pod, evicted, evicted !== undefined);
  const whileTerminating = place(first, admitting);
  if (whileTerminating.node !== undefined && !(deletedAtOnce && evicted !== undefined)) return whileTerminating;
  const gone = evicted === undefined ? first : buildContext(state, profile, pod, evicted, false);
  const once = evicted === undefined ? whileTerminating : place(gone, admitting);
  if (whileTerminating.node !== undefined) return eitherView(whileTerminating, once);
  return once.node !== undefined ? once : { ...once, reason: whyNoNode(gone, admitting) };
}

/**
 * The landings of a replacement scored either while its evicted pod terminates or once it is gone: the terminating
 * view's node stays the target, as for a pod with a grace period (so a plan's later moves see the same cluster), and
 * the other view's top nodes join its ties.
 */
function eitherView(whileTerminating: PlacementResult, once: PlacementResult): PlacementResult {
  const node = whileTerminating.node!;
  const others = new Map<string, NodeInfo>();
  for (const n of [...whileTerminating.ties, ...(once.node ? [once.node] : []), ...once.ties]) {
    if (n !== node) others.set(n.name, n);
  }
  const slack =
    whileTerminating.slack === undefined || once.slack === undefined
      ? undefined
      : Math.min(whileTerminating.slack, once.slack);
  const ties =
    others.size === whileTerminating.ties.length
      ? whileTerminating.ties
      : [...others.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { node, ties, reason: undefined, ...(slack === undefined ? {} : { slack }) };
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
  const nodes = state.nodeList;
  const filters = ctx.filters;
  // Replacements on their way to nodes of their own (pending.ts): the nodes they may land on score within bounds.
  const spans = state.pending.spansFor(ctx.input.pod);
  let refused: number[] | undefined;
  let n = 0;
  for (let k = 0; k < admitting.length; k++) {
    const index = admitting[k]!;
    if (Framework.filter(filters, nodes[index]!, index) === undefined) feasible[n++] = index;
    else if (spans?.byNode.has(index) === true) (refused ??= []).push(index);
  }
  const uncertain = spans === undefined ? undefined : pendingEffect(ctx, feasible.subarray(0, n), refused, spans);
  if (n === 0 && uncertain?.widened !== true) return { node: undefined, ties: NO_TIES, reason: undefined };
  let best: NodeInfo[];
  let slack: number | undefined;
  if (uncertain?.widened === true) {
    // Whether the pod fits some node depends on where the pending replacements land: the scored set itself is
    // uncertain, and so every node that may be feasible is a possible landing.
    best = [...feasible.subarray(0, n)].map((i) => nodes[i]!).concat(uncertain.reopened.map((i) => nodes[i]!));
  } else if (n === 1) {
    // One feasible node: the scheduler skips scoring.
    best = [nodes[feasible[0]!]!];
  } else {
    ({ best, slack } = topNodes(ctx, feasible.subarray(0, n), uncertain?.bounds));
  }
  if (best.length > 1) best.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const ties = best.length > 1 ? best.slice(1) : NO_TIES;
  return { node: best[0], ties, reason: undefined, ...(slack === undefined ? {} : { slack }) };
}

/**
 * What the pending replacements do to this placement: score bounds on the nodes they may land on, or (`widened`) an
 * uncertain feasible set, with the refused nodes that may be feasible after all (`reopened`).
 */
function pendingEffect(
  ctx: PlacementContext,
  feasible: Int32Array,
  refused: readonly number[] | undefined,
  spans: Spans,
): { bounds: ScoreBounds | undefined; widened: boolean; reopened: readonly number[] } {
  const { state, pod } = ctx.input;
  const gone = ctx.input.terminating ? undefined : ctx.input.evicted;
  const reopened = refused === undefined ? [] : maybeFeasible(state, pod, gone, refused, spans, othersPass(ctx));
  const bounded = feasible.length === 0 ? undefined : scoreBounds(state, pod, gone, feasible, spans);
  return { bounds: bounded?.bounds, widened: reopened.length > 0 || bounded?.uncertainFit === true, reopened };
}

/** The nodes with the top total (in some window the scheduler may score, above its sample size), within `bounds`. */
function topNodes(
  ctx: PlacementContext,
  feasible: Int32Array,
  bounds: ScoreBounds | undefined,
): { best: NodeInfo[]; slack: number | undefined } {
  const { state } = ctx.input;
  const nodes = state.nodeList;
  const n = feasible.length;
  const framework = frameworkFor(ctx.profile);
  const view = evictedView(ctx);
  const best: NodeInfo[] = [];
  const enough = feasibleNodesToFind(nodes.length, ctx.profile.percentageOfNodesToScore);
  if (n > enough) {
    const winners = framework.windowWinners(state, ctx.input.pod, view, feasible, enough, bounds);
    for (let k = 0; k < n; k++) if (winners[k]) best.push(nodes[feasible[k]!]!);
    return { best, slack: undefined };
  }
  const totals = totalsBuffer;
  framework.score(state, ctx.input.pod, view, feasible, totals);
  // The best node's lowest possible total: a node is a possible landing when its highest reaches it.
  const top = lowestBest(totals, n, bounds);
  const hi = bounds?.hi;
  // The highest total a node left out can reach: what the slack is measured against.
  let leftOut = -Infinity;
  for (let k = 0; k < n; k++) {
    const highest = totals[k]! + (hi === undefined ? 0 : hi[k]!);
    if (highest >= top) best.push(nodes[feasible[k]!]!);
    else leftOut = Math.max(leftOut, highest);
  }
  return { best, slack: landingSlack(totals, n, bounds, leftOut) };
}

/** Every filter but NodeResourcesFit, for a node only the pending replacements' resources may have refused. */
function othersPass(ctx: PlacementContext): (index: number) => boolean {
  let others: PodFilters | undefined;
  return (index) => {
    others ??= frameworkFor(ctx.profile).preFilter(ctx.input, undefined, 'NodeResourcesFit');
    return Framework.filter(others, ctx.input.state.nodeList[index]!, index) === undefined;
  };
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
  const profile = state.profileFor(pod);
  if (profile === undefined) return [];
  const ctx = buildContext(state, profile, pod, evicted, evicted !== undefined);
  const feasible = Int32Array.from(
    staticallyAdmitting(state, pod).filter((i) => dynamicProblem(ctx, state.nodeList[i]!, i) === undefined),
  );
  const totals = new Float64Array(feasible.length);
  const plugins: Array<Record<string, number>> = [];
  frameworkFor(profile).score(state, pod, evictedView(ctx), feasible, totals, plugins);
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
  const profile = state.profileFor(pod);
  if (profile === undefined) return () => false;
  const ctx = buildContext(state, profile, pod, evicted, false, scope === 'all' ? undefined : 'InterPodAffinity');
  return (node) => {
    const index = state.nodeIndex.get(node.name);
    if (index === undefined || !admits(profile, pod, node)) return false;
    if (!nodeFeaturesAdmit(state, profile, pod, node)) return false;
    return dynamicProblem(ctx, node, index) === undefined;
  };
}

/** Whether the scheduler could place the replacement on this particular node. */
export function canPlaceOn(state: ClusterState, pod: PodInfo, evicted: Placed | undefined, node: NodeInfo): boolean {
  return placementCheck(state, pod, evicted)(node);
}
