// InterPodAffinityArgs (pkg/scheduler/apis/config, v1.26): hardPodAffinityWeight (0–100, default 1) is read;
// ignorePreferredTermsOfExistingPods is accepted as a field of the type.
import type { Obj } from '../../../model/rawJson.js';
import { ARGS_META, type Reader } from '../../framework/argsReader.js';

export const DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1;

/** The configured hardPodAffinityWeight, or undefined when unset (or after recording a problem). */
export function decodeInterPodAffinityArgs(r: Reader, args: Obj, at: string): number | undefined {
  r.known(args, at, [...ARGS_META, 'hardPodAffinityWeight', 'ignorePreferredTermsOfExistingPods']);
  return r.int(args, 'hardPodAffinityWeight', at, 0, 100);
}
