// Which pods still hold their place: the one home of the "pod is live" rule that the scheduler's spread and
// affinity counts, the disruption controller's budgets, the analysis and the planner's simulation all apply.
import type { PodInfo } from './types.js';

/**
 * PodInfo.protectedBy when the descheduler's soft opt-out is the pod's only protecting annotation: a policy with
 * noEvictionPolicy: Preferred lifts exactly this one.
 */
export const PREFER_NO_EVICTION = 'annotation descheduler.alpha.kubernetes.io/prefer-no-eviction';

/** Finished (Succeeded or Failed): the pod holds nothing on its node any more and is counted nowhere. */
export function isPodTerminal(pod: Pick<PodInfo, 'phase'>): boolean {
  return pod.phase === 'Succeeded' || pod.phase === 'Failed';
}

/**
 * Not terminating and not finished (Succeeded/Failed): the pod is, or will be, running somewhere
 * (k8s.io/kubernetes/pkg/controller IsPodActive). A PodDisruptionBudget's expected pods and a spread group's
 * members are the active pods, bound or not.
 */
export function isPodActive(pod: Pick<PodInfo, 'terminating' | 'phase'>): boolean {
  return !pod.terminating && !isPodTerminal(pod);
}

/** Pods the scheduler counts in spread and affinity: active and bound to a node. */
export function isCounted(pod: Pick<PodInfo, 'nodeName' | 'terminating' | 'phase'>): boolean {
  return pod.nodeName !== undefined && isPodActive(pod);
}

/**
 * A Pending pod the scheduler is trying to place, or that waits on its node to start. A pod with scheduling gates is
 * Pending too, but the scheduler does not try it until something else removes the gates: it is neither a landing to
 * check nor an unschedulable replacement to pause evictions on.
 */
export function isPendingForScheduler(pod: Pick<PodInfo, 'phase' | 'schedulingGated'>): boolean {
  return pod.phase === 'Pending' && pod.schedulingGated !== true;
}
