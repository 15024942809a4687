// The scheduler's node-level filters for a pod, without resources and without other pods: NodeUnschedulable and the
// node lifecycle controller's taints (cordoned, NotReady), NodeAffinity (nodeSelector and required terms) and
// TaintToleration (NoSchedule, NoExecute). Whether a replacement could land on a node at all, before the simulation
// looks at what runs there.
import { matchesRequiredNodeAffinity } from './nodeAffinity.js';
import { DO_NOT_SCHEDULE_EFFECTS, findUntoleratedTaint, isTolerated } from './taints.js';
import type { NodeInfo, PodInfo, Taint } from './types.js';

const UNSCHEDULABLE_TAINT: Taint = { key: 'node.kubernetes.io/unschedulable', value: '', effect: 'NoSchedule' };
const NOT_READY_TAINT: Taint = { key: 'node.kubernetes.io/not-ready', value: '', effect: 'NoSchedule' };

export function nodeAdmitsPod(pod: Pick<PodInfo, 'tolerations' | 'requiredNodeAffinity'>, node: NodeInfo): boolean {
  // The node lifecycle controller taints cordoned and NotReady nodes; only pods tolerating that may land there.
  if (node.unschedulable && !isTolerated(UNSCHEDULABLE_TAINT, pod.tolerations)) return false;
  if (!node.ready && !isTolerated(NOT_READY_TAINT, pod.tolerations)) return false;
  if (!matchesRequiredNodeAffinity(pod.requiredNodeAffinity, node)) return false;
  return findUntoleratedTaint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) === undefined;
}
