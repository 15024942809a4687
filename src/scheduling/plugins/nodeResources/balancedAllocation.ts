// NodeResourcesBalancedAllocation on real requests (noderesources/balanced_allocation.go), per minor. Score only, no
// arguments modelled beyond the defaults.
import { minorOf, NEWEST_KUBE_VERSION, type KubeVersion } from '../../../model/kubeVersion.js';
import type { PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';
import { allocatableAndRequested, nodeLoad, pair, type NodeLoad } from './resourceAllocation.js';

const BALANCED: readonly string[] = ['cpu', 'memory'];

/** 100 × (1 − the spread of the cpu and memory fractions), with the pod (`withPod`) or without it. */
function balance(load: NodeLoad, pod: PodInfo, withPod: boolean): number {
  let f0 = -1;
  let f1 = -1;
  for (const name of BALANCED) {
    if (!allocatableAndRequested(name, load, pod, false)) continue;
    const requested = withPod ? pair.requested : pair.requested - (pod.requests[name] ?? 0);
    const fraction = Math.min(1, requested / pair.allocatable);
    if (f0 < 0) f0 = fraction;
    else f1 = fraction;
  }
  const std = f1 < 0 ? 0 : Math.abs((f0 - f1) / 2);
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

/**
 * 1.35–1.37 skip the plugin for a pod requesting neither cpu nor memory (every node 0). 1.35 scores the node's
 * balance with the pod; from 1.36 the score is the change the pod makes to it, 50 + (50 + with − without) / 2 in
 * integers, so a node the pod balances better wins over one already balanced.
 */
export function balancedScore(load: NodeLoad, pod: PodInfo, version: KubeVersion = NEWEST_KUBE_VERSION): number {
  if ((pod.requests['cpu'] ?? 0) === 0 && (pod.requests['memory'] ?? 0) === 0) return 0;
  const withPod = balance(load, pod, true);
  if (minorOf(version) < 36) return withPod;
  const half = MAX_NODE_SCORE / 2;
  return half + Math.trunc((half + withPod - balance(load, pod, false)) / 2);
}

export const balancedAllocation: ScorePlugin = {
  name: 'NodeResourcesBalancedAllocation',
  preScore: ({ state, pod, evicted }) => ({
    score(feasible, out) {
      const nodes = state.nodeList;
      for (let k = 0; k < feasible.length; k++) {
        const index = feasible[k]!;
        out[k] = balancedScore(nodeLoad(state, index, nodes[index]!, evicted.gone), pod, state.kubeVersion);
      }
    },
  }),
};
