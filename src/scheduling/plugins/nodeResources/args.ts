// NodeResourcesFitArgs (pkg/scheduler/apis/config, v1.26): the type, its defaults and its validation. The scoring
// strategy is read; ignoredResources and ignoredResourceGroups are accepted as fields of the type.
import { ARGS_META, joinPath, type Reader } from '../../framework/argsReader.js';
import type { Obj } from '../../../model/rawJson.js';

export interface ResourceWeight {
  readonly name: string;
  readonly weight: number;
}

/** One point of RequestedToCapacityRatio's piecewise-linear shape: utilization 0–100 maps to score 0–10. */
export interface ShapePoint {
  readonly utilization: number;
  readonly score: number;
}

export type FitScoring =
  | { readonly type: 'LeastAllocated'; readonly resources: readonly ResourceWeight[] }
  | { readonly type: 'MostAllocated'; readonly resources: readonly ResourceWeight[] }
  | {
      readonly type: 'RequestedToCapacityRatio';
      readonly resources: readonly ResourceWeight[];
      readonly shape: readonly ShapePoint[];
    };

/** v1.26's default: LeastAllocated over cpu and memory, weight 1 each. */
export const DEFAULT_FIT_SCORING: FitScoring = {
  type: 'LeastAllocated',
  resources: [
    { name: 'cpu', weight: 1 },
    { name: 'memory', weight: 1 },
  ],
};

const FIT_TYPES = ['LeastAllocated', 'MostAllocated', 'RequestedToCapacityRatio'] as const;
/** RequestedToCapacityRatio's shape scores run 0–10 (MaxCustomPriorityScore); resource weights 1–100. */
const MAX_SHAPE_SCORE = 10;
const MAX_RESOURCE_WEIGHT = 100;

/** The args at `at`, defaulted; undefined after recording a problem that leaves no scoring to use. */
export function decodeFitArgs(r: Reader, args: Obj, at: string): FitScoring | undefined {
  r.known(args, at, [...ARGS_META, 'ignoredResources', 'ignoredResourceGroups', 'scoringStrategy']);
  const strategy = r.obj(args, 'scoringStrategy', at);
  if (strategy === undefined) return DEFAULT_FIT_SCORING;
  const sAt = joinPath(at, 'scoringStrategy');
  r.known(strategy, sAt, ['type', 'resources', 'requestedToCapacityRatio']);
  const type = r.oneOf(strategy, 'type', sAt, FIT_TYPES) ?? 'LeastAllocated';
  const resources: ResourceWeight[] = [];
  for (const [res, rAt] of r.objects(r.list(strategy, 'resources', sAt), joinPath(sAt, 'resources'))) {
    r.known(res, rAt, ['name', 'weight']);
    const name = r.string(res, 'name', rAt);
    if (name === undefined || name === '') {
      r.fail(joinPath(rAt, 'name'), 'is required');
      continue;
    }
    if (resources.some((x) => x.name === name)) r.fail(joinPath(rAt, 'name'), `resource ${name} is listed twice`);
    const weight = r.int(res, 'weight', rAt, 1, MAX_RESOURCE_WEIGHT);
    if (weight === undefined && res['weight'] === undefined) r.fail(joinPath(rAt, 'weight'), 'is required');
    if (weight !== undefined) resources.push({ name, weight });
  }
  const weights = resources.length > 0 ? resources : DEFAULT_FIT_SCORING.resources;
  const ratio = r.obj(strategy, 'requestedToCapacityRatio', sAt);
  if (type !== 'RequestedToCapacityRatio') {
    if (ratio !== undefined)
      r.fail(joinPath(sAt, 'requestedToCapacityRatio'), `is only read with type RequestedToCapacityRatio`);
    return { type, resources: weights };
  }
  const rAt = joinPath(sAt, 'requestedToCapacityRatio');
  if (ratio === undefined) return r.fail(rAt, 'is required with type RequestedToCapacityRatio');
  r.known(ratio, rAt, ['shape']);
  const shape: ShapePoint[] = [];
  const points = r.objects(r.list(ratio, 'shape', rAt), joinPath(rAt, 'shape'));
  if (points.length === 0) return r.fail(joinPath(rAt, 'shape'), 'must have at least one point');
  for (const [point, pAt] of points) {
    r.known(point, pAt, ['utilization', 'score']);
    const utilization = r.int(point, 'utilization', pAt, 0, 100);
    const score = r.int(point, 'score', pAt, 0, MAX_SHAPE_SCORE);
    if (point['utilization'] === undefined) r.fail(joinPath(pAt, 'utilization'), 'is required');
    if (point['score'] === undefined) r.fail(joinPath(pAt, 'score'), 'is required');
    if (utilization === undefined || score === undefined) continue;
    const last = shape[shape.length - 1];
    if (last !== undefined && utilization <= last.utilization) {
      r.fail(
        joinPath(pAt, 'utilization'),
        'must be greater than the previous point’s (points in increasing utilization)',
      );
    }
    shape.push({ utilization, score });
  }
  return { type, resources: weights, shape };
}
