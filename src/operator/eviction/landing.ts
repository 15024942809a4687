// Where one replacement landed against its prediction: the record the landing watch makes and the landing record
// (status.landing) counts. Apart from both, so the status does not reach the pod cache through the watch.
import type { LandingOutcome } from '../../metrics/names.js';
import type { PodInfo } from '../../model/types.js';
import type { Move } from '../../planner/move.js';

export interface Landing {
  readonly move: Move;
  readonly outcome: LandingOutcome;
  /** The replacement, once one was seen. */
  readonly replacement: PodInfo | undefined;
  /** The node it was bound to; undefined when unscheduled. */
  readonly node: string | undefined;
}
