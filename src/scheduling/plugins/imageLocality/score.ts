// ImageLocality (kube-scheduler v1.26): a node scores by the sizes of the pod's container images it already has,
// each scaled by the share of all nodes that have it (so an image everywhere counts little), summed over
// spec.containers, clamped to [23 MiB, 1000 MiB × containers] and scaled to 0–100. No normalisation step.
import type { PodInfo } from '../../../model/types.js';
import type { ClusterState } from '../../clusterState.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';

const MB = 1024 * 1024;
const MIN_THRESHOLD = 23 * MB;
const MAX_CONTAINER_THRESHOLD = 1000 * MB;

/** ImageLocality's view of node.status.images: per node, image name → size; per name, how many nodes have it. */
export interface ImageStates {
  readonly perNode: readonly ReadonlyMap<string, number>[];
  readonly nodesWith: ReadonlyMap<string, number>;
  /** Whether any node reports images (when none does, ImageLocality scores every node 0). */
  readonly any: boolean;
}

/** Built once per plan: a plan never changes nodes' images. */
export function imageStates(state: ClusterState): ImageStates {
  return state.memo('imageStates', () => {
    const perNode = state.nodeList.map((node) => {
      const sizes = new Map<string, number>();
      for (const image of node.images ?? []) for (const name of image.names) sizes.set(name, image.sizeBytes);
      return sizes;
    });
    const nodesWith = new Map<string, number>();
    for (const sizes of perNode) for (const name of sizes.keys()) nodesWith.set(name, (nodesWith.get(name) ?? 0) + 1);
    return { perNode, nodesWith, any: nodesWith.size > 0 };
  });
}

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

export const imageLocality: ScorePlugin = {
  name: 'ImageLocality',
  preScore: ({ state, pod }) => {
    // A plugin that scores every node alike cannot change the choice: it is skipped.
    if (pod.images === undefined || pod.images.length === 0) return undefined;
    const images = imageStates(state);
    if (!images.any) return undefined;
    return {
      score(feasible, out) {
        const total = state.nodeList.length;
        for (let k = 0; k < feasible.length; k++) out[k] = imageLocalityScore(images, feasible[k]!, pod, total);
      },
    };
  },
};
