// TaintToleration's score (kube-scheduler v1.26): the PreferNoSchedule taints the pod does not tolerate, scaled
// against the worst node and reversed, so the node with fewest scores 100. Its filter (NoSchedule and NoExecute
// taints) is one of the static filters the runtime applies once per pod spec (model/admission.ts).
import { isTolerated } from '../../../model/taints.js';
import type { NodeInfo, PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { defaultNormalize } from '../../framework/normalize.js';

export function intolerablePreferNoSchedule(pod: PodInfo, node: NodeInfo): number {
  let n = 0;
  for (const taint of node.taints) if (taint.effect === 'PreferNoSchedule' && !isTolerated(taint, pod.tolerations)) n++;
  return n;
}

export const taintTolerationScore: ScorePlugin = {
  name: 'TaintToleration',
  preScore: ({ state, pod }) => ({
    score(feasible, out) {
      for (let k = 0; k < feasible.length; k++) {
        out[k] = intolerablePreferNoSchedule(pod, state.nodeList[feasible[k]!]!);
      }
    },
    normalize: (scores, n) => defaultNormalize(scores, n, true),
  }),
};
