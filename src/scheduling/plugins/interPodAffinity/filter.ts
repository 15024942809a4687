// InterPodAffinity's filter (kube-scheduler v1.26, both directions): the pod's own required anti-affinity (no
// matching pod in the node's domain), existing pods' required anti-affinity towards it, and its own required affinity
// as the scheduler checks it (model/podAffinity.ts). While the evicted pod terminates it still counts: upstream's
// InterPodAffinity does not skip terminating pods.
import { labelValue } from '../../../model/labels.js';
import { requiredAffinityProblem } from '../../../model/podAffinity.js';
import type { PodAffinityTerm } from '../../../model/types.js';
import type { FilterPlugin, NodeFilter, PlacementInput } from '../../framework/interface.js';

export const interPodAffinityFilter: FilterPlugin = {
  name: 'InterPodAffinity',
  preFilter: interPodFilterOf,
};

/** The filter for one pod (also the nodeFit-off check of placementCheck, which applies only this one). */
export function interPodFilterOf({ state, pod, evicted, terminating }: PlacementInput): NodeFilter {
  const gone = terminating ? undefined : evicted;
  const evictedDomain = (term: PodAffinityTerm): string | undefined =>
    gone && state.termMatches(term, pod, gone.pod) ? labelValue(gone.node.labels, term.topologyKey) : undefined;
  // The replacement's own anti-affinity terms with the live pods they match, per domain.
  const ownAnti = pod.podAntiAffinity.map((term) => ({
    term,
    counts: state.matchCounts(term, pod),
    minus: evictedDomain(term),
  }));
  // Its required affinity: the live pods (the evicted one excluded) that match ALL its terms, which is what the
  // scheduler counts, and whether it matches all its own terms (first-pod rule).
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
  return (node) => {
    for (const a of ownAnti) {
      const domain = labelValue(node.labels, a.term.topologyKey);
      if (domain === undefined) continue;
      const n = (a.counts.perDomain.get(domain) ?? 0) - (a.minus === domain ? 1 : 0);
      if (n > 0) return `pod anti-affinity: a matching pod runs in ${a.term.topologyKey}`;
    }
    for (const check of antiAgainst) {
      const domain = labelValue(node.labels, check.term.topologyKey);
      if (domain === undefined) continue;
      const n = (check.perDomain.get(domain) ?? 0) - (check.exceptDomain === domain ? 1 : 0);
      if (n > 0) return `anti-affinity of other pods in ${check.term.topologyKey}`;
    }
    if (ownAffinity !== undefined) {
      const problem = requiredAffinityProblem(ownAffinity.terms, node, ownAffinity.others, ownAffinity.self);
      if (problem !== undefined) {
        return problem.domain === undefined
          ? `pod affinity: node has no ${problem.term.topologyKey} label`
          : `pod affinity: no matching pod in the ${problem.term.topologyKey} domain`;
      }
    }
    return undefined;
  };
}
