// NodeResourcesFit's score (LeastAllocated, MostAllocated, RequestedToCapacityRatio) and
// NodeResourcesBalancedAllocation, as kube-scheduler v1.26 computes them per node (no normalisation step). Fit counts
// cpu and memory with the non-zero defaults (a container without requests counts 100m and 200Mi); BalancedAllocation
// counts the real requests. An extended resource the pod does not request is left out of both. Upstream's
// noderesources package holds both plugins, as this folder does, and this file is its resource_allocation.go.
import type { NodeInfo, PodInfo, Resources } from '../../../model/types.js';
import type { ClusterState, Placed } from '../../clusterState.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';
import { nonZeroRequests } from '../../state/nodeUsage.js';
import type { FitScoring, ResourceWeight } from './args.js';

/** What is on a node for scoring: its allocatable, real requests and non-zero cpu/memory, replacement excluded. */
export interface NodeLoad {
  readonly allocatable: Resources;
  readonly requested: Readonly<Record<string, number>>;
  readonly nonZeroCpu: number;
  readonly nonZeroMemory: number;
}

const STANDARD = new Set(['cpu', 'memory', 'ephemeral-storage']);

/** The pair allocatableAndRequested() fills: reused, so scoring thousands of nodes allocates nothing. */
export const pair = { allocatable: 0, requested: 0 };

/**
 * Sets `pair` to (allocatable, requested with the pod) for one resource; false when scoring leaves it out: a resource
 * the node does not offer, or an extended one the pod does not request.
 */
export function allocatableAndRequested(name: string, load: NodeLoad, pod: PodInfo, nonZero: boolean): boolean {
  const allocatable = load.allocatable[name] ?? 0;
  let podRequest: number;
  let nodeRequested: number;
  if (nonZero && name === 'cpu') {
    podRequest = nonZeroRequests(pod).cpu;
    nodeRequested = load.nonZeroCpu;
  } else if (nonZero && name === 'memory') {
    podRequest = nonZeroRequests(pod).memory;
    nodeRequested = load.nonZeroMemory;
  } else {
    podRequest = pod.requests[name] ?? 0;
    nodeRequested = load.requested[name] ?? 0;
  }
  if (podRequest === 0 && !STANDARD.has(name)) return false;
  if (allocatable === 0) return false;
  pair.allocatable = allocatable;
  pair.requested = nodeRequested + podRequest;
  return true;
}

function leastRequested(requested: number, capacity: number): number {
  if (requested > capacity) return 0;
  return Math.trunc(((capacity - requested) * MAX_NODE_SCORE) / capacity);
}

function mostRequested(requested: number, capacity: number): number {
  return Math.trunc((Math.min(requested, capacity) * MAX_NODE_SCORE) / capacity);
}

/** RequestedToCapacityRatio's shape: utilization 0–100 → score 0–10, scaled to 0–100, linear between points. */
function brokenLinear(shape: readonly { utilization: number; score: number }[], p: number): number {
  for (let i = 0; i < shape.length; i++) {
    const point = shape[i]!;
    if (p <= point.utilization) {
      if (i === 0) return point.score * 10;
      const prev = shape[i - 1]!;
      return (
        prev.score * 10 +
        Math.trunc(((point.score - prev.score) * 10 * (p - prev.utilization)) / (point.utilization - prev.utilization))
      );
    }
  }
  return shape[shape.length - 1]!.score * 10;
}

/** The weighted sum of the per-resource scores, and the weights summed (into `sum`). */
const sum = { score: 0, weights: 0 };

function weightedSum(
  resources: readonly ResourceWeight[],
  load: NodeLoad,
  pod: PodInfo,
  perResource: (requested: number, capacity: number) => number,
  skipZero: boolean,
): typeof sum {
  sum.score = 0;
  sum.weights = 0;
  for (const r of resources) {
    if (!allocatableAndRequested(r.name, load, pod, true)) continue;
    const s = perResource(pair.requested, pair.allocatable);
    if (skipZero && s <= 0) continue;
    sum.score += s * r.weight;
    sum.weights += r.weight;
  }
  return sum;
}

/** NodeResourcesFit's score of one node for the pod, 0–100. */
export function fitScore(scoring: FitScoring, load: NodeLoad, pod: PodInfo): number {
  switch (scoring.type) {
    case 'LeastAllocated': {
      const { score, weights } = weightedSum(scoring.resources, load, pod, leastRequested, false);
      return weights === 0 ? 0 : Math.trunc(score / weights);
    }
    case 'MostAllocated': {
      const { score, weights } = weightedSum(scoring.resources, load, pod, mostRequested, false);
      return weights === 0 ? 0 : Math.trunc(score / weights);
    }
    case 'RequestedToCapacityRatio': {
      const shape = scoring.shape;
      const perResource = (requested: number, capacity: number): number =>
        brokenLinear(shape, requested > capacity ? 100 : Math.trunc((requested * 100) / capacity));
      // Upstream leaves a resource scoring 0 out of the weights, and rounds the weighted mean.
      const { score, weights } = weightedSum(scoring.resources, load, pod, perResource, true);
      return weights === 0 ? 0 : Math.round(score / weights);
    }
  }
}

const scratch = { allocatable: {}, requested: {}, nonZeroCpu: 0, nonZeroMemory: 0 };
const freedRequests: Record<string, number> = {};

/** The node's load for scoring; a deleted evicted pod no longer counts on its node. Reuses one object. */
export function nodeLoad(state: ClusterState, index: number, node: NodeInfo, gone: Placed | undefined): NodeLoad {
  const usage = state.usageAt(index);
  scratch.allocatable = node.allocatable;
  if (gone === undefined || gone.node !== node) {
    scratch.requested = usage.requested;
    scratch.nonZeroCpu = usage.nonZeroCpu;
    scratch.nonZeroMemory = usage.nonZeroMemory;
    return scratch;
  }
  for (const k in freedRequests) delete freedRequests[k];
  for (const k in usage.requested) freedRequests[k] = usage.requested[k]! - (gone.pod.requests[k] ?? 0);
  const nonZero = nonZeroRequests(gone.pod);
  scratch.requested = freedRequests;
  scratch.nonZeroCpu = usage.nonZeroCpu - nonZero.cpu;
  scratch.nonZeroMemory = usage.nonZeroMemory - nonZero.memory;
  return scratch;
}
