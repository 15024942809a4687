// Replacements whose landing is not known yet (scheduling/pending.ts says what they do to a prediction): which ones
// are related to a pod being placed, and what the others may add to each node, kept up to date as they come and go.
import { controllerSelector } from '../../model/controllerSelector.js';
import type { KubeVersion } from '../../model/kubeVersion.js';
import { matchesSelector } from '../../model/labels.js';
import type { PodAffinityTerm, PodInfo } from '../../model/types.js';
import { heldOf } from './nodeUsage.js';

/** A replacement on its way: the pod it replaces (same spec and labels), and the node indices it may land on. */
export interface PendingLanding {
  readonly pod: PodInfo;
  readonly nodes: readonly number[];
  /** Where the plan's state has it (a replacement planned earlier in this plan); undefined: on no node yet. */
  readonly at: number | undefined;
}

/** The planner's workload key (namespace, kind, name), compared field by field. */
function sameWorkload(a: PodInfo, b: PodInfo): boolean {
  return a.namespace === b.namespace && a.workload.kind === b.workload.kind && a.workload.name === b.workload.name;
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
  return hasTerms(p) && termsOf(p).some((t) => t.namespaces.length > 0 || t.namespaceSelector !== undefined);
}

/**
 * Whether one of `owner`'s inter-pod terms may select `other` (its filter or score then reads where `other` is). A
 * namespace selector is taken to match any namespace: the namespaces' labels are not at hand here.
 */
function termsReach(owner: PodInfo, other: PodInfo): boolean {
  if (!hasTerms(owner)) return false;
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
  if (termsReach(a, b) || termsReach(b, a)) return true;
  return spreadCounts(a, b) || spreadCounts(b, a);
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

function addTo(s: NodeSpan, p: PodInfo, placed: boolean, sign: 1 | -1, version: KubeVersion): void {
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
    private readonly version: KubeVersion,
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

/** One node's bounds for one kind of pod, relative to its scored total (see ScoreBounds), and whether it fits them all. */
export interface NodeBound {
  readonly usage: number;
  readonly spans: number;
  readonly lo: number;
  readonly hi: number;
  readonly none: number;
  readonly fitsAll: boolean;
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
