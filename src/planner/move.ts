// One eviction the planner chose, with the simulated replacement's node: what the report, `simulate` and the
// executor read. Its own module so the report does not import the planner (which builds the report).
import type { NodeInfo, PodInfo } from '../model/types.js';
import type { Strategy } from '../model/plan.js';

export interface Move {
  readonly pod: PodInfo;
  readonly from: NodeInfo;
  /** Where the simulated replacement lands; undefined only when nodeFit is off and no target was computed. */
  readonly target: NodeInfo | undefined;
  /** The other nodes the scheduler scores equal to `target` (it picks at random among them); empty when unique. */
  readonly ties: readonly NodeInfo[];
  /**
   * How many replacements sent after this one may land on `target` and `ties` first with the prediction still
   * standing (scheduling/placement.ts, PlacementResult.slack); undefined: one fewer than those nodes.
   */
  readonly slack?: number;
  readonly strategy: Strategy;
  readonly reason: string;
  /**
   * For a move that repairs a spread group's skew: the group's topology key (what the move is meant to change, and
   * what a replacement landing back would undo). Undefined for a move that clears a rule's violation.
   */
  readonly spreadKey?: string;
}
