// Which pod a move takes first, and which pods are alike as candidates. Every phase (rule fixing, spread balancing,
// load) picks in the same eviction order, so it lives apart from any one of them.
import { PREFER_NO_EVICTION } from '../model/pods.js';
import type { PodInfo, QosClass } from '../model/types.js';
import type { Move } from './move.js';
import { tolerationsText } from '../model/taints.js';
import { volumeKey } from '../model/volumes.js';
import { workloadKey } from './budget.js';

const QOS_RANK: Readonly<Record<QosClass, number>> = { BestEffort: 0, Burstable: 1, Guaranteed: 2 };

/**
 * Eviction order: lower priority first, then BestEffort before Burstable before Guaranteed, then pods without the
 * prefer-no-eviction annotation (it only orders where noEvictionPolicy is Preferred; elsewhere it protects), then the
 * youngest.
 */
export function compareCandidates(a: PodInfo, b: PodInfo): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.qos !== b.qos) return QOS_RANK[a.qos] - QOS_RANK[b.qos];
  const softA = a.protectedBy === PREFER_NO_EVICTION;
  if (softA !== (b.protectedBy === PREFER_NO_EVICTION)) return softA ? 1 : -1;
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  // Equal creation times: the later name goes first (a controller's later replica, as the descheduler picks
  // the last pods of a domain's list).
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? 1 : -1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/**
 * Replicas of one workload on one node fare alike where the scheduler looks unless their spec or volumes differ:
 * pods with the same key are interchangeable as candidates of a move.
 */
export function replicaKey(pod: PodInfo): string {
  return `${workloadKey(pod)}\u0000${pod.nodeName}\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}\u0000${volumeKey(pod)}`;
}

/**
 * The state a set of search moves makes, whatever their order: alike replicas and their landings. The searches
 * (spreadSearch.ts, planSearch.ts) look at a state once per depth left.
 */
export function movesStateKey(moves: readonly Move[]): string {
  return moves
    .map((m) => `${replicaKey(m.pod)}\u0000${m.target?.name ?? ''}`)
    .sort()
    .join('\u0001');
}
