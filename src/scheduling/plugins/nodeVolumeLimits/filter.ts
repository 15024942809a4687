// kube-scheduler's NodeVolumeLimits filter (CSI): a node attaches at most N volumes of each CSI driver — its CSINode's
// spec.drivers[].allocatable.count, or the older node allocatable `attachable-volumes-csi-<driver>`. A volume already
// attached to the node (used by another pod there) is not counted twice; volumes of drivers without a limit are free.
import type { CsiVolume, NodeInfo, PodInfo } from '../../../model/types.js';
import type { FilterPlugin } from '../../framework/interface.js';
import { podsOnNode, type FilterInput } from '../../framework/nodePods.js';

const ALLOCATABLE_PREFIX = 'attachable-volumes-csi-';

/** The node's attach limit for one driver: the CSINode count wins over the node's allocatable. */
function limitOf(node: NodeInfo, driver: string): number | undefined {
  return node.csiVolumeLimits?.[driver] ?? node.allocatable[`${ALLOCATABLE_PREFIX}${driver}`];
}

const uniqueName = (v: CsiVolume): string => `${v.driver}/${v.handle}`;
const attachesCsi = (pod: PodInfo): boolean => pod.csiVolumes !== undefined;

export function nodeVolumeLimitsProblem(input: FilterInput, node: NodeInfo): string | undefined {
  const wanted = input.pod.csiVolumes;
  if (wanted === undefined) return undefined;
  const limited = wanted.filter((v) => limitOf(node, v.driver) !== undefined);
  if (limited.length === 0) return undefined;
  const attached = new Map<string, string>();
  for (const other of podsOnNode(input.state, node, 'csiVolumes', attachesCsi)) {
    for (const v of other.csiVolumes!) attached.set(uniqueName(v), v.driver);
  }
  const adding = new Map<string, number>();
  for (const v of limited) {
    if (!attached.has(uniqueName(v))) adding.set(v.driver, (adding.get(v.driver) ?? 0) + 1);
  }
  for (const [driver, count] of adding) {
    const limit = limitOf(node, driver)!;
    let inUse = 0;
    for (const d of attached.values()) if (d === driver) inUse++;
    if (inUse + count > limit) {
      return `NodeVolumeLimits: node can attach ${limit} ${driver} volume${limit === 1 ? '' : 's'} and has ${inUse}`;
    }
  }
  return undefined;
}

export const nodeVolumeLimitsFilter: FilterPlugin = {
  name: 'NodeVolumeLimits',
  preFilter: (input) =>
    input.pod.csiVolumes === undefined ? undefined : (node) => nodeVolumeLimitsProblem(input, node),
};
