// PodAntiAffinity: a required anti-affinity term of a running pod matches another pod in its topology domain
// (a label change put them together). Both pods are reported: the rule's owner, and the matched pod, which sits
// where the owner's rule forbids it. The planner clears one broken rule as a set: the owner moves, or every pod
// its rule matches in its domain does, whichever is fewer and can move entirely.
import { labelValue } from '../../model/labels.js';
import { antiAffinityExcludes, termText } from '../../model/podAffinity.js';
import type { PodInfo } from '../../model/types.js';
import { interPodClears } from '../sections.js';
import type { RuleStrategy } from '../types.js';
import { podAntiAffinitySection, type PodAntiAffinityConfig } from './policy.js';

const NAME = 'PodAntiAffinity';

function podRef(pod: PodInfo): string {
  return `${pod.namespace}/${pod.name}`;
}

export const podAntiAffinity: RuleStrategy<PodAntiAffinityConfig, 'podAntiAffinity'> = {
  kind: 'rule',
  name: NAME,
  key: 'podAntiAffinity',
  policy: podAntiAffinitySection,
  fixOrder: 3,

  detector(ctx) {
    // Pairs already reported from the matched pod's side, so each direction is reported once.
    const seen = new Set<string>();
    return (pod, node, out) => {
      for (const term of pod.podAntiAffinity) {
        const domain = labelValue(node.labels, term.topologyKey);
        if (domain === undefined) continue;
        for (const other of ctx.podsMatching(term, pod)) {
          if (other === pod) continue;
          const otherNode = ctx.nodeOf(other);
          if (!otherNode || labelValue(otherNode.labels, term.topologyKey) !== domain) continue;
          const reason = `required anti-affinity (${termText(term)}) matches ${podRef(other)} on ${otherNode.name} in ${term.topologyKey}=${domain}`;
          out.push({ strategy: NAME, pod, node: node.name, soft: false, reason, peer: other, ruleOwner: pod });
          // The other direction: the matched pod sits where this pod's rule forbids it. When the matched pod's own
          // rule also excludes this pod, it reports that itself; otherwise it gets an entry here (if the policy
          // looks at its namespace: the entry on the owner is reported either way).
          const pairKey = `${other.uid}\u0000${pod.uid}`;
          if (!seen.has(pairKey) && !antiAffinityExcludes(other, otherNode, pod, node, ctx.namespaceLabels)) {
            seen.add(pairKey);
            if (!ctx.inScope(other.namespace)) continue;
            out.push({
              strategy: NAME,
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
    };
  },

  actsOnSoft: () => false,
  clears: (_v, pod, from, ctx) => interPodClears(pod, from, ctx),
  withoutTarget: true,

  descheduler: { plugin: 'RemovePodsViolatingInterPodAntiAffinity', convertArgs: () => undefined },
};
