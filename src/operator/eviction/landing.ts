// What a replacement's landing is, as the closed loop reports it: the move it replaces, where it landed and how that
// compares with the prediction. A type of its own, importing no operator module, so the policy's landing record
// (landingRecord.ts, read by the status) can name it without reaching the watch and the cache behind it (an import
// circle: clusterCache → status → landingRecord → landingWatch → clusterCache).
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
  /**
   * Elsewhere, on a node added or changed (model/nodeChange.ts) after the plan read the cluster:
   * a miss the plan could not have foreseen, which says nothing about the model (landingRecord.ts does not count it).
   */
  readonly nodeChangedSincePlan?: boolean;
}
