// A planned move as a replacement on its way, for the moves planned after it (PlanOptions.pendingLandings).
import type { ClusterState } from '../scheduling/clusterState.js';
import type { PendingLanding } from '../scheduling/pending.js';
import type { Move } from './move.js';

/** A planned move's replacement as pending: on its target in the plan's state, possibly on any of its ties. */
export function pendingOf(state: ClusterState, move: Move): PendingLanding {
  const at = state.nodeIndex.get(move.target!.name)!;
  const nodes = [at, ...move.ties.map((n) => state.nodeIndex.get(n.name)!)];
  return { pod: move.pod, nodes, at };
}
