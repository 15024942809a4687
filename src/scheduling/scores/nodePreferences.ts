// The two scores of a node's own properties: NodeAffinity (the summed weights of the pod's preferred terms the node
// matches, scaled against the best node) and TaintToleration (the PreferNoSchedule taints the pod does not tolerate,
// scaled against the worst node and reversed, so the node with fewest scores 100). kube-scheduler v1.26 semantics.
import { preferredScore } from '../../model/nodeAffinity.js';
import { isTolerated } from '../../model/taints.js';
import type { NodeInfo, PodInfo } from '../../model/types.js';

export function nodeAffinityRaw(pod: PodInfo, node: NodeInfo): number {
  return pod.preferredNodeAffinity.length === 0 ? 0 : preferredScore(pod.preferredNodeAffinity, node);
}

export function intolerablePreferNoSchedule(pod: PodInfo, node: NodeInfo): number {
  let n = 0;
  for (const taint of node.taints) if (taint.effect === 'PreferNoSchedule' && !isTolerated(taint, pod.tolerations)) n++;
  return n;
}
