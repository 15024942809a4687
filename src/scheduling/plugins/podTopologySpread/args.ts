// PodTopologySpreadArgs (pkg/scheduler/apis/config, v1.26): defaultingType (System, the default, or List) and
// defaultConstraints, which List uses for pods without constraints of their own. A default constraint has no
// labelSelector: the scheduler derives it from each pod's owners.
import type { Obj } from '../../../model/rawJson.js';
import type { NodeInclusionPolicy, WhenUnsatisfiable } from '../../../model/types.js';
import { ARGS_META, joinPath, type Reader } from '../../framework/argsReader.js';

/** A PodTopologySpreadArgs.defaultConstraints entry. */
export interface ProfileSpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: WhenUnsatisfiable;
  readonly nodeAffinityPolicy?: NodeInclusionPolicy;
  readonly nodeTaintsPolicy?: NodeInclusionPolicy;
}

/**
 * `System` is v1.26's built-in default (zone maxSkew 5 and hostname maxSkew 3, both ScheduleAnyway, for pods with no
 * constraints of their own that belong to a Service, ReplicaSet or StatefulSet); `List` uses the given constraints
 * instead (an empty list turns defaulting off).
 */
export type SpreadDefaulting =
  { readonly type: 'System' } | { readonly type: 'List'; readonly constraints: readonly ProfileSpreadConstraint[] };

export const DEFAULT_SPREAD_DEFAULTING: SpreadDefaulting = { type: 'System' };

const WHEN_UNSATISFIABLE: readonly WhenUnsatisfiable[] = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION: readonly NodeInclusionPolicy[] = ['Honor', 'Ignore'];

/** The args at `at`, defaulted; undefined after recording a problem that leaves no defaulting to use. */
export function decodeSpreadArgs(r: Reader, args: Obj, at: string): SpreadDefaulting | undefined {
  r.known(args, at, [...ARGS_META, 'defaultConstraints', 'defaultingType']);
  const type = r.oneOf(args, 'defaultingType', at, ['System', 'List'] as const) ?? 'System';
  const list = r.objects(r.list(args, 'defaultConstraints', at), joinPath(at, 'defaultConstraints'));
  if (type === 'System') {
    if (list.length > 0) {
      return r.fail(
        joinPath(at, 'defaultConstraints'),
        'must be empty when defaultingType is System (set defaultingType: List)',
      );
    }
    return { type: 'System' };
  }
  const constraints: ProfileSpreadConstraint[] = [];
  for (const [c, cAt] of list) {
    r.known(c, cAt, [
      'maxSkew',
      'topologyKey',
      'whenUnsatisfiable',
      'labelSelector',
      'minDomains',
      'nodeAffinityPolicy',
      'nodeTaintsPolicy',
      'matchLabelKeys',
    ]);
    if (c['labelSelector'] !== undefined && c['labelSelector'] !== null) {
      r.fail(joinPath(cAt, 'labelSelector'), 'must not be set: the scheduler derives it from each pod’s owners');
    }
    const maxSkew = r.int(c, 'maxSkew', cAt, 1, Number.MAX_SAFE_INTEGER);
    const topologyKey = r.string(c, 'topologyKey', cAt);
    const whenUnsatisfiable = r.oneOf(c, 'whenUnsatisfiable', cAt, WHEN_UNSATISFIABLE);
    const nodeAffinityPolicy = r.oneOf(c, 'nodeAffinityPolicy', cAt, INCLUSION);
    const nodeTaintsPolicy = r.oneOf(c, 'nodeTaintsPolicy', cAt, INCLUSION);
    if (c['maxSkew'] === undefined) r.fail(joinPath(cAt, 'maxSkew'), 'is required');
    if (topologyKey === undefined || topologyKey === '') r.fail(joinPath(cAt, 'topologyKey'), 'is required');
    if (c['whenUnsatisfiable'] === undefined) r.fail(joinPath(cAt, 'whenUnsatisfiable'), 'is required');
    if (maxSkew === undefined || !topologyKey || whenUnsatisfiable === undefined) continue;
    if (constraints.some((x) => x.topologyKey === topologyKey && x.whenUnsatisfiable === whenUnsatisfiable)) {
      r.fail(cAt, `a second constraint on ${topologyKey} with ${whenUnsatisfiable}`);
      continue;
    }
    constraints.push({
      maxSkew,
      topologyKey,
      whenUnsatisfiable,
      ...(nodeAffinityPolicy === undefined ? {} : { nodeAffinityPolicy }),
      ...(nodeTaintsPolicy === undefined ? {} : { nodeTaintsPolicy }),
    });
  }
  return { type: 'List', constraints };
}
