// Rule violations of pods already running: node affinity, taints and required inter-pod (anti-)affinity,
// each checked the way the scheduler's filter would check the pod against its current node today.
import { labelValue, matchesSelector, selectorText } from '../model/labels.js';
import { matchesNodeSelectorTerm, matchesRequiredNodeAffinity } from '../model/nodeAffinity.js';
import { isTolerated, taintText } from '../model/taints.js';
import type {
  Labels,
  NodeInfo,
  PodAffinityTerm,
  PodInfo,
  PreferredSchedulingTerm,
  Taint,
  TaintEffect,
} from '../model/types.js';
import type { Strategy } from '../planner/types.js';
import type { PolicySpec, TaintMatcher } from '../policy/types.js';
import { tolerationsText } from './eligibility.js';
import { isCounted, type PodIndex } from './podIndex.js';
import type { NamespaceScope } from './scope.js';

export interface ViolationRecord {
  readonly strategy: Strategy;
  readonly pod: PodInfo;
  readonly node: string;
  readonly reason: string;
  /** Preferences (preferred node affinity, PreferNoSchedule) are reported; acting on them is the policy's choice. */
  readonly soft: boolean;
  /** For inter-pod anti-affinity: the other pod of the conflicting pair (evicting either clears it). */
  readonly peer?: PodInfo;
  /** For inter-pod anti-affinity: the pod whose required term is broken (`pod` or `peer`). */
  readonly ruleOwner?: PodInfo;
}

export interface ViolationContext {
  readonly spec: PolicySpec;
  readonly inScope: NamespaceScope;
  readonly nodes: ReadonlyMap<string, NodeInfo>;
  readonly index: PodIndex;
  readonly namespaceLabels: (namespace: string) => Labels;
}

// ---- node affinity ---------------------------------------------------------------------------------------------

function preferredScore(terms: readonly PreferredSchedulingTerm[], node: NodeInfo): number {
  let score = 0;
  for (const t of terms) if (matchesNodeSelectorTerm(t.term, node)) score += t.weight;
  return score;
}

/** Nodes a replacement could be scheduled on, ignoring resources: the scheduler's node-level filters. */
const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' };
const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' };

export function nodeAdmitsPod(pod: PodInfo, node: NodeInfo): boolean {
  // The node lifecycle controller taints cordoned and NotReady nodes; only pods tolerating that may land there.
  if (node.unschedulable && !isTolerated(UNSCHEDULABLE_TAINT, pod.tolerations)) return false;
  if (!node.ready && !isTolerated(NOT_READY_TAINT, pod.tolerations)) return false;
  if (!matchesRequiredNodeAffinity(pod.requiredNodeAffinity, node)) return false;
  for (const taint of node.taints) {
    if ((taint.effect === 'NoSchedule' || taint.effect === 'NoExecute') && !isTolerated(taint, pod.tolerations))
      return false;
  }
  return true;
}

function checkNodeAffinity(
  pod: PodInfo,
  node: NodeInfo,
  ctx: ViolationContext,
  bestScore: BestScore,
): ViolationRecord[] {
  const cfg = ctx.spec.strategies.nodeAffinity;
  const out: ViolationRecord[] = [];
  if (cfg.required && !matchesRequiredNodeAffinity(pod.requiredNodeAffinity, node)) {
    out.push({
      strategy: 'NodeAffinity',
      pod,
      node: node.name,
      soft: false,
      reason: `node ${node.name} no longer matches the pod's required node affinity (${pod.requiredNodeAffinity.text})`,
    });
  }
  if (pod.preferredNodeAffinity.length > 0) {
    const here = preferredScore(pod.preferredNodeAffinity, node);
    const best = bestScore(pod);
    if (best.score > here) {
      out.push({
        strategy: 'NodeAffinity',
        pod,
        node: node.name,
        soft: true,
        reason: `preferred node affinity scores ${here} on ${node.name}, ${best.node} scores ${best.score}`,
      });
    }
  }
  return out;
}

type BestScore = (pod: PodInfo) => { score: number; node: string };

/** Best preferred-affinity score over nodes that admit the pod; memoised, as replicas share their affinity. */
function bestScoreFinder(nodes: readonly NodeInfo[]): BestScore {
  const cache = new Map<string, { score: number; node: string }>();
  // Replicas share their converted (interned) term, affinity and toleration objects: the text key is built once
  // per distinct combination, not once per pod.
  const keys = new WeakMap<PodInfo['preferredNodeAffinity'], { pod: PodInfo; key: string }>();
  const keyOf = (pod: PodInfo): string => {
    const hit = keys.get(pod.preferredNodeAffinity);
    if (hit && hit.pod.requiredNodeAffinity === pod.requiredNodeAffinity && hit.pod.tolerations === pod.tolerations) {
      return hit.key;
    }
    const key = `${JSON.stringify(pod.preferredNodeAffinity)}\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}`;
    keys.set(pod.preferredNodeAffinity, { pod, key });
    return key;
  };
  return (pod) => {
    const key = keyOf(pod);
    let best = cache.get(key);
    if (!best) {
      best = { score: -1, node: '' };
      for (const node of nodes) {
        if (!nodeAdmitsPod(pod, node)) continue;
        const score = preferredScore(pod.preferredNodeAffinity, node);
        if (score > best.score) best = { score, node: node.name };
      }
      cache.set(key, best);
    }
    return best;
  };
}

// ---- taints ----------------------------------------------------------------------------------------------------

function isExcluded(taint: Taint, excluded: readonly TaintMatcher[]): boolean {
  return excluded.some((m) => m.key === taint.key && (m.value === undefined || m.value === taint.value));
}

function checkTaints(pod: PodInfo, node: NodeInfo, ctx: ViolationContext): ViolationRecord[] {
  const cfg = ctx.spec.strategies.nodeTaints;
  const out: ViolationRecord[] = [];
  for (const taint of node.taints) {
    const effect: TaintEffect = taint.effect;
    if (effect === 'PreferNoSchedule' && !cfg.includePreferNoSchedule) continue;
    if (isExcluded(taint, cfg.excludedTaints) || isTolerated(taint, pod.tolerations)) continue;
    out.push({
      strategy: 'NodeTaints',
      pod,
      node: node.name,
      soft: effect === 'PreferNoSchedule',
      reason: `node ${node.name} has taint ${taintText(taint)} that the pod does not tolerate`,
    });
  }
  return out;
}

// ---- inter-pod affinity ----------------------------------------------------------------------------------------

/** Whether a pod's namespace is one the term selects from. */
export function termSelectsNamespace(
  term: PodAffinityTerm,
  owner: PodInfo,
  namespace: string,
  namespaceLabels: (ns: string) => Labels,
): boolean {
  if (term.namespaces.length === 0 && term.namespaceSelector === undefined) return namespace === owner.namespace;
  if (term.namespaces.includes(namespace)) return true;
  return term.namespaceSelector !== undefined && matchesSelector(term.namespaceSelector, namespaceLabels(namespace));
}

/** Counted pods that a term matches (selector and namespaces), from the index. */
export function podsMatchingTerm(
  term: PodAffinityTerm,
  owner: PodInfo,
  ctx: Pick<ViolationContext, 'index' | 'namespaceLabels'>,
): PodInfo[] {
  const out: PodInfo[] = [];
  const namespaces =
    term.namespaces.length === 0 && term.namespaceSelector === undefined
      ? [owner.namespace]
      : [...ctx.index.namespaceNames()];
  for (const ns of namespaces) {
    if (!termSelectsNamespace(term, owner, ns, ctx.namespaceLabels)) continue;
    out.push(...ctx.index.select(ns, term.selector));
  }
  return out;
}

function termText(term: PodAffinityTerm): string {
  return `${selectorText(term.selector)} @ ${term.topologyKey}`;
}

function podRef(pod: PodInfo): string {
  return `${pod.namespace}/${pod.name}`;
}

interface AffinityScan {
  readonly nodeOf: (pod: PodInfo) => NodeInfo | undefined;
  readonly matches: (term: PodAffinityTerm, owner: PodInfo) => PodInfo[];
  /** Whether `owner`'s own anti-affinity (on ownerNode) excludes `target` on targetNode. */
  readonly excludes: (owner: PodInfo, ownerNode: NodeInfo, target: PodInfo, targetNode: NodeInfo) => boolean;
  /** Whether `pod` matches every one of `owner`'s terms. */
  readonly matchesAll: (terms: readonly PodAffinityTerm[], owner: PodInfo, pod: PodInfo) => boolean;
}

/** Whether one of owner's required anti-affinity terms matches target in the same topology domain. */
export function antiAffinityExcludes(
  owner: PodInfo,
  ownerNode: NodeInfo,
  target: PodInfo,
  targetNode: NodeInfo,
  namespaceLabels: (ns: string) => Labels,
): boolean {
  return owner.podAntiAffinity.some((term) => {
    const domain = labelValue(ownerNode.labels, term.topologyKey);
    return (
      domain !== undefined &&
      labelValue(targetNode.labels, term.topologyKey) === domain &&
      termSelectsNamespace(term, owner, target.namespace, namespaceLabels) &&
      matchesSelector(term.selector, target.labels)
    );
  });
}

function checkAntiAffinity(pod: PodInfo, node: NodeInfo, scan: AffinityScan, seen: Set<string>): ViolationRecord[] {
  const out: ViolationRecord[] = [];
  for (const term of pod.podAntiAffinity) {
    const domain = labelValue(node.labels, term.topologyKey);
    if (domain === undefined) continue;
    for (const other of scan.matches(term, pod)) {
      if (other === pod) continue;
      const otherNode = scan.nodeOf(other);
      if (!otherNode || labelValue(otherNode.labels, term.topologyKey) !== domain) continue;
      const reason = `required anti-affinity (${termText(term)}) matches ${podRef(other)} on ${otherNode.name} in ${term.topologyKey}=${domain}`;
      out.push({ strategy: 'PodAntiAffinity', pod, node: node.name, soft: false, reason, peer: other, ruleOwner: pod });
      // The other direction: the matched pod sits where this pod's rule forbids it. When the matched pod's own
      // rule also excludes this pod, it reports that itself; otherwise it gets an entry here.
      const pairKey = `${other.uid}\u0000${pod.uid}`;
      if (!seen.has(pairKey) && !scan.excludes(other, otherNode, pod, node)) {
        seen.add(pairKey);
        out.push({
          strategy: 'PodAntiAffinity',
          pod: other,
          node: otherNode.name,
          soft: false,
          reason: `${podRef(pod)}'s required anti-affinity (${termText(term)}) excludes this pod from ${term.topologyKey}=${domain}`,
          peer: pod,
          ruleOwner: pod,
        });
      }
    }
  }
  return out;
}

/** A pod placed on a node, as the affinity checks see it. */
export interface PodOnNode {
  readonly pod: PodInfo;
  readonly node: NodeInfo;
}

/** Whether a pod matches every one of `owner`'s terms (namespaces and selector). */
export function matchesAllTerms(
  terms: readonly PodAffinityTerm[],
  owner: PodInfo,
  pod: PodInfo,
  namespaceLabels: (ns: string) => Labels,
): boolean {
  return (
    terms.length > 0 &&
    terms.every(
      (t) => termSelectsNamespace(t, owner, pod.namespace, namespaceLabels) && matchesSelector(t.selector, pod.labels),
    )
  );
}

/**
 * kube-scheduler's InterPodAffinity check of a pod's required affinity on a node (satisfyPodAffinity).
 * `others` are the pods other than the pod itself that match ALL its affinity terms: upstream counts an existing
 * pod towards the terms' topology pairs only when it matches every term, so two terms satisfied by two different
 * pods are not satisfied. The node must carry every term's topology key, even for a first pod; then every term
 * needs such a pod in the node's domain, unless no such pod runs on any node carrying one of the terms' keys
 * (no topology pair counted at all) and the pod matches all its own terms (the first pod of a self-affine group).
 * Returns the first unmet term (with the node's domain, undefined when the node lacks the key), or undefined.
 */
export function requiredAffinityProblem(
  terms: readonly PodAffinityTerm[],
  node: NodeInfo,
  others: readonly PodOnNode[],
  matchesOwnTerms: boolean,
): { readonly term: PodAffinityTerm; readonly domain: string | undefined } | undefined {
  let unmet: { term: PodAffinityTerm; domain: string } | undefined;
  for (const term of terms) {
    const domain = labelValue(node.labels, term.topologyKey);
    if (domain === undefined) return { term, domain: undefined };
    if (unmet === undefined && !others.some((o) => labelValue(o.node.labels, term.topologyKey) === domain)) {
      unmet = { term, domain };
    }
  }
  if (unmet === undefined) return undefined;
  const anyPair = others.some((o) => terms.some((t) => labelValue(o.node.labels, t.topologyKey) !== undefined));
  return !anyPair && matchesOwnTerms ? undefined : unmet;
}

function checkAffinity(pod: PodInfo, node: NodeInfo, scan: AffinityScan): ViolationRecord[] {
  const terms = pod.podAffinity;
  const others: PodOnNode[] = [];
  for (const other of scan.matches(terms[0]!, pod)) {
    if (other === pod || !scan.matchesAll(terms, pod, other)) continue;
    const otherNode = scan.nodeOf(other);
    if (otherNode) others.push({ pod: other, node: otherNode });
  }
  const problem = requiredAffinityProblem(terms, node, others, scan.matchesAll(terms, pod, pod));
  if (problem === undefined) return [];
  const { term, domain } = problem;
  const which = terms.length === 1 ? 'matching pod' : `pod matching all ${terms.length} affinity terms`;
  return [
    {
      strategy: 'PodAffinity',
      pod,
      node: node.name,
      soft: false,
      reason:
        domain === undefined
          ? `node ${node.name} has no ${term.topologyKey} label required by pod affinity (${termText(term)})`
          : `required pod affinity (${termText(term)}) has no ${which} in ${term.topologyKey}=${domain}`,
    },
  ];
}

// ---- all together ----------------------------------------------------------------------------------------------

export function analyzeViolations(pods: readonly PodInfo[], ctx: ViolationContext): ViolationRecord[] {
  const { strategies } = ctx.spec;
  const bestScore = bestScoreFinder([...ctx.nodes.values()]);
  const termCache = new Map<string, PodInfo[]>();
  const scan: AffinityScan = {
    nodeOf: (p) => (p.nodeName === undefined ? undefined : ctx.nodes.get(p.nodeName)),
    matches: (term, owner) => {
      const key = `${owner.namespace}\u0000${selectorText(term.selector)}\u0000${term.namespaces.join(',')}\u0000${term.namespaceSelector ? selectorText(term.namespaceSelector) : '-'}`;
      let list = termCache.get(key);
      if (!list) {
        list = podsMatchingTerm(term, owner, ctx);
        termCache.set(key, list);
      }
      return list;
    },
    excludes: (owner, ownerNode, target, targetNode) =>
      antiAffinityExcludes(owner, ownerNode, target, targetNode, ctx.namespaceLabels),
    matchesAll: (terms, owner, pod) => matchesAllTerms(terms, owner, pod, ctx.namespaceLabels),
  };
  const seenPairs = new Set<string>();
  const out: ViolationRecord[] = [];
  for (const pod of pods) {
    if (!isCounted(pod) || !ctx.inScope(pod.namespace)) continue;
    const node = ctx.nodes.get(pod.nodeName!);
    if (!node) continue;
    if (strategies.nodeAffinity.enabled) out.push(...checkNodeAffinity(pod, node, ctx, bestScore));
    if (strategies.nodeTaints.enabled) out.push(...checkTaints(pod, node, ctx));
    if (strategies.podAntiAffinity.enabled && pod.podAntiAffinity.length > 0) {
      for (const v of checkAntiAffinity(pod, node, scan, seenPairs)) {
        // The reverse entry names a pod that may be outside the policy's namespaces; it is still reported on the owner.
        if (v.pod === pod || ctx.inScope(v.pod.namespace)) out.push(v);
      }
    }
    if (strategies.podAffinity.enabled && pod.podAffinity.length > 0) out.push(...checkAffinity(pod, node, scan));
  }
  return dedupe(out);
}

/** One entry per (strategy, pod, reason): a pair found from both sides is reported once per side. */
function dedupe(records: ViolationRecord[]): ViolationRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => {
    const key = `${r.strategy}\u0000${r.pod.uid}\u0000${r.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
