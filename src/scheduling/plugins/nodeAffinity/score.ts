// NodeAffinity's score (kube-scheduler v1.26): the summed weights of the pod's preferred terms the node matches, and
// of the profile's addedAffinity preferred terms, scaled against the best node. Its filter (nodeSelector, required
// terms, addedAffinity's required terms) is one of the static filters the placement applies once per kind of pod.
import { preferredScore } from '../../../model/nodeAffinity.js';
import type { NodeInfo, PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { defaultNormalize } from '../../framework/normalize.js';

export function nodeAffinityRaw(pod: PodInfo, node: NodeInfo): number {
  return pod.preferredNodeAffinity.length === 0 ? 0 : preferredScore(pod.preferredNodeAffinity, node);
}

export const nodeAffinityScore: ScorePlugin = {
  name: 'NodeAffinity',
  preScore: ({ state, profile, pod }) => {
    const added = profile.addedAffinity?.preferred ?? [];
    if (pod.preferredNodeAffinity.length === 0 && added.length === 0) return undefined;
    const score = (feasible: Int32Array, out: Float64Array): void => {
      for (let k = 0; k < feasible.length; k++) {
        const node = state.nodeList[feasible[k]!]!;
        out[k] = nodeAffinityRaw(pod, node) + (added.length === 0 ? 0 : preferredScore(added, node));
      }
    };
    return {
      score,
      normalize: (scores, n) => defaultNormalize(scores, n, false),
      windowed: { scaling: 'max', raw: (feasible, _param, out) => score(feasible, out) },
    };
  },
};
