// NodeAffinityArgs (pkg/scheduler/apis/config, v1.26): addedAffinity, a NodeAffinity every pod of the profile gets on
// top of its own — its required terms filter (ANDed with the pod's), its preferred terms add to the pod's score.
import { FieldError } from '../../../errors.js';
import type { Obj } from '../../../model/rawJson.js';
import type { PreferredSchedulingTerm, RequiredNodeAffinity } from '../../../model/types.js';
import { BoundedCache } from '../../../snapshot/convert/boundedCache.js';
import { preferredNodeAffinity, requiredNodeAffinity } from '../../../snapshot/convert/nodeSelectors.js';
import { ARGS_META, joinPath, type Reader } from '../../framework/argsReader.js';

export interface AddedAffinity {
  /** Required terms every node must match besides the pod's own; undefined when none. */
  readonly required: RequiredNodeAffinity | undefined;
  readonly preferred: readonly PreferredSchedulingTerm[];
}

/** The args at `at`: the added affinity, or undefined when none is set (or after recording a problem). */
export function decodeNodeAffinityArgs(r: Reader, args: Obj, at: string): AddedAffinity | undefined {
  r.known(args, at, [...ARGS_META, 'addedAffinity']);
  const added = r.obj(args, 'addedAffinity', at);
  if (added === undefined) return undefined;
  const aAt = joinPath(at, 'addedAffinity');
  r.known(added, aAt, [
    'requiredDuringSchedulingIgnoredDuringExecution',
    'preferredDuringSchedulingIgnoredDuringExecution',
  ]);
  try {
    const required = requiredNodeAffinity(undefined, added, new BoundedCache());
    const preferred = preferredNodeAffinity(added);
    return { required: required.terms === undefined ? undefined : required, preferred };
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    // The converter names pod fields; the same object sits at addedAffinity here.
    return r.fail(err.field.replace(/^spec\.affinity\.nodeAffinity/, aAt), err.problem);
  }
}
