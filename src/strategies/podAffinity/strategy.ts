// PodAffinity: a running pod's required pod affinity no longer holds where it runs (its partners moved, or the
// node lost the topology label), checked as the scheduler's InterPodAffinity filter would check it today. Cleared
// by a replacement that lands next to its partners.
import { matchesAllTerms, requiredAffinityProblem, termText, type PodOnNode } from '../../model/podAffinity.js';
import { interPodClears } from '../sections.js';
import type { RuleStrategy } from '../types.js';
import { podAffinitySection, type PodAffinityConfig } from './policy.js';

const NAME = 'PodAffinity';

export const podAffinity: RuleStrategy<PodAffinityConfig, 'podAffinity'> = {
  kind: 'rule',
  name: NAME,
  key: 'podAffinity',
  policy: podAffinitySection,
  fixOrder: 4,

  detector: (ctx) => (pod, node, out) => {
    const terms = pod.podAffinity;
    if (terms.length === 0) return;
    // The scheduler counts an existing pod towards the terms only when it matches every one of them.
    const others: PodOnNode[] = [];
    for (const other of ctx.podsMatching(terms[0]!, pod)) {
      if (other === pod || !matchesAllTerms(terms, pod, other, ctx.namespaceLabels)) continue;
      const otherNode = ctx.nodeOf(other);
      if (otherNode) others.push({ pod: other, node: otherNode });
    }
    const problem = requiredAffinityProblem(terms, node, others, matchesAllTerms(terms, pod, pod, ctx.namespaceLabels));
    if (problem === undefined) return;
    const { term, domain } = problem;
    const which = terms.length === 1 ? 'matching pod' : `pod matching all ${terms.length} affinity terms`;
    out.push({
      strategy: NAME,
      pod,
      node: node.name,
      soft: false,
      reason:
        domain === undefined
          ? `node ${node.name} has no ${term.topologyKey} label required by pod affinity (${termText(term)})`
          : `required pod affinity (${termText(term)}) has no ${which} in ${term.topologyKey}=${domain}`,
    });
  },

  actsOnSoft: () => false,
  clears: (_v, pod, from, ctx) => interPodClears(pod, from, ctx),
  // A replacement with nowhere to go lands next to no partner: it cannot clear the rule.
  withoutTarget: false,
};
