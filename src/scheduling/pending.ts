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
import { matchesSelector } from '../model/labels.js';
import { minorOf } from '../model/kubeVersion.js';
import type { PodAffinityTerm, PodInfo } from '../model/types.js';
import type { ClusterState, Placed } from './clusterState.js';
import { MAX_NODE_SCORE } from './framework/normalize.js';
import { controllerSelector } from './plugins/podTopologySpread/score.js';
import { DEFAULT_BALANCED_RESOURCES, fitIgnores } from './plugins/nodeResources/args.js';
import { balancedScore } from './plugins/nodeResources/balancedAllocation.js';
import { fitScore, nodeLoad, type NodeLoad } from './plugins/nodeResources/resourceAllocation.js';
import { heldOf, nonZeroRequests } from './state/nodeUsage.js';
import type { SchedulerProfile } from './profile.js';

/** A replacement on its way: the pod it replaces (same spec and labels), and the node indices it may land on. */
export interface PendingLanding {
  readonly pod: PodInfo;
  readonly nodes: readonly number[];
  /** Where the plan's state has it (a replacement planned earlier in this plan); undefined: on no node yet. */
  readonly at: number | undefined;
}

function sameWorkload(a: PodInfo, b: PodInfo): boolean {
  if (a.namespace !== b.namespace) return false;
  if (a.owner === undefined || b.owner === undefined) return a.uid === b.uid;
  return a.owner.kind === b.owner.kind && a.owner.name === b.owner.name;
}

function termsOf(p: PodInfo): PodAffinityTerm[] {
  return [
    ...p.podAffinity,
    ...p.podAntiAffinity,
    ...(p.preferredPodAffinity ?? []).map((w) => w.term),
    ...(p.preferredPodAntiAffinity ?? []).map((w) => w.term),
  ];
}

function hasTerms(p: PodInfo): boolean {
  return (
    p.podAffinity.length > 0 ||
    p.podAntiAffinity.length > 0 ||
    (p.preferredPodAffinity?.length ?? 0) > 0 ||
    (p.preferredPodAntiAffinity?.length ?? 0) > 0
  );
}

/** A term that may select pods outside its owner's namespace (listed namespaces, a namespace selector). */
function reachesOtherNamespaces(p: PodInfo): boolean {
  return termsOf(p).some((t) => t.namespaces.length > 0 || t.namespaceSelector !== undefined);
}

/**
 * Whether one of `owner`'s inter-pod terms may select `other` (its filter or score then reads where `other` is). A
 * namespace selector is taken to match any namespace: the namespaces' labels are not at hand here.
 */
function termsReach(owner: PodInfo, other: PodInfo): boolean {
  for (const t of termsOf(owner)) {
    const own = t.namespaces.length === 0 && t.namespaceSelector === undefined;
    const ns = own
      ? other.namespace === owner.namespace
      : t.namespaceSelector !== undefined || t.namespaces.includes(other.namespace);
    if (ns && matchesSelector(t.selector, other.labels)) return true;
  }
  return false;
}

/** Node-level state beyond cpu, memory and the pod count that the pod holds: host ports, volumes. */
function holdsMore(p: PodInfo): boolean {
  return (
    p.hostPorts.length > 0 ||
    p.volumeTopology.length > 0 ||
    (p.csiVolumes?.length ?? 0) > 0 ||
    (p.readWriteOncePodClaims?.length ?? 0) > 0 ||
    (p.resourceClaims?.length ?? 0) > 0
  );
}

/** Whether `counter`'s spread constraints (its own, or the defaults from its controller) count `other`. */
function spreadCounts(counter: PodInfo, other: PodInfo): boolean {
  if (counter.namespace !== other.namespace) return false;
  if (counter.spreadConstraints.length > 0) {
    return counter.spreadConstraints.some((c) => matchesSelector(c.selector, other.labels));
  }
  const derived = controllerSelector(counter);
  return derived !== undefined && matchesSelector(derived, other.labels);
}

/**
 * Whether where one of the two replacements lands changes the other's prediction beyond its node's resources (see
 * the header). Symmetric.
 */
export function relatedLandings(a: PodInfo, b: PodInfo): boolean {
  if (sameWorkload(a, b)) return true;
  if (holdsMore(a) || holdsMore(b)) return true;
  if ((hasTerms(a) && termsReach(a, b)) || (hasTerms(b) && termsReach(b, a))) return true;
  return spreadCounts(a, b) || spreadCounts(b, a);
}

/**
 * Per feasible node: how far its total may fall below (`lo`) or rise above (`hi`) the one scored, and what it is with
 * none of the pending replacements on it (`none`), each relative to the total scored (0 when certain); and how many
 * replacements are pending: a replacement lands on one node, so all but that many nodes score their `none`.
 */
export interface ScoreBounds {
  readonly lo: Float64Array;
  readonly hi: Float64Array;
  readonly none: Float64Array;
  readonly replacements: number;
}

/** What the pending replacements may add to one node: nothing, or all of those that may land there. */
export interface NodeSpan {
  /** Requests the plan's state has on the node from pending replacements placed there (taken off for "none"). */
  readonly placed: Record<string, number>;
  placedPods: number;
  placedCpu: number;
  placedMemory: number;
  /** Requests of every pending replacement that may land there and is not placed there. */
  readonly more: Record<string, number>;
  morePods: number;
  moreCpu: number;
  moreMemory: number;
}

function newSpan(): NodeSpan {
  return { placed: {}, placedPods: 0, placedCpu: 0, placedMemory: 0, more: {}, morePods: 0, moreCpu: 0, moreMemory: 0 };
}

function addTo(s: NodeSpan, p: PodInfo, placed: boolean, sign: 1 | -1, version: ClusterState['kubeVersion']): void {
  const { requests, nonZeroRequests: nz } = heldOf(p, version);
  const into = placed ? s.placed : s.more;
  for (const k in requests) into[k] = (into[k] ?? 0) + sign * requests[k]!;
  if (placed) {
    s.placedPods += sign;
    s.placedCpu += sign * nz.cpu;
    s.placedMemory += sign * nz.memory;
  } else {
    s.morePods += sign;
    s.moreCpu += sign * nz.cpu;
    s.moreMemory += sign * nz.memory;
  }
}

/**
 * The replacements on their way, with what they may add to each node kept up to date as they come and go: a
 * placement asks for its spans once per node it scores, at 1,000 nodes with hundreds of replacements in flight.
 */
export class PendingSet {
  private readonly list: PendingLanding[] = [];
  /** Spans of the replacements related to no other pod by kind (no terms, no host ports or volumes). */
  private readonly spans = new Map<number, NodeSpan>();
  /** How many replacements the spans hold. */
  private spanned = 0;
  /** The same replacements by namespace: the only ones a pod's spread can count or that share its workload. */
  private readonly byNamespace = new Map<string, PendingLanding[]>();
  /** The pending replacements related to every pod (host ports, volumes): never in the spans. */
  private readonly opaque: PendingLanding[] = [];
  /** Those whose inter-pod terms may select pods of other namespaces: checked against every pod. */
  private readonly farReaching: PendingLanding[] = [];

  /** Bumped per node whenever the spans there change (a per-node memo of score bounds is valid for one stamp). */
  readonly stamps: Uint32Array;
  /** Score bounds already worked out, by the placed pod's kind (its requests and profile), then node index. */
  readonly memo = new Map<string, Map<number, NodeBound>>();

  constructor(
    private readonly version: ClusterState['kubeVersion'],
    nodeCount: number,
  ) {
    this.stamps = new Uint32Array(nodeCount);
  }

  /** The base span of a node (shared by every pod unrelated to all of the node's replacements). */
  baseSpan(index: number): NodeSpan | undefined {
    return this.spans.get(index);
  }

  get size(): number {
    return this.list.length;
  }

  all(): readonly PendingLanding[] {
    return this.list;
  }

  add(p: PendingLanding): void {
    this.list.push(p);
    this.apply(p, 1);
  }

  /** Withdraws the last one added, which must be `pod`'s. */
  withdraw(pod: PodInfo): void {
    const last = this.list[this.list.length - 1];
    if (last?.pod !== pod) throw new Error('PendingSet.withdraw: withdrawals must reverse the order of adds');
    this.list.pop();
    this.apply(last, -1);
  }

  private apply(p: PendingLanding, sign: 1 | -1): void {
    if (holdsMore(p.pod)) {
      if (sign > 0) this.opaque.push(p);
      else this.opaque.splice(this.opaque.lastIndexOf(p), 1);
      return;
    }
    if (reachesOtherNamespaces(p.pod)) {
      if (sign > 0) this.farReaching.push(p);
      else this.farReaching.splice(this.farReaching.lastIndexOf(p), 1);
    }
    let ns = this.byNamespace.get(p.pod.namespace);
    if (ns === undefined) this.byNamespace.set(p.pod.namespace, (ns = []));
    if (sign > 0) ns.push(p);
    else ns.splice(ns.lastIndexOf(p), 1);
    this.spanned += sign;
    // Even a replacement with one possible landing is pending: the pod placed after it may be scheduled before it.
    for (const i of p.nodes) {
      let s = this.spans.get(i);
      if (s === undefined) this.spans.set(i, (s = newSpan()));
      addTo(s, p.pod, i === p.at, sign, this.version);
      this.stamps[i]!++;
    }
  }

  /** A replacement on no node yet (in flight) related to `pod`, if any: the pod's prediction must wait for it. */
  relatedInFlight(pod: PodInfo): PendingLanding | undefined {
    const inFlight = (p: PendingLanding): boolean => p.at === undefined;
    const opaque = this.opaque.find(inFlight);
    if (opaque !== undefined) return opaque;
    if (holdsMore(pod)) return this.list.find(inFlight);
    return this.candidates(pod).find((p) => inFlight(p) && relatedLandings(p.pod, pod));
  }

  /** The spanned replacements that can be related to `pod`: its namespace's, and those whose terms reach further. */
  private candidates(pod: PodInfo): PendingLanding[] {
    if (reachesOtherNamespaces(pod)) return this.list.filter((p) => !holdsMore(p.pod));
    const own = this.byNamespace.get(pod.namespace) ?? [];
    const far = this.farReaching.filter((p) => p.pod.namespace !== pod.namespace);
    return far.length === 0 ? own : [...own, ...far];
  }

  /**
   * The spans of the pending replacements unrelated to `pod`, by node index; undefined when there is none. A pod with
   * terms, host ports or volumes is related to every one.
   */
  spansFor(pod: PodInfo): Spans | undefined {
    if (this.spans.size === 0 || holdsMore(pod)) return undefined;
    const related = this.candidates(pod).filter((p) => relatedLandings(p.pod, pod));
    if (related.length === 0) return { byNode: this.spans, replacements: this.spanned };
    if (related.length === this.spanned) return undefined;
    // A few related ones (the pod's own workload, a shared selector): taken off copies of the spans they touch.
    const out = new Map(this.spans);
    for (const p of related) {
      for (const i of p.nodes) {
        const base = out.get(i)!;
        const copy = base === this.spans.get(i) ? cloneSpan(base) : base;
        addTo(copy, p.pod, i === p.at, -1, this.version);
        out.set(i, copy);
      }
    }
    return { byNode: out, replacements: this.spanned - related.length };
  }
}

/** What the unrelated pending replacements may add, by node index, and how many replacements that is. */
export interface Spans {
  readonly byNode: ReadonlyMap<number, NodeSpan>;
  readonly replacements: number;
}

function cloneSpan(s: NodeSpan): NodeSpan {
  return { ...s, placed: { ...s.placed }, more: { ...s.more } };
}

/** `load` shifted: the placed pending replacements taken off (`none`), or every one that may land there added. */
function shifted(load: NodeLoad, span: NodeSpan, all: boolean): NodeLoad {
  const requested: Record<string, number> = { ...load.requested };
  for (const k in span.placed) requested[k] = (requested[k] ?? 0) - span.placed[k]!;
  let cpu = load.nonZeroCpu - span.placedCpu;
  let memory = load.nonZeroMemory - span.placedMemory;
  if (all) {
    for (const k in span.placed) requested[k] = requested[k]! + span.placed[k]!;
    for (const k in span.more) requested[k] = (requested[k] ?? 0) + span.more[k]!;
    cpu += span.placedCpu + span.moreCpu;
    memory += span.placedMemory + span.moreMemory;
  }
  return { allocatable: load.allocatable, requested, nonZeroCpu: cpu, nonZeroMemory: memory };
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

/**
 * The two-resource BalancedAllocation score's range over every request between `none` and `all` (a box: each
 * fraction moves independently between its ends). Undefined when the plugin scores more resources than two.
 */
function balancedRange(
  none: NodeLoad,
  all: NodeLoad,
  pod: PodInfo,
  state: ClusterState,
  resources: readonly { name: string; weight: number }[],
): { lo: number; hi: number } | undefined {
  const a = balancedScore(none, pod, resources, state.kubeVersion);
  const b = balancedScore(all, pod, resources, state.kubeVersion);
  if (a === b) return { lo: a, hi: a };
  // Between the ends the fractions' difference may cross zero, where the score peaks: bound it by the plugin's range
  // unless the difference keeps its sign (then the ends are the extremes of a monotone score).
  if (resources.length !== 2) return undefined;
  const frac = (load: NodeLoad, name: string, withPod: boolean): number => {
    const cap = load.allocatable[name] ?? 0;
    if (cap === 0) return 0;
    return Math.min(1, ((load.requested[name] ?? 0) + (withPod ? (pod.requests[name] ?? 0) : 0)) / cap);
  };
  const [r0, r1] = [resources[0]!.name, resources[1]!.name];
  const signs = [false, true].flatMap((withPod) => [
    Math.sign(frac(none, r0, withPod) - frac(none, r1, withPod)),
    Math.sign(frac(all, r0, withPod) - frac(all, r1, withPod)),
  ]);
  const crosses = signs.some((s) => s > 0) && signs.some((s) => s < 0);
  if (!crosses && minorOf(state.kubeVersion) < 36) return { lo: Math.min(a, b), hi: Math.max(a, b) };
  // From 1.36 the score is the change the pod makes (with − without), each side moving on its own: the plugin's range.
  return { lo: 0, hi: MAX_NODE_SCORE };
}

/** One node's bounds for one kind of pod, relative to its scored total (see ScoreBounds), and whether it fits them all. */
export interface NodeBound {
  readonly usage: number;
  readonly spans: number;
  readonly lo: number;
  readonly hi: number;
  readonly none: number;
  readonly fitsAll: boolean;
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
): Omit<NodeBound, 'usage' | 'spans'> {
  const fitWeight = profile.scoreWeights['NodeResourcesFit'] ?? 0;
  const balancedWeight = profile.scoreWeights['NodeResourcesBalancedAllocation'] ?? 0;
  const resources = profile.balancedResources ?? DEFAULT_BALANCED_RESOURCES;
  const node = state.nodeList[index]!;
  const load = nodeLoad(state, index, node, gone);
  const here = { ...load, requested: { ...load.requested } };
  const none = shifted(here, span, false);
  const all = shifted(here, span, true);
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
    without += (balancedScore(none, pod, resources, state.kubeVersion) - now) * balancedWeight;
    const range = balancedRange(none, all, pod, state, resources) ?? { lo: 0, hi: MAX_NODE_SCORE };
    lo += (range.lo - now) * balancedWeight;
    hi += (range.hi - now) * balancedWeight;
  }
  return { lo, hi, none: without, fitsAll };
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
    let b: Omit<NodeBound, 'usage' | 'spans'> | undefined = shared ? memo.get(index) : undefined;
    if (b !== undefined) {
      const m = b as NodeBound;
      if (m.usage !== state.usageStamp(index) || m.spans !== set.stamps[index]) b = undefined;
    }
    if (b === undefined) {
      b = nodeBound(state, pod, profile, index, gone, span);
      if (shared) memo.set(index, { ...b, usage: state.usageStamp(index), spans: set.stamps[index]! });
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

function emptyBounds(n: number, replacements: number): ScoreBounds {
  return { lo: new Float64Array(n), hi: new Float64Array(n), none: new Float64Array(n), replacements };
}

/**
 * The lowest total the best of the nodes can have: at least every node's lowest, and, since each pending replacement
 * lands on one node, at least the (replacements + 1)-th highest total of the nodes without any of them.
 */
export function lowestBest(totals: Float64Array, n: number, bounds: ScoreBounds | undefined): number {
  let top = -Infinity;
  for (let k = 0; k < n; k++) top = Math.max(top, totals[k]! + (bounds === undefined ? 0 : bounds.lo[k]!));
  if (bounds === undefined || bounds.replacements >= n) return top;
  const without = Array.from({ length: n }, (_, k) => totals[k]! + bounds.none[k]!).sort((a, b) => b - a);
  return Math.max(top, without[bounds.replacements]!);
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
    const load = nodeLoad(state, index, node, gone);
    const none = shifted({ ...load, requested: { ...load.requested } }, span, false);
    const usage = state.usageAt(index);
    const podsNow = usage.pods - (gone !== undefined && gone.node === node ? 1 : 0) - span.placedPods;
    if (fits(state, pod, none, podsNow)) out.push(index);
  }
  return out;
}
