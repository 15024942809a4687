// kube-scheduler's VolumeRestrictions filter, ReadWriteOncePod part: a claim with that access mode can be used by one
// pod at a time, so while any other scheduled pod uses it (terminating pods included) the pod cannot go to any node.
//
// The pod a replacement replaces is the exception. It is terminating when the replacement is created, so kube-scheduler
// keeps the replacement Pending until the old pod is deleted, and places it then, by the same filters and scores with
// the old pod gone: the predicted target is where it lands after that wait (README, "Where a replacement lands").
// The in-tree GCE PD, AWS EBS, iSCSI and RBD disk conflicts of the same plugin are not modelled (inline volumes of
// those kinds are deprecated and not in the snapshot).
import type { PodInfo } from '../../../model/types.js';
import type { FilterPlugin } from '../../framework/interface.js';
import { originalsByNode, type FilterInput } from '../../framework/nodePods.js';

const hasExclusiveClaims = (pod: PodInfo): boolean => pod.readWriteOncePodClaims !== undefined;

/** Node-independent: the same answer for every node, so PreFilter works it out once per placement. */
export function volumeRestrictionsProblem(input: FilterInput): string | undefined {
  const claims = input.pod.readWriteOncePodClaims;
  if (claims === undefined) return undefined;
  const { state, pod, evicted } = input;
  const users = [...originalsByNode(state, 'readWriteOncePodClaims', hasExclusiveClaims).values()].flat();
  for (const r of state.replacements()) if (hasExclusiveClaims(r.pod)) users.push(r.pod);
  for (const other of users) {
    // The pod itself (its replacement reuses its claims), the pod it replaces, and a replacement placed for it.
    if (other.uid === pod.uid || other.uid === evicted?.pod.uid || other.namespace !== pod.namespace) continue;
    const shared = other.readWriteOncePodClaims!.find((c) => claims.includes(c));
    if (shared !== undefined) {
      return `VolumeRestrictions: claim ${pod.namespace}/${shared} is ReadWriteOncePod and pod ${other.namespace}/${other.name} uses it`;
    }
  }
  return undefined;
}

export const volumeRestrictionsFilter: FilterPlugin = {
  name: 'VolumeRestrictions',
  preFilter: (input) => {
    if (input.pod.readWriteOncePodClaims === undefined) return undefined;
    const problem = volumeRestrictionsProblem(input);
    return problem === undefined ? undefined : () => problem;
  },
};
