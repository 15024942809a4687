// NodeAffinity's score (kube-scheduler v1.26): the summed weights of the pod's preferred terms the node matches,
// scaled against the best node. Its filter (nodeSelector and required terms) is one of the static filters the
// runtime applies once per pod spec (model/admission.ts).
import { preferredScore } from '../../../model/nodeAffinity.js';
import type { NodeInfo, PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { defaultNormalize } from '../../framework/normalize.js';

export function nodeAffinityRaw(pod: PodInfo, node: NodeInfo): number {
  return pod.preferredNodeAffinity.length === 0 ? 0 : preferredScore(pod.preferredNodeAffinity, node);
}

export const nodeAffinityScore: ScorePlugin = {
  name: 'NodeAffinity',
  preScore: ({ state, pod }) =>
    pod.preferredNodeAffinity.length === 0
      ? undefined
      : {
          score(feasible, out) {
            for (let k = 0; k < feasible.length; k++) out[k] = nodeAffinityRaw(pod, state.nodeList[feasible[k]!]!);
          },
          normalize: (scores, n) => defaultNormalize(scores, n, false),
        },
};
