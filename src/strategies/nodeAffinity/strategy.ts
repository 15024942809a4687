// NodeAffinity: a pod whose node no longer matches its required node affinity (or nodeSelector), as the scheduler's
// NodeAffinity filter would judge it today; and, as a preference, a pod another admitting node scores higher for
// its preferred node affinity. Cleared by a replacement on a node where the rule holds (scores higher).
import { nodeAdmitsPod } from '../../model/admission.js';
import { matchesRequiredNodeAffinity, preferredScore } from '../../model/nodeAffinity.js';
import { stringItems } from '../../model/rawJson.js';
import { tolerationsText } from '../../model/taints.js';
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { RuleStrategy } from '../types.js';
import { nodeAffinitySection, type NodeAffinityConfig } from './policy.js';

const NAME = 'NodeAffinity';
const REQUIRED = 'requiredDuringSchedulingIgnoredDuringExecution';
const PREFERRED = 'preferredDuringSchedulingIgnoredDuringExecution';

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

export const nodeAffinity: RuleStrategy<NodeAffinityConfig, 'nodeAffinity'> = {
  kind: 'rule',
  name: NAME,
  key: 'nodeAffinity',
  policy: nodeAffinitySection,
  fixOrder: 2,

  detector(ctx, config) {
    const bestScore = bestScoreFinder([...ctx.nodes.values()]);
    return (pod, node, out) => {
      if (config.required && !matchesRequiredNodeAffinity(pod.requiredNodeAffinity, node)) {
        out.push({
          strategy: NAME,
          pod,
          node: node.name,
          soft: false,
          reason: `node ${node.name} no longer matches the pod's required node affinity (${pod.requiredNodeAffinity.text})`,
        });
      }
      // Preferences are reported whether or not the policy acts on them.
      if (pod.preferredNodeAffinity.length === 0) return;
      const here = preferredScore(pod.preferredNodeAffinity, node);
      const best = bestScore(pod);
      if (best.score > here) {
        out.push({
          strategy: NAME,
          pod,
          node: node.name,
          soft: true,
          reason: `preferred node affinity scores ${here} on ${node.name}, ${best.node} scores ${best.score}`,
        });
      }
    };
  },

  actsOnSoft: (config) => config.preferred,

  clears(v, pod, from) {
    if (!v.soft) return (target) => matchesRequiredNodeAffinity(pod.requiredNodeAffinity, target);
    const here = preferredScore(pod.preferredNodeAffinity, from);
    return (target) => preferredScore(pod.preferredNodeAffinity, target) > here;
  },

  withoutTarget: true,

  descheduler: {
    plugin: 'RemovePodsViolatingNodeAffinity',
    convertArgs(args, section) {
      const types = stringItems(args['nodeAffinityType']);
      const chosen = types.length > 0 ? types : [REQUIRED];
      section['required'] = chosen.includes(REQUIRED);
      section['preferred'] = chosen.includes(PREFERRED);
    },
  },
};
