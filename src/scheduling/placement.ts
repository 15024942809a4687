// Where would the scheduler put a replacement? The filters of kube-scheduler that matter for a pod that was
// already schedulable once — NodeUnschedulable, NodeResourcesFit, NodeAffinity, TaintToleration,
// InterPodAffinity (both directions), VolumeBinding (a bound volume's node affinity) and PodTopologySpread
// (DoNotSchedule) — then, among feasible nodes, the node with the fewest matching pods in its domains
// (PodTopologySpread scoring), then the best preferred node affinity, then the fewest untolerated
// PreferNoSchedule taints, then the least allocated node.
// The evicted pod is treated as gone while its replacement is placed.
import { nodeAdmitsPod } from '../model/admission.js';
import { labelValue, matchesSelector } from '../model/labels.js';
import { preferredScore } from '../model/nodeAffinity.js';
import { requiredAffinityProblem } from '../model/podAffinity.js';
import { isTolerated, tolerationsText } from '../model/taints.js';
import { volumeKey, volumesReachable } from '../model/volumes.js';
import type { NodeInfo, PodAffinityTerm, PodInfo, SpreadConstraint } from '../model/types.js';
import type { AntiAffinityCheck, ClusterState, Placed, TermCounts } from './clusterState.js';
import { portAndVolumeProblem } from './filters/index.js';

/** One spread constraint of the pod being placed, with the evicted pod already taken out. */
interface SpreadTerm {
  readonly constraint: SpreadConstraint;
  readonly counts: ReadonlyMap<string, number>;
  /** The group's domain per node index. */
  readonly domains: readonly (string | undefined)[];
  /** The evicted pod's domain in this group, if it was counted there (its count is one less). */
  readonly minus: string | undefined;
  readonly min: number;
  readonly self: number;
  readonly weight: number;
}

/** Everything about the pod being placed that does not depend on the candidate node. */
interface PlacementContext {
  readonly state: ClusterState;
  readonly pod: PodInfo;
  readonly evicted: Placed | undefined;
  readonly spread: readonly SpreadTerm[];
  readonly antiAgainst: readonly AntiAffinityCheck[];
  /** The replacement's own anti-affinity terms with the live pods they match, per domain. */
  readonly ownAnti: ReadonlyArray<{
    readonly term: PodAffinityTerm;
    readonly counts: TermCounts;
    readonly minus: string | undefined;
  }>;
  /**
   * The replacement's required pod affinity: the live pods (the evicted one excluded) that match ALL its terms,
   * which is what the scheduler counts, and whether the replacement matches all its own terms (first-pod rule).
   */
  readonly ownAffinity:
    | { readonly terms: readonly PodAffinityTerm[]; readonly others: readonly Placed[]; readonly self: boolean }
    | undefined;
}

function minAfterRemoval(counts: ReadonlyMap<string, number>, minDomains: number, minus: string | undefined): number {
  if (counts.size < minDomains || counts.size === 0) return 0;
  let min = Infinity;
  for (const [domain, n] of counts) min = Math.min(min, domain === minus ? n - 1 : n);
  return min;
}

function buildContext(state: ClusterState, pod: PodInfo, evicted: Placed | undefined): PlacementContext {
  const spread = state.groupsOfMember(pod).map((group): SpreadTerm => {
    const counts = group.counts;
    const constraint = group.group.constraint;
    const minus =
      evicted && matchesSelector(constraint.selector, evicted.pod.labels)
        ? group.group.domainsByNode.get(evicted.node.name)
        : undefined;
    return {
      constraint,
      counts,
      domains: state.nodeDomains(group),
      minus,
      min: minAfterRemoval(counts, constraint.minDomains, minus),
      self: matchesSelector(constraint.selector, pod.labels) ? 1 : 0,
      // The scheduler weighs each constraint by log(domains + 2), so spreading over few domains counts more.
      weight: Math.log(counts.size + 2),
    };
  });
  const evictedDomain = (term: PodAffinityTerm): string | undefined =>
    evicted && state.termMatches(term, pod, evicted.pod)
      ? labelValue(evicted.node.labels, term.topologyKey)
      : undefined;
  const ownAnti = pod.podAntiAffinity.map((term) => ({
    term,
    counts: state.matchCounts(term, pod),
    minus: evictedDomain(term),
  }));
  const terms = pod.podAffinity;
  const ownAffinity =
    terms.length === 0
      ? undefined
      : {
          terms,
          others: state.podsMatchingAll(terms, pod).filter((o) => o.pod !== pod && o.pod !== evicted?.pod),
          self: terms.every((t) => state.termMatches(t, pod, pod)),
        };
  return { state, pod, evicted, spread, antiAgainst: state.antiAffinityAgainst(pod, evicted), ownAnti, ownAffinity };
}

function countIn(s: SpreadTerm, domain: string): number {
  return (s.counts.get(domain) ?? 0) - (domain === s.minus ? 1 : 0);
}

/** Why the node (at `index` in nodeList) cannot take the replacement beyond the static filters, or undefined. */
function dynamicProblem(ctx: PlacementContext, node: NodeInfo, index: number): string | undefined {
  return (
    portAndVolumeProblem(ctx, node) ??
    resourceShortfall(ctx, node, index) ??
    interPodProblem(ctx, node) ??
    spreadProblem(ctx, node, index)
  );
}

function resourceShortfall(ctx: PlacementContext, node: NodeInfo, index: number): string | undefined {
  const usage = ctx.state.usageAt(index);
  const freed = ctx.evicted !== undefined && ctx.evicted.node === node ? ctx.evicted.pod : undefined;
  const podCap = node.allocatable['pods'];
  if (podCap !== undefined && usage.pods - (freed ? 1 : 0) + 1 > podCap) return 'node has no room for another pod';
  const requests = ctx.pod.requests;
  for (const name in requests) {
    const amount = requests[name]!;
    if (amount <= 0) continue;
    const cap = node.allocatable[name];
    // A node that does not report a standard resource (a hand-written snapshot) is not limited by it;
    // an extended resource the node does not offer cannot be satisfied.
    if (cap === undefined) {
      if (name === 'cpu' || name === 'memory' || name === 'ephemeral-storage') continue;
      return `node has no ${name}`;
    }
    const used = (usage.requested[name] ?? 0) - (freed?.requests[name] ?? 0);
    if (used + amount > cap) return `insufficient ${name}`;
  }
  return undefined;
}

function interPodProblem(ctx: PlacementContext, node: NodeInfo): string | undefined {
  // The replacement's own anti-affinity: no live matching pod in the node's domain.
  for (const a of ctx.ownAnti) {
    const domain = labelValue(node.labels, a.term.topologyKey);
    if (domain === undefined) continue;
    const n = (a.counts.perDomain.get(domain) ?? 0) - (a.minus === domain ? 1 : 0);
    if (n > 0) return `pod anti-affinity: a matching pod runs in ${a.term.topologyKey}`;
  }
  // Existing pods' anti-affinity towards the replacement.
  for (const check of ctx.antiAgainst) {
    const domain = labelValue(node.labels, check.term.topologyKey);
    if (domain === undefined) continue;
    const n = (check.perDomain.get(domain) ?? 0) - (check.exceptDomain === domain ? 1 : 0);
    if (n > 0) return `anti-affinity of other pods in ${check.term.topologyKey}`;
  }
  // The replacement's required affinity, as the scheduler checks it (see requiredAffinityProblem).
  const a = ctx.ownAffinity;
  if (a !== undefined) {
    const problem = requiredAffinityProblem(a.terms, node, a.others, a.self);
    if (problem !== undefined) {
      return problem.domain === undefined
        ? `pod affinity: node has no ${problem.term.topologyKey} label`
        : `pod affinity: no matching pod in the ${problem.term.topologyKey} domain`;
    }
  }
  return undefined;
}

function spreadProblem(ctx: PlacementContext, node: NodeInfo, index: number): string | undefined {
  for (const s of ctx.spread) {
    if (s.constraint.whenUnsatisfiable !== 'DoNotSchedule') continue;
    // The filter needs the key on the node; eligibility (inclusion policies) only decides which domains count.
    const domain = s.domains[index] ?? labelValue(node.labels, s.constraint.topologyKey);
    if (domain === undefined) return `topology spread: node has no ${s.constraint.topologyKey} label`;
    const skew = countIn(s, domain) + s.self - s.min;
    if (skew > s.constraint.maxSkew)
      return `topology spread: maxSkew ${s.constraint.maxSkew} on ${s.constraint.topologyKey}`;
  }
  return undefined;
}

function spreadScore(ctx: PlacementContext, index: number): number {
  let spread = 0;
  for (const s of ctx.spread) {
    const domain = s.domains[index];
    if (domain !== undefined) spread += countIn(s, domain) * s.weight;
  }
  return Math.round(spread * 1e6);
}

/**
 * Tie-break after spread, lower is better, folded into one number: preferred node affinity (weights sum to at
 * most a few hundred), then untolerated PreferNoSchedule taints, then the fraction of cpu/memory allocated.
 */
function tieBreak(ctx: PlacementContext, node: NodeInfo, index: number): number {
  const pod = ctx.pod;
  const preferred = preferredScore(pod.preferredNodeAffinity, node);
  let softTaints = 0;
  for (const taint of node.taints)
    if (taint.effect === 'PreferNoSchedule' && !isTolerated(taint, pod.tolerations)) softTaints++;
  return -preferred * 1e6 + softTaints * 1e3 + Math.min(allocatedFraction(ctx, node, index), 999);
}

function allocatedFraction(ctx: PlacementContext, node: NodeInfo, index: number): number {
  const usage = ctx.state.usageAt(index);
  const freed = ctx.evicted !== undefined && ctx.evicted.node === node ? ctx.evicted.pod : undefined;
  let sum = 0;
  let n = 0;
  for (const name of ['cpu', 'memory']) {
    const cap = node.allocatable[name];
    if (!cap) continue;
    sum += ((usage.requested[name] ?? 0) - (freed?.requests[name] ?? 0) + (ctx.pod.requests[name] ?? 0)) / cap;
    n++;
  }
  return n === 0 ? 0 : sum / n;
}

export interface PlacementResult {
  /** The chosen node, or undefined when no node is feasible. */
  readonly node: NodeInfo | undefined;
  /** When no node is feasible: the most common reason, for the skipped list. */
  readonly reason:
    | string
    | undefined; /** The other nodes with the chosen node's top score (the scheduler picks among them at random). */
  readonly ties: readonly NodeInfo[];
}

/** Indices (into nodeList) of nodes that pass the filters depending only on the pod's spec. */
export function staticallyAdmitting(state: ClusterState, pod: PodInfo): readonly number[] {
  const key = `admit\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}\u0000${volumeKey(pod)}`;
  return state.memo(key, () => {
    const out: number[] = [];
    state.nodeList.forEach((node, i) => {
      if (nodeAdmitsPod(pod, node) && volumesReachable(pod, node)) out.push(i);
    });
    return out;
  });
}

/**
 * How many feasible nodes the scheduler looks for before it stops filtering (percentageOfNodesToScore's
 * adaptive default: 50% minus 1% per 125 nodes, at least 5%, and never fewer than 100 nodes).
 */
export function feasibleNodesToFind(nodes: number): number {
  if (nodes <= 100) return nodes;
  const percentage = Math.max(5, 50 - Math.floor(nodes / 125));
  return Math.max(100, Math.floor((nodes * percentage) / 100));
}

/**
 * Simulates scheduling a replacement of `pod` (same spec and labels) with `evicted` gone. Spread scores are
 * sums of small counts, so there are few distinct values: nodes are visited tier by tier, best tier first,
 * and the search stops in the first tier that has a feasible node, after at most as many feasible nodes as
 * the scheduler itself would score.
 */
export function placeReplacement(state: ClusterState, pod: PodInfo, evicted: Placed | undefined): PlacementResult {
  const ctx = buildContext(state, pod, evicted);
  const admitting = staticallyAdmitting(state, pod);
  if (admitting.length === 0) {
    return {
      node: undefined,
      ties: [],
      reason:
        pod.volumeTopology.length === 0
          ? 'no node can take a replacement (none is Ready, uncordoned, tolerated and matching its node affinity)'
          : 'no node can take a replacement (none is Ready, uncordoned, tolerated, matching its node affinity and able to reach its volumes)',
    };
  }
  if (scoreBuffer.length < admitting.length) scoreBuffer = new Float64Array(admitting.length * 2);
  const scores = scoreBuffer;
  const tiers = new Set<number>();
  for (let k = 0; k < admitting.length; k++) {
    scores[k] = spreadScore(ctx, admitting[k]!);
    tiers.add(scores[k]!);
  }
  const enough = feasibleNodesToFind(state.nodeList.length);
  const sortedTiers = tiers.size === 1 ? tiers : [...tiers].sort((a, b) => a - b);
  for (const tier of sortedTiers) {
    let best: NodeInfo | undefined;
    let bestTie = 0;
    let feasible = 0;
    for (let k = 0; k < admitting.length && feasible < enough; k++) {
      if (scores[k] !== tier) continue;
      const index = admitting[k]!;
      const node = state.nodeList[index]!;
      if (dynamicProblem(ctx, node, index) !== undefined) continue;
      feasible++;
      const tie = tieBreak(ctx, node, index);
      if (best === undefined || tie < bestTie || (tie === bestTie && node.name < best.name)) {
        best = node;
        bestTie = tie;
      }
    }
    if (best !== undefined) return { node: best, reason: undefined, ties: [] };
  }
  return { node: undefined, reason: whyNoNode(ctx, admitting), ties: [] };
}

/** Reused between placements: the planner places thousands of replacements per plan. */
let scoreBuffer = new Float64Array(1024);

/** The most common reason the admitting nodes refused the replacement (only computed when all did). */
function whyNoNode(ctx: PlacementContext, admitting: readonly number[]): string {
  const reasons = new Map<string, number>();
  for (const index of admitting) {
    const problem = dynamicProblem(ctx, ctx.state.nodeList[index]!, index);
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
  const ctx = buildContext(state, pod, evicted);
  return (node) => {
    const index = state.nodeIndex.get(node.name);
    if (index === undefined || !nodeAdmitsPod(pod, node) || !volumesReachable(pod, node)) return false;
    return (scope === 'all' ? dynamicProblem(ctx, node, index) : interPodProblem(ctx, node)) === undefined;
  };
}

/** Whether the scheduler could place the replacement on this particular node. */
export function canPlaceOn(state: ClusterState, pod: PodInfo, evicted: Placed | undefined, node: NodeInfo): boolean {
  return placementCheck(state, pod, evicted)(node);
}
