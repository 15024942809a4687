// Which nodes the scheduler filters for one pod: its node list in zone-interleaved order, and how many feasible nodes
// it looks for before it stops (pkg/scheduler/schedule_one.go, numFeasibleNodesToFind).
import type { ClusterState } from '../clusterState.js';

/**
 * Node indices in the order kube-scheduler walks its node tree: one node of each zone in turn (zones in order of
 * first appearance), so a search that stops early still sees every zone.
 */
export function zoneInterleaved(state: ClusterState): readonly number[] {
  return state.memo('zoneInterleaved', () => {
    const zones = new Map<string, number[]>();
    state.nodeList.forEach((node, i) => {
      const key = `${node.labels['topology.kubernetes.io/region'] ?? ''}:\u0000:${node.labels['topology.kubernetes.io/zone'] ?? ''}`;
      const list = zones.get(key);
      if (list) list.push(i);
      else zones.set(key, [i]);
    });
    const lists = [...zones.values()];
    const out: number[] = [];
    for (let k = 0; out.length < state.nodeList.length; k++)
      for (const list of lists) if (k < list.length) out.push(list[k]!);
    return out;
  });
}

/**
 * How many feasible nodes the scheduler looks for before it stops filtering: the configuration's
 * percentageOfNodesToScore, or when it is 0 or unset the adaptive default (50% minus 1% per 125 nodes, at least 5%);
 * never fewer than 100 nodes.
 */
export function feasibleNodesToFind(nodes: number, percentageOfNodesToScore = 0): number {
  if (nodes <= 100) return nodes;
  const percentage =
    percentageOfNodesToScore > 0 ? percentageOfNodesToScore : Math.max(5, 50 - Math.floor(nodes / 125));
  return Math.max(100, Math.floor((nodes * percentage) / 100));
}
