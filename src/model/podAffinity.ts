// Inter-pod (anti-)affinity terms with kube-scheduler's InterPodAffinity semantics: which pods a term selects, and
// whether a pod's required affinity holds on a node. The violation checks, the scheduler simulation and the
// planner's dependency check all read the rules from here.
import { labelValue, matchesSelector, selectorText } from './labels.js';
import type { Labels, NodeInfo, PodAffinityTerm, PodInfo } from './types.js';

/** A pod placed on a node, as the affinity checks see it. */
export interface PodOnNode {
  readonly pod: PodInfo;
  readonly node: NodeInfo;
}

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

/** `app=web @ kubernetes.io/hostname`, as reasons name a term. */
export function termText(term: PodAffinityTerm): string {
  return `${selectorText(term.selector)} @ ${term.topologyKey}`;
}
