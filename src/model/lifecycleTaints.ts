// The taints Kubernetes's own node lifecycle puts on nodes (DESIGN.md, "A cordon is not a violation"): a cordon,
// the node lifecycle controller's conditions, the taint manager's out-of-service, the cloud provider's, the cluster
// autoscaler's and Karpenter's. Draining such a node is kubectl drain's, the autoscaler's or the taint manager's job;
// a rebalancer that evicted for them would turn a maintenance step into a drain, and the uncordon into churn back.
// So they never count as violations, and a node carrying one is never where a replacement is meant to land.
import type { NodeInfo, Taint } from './types.js';

export const LIFECYCLE_TAINT_KEYS: ReadonlySet<string> = new Set([
  'node.kubernetes.io/unschedulable',
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.kubernetes.io/memory-pressure',
  'node.kubernetes.io/disk-pressure',
  'node.kubernetes.io/pid-pressure',
  'node.kubernetes.io/network-unavailable',
  'node.kubernetes.io/out-of-service',
  'node.cloudprovider.kubernetes.io/uninitialized',
  'node.cloudprovider.kubernetes.io/shutdown',
  'ToBeDeletedByClusterAutoscaler',
  'DeletionCandidateOfClusterAutoscaler',
  'karpenter.sh/disrupted',
]);

export function isLifecycleTaint(taint: Pick<Taint, 'key'>): boolean {
  return LIFECYCLE_TAINT_KEYS.has(taint.key);
}

/**
 * Why a node is in its lifecycle's hands (cordoned, not ready, under pressure, being removed), or undefined when it
 * is an ordinary node. Such a node is never a landing target and never underutilized.
 */
export function lifecycleReason(
  node: Pick<NodeInfo, 'name' | 'unschedulable' | 'ready' | 'taints'>,
): string | undefined {
  if (node.unschedulable) return `node ${node.name} is cordoned`;
  if (!node.ready) return `node ${node.name} is not Ready`;
  const taint = node.taints.find((t) => t.effect !== 'PreferNoSchedule' && isLifecycleTaint(t));
  return taint === undefined ? undefined : `node ${node.name} has the lifecycle taint ${taint.key}:${taint.effect}`;
}
