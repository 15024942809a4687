// What each node has allocated as the plan changes it: requests summed per resource, the pod count, and cpu and
// memory as the scheduler's scoring counts them (a container without requests counts 100m and 200Mi).
import type { PodInfo } from '../../model/types.js';

export interface NodeUsage {
  readonly requested: Record<string, number>;
  pods: number;
  /** cpu and memory with the scheduler's non-zero defaults (what NodeResourcesFit scoring counts). */
  nonZeroCpu: number;
  nonZeroMemory: number;
}

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

export function emptyUsage(): NodeUsage {
  return { requested: {}, pods: 0, nonZeroCpu: 0, nonZeroMemory: 0 };
}

/** Adds (sign 1) or takes away (-1) a pod's requests. */
export function addResources(usage: NodeUsage, pod: PodInfo, sign: 1 | -1): void {
  const requests = pod.requests;
  for (const name in requests) usage.requested[name] = (usage.requested[name] ?? 0) + sign * requests[name]!;
  usage.pods += sign;
  const nonZero = nonZeroRequests(pod);
  usage.nonZeroCpu += sign * nonZero.cpu;
  usage.nonZeroMemory += sign * nonZero.memory;
}
