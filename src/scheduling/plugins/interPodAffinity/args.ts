// InterPodAffinityArgs (pkg/scheduler/apis/config): hardPodAffinityWeight (0–100, default 1), and
// ignorePreferredTermsOfExistingPods (1.27+): when set, a pod without preferred inter-pod terms of its own is not
// scored by InterPodAffinity at all (existing pods' terms are not read).
import type { Obj } from '../../../model/rawJson.js';
import { ARGS_META, type Reader } from '../../framework/argsReader.js';

export const DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1;

/** The configured hardPodAffinityWeight, or undefined when unset (or after recording a problem). */
export function decodeInterPodAffinityArgs(r: Reader, args: Obj, at: string): number | undefined {
  r.known(args, at, [...ARGS_META, 'hardPodAffinityWeight', 'ignorePreferredTermsOfExistingPods']);
  return r.int(args, 'hardPodAffinityWeight', at, 0, 100);
}

/** ignorePreferredTermsOfExistingPods (kube-scheduler 1.27+): true, or undefined when unset or false. */
export function decodeIgnorePreferredTerms(r: Reader, args: Obj, at: string): true | undefined {
  const value = args['ignorePreferredTermsOfExistingPods'];
  if (value === undefined || value === null || value === false) return undefined;
  if (value === true) return true;
  return r.fail(`${at}.ignorePreferredTermsOfExistingPods`, `must be true or false (got ${JSON.stringify(value)})`);
}
