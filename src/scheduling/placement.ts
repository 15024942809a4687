// Where would the scheduler put a replacement? kube-scheduler v1.26's default profile: the filters that matter for a
// pod that was already schedulable once — NodeUnschedulable, NodeResourcesFit, NodeAffinity, TaintToleration,
// InterPodAffinity (both directions), VolumeBinding (a bound volume's node affinity) and PodTopologySpread
// (DoNotSchedule), all through dynamicProblem() and staticallyAdmitting() — then the weighted, normalised score
// plugins (scores/total.ts) over the feasible nodes. The scheduler picks at random among the nodes sharing the top
// score, so a placement names all of them: `node` and `ties`.
//
// The evicted pod is still terminating when its replacement is scheduled (the Eviction API deletes with a grace
// period and the controller replaces it at once). Upstream, it then still holds its node's cpu, memory and pod slot
// (NodeResourcesFit counts every pod the node runs) and still counts for InterPodAffinity (which does not skip
// terminating pods), while PodTopologySpread skips it. If no node is feasible while it terminates, the scheduler
// retries once it is deleted (the deletion requeues the pending pod), so the placement is then made with it gone.
import { nodeAdmitsPod } from '../model/admission.js';
import { labelValue, matchesSelector } from '../model/labels.js';
import { requiredAffinityProblem } from '../model/podAffinity.js';
import { tolerationsText } from '../model/taints.js';
import { volumeKey, volumesReachable } from '../model/volumes.js';
import type { NodeInfo, PodAffinityTerm, PodInfo, SpreadConstraint } from '../model/types.js';
import type { AntiAffinityCheck, ClusterState, Placed, TermCounts } from './clusterState.js';
import { portAndVolumeProblem } from './filters/index.js';
import { missingNodeFeature } from './filters/nodeDeclaredFeatures.js';
import { scoreNodes, type EvictedView } from './scores/total.js';

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
}

/** Everything about the pod being placed that does not depend on the candidate node. */
interface PlacementContext {
  readonly state: ClusterState;
  readonly pod: PodInfo;
  readonly evicted: Placed | undefined;
  /** The evicted pod is still terminating on its node (see the header); otherwise it is gone. */
  readonly terminating: boolean;
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

function buildContext(
  state: ClusterState,
  pod: PodInfo,
  evicted: Placed | undefined,
  terminating = false,
): PlacementContext {
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
    };
  });
  // While terminating, the evicted pod still counts for InterPodAffinity: nothing is taken out of the counts.
  const gone = terminating ? undefined : evicted;
  const evictedDomain = (term: PodAffinityTerm): string | undefined =>
    gone && state.termMatches(term, pod, gone.pod) ? labelValue(gone.node.labels, term.topologyKey) : undefined;
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
          others: state
            .podsMatchingAll(terms, pod)
            .filter((o) => o.pod !== gone?.pod && (o.pod !== pod || terminating)),
          self: terms.every((t) => state.termMatches(t, pod, pod)),
        };
  const antiAgainst = state.antiAffinityAgainst(pod, gone);
  return { state, pod, evicted, terminating, spread, antiAgainst, ownAnti, ownAffinity };
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
  const freed =
    !ctx.terminating && ctx.evicted !== undefined && ctx.evicted.node === node ? ctx.evicted.pod : undefined;
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
    const used = (usage.requested[name] ?? 0) - ((freed?.held?.requests ?? freed?.requests)?.[name] ?? 0);
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
  const features = pod.requiredFeatures?.join(',') ?? '';
  const key = `admit\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}\u0000${volumeKey(pod)}\u0000${features}`;
  return state.memo(key, () => {
    const out: number[] = [];
    for (const i of zoneInterleaved(state)) {
      const node = state.nodeList[i]!;
      if (nodeAdmitsPod(pod, node) && volumesReachable(pod, node) && nodeFeaturesAdmit(state, pod, node)) out.push(i);
    }
    return out;
  });
}

function nodeFeaturesAdmit(state: ClusterState, pod: PodInfo, node: NodeInfo): boolean {
  return pod.requiredFeatures === undefined || missingNodeFeature(state.kubeVersion, pod, node) === undefined;
}

/**
 * Node indices in the order kube-scheduler walks its node tree: one node of each zone in turn (zones in order of
 * first appearance), so a search that stops early still sees every zone.
 */
function zoneInterleaved(state: ClusterState): readonly number[] {
  return state.memo('zoneInterleaved', () => {
    const zones = new Map<string, number[]>();
    state.nodeList.forEach((node, i) => {
      const key = `${node.labels['topology.kubernetes.io/region'] ?? ''}:\u0000:${node.labels['topology.kubernetes.io/zone'] ?? ''}`;
      const list = zones.get(key);
      if (list) list.push(i);
      else zones.set(key, [i]);
    });
    const lists = [...zones.values()];
    const out: number[] = [];
    for (let k = 0; out.length < state.nodeList.length; k++)
      for (const list of lists) if (k < list.length) out.push(list[k]!);
    return out;
  });
}

/**
 * How many feasible nodes the scheduler looks for before it stops filtering: the configuration's
 * percentageOfNodesToScore, or when it is 0 or unset the adaptive default (50% minus 1% per 125 nodes, at least 5%);
 * never fewer than 100 nodes.
 */
export function feasibleNodesToFind(nodes: number, percentageOfNodesToScore = 0): number {
  if (nodes <= 100) return nodes;
  const percentage =
    percentageOfNodesToScore > 0 ? percentageOfNodesToScore : Math.max(5, 50 - Math.floor(nodes / 125));
  return Math.max(100, Math.floor((nodes * percentage) / 100));
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
  const { state } = ctx;
  if (feasibleBuffer.length < admitting.length) {
    feasibleBuffer = new Int32Array(admitting.length * 2);
    totalsBuffer = new Float64Array(admitting.length * 2);
  }
  const feasible = feasibleBuffer;
  const enough = feasibleNodesToFind(state.nodeList.length, state.profile.percentageOfNodesToScore);
  let n = 0;
  for (let k = 0; k < admitting.length && n < enough; k++) {
    const index = admitting[k]!;
    if (dynamicProblem(ctx, state.nodeList[index]!, index) === undefined) feasible[n++] = index;
  }
  if (n === 0) return { node: undefined, ties: NO_TIES, reason: undefined };
  // One feasible node: the scheduler skips scoring.
  if (n === 1) return { node: state.nodeList[feasible[0]!]!, ties: NO_TIES, reason: undefined };
  const totals = totalsBuffer;
  scoreNodes(state, ctx.pod, evictedView(ctx), feasible.subarray(0, n), totals);
  let top = -Infinity;
  for (let k = 0; k < n; k++) if (totals[k]! > top) top = totals[k]!;
  const best: NodeInfo[] = [];
  for (let k = 0; k < n; k++) if (totals[k] === top) best.push(state.nodeList[feasible[k]!]!);
  if (best.length > 1) best.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { node: best[0], ties: best.length > 1 ? best.slice(1) : NO_TIES, reason: undefined };
}

function evictedView(ctx: PlacementContext): EvictedView {
  return ctx.terminating
    ? { terminating: ctx.evicted, gone: undefined }
    : { terminating: undefined, gone: ctx.evicted };
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
  scoreNodes(state, pod, evictedView(ctx), feasible, totals, plugins);
  return [...feasible].map((i, k) => ({ node: state.nodeList[i]!.name, total: totals[k]!, plugins: plugins[k] ?? {} }));
}

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
    if (!nodeFeaturesAdmit(state, pod, node)) return false;
    return (scope === 'all' ? dynamicProblem(ctx, node, index) : interPodProblem(ctx, node)) === undefined;
  };
}

/** Whether the scheduler could place the replacement on this particular node. */
export function canPlaceOn(state: ClusterState, pod: PodInfo, evicted: Placed | undefined, node: NodeInfo): boolean {
  return placementCheck(state, pod, evicted)(node);
}
