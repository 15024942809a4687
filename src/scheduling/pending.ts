// Replacements whose landing is not known yet, and what they do to the prediction of another one.
//
// A paced run does not wait for every replacement to land before it sends the next eviction: at 1,000 nodes that
// would hold the run to one eviction per landing (the controller's reaction, the scheduler's cycle, the binding),
// far below the client's budget. Instead each prediction is made knowing that some replacements are still on their
// way — those sent and not yet seen bound, and in a plan the ones planned before it — each to one of its possible
// landings, which one the scheduler's tie-break decides.
//
// Two replacements are *related* when where one lands changes more about the other than the resources its node
// has left: one counts the other for a spread constraint (the same workload, or a selector matching it), an inter-pod
// (anti-)affinity term of one may select the other, or either has host ports or volumes with node-level limits. A related replacement is
// assumed where the plan put it, and the run waits for it to land before it sends the other (landingOrder.ts).
//
// An unrelated one changes only the resource scores and the resource fit of the node it lands on. So for the pod
// being placed, every node a pending replacement may land on scores somewhere between "none of them lands here" and
// "every one that may, does", while every other node scores exactly. NodeResourcesFit's strategies and
// BalancedAllocation have no NormalizeScore, so a node's score is its own and these bounds are exact per node; a
// node is a possible landing when its highest score reaches the lowest score the best node can have (in some window
// the scheduler may score, above 100 nodes). When a pending replacement could change whether the pod fits a node
// at all, the node set the scheduler scores is uncertain, and every node that may be feasible is a possible landing.
import { minorOf } from '../model/kubeVersion.js';
import type { PodInfo } from '../model/types.js';
import type { ClusterState, Placed } from './clusterState.js';
import { MAX_NODE_SCORE } from './framework/normalize.js';
import { DEFAULT_BALANCED_RESOURCES, fitIgnores } from './plugins/nodeResources/args.js';
import { balancedScore } from './plugins/nodeResources/balancedAllocation.js';
import { fitScore, nodeLoad, type NodeLoad } from './plugins/nodeResources/resourceAllocation.js';
import type { SchedulerProfile } from './profile.js';
import { nonZeroRequests } from './state/nodeUsage.js';
import type { NodeBound, NodeSpan, ScoreBounds, Spans } from './state/pendingSet.js';

export { relatedLandings, type PendingLanding, type ScoreBounds, type Spans } from './state/pendingSet.js';

/** A NodeLoad written in place: nodeBound and maybeFeasible read theirs before they shift the next node's. */
class ShiftedLoad implements NodeLoad {
  allocatable: NodeLoad['allocatable'] = {};
  // Keys of earlier nodes stay at 0, which every reader takes as absent (`?? 0`).
  readonly requested: Record<string, number> = {};
  nonZeroCpu = 0;
  nonZeroMemory = 0;
}

const noneScratch = new ShiftedLoad();
const allScratch = new ShiftedLoad();

/**
 * `load` shifted into `out`: the placed pending replacements taken off (`none`), or every one that may land there
 * added. Scratch, not a new object: at 1,000 nodes a plan shifts hundreds of thousands of loads (issue 29).
 */
function shifted(out: ShiftedLoad, load: NodeLoad, span: NodeSpan, all: boolean): NodeLoad {
  const requested = out.requested;
  for (const k in requested) requested[k] = 0;
  for (const k in load.requested) requested[k] = load.requested[k]!;
  for (const k in span.placed) requested[k] = (requested[k] ?? 0) - span.placed[k]!;
  let cpu = load.nonZeroCpu - span.placedCpu;
  let memory = load.nonZeroMemory - span.placedMemory;
  if (all) {
    for (const k in span.placed) requested[k] = requested[k]! + span.placed[k]!;
    for (const k in span.more) requested[k] = (requested[k] ?? 0) + span.more[k]!;
    cpu += span.placedCpu + span.moreCpu;
    memory += span.placedMemory + span.moreMemory;
  }
  out.allocatable = load.allocatable;
  out.nonZeroCpu = cpu;
  out.nonZeroMemory = memory;
  return out;
}

/** Whether the pod fits the node's resources and pod count with `load` and `pods` on it (NodeResourcesFit's filter). */
function fits(state: ClusterState, pod: PodInfo, load: NodeLoad, pods: number): boolean {
  const cap = load.allocatable['pods'];
  if (cap !== undefined && pods + 1 > cap) return false;
  const ignored = (state.profileFor(pod) ?? state.profile).fitIgnored;
  for (const name in pod.requests) {
    const amount = pod.requests[name]!;
    if (amount <= 0 || fitIgnores(ignored, name)) continue;
    const allocatable = load.allocatable[name];
    if (allocatable === undefined) continue;
    if ((load.requested[name] ?? 0) + amount > allocatable) return false;
  }
  return true;
}

/** A resource's requested fraction of the node's allocatable, with the pod or without it (0 where none is offered). */
function fraction(load: NodeLoad, name: string, pod: PodInfo, withPod: boolean): number {
  const cap = load.allocatable[name] ?? 0;
  if (cap === 0) return 0;
  return Math.min(1, ((load.requested[name] ?? 0) + (withPod ? (pod.requests[name] ?? 0) : 0)) / cap);
}

/**
 * The two-resource BalancedAllocation score's range over every request between `none` and `all` (a box: each
 * fraction moves independently between its ends; `noneScore` is the score at `none`, which the caller has). Undefined
 * when the plugin scores more resources than two.
 */
function balancedRange(
  none: NodeLoad,
  noneScore: number,
  all: NodeLoad,
  pod: PodInfo,
  state: ClusterState,
  resources: readonly { name: string; weight: number }[],
): { lo: number; hi: number } | undefined {
  const a = noneScore;
  const b = balancedScore(all, pod, resources, state.kubeVersion);
  if (a === b) return { lo: a, hi: a };
  // Between the ends the fractions' difference may cross zero, where the score peaks: bound it by the plugin's range
  // unless the difference keeps its sign (then the ends are the extremes of a monotone score).
  if (resources.length !== 2) return undefined;
  const [r0, r1] = [resources[0]!.name, resources[1]!.name];
  let positive = false;
  let negative = false;
  for (const load of [none, all]) {
    for (const withPod of [false, true]) {
      const sign = Math.sign(fraction(load, r0, pod, withPod) - fraction(load, r1, pod, withPod));
      if (sign > 0) positive = true;
      if (sign < 0) negative = true;
    }
  }
  const crosses = positive && negative;
  if (!crosses && minorOf(state.kubeVersion) < 36) return { lo: Math.min(a, b), hi: Math.max(a, b) };
  // From 1.36 the score is the change the pod makes (with − without), each side moving on its own: the plugin's range.
  return { lo: 0, hi: MAX_NODE_SCORE };
}

/** What a node's bounds depend on besides the node: the pod's requests as both plugins read them, and its profile. */
function podKind(pod: PodInfo, profileName: string): string {
  const nz = pod.fitNonZeroRequests ?? nonZeroRequests(pod);
  let key = `${profileName}\u0000${nz.cpu}\u0000${nz.memory}`;
  for (const k in pod.requests) key += `\u0000${k}=${pod.requests[k]}`;
  return key;
}

function nodeBound(
  state: ClusterState,
  pod: PodInfo,
  profile: SchedulerProfile,
  index: number,
  gone: Placed | undefined,
  span: NodeSpan,
): NodeBound {
  const fitWeight = profile.scoreWeights['NodeResourcesFit'] ?? 0;
  const balancedWeight = profile.scoreWeights['NodeResourcesBalancedAllocation'] ?? 0;
  const resources = profile.balancedResources ?? DEFAULT_BALANCED_RESOURCES;
  const node = state.nodeList[index]!;
  // nodeLoad's scratch object, read before any other node's load is asked for.
  const here = nodeLoad(state, index, node, gone);
  const none = shifted(noneScratch, here, span, false);
  const all = shifted(allScratch, here, span, true);
  const usage = state.usageAt(index);
  const podsNow = usage.pods - (gone !== undefined && gone.node === node ? 1 : 0);
  const fitsAll = fits(state, pod, all, podsNow + span.morePods);
  let lo = 0;
  let hi = 0;
  let without = 0;
  if (fitWeight > 0) {
    const now = fitScore(profile.fitScoring, here, pod);
    const a = fitScore(profile.fitScoring, none, pod);
    const b = fitScore(profile.fitScoring, all, pod);
    without += (a - now) * fitWeight;
    if (profile.fitScoring.type === 'RequestedToCapacityRatio' && a !== b) {
      lo += (0 - now) * fitWeight;
      hi += (MAX_NODE_SCORE - now) * fitWeight;
    } else {
      lo += (Math.min(a, b) - now) * fitWeight;
      hi += (Math.max(a, b) - now) * fitWeight;
    }
  }
  if (balancedWeight > 0) {
    const now = balancedScore(here, pod, resources, state.kubeVersion);
    const noneScore = balancedScore(none, pod, resources, state.kubeVersion);
    without += (noneScore - now) * balancedWeight;
    const range = balancedRange(none, noneScore, all, pod, state, resources) ?? { lo: 0, hi: MAX_NODE_SCORE };
    lo += (range.lo - now) * balancedWeight;
    hi += (range.hi - now) * balancedWeight;
  }
  // Stamped with what the node's bounds depend on, for scoreBounds' memo.
  return { usage: state.usageStamp(index), spans: state.pending.stamps[index]!, lo, hi, none: without, fitsAll };
}

/**
 * Bounds of the pod's total on each feasible node given the pending replacements (see the header), relative to the
 * total scored on the plan's state; `uncertainFit` when one of them may change whether the pod fits a node, which
 * leaves the scored set itself uncertain. Undefined when no unrelated replacement is pending on a feasible node. A
 * node's bounds are kept per kind of pod until its usage or its spans change: a plan places thousands of like
 * replacements onto the same few hundred nodes.
 */
export function scoreBounds(
  state: ClusterState,
  pod: PodInfo,
  gone: Placed | undefined,
  feasible: Int32Array,
  pending: Spans,
): { bounds: ScoreBounds; uncertainFit: boolean } | undefined {
  const profile = state.profileFor(pod);
  const spans = pending.byNode;
  if (profile === undefined || spans.size === 0) return undefined;
  const set = state.pending;
  const kind = podKind(pod, pod.schedulerName ?? '');
  let memo = set.memo.get(kind);
  if (memo === undefined) set.memo.set(kind, (memo = new Map<number, NodeBound>()));
  const n = feasible.length;
  let bounds: ScoreBounds | undefined;
  let uncertainFit = false;
  for (let k = 0; k < n; k++) {
    const index = feasible[k]!;
    const span = spans.get(index);
    if (span === undefined) continue;
    // A span with related replacements taken off, or the evicted pod's own node, is this placement's alone.
    const shared = span === set.baseSpan(index) && (gone === undefined || gone.node !== state.nodeList[index]);
    let b: NodeBound | undefined = shared ? memo.get(index) : undefined;
    if (b !== undefined && (b.usage !== state.usageStamp(index) || b.spans !== set.stamps[index])) b = undefined;
    if (b === undefined) {
      b = nodeBound(state, pod, profile, index, gone, span);
      if (shared) memo.set(index, b);
    }
    if (!b.fitsAll) uncertainFit = true;
    if (b.lo === 0 && b.hi === 0) continue;
    bounds ??= emptyBounds(n, pending.replacements);
    bounds.lo[k] = b.lo;
    bounds.hi[k] = b.hi;
    bounds.none[k] = b.none;
  }
  if (bounds === undefined && !uncertainFit) return undefined;
  return { bounds: bounds ?? emptyBounds(n, pending.replacements), uncertainFit };
}

/** Reused between placements: a placement reads its bounds before the next one is asked for (placement.ts). */
let boundsScratch = { lo: new Float64Array(1024), hi: new Float64Array(1024), none: new Float64Array(1024) };

function emptyBounds(n: number, replacements: number): ScoreBounds {
  if (boundsScratch.lo.length < n) {
    boundsScratch = { lo: new Float64Array(n * 2), hi: new Float64Array(n * 2), none: new Float64Array(n * 2) };
  }
  const { lo, hi, none } = boundsScratch;
  lo.fill(0, 0, n);
  hi.fill(0, 0, n);
  none.fill(0, 0, n);
  return { lo, hi, none, replacements };
}

/**
 * How many replacements beyond the `bounds.replacements` the prediction allowed for may land on the predicted nodes
 * (those whose highest total reaches lowestBest's answer) before the pod is scheduled, with the pod still sure to land
 * among them: the slack of the landing order (eviction/landingOrder.ts), which lets replacements sent later overtake
 * an earlier one only that many times. `leftOut`: the highest total a node left out of the prediction can reach
 * (-Infinity when none is left out: the slack is then Infinity).
 *
 * Each extra landing spoils at most one node: it may take a node below its lowest total, and it takes one of the nodes
 * without a pending replacement. So with X extra, the best still reaches the (X + 1)-th highest lowest total and the
 * (replacements + X + 1)-th highest total without a pending replacement; the prediction stands while either is above
 * the highest total a node left out can reach. Counting nodes, not levels, matters: at 1,000 nodes the top level may
 * be ten nodes out of 250 possible landings, and the 11th replacement to overtake drains it, leaving a level of nodes
 * the prediction never named (issue 29).
 */
export function landingSlack(
  totals: Float64Array,
  n: number,
  bounds: ScoreBounds | undefined,
  leftOut: number,
): number {
  if (leftOut === -Infinity) return Infinity;
  let aboveLowest = 0;
  let aboveWithout = 0;
  for (let k = 0; k < n; k++) {
    if (totals[k]! + (bounds === undefined ? 0 : bounds.lo[k]!) > leftOut) aboveLowest++;
    if (totals[k]! + (bounds === undefined ? 0 : bounds.none[k]!) > leftOut) aboveWithout++;
  }
  const replacements = bounds === undefined ? 0 : bounds.replacements;
  return Math.max(0, aboveLowest - 1, aboveWithout - replacements - 1);
}

let totalsScratch = new Float64Array(1024);

/**
 * The lowest total the best of the nodes can have: at least every node's lowest, and, since each pending replacement
 * lands on one node, at least the (replacements + 1)-th highest total of the nodes without any of them.
 */
export function lowestBest(totals: Float64Array, n: number, bounds: ScoreBounds | undefined): number {
  let top = -Infinity;
  for (let k = 0; k < n; k++) top = Math.max(top, totals[k]! + (bounds === undefined ? 0 : bounds.lo[k]!));
  if (bounds === undefined || bounds.replacements >= n) return top;
  if (totalsScratch.length < n) totalsScratch = new Float64Array(n * 2);
  const without = totalsScratch.subarray(0, n);
  for (let k = 0; k < n; k++) without[k] = totals[k]! + bounds.none[k]!;
  // Ascending: the (replacements + 1)-th highest is that far from the end.
  without.sort();
  return Math.max(top, without[n - 1 - bounds.replacements]!);
}

/**
 * Nodes the filters refused on the plan's state that could take the pod if the pending replacements placed there
 * land elsewhere: the unrelated replacements change only the node's fit, so such a node is possible when every other
 * filter (`othersPass`) admits it and it fits without them.
 */
export function maybeFeasible(
  state: ClusterState,
  pod: PodInfo,
  gone: Placed | undefined,
  refused: readonly number[],
  pending: Spans,
  othersPass: (index: number) => boolean,
): number[] {
  const out: number[] = [];
  for (const index of refused) {
    const span = pending.byNode.get(index);
    if (span === undefined || span.placedPods === 0 || !othersPass(index)) continue;
    const node = state.nodeList[index]!;
    const none = shifted(noneScratch, nodeLoad(state, index, node, gone), span, false);
    const usage = state.usageAt(index);
    const podsNow = usage.pods - (gone !== undefined && gone.node === node ? 1 : 0) - span.placedPods;
    if (fits(state, pod, none, podsNow)) out.push(index);
  }
  return out;
}
