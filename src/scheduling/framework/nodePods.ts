// What kube-scheduler's node cache holds while a replacement is scheduled: every pod bound to the node that has not
// finished — terminating pods included, so a pod evicted in this plan still holds its host ports, its attached volumes
// and its claims until the kubelet has stopped it — plus the replacements the plan has placed.
import { isPodTerminal } from '../../model/pods.js';
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { ClusterState } from '../clusterState.js';
import type { PlacementInput } from './interface.js';

/** The pod being placed, with the pod it replaces (treated as still terminating on its node). */
export type FilterInput = Pick<PlacementInput, 'state' | 'pod' | 'evicted'>;

/**
 * The snapshot's pods per node, keeping only those `keep` selects (the few with host ports, CSI volumes or exclusive
 * claims), built once per plan: originals never change node, and evicted ones stay until they are gone.
 */
export function originalsByNode(
  state: ClusterState,
  key: string,
  keep: (pod: PodInfo) => boolean,
): ReadonlyMap<string, readonly PodInfo[]> {
  return state.memo(`filters\u0000${key}`, () => {
    const out = new Map<string, PodInfo[]>();
    for (const pod of state.snapshotPods()) {
      if (pod.nodeName === undefined || isPodTerminal(pod) || !keep(pod)) continue;
      const list = out.get(pod.nodeName);
      if (list === undefined) out.set(pod.nodeName, [pod]);
      else list.push(pod);
    }
    return out;
  });
}

/** The pods on `node` that `keep` selects, as the scheduler's cache holds them: originals and placed replacements. */
export function podsOnNode(
  state: ClusterState,
  node: NodeInfo,
  key: string,
  keep: (pod: PodInfo) => boolean,
): PodInfo[] {
  const out = [...(originalsByNode(state, key, keep).get(node.name) ?? [])];
  for (const r of state.replacements()) if (r.node.name === node.name && keep(r.pod)) out.push(r.pod);
  return out;
}
