// The filters of kube-scheduler's default profile that the placement calls in one place, in the profile's order:
// NodePorts, VolumeRestrictions (ReadWriteOncePod), NodeVolumeLimits (CSI). Each answers for the pod being placed on
// one node, with a problem text that names the plugin, or undefined.
import type { NodeInfo } from '../../model/types.js';
import type { FilterInput } from './nodePods.js';
import { nodePortsProblem } from './nodePorts.js';
import { nodeVolumeLimitsProblem } from './nodeVolumeLimits.js';
import { volumeRestrictionsProblem } from './volumeRestrictions.js';

export type { FilterInput } from './nodePods.js';

export function portAndVolumeProblem(input: FilterInput, node: NodeInfo): string | undefined {
  const pod = input.pod;
  // Nearly every pod binds no host port and attaches no counted volume: one check and out.
  if (pod.hostPorts.length === 0 && pod.csiVolumes === undefined && pod.readWriteOncePodClaims === undefined) {
    return undefined;
  }
  return nodePortsProblem(input, node) ?? volumeRestrictionsProblem(input) ?? nodeVolumeLimitsProblem(input, node);
}
