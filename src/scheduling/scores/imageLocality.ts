// ImageLocality (kube-scheduler v1.26): a node scores by the sizes of the pod's container images it already has,
// each scaled by the share of all nodes that have it (so an image everywhere counts little), summed over
// spec.containers, clamped to [23 MiB, 1000 MiB × containers] and scaled to 0–100. No normalisation step.
import type { PodInfo } from '../../model/types.js';
import type { ImageStates } from '../clusterState.js';
import { MAX_NODE_SCORE } from './normalize.js';

const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;

export function imageLocalityScore(states: ImageStates, nodeIndex: number, pod: PodInfo, totalNodes: number): number {
  const images = pod.images;
  if (images === undefined || images.length === 0 || !states.any) return 0;
  const onNode = states.perNode[nodeIndex]!;
  let sum = 0;
  for (const image of images) {
    const size = onNode.get(image);
    if (size !== undefined) sum += Math.trunc(size * (states.nodesWith.get(image)! / totalNodes));
  }
  const maxThreshold = MAX_CONTAINER_THRESHOLD * images.length;
  const clamped = Math.min(Math.max(sum, MIN_THRESHOLD), maxThreshold);
  return Math.trunc((MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) / (maxThreshold - MIN_THRESHOLD));
}
