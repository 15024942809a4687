// NodeResourcesFit's score (LeastAllocated, MostAllocated, RequestedToCapacityRatio) and
// NodeResourcesBalancedAllocation, as kube-scheduler v1.26 computes them per node (no normalisation step). Fit counts
// cpu and memory with the non-zero defaults (a container without requests counts 100m and 200Mi); BalancedAllocation
// counts the real requests. An extended resource the pod does not request is left out of both.
import { minorOf, NEWEST_KUBE_VERSION, type KubeVersion } from '../../model/kubeVersion.js';
import type { PodInfo, Resources } from '../../model/types.js';
import type { FitScoring, ResourceWeight } from '../profile.js';
import { MAX_NODE_SCORE } from './normalize.js';

const NON_ZERO_CPU = 100;
const NON_ZERO_MEMORY = 200 * 1024 * 1024;

/** cpu and memory as scoring counts them; a hand-built pod without the converter's figure counts one container. */
export function nonZeroRequests(pod: PodInfo): { readonly cpu: number; readonly memory: number } {
  return (
    pod.nonZeroRequests ?? {
      cpu: pod.requests['cpu'] ?? NON_ZERO_CPU,
      memory: pod.requests['memory'] ?? NON_ZERO_MEMORY,
    }
  );
}

/** What is on a node for scoring: its allocatable, real requests and non-zero cpu/memory, replacement excluded. */
export interface NodeLoad {
  readonly allocatable: Resources;
  readonly requested: Readonly<Record<string, number>>;
  readonly nonZeroCpu: number;
  readonly nonZeroMemory: number;
}

const STANDARD = new Set(['cpu', 'memory', 'ephemeral-storage']);

/** The pair allocatableAndRequested() fills: reused, so scoring thousands of nodes allocates nothing. */
const pair = { allocatable: 0, requested: 0 };

/**
 * Sets `pair` to (allocatable, requested with the pod) for one resource; false when scoring leaves it out: a resource
 * the node does not offer, or an extended one the pod does not request.
 */
function allocatableAndRequested(name: string, load: NodeLoad, pod: PodInfo, nonZero: boolean): boolean {
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
 * NodeResourcesBalancedAllocation on real requests (noderesources/balanced_allocation.go). 1.35–1.37 skip it for a
 * pod requesting neither cpu nor memory (every node 0). 1.35 scores the node's balance with the pod; from 1.36 the
 * score is the change the pod makes to it, 50 + (50 + with − without) / 2 in integers, so a node the pod balances
 * better wins over one already balanced.
 */
export function balancedScore(load: NodeLoad, pod: PodInfo, version: KubeVersion = NEWEST_KUBE_VERSION): number {
  if ((pod.requests['cpu'] ?? 0) === 0 && (pod.requests['memory'] ?? 0) === 0) return 0;
  const withPod = balance(load, pod, true);
  if (minorOf(version) < 36) return withPod;
  const half = MAX_NODE_SCORE / 2;
  return half + Math.trunc((half + withPod - balance(load, pod, false)) / 2);
}
