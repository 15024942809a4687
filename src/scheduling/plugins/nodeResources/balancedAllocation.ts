// NodeResourcesBalancedAllocation (noderesources/balanced_allocation.go), per minor: a node scores by how evenly the
// pod leaves its resources' requested fractions (1 − their standard deviation), on real requests, over the args'
// resources (default cpu and memory). Score only.
import { minorOf, NEWEST_KUBE_VERSION, type KubeVersion } from '../../../model/kubeVersion.js';
import type { PodInfo } from '../../../model/types.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';
import { DEFAULT_BALANCED_RESOURCES, type ResourceWeight } from './args.js';
import { allocatableAndRequested, nodeLoad, pair, type NodeLoad } from './resourceAllocation.js';

// Scratch for the fractions, grown as needed and never shrunk: emptying a plain array (length = 0) dropped its
// backing store, so every call allocated a new one, about a fifth of a plan's garbage at 1,000 nodes (issue 29).
let fractions = new Float64Array(8);

/** 100 × (1 − the standard deviation of the resources' fractions), with the pod (`withPod`) or without it. */
function balance(load: NodeLoad, pod: PodInfo, resources: readonly ResourceWeight[], withPod: boolean): number {
  if (fractions.length < resources.length) fractions = new Float64Array(resources.length);
  let count = 0;
  for (let i = 0; i < resources.length; i++) {
    const name = resources[i]!.name;
    if (!allocatableAndRequested(name, load, pod, false)) continue;
    const requested = withPod ? pair.requested : pair.requested - (pod.requests[name] ?? 0);
    fractions[count++] = Math.min(1, requested / pair.allocatable);
  }
  let std = 0;
  if (count === 2) {
    // Upstream's two-resource case, kept apart so that the usual cpu/memory score stays bit for bit what it was.
    std = Math.abs((fractions[0]! - fractions[1]!) / 2);
  } else if (count > 2) {
    let sum = 0;
    for (let i = 0; i < count; i++) sum += fractions[i]!;
    const mean = sum / count;
    let squares = 0;
    for (let i = 0; i < count; i++) squares += (fractions[i]! - mean) * (fractions[i]! - mean);
    std = Math.sqrt(squares / count);
  }
  return Math.trunc((1 - std) * MAX_NODE_SCORE);
}

/**
 * 1.35–1.37 skip the plugin for a pod requesting none of the scored resources (every node 0, a best-effort pod would
 * otherwise pile onto one node). 1.35 scores the node's balance with the pod; from 1.36 the score is the change the
 * pod makes to it, 50 + (50 + with − without) / 2 in integers, so a node the pod balances better wins over one already
 * balanced.
 */
export function balancedScore(
  load: NodeLoad,
  pod: PodInfo,
  resources: readonly ResourceWeight[] = DEFAULT_BALANCED_RESOURCES,
  version: KubeVersion = NEWEST_KUBE_VERSION,
): number {
  if (resources.every(({ name }) => (pod.requests[name] ?? 0) === 0)) return 0;
  const withPod = balance(load, pod, resources, true);
  if (minorOf(version) < 36) return withPod;
  const half = MAX_NODE_SCORE / 2;
  return half + Math.trunc((half + withPod - balance(load, pod, resources, false)) / 2);
}

export const balancedAllocation: ScorePlugin = {
  name: 'NodeResourcesBalancedAllocation',
  preScore: ({ state, profile, pod, evicted }) => ({
    score(feasible, out) {
      const nodes = state.nodeList;
      const resources = profile.balancedResources ?? DEFAULT_BALANCED_RESOURCES;
      for (let k = 0; k < feasible.length; k++) {
        const index = feasible[k]!;
        out[k] = balancedScore(nodeLoad(state, index, nodes[index]!, evicted.gone), pod, resources, state.kubeVersion);
      }
    },
  }),
};
