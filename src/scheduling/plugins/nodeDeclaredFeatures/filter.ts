// NodeDeclaredFeatures (beta and on by default in 1.36, GA in 1.37; off in 1.35): a pod whose spec needs a node
// feature (PodInfo.requiredFeatures) is placed only on nodes that list every such feature in status.declaredFeatures.
// The plugin refuses such a node as UnschedulableAndUnresolvable, so it is a filter on the node alone.
import { schedulerFeatures, type KubeVersion } from '../../../model/kubeVersion.js';
import type { NodeInfo, PodInfo } from '../../../model/types.js';

/** The first feature the pod needs that the node does not declare; undefined when none is missing or the filter is off. */
export function missingNodeFeature(
  version: KubeVersion | undefined,
  pod: Pick<PodInfo, 'requiredFeatures'>,
  node: NodeInfo,
): string | undefined {
  const needed = pod.requiredFeatures;
  if (needed === undefined || !schedulerFeatures(version).nodeDeclaredFeatures) return undefined;
  const declared = node.declaredFeatures ?? [];
  return needed.find((f) => !declared.includes(f));
}
