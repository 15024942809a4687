// NodeResourcesBalancedAllocation (kube-scheduler v1.26): a node scores 100 × (1 − the standard deviation of its
// resources' requested fractions with the pod added), on real requests, over the args' resources (default cpu and
// memory). Score only.
import type { PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';
import { DEFAULT_BALANCED_RESOURCES, type ResourceWeight } from './args.js';
import { allocatableAndRequested, nodeLoad, pair, type NodeLoad } from './resourceAllocation.js';

const fractions: number[] = [];

export function balancedScore(load: NodeLoad, pod: PodInfo, resources: readonly ResourceWeight[]): number {
  fractions.length = 0;
  for (const { name } of resources) {
    if (!allocatableAndRequested(name, load, pod, false)) continue;
    fractions.push(Math.min(1, pair.requested / pair.allocatable));
  }
  let std = 0;
  if (fractions.length === 2) {
    // Upstream's two-resource case, kept apart so that the usual cpu/memory score stays bit for bit what it was.
    std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  } else if (fractions.length > 2) {
    const mean = fractions.reduce((a, b) => a + b, 0) / fractions.length;
    std = Math.sqrt(fractions.reduce((a, f) => a + (f - mean) * (f - mean), 0) / fractions.length);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

export const balancedAllocation: ScorePlugin = {
  name: 'NodeResourcesBalancedAllocation',
  preScore: ({ state, profile, pod, evicted }) => ({
    score(feasible, out) {
      const nodes = state.nodeList;
      const resources = profile.balancedResources ?? DEFAULT_BALANCED_RESOURCES;
      for (let k = 0; k < feasible.length; k++) {
        const index = feasible[k]!;
        out[k] = balancedScore(nodeLoad(state, index, nodes[index]!, evicted.gone), pod, resources);
      }
    },
  }),
};
