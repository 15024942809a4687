// NodeResourcesBalancedAllocation (kube-scheduler v1.26): a node scores 100 × (1 − the spread of its cpu and memory
// fractions with the pod added), on real requests. Score only, no arguments modelled beyond the defaults.
import type { PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';
import { allocatableAndRequested, nodeLoad, pair, type NodeLoad } from './resourceAllocation.js';

const BALANCED: readonly string[] = ['cpu', 'memory'];

export function balancedScore(load: NodeLoad, pod: PodInfo): number {
  let f0 = -1;
  let f1 = -1;
  for (const name of BALANCED) {
    if (!allocatableAndRequested(name, load, pod, false)) continue;
    const fraction = Math.min(1, pair.requested / pair.allocatable);
    if (f0 < 0) f0 = fraction;
    else f1 = fraction;
  }
  const std = f1 < 0 ? 0 : Math.abs((f0 - f1) / 2);
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

export const balancedAllocation: ScorePlugin = {
  name: 'NodeResourcesBalancedAllocation',
  preScore: ({ state, pod, evicted }) => ({
    score(feasible, out) {
      const nodes = state.nodeList;
      for (let k = 0; k < feasible.length; k++) {
        const index = feasible[k]!;
        out[k] = balancedScore(nodeLoad(state, index, nodes[index]!, evicted.gone), pod);
      }
    },
  }),
};
