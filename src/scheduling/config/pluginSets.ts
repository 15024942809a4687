// `profiles[].plugins`: which plugins a profile enables at each extension point and with what weight, merged with
// v1.26's defaults as kube-scheduler merges them (pkg/scheduler/apis/config/v1/default_plugins.go): the defaults are
// all `multiPoint` plugins; the file's multiPoint.disabled removes defaults (`*` all of them), multiPoint.enabled
// re-weights a default in place or adds one; then, for the score point, score.enabled plugins are used as written and
// score.disabled (`*` for all) keeps multiPoint plugins out; a weight of 0 or none is 1.
import type { Obj } from '../../model/rawJson.js';
import { joinPath, type Reader } from '../framework/argsReader.js';
import { DEFAULT_PROFILE, SCORE_PLUGINS, type SchedulerProfile, type ScorePluginName } from '../profile.js';

/**
 * v1.26's in-tree plugins (pkg/scheduler/framework/plugins/registry.go): a name outside this list makes kube-scheduler
 * refuse to start, and is most likely a typo here too.
 */
export const IN_TREE_PLUGINS = new Set([
  'PrioritySort',
  'DefaultBinder',
  'DefaultPreemption',
  'SchedulingGates',
  'NodeUnschedulable',
  'NodeName',
  'TaintToleration',
  'NodeAffinity',
  'NodePorts',
  'NodeResourcesFit',
  'NodeResourcesBalancedAllocation',
  'VolumeRestrictions',
  'EBSLimits',
  'GCEPDLimits',
  'NodeVolumeLimits',
  'AzureDiskLimits',
  'CinderLimits',
  'VolumeBinding',
  'VolumeZone',
  'PodTopologySpread',
  'InterPodAffinity',
  'ImageLocality',
  'SelectorSpread',
]);

export const EXTENSION_POINTS = [
  'preEnqueue',
  'queueSort',
  'preFilter',
  'filter',
  'postFilter',
  'preScore',
  'score',
  'reserve',
  'permit',
  'preBind',
  'bind',
  'postBind',
  'multiPoint',
];

/** In-tree score plugins the prediction does not model: VolumeBinding scores only under an alpha feature gate. */
const UNMODELLED_SCORE_PLUGINS = new Set(['VolumeBinding', 'SelectorSpread']);

const isScorePlugin = (name: string): name is ScorePluginName => (SCORE_PLUGINS as readonly string[]).includes(name);

/** The default profile's score plugins in v1 and v1beta3 (multiPoint, with these weights). */
const DEFAULT_MULTIPOINT: ReadonlyArray<{ readonly name: string; readonly weight: number }> = SCORE_PLUGINS.map(
  (name) => ({ name, weight: DEFAULT_PROFILE.scoreWeights[name]! }),
);

interface PluginSet {
  readonly enabled: ReadonlyArray<{ readonly name: string; readonly weight: number }>;
  readonly disabled: ReadonlySet<string>;
}

/** `plugins.<point>`: enabled (name, weight) and disabled names; `score` requires score plugins. */
function pluginSetOf(r: Reader, plugins: Obj | undefined, point: string, path: string): PluginSet {
  const set = plugins === undefined ? undefined : r.obj(plugins, point, path);
  const at = joinPath(path, point);
  const enabled: Array<{ name: string; weight: number }> = [];
  const disabled = new Set<string>();
  if (set === undefined) return { enabled, disabled };
  r.known(set, at, ['enabled', 'disabled']);
  for (const [p, pAt] of r.objects(r.list(set, 'enabled', at), `${at}.enabled`)) {
    r.known(p, pAt, ['name', 'weight']);
    const name = r.string(p, 'name', pAt);
    if (name === undefined || name === '') {
      r.fail(joinPath(pAt, 'name'), 'is required');
      continue;
    }
    if (!IN_TREE_PLUGINS.has(name)) {
      r.fail(
        joinPath(pAt, 'name'),
        `unknown plugin ${JSON.stringify(name)}: kube-scheduler v1.26 has no such in-tree plugin`,
      );
      continue;
    }
    if (point === 'score' && !isScorePlugin(name) && !UNMODELLED_SCORE_PLUGINS.has(name)) {
      r.fail(joinPath(pAt, 'name'), `${name} is not a score plugin`);
      continue;
    }
    // The scheduler refuses a negative weight and reads 0 (or none) as 1.
    const weight = r.int(p, 'weight', pAt, 0, Number.MAX_SAFE_INTEGER) ?? 0;
    enabled.push({ name, weight: weight === 0 ? 1 : weight });
  }
  for (const [p, pAt] of r.objects(r.list(set, 'disabled', at), `${at}.disabled`)) {
    r.known(p, pAt, ['name', 'weight']);
    const name = r.string(p, 'name', pAt);
    if (name === undefined || name === '') r.fail(joinPath(pAt, 'name'), 'is required');
    else disabled.add(name);
  }
  return { enabled, disabled };
}

/** The weights of the modelled score plugins after the scheduler's merge of defaults, multiPoint and score. */
export function scoreWeightsOf(r: Reader, plugins: Obj | undefined, path: string): SchedulerProfile['scoreWeights'] {
  const multiPoint = pluginSetOf(r, plugins, 'multiPoint', path);
  const score = pluginSetOf(r, plugins, 'score', path);
  // The defaults merged with the file's multiPoint (defaults order kept, re-weighted in place, the rest appended).
  const merged: Array<{ name: string; weight: number }> = [];
  if (!multiPoint.disabled.has('*')) {
    for (const d of DEFAULT_MULTIPOINT) {
      if (multiPoint.disabled.has(d.name)) continue;
      merged.push(multiPoint.enabled.find((e) => e.name === d.name) ?? d);
    }
  }
  for (const e of multiPoint.enabled) if (!merged.some((m) => m.name === e.name)) merged.push(e);
  const weights: Partial<Record<ScorePluginName, number>> = {};
  // The score point's own plugins win over multiPoint's; its disabled list keeps multiPoint plugins out.
  for (const e of score.enabled) if (isScorePlugin(e.name)) weights[e.name] = e.weight;
  for (const m of merged) {
    if (!isScorePlugin(m.name) || score.disabled.has('*') || score.disabled.has(m.name)) continue;
    if (weights[m.name] === undefined && !score.enabled.some((e) => e.name === m.name)) weights[m.name] = m.weight;
  }
  if ([...score.enabled, ...merged].some((e) => e.name === 'SelectorSpread')) {
    r.warnings.push('SelectorSpread (deprecated) is enabled: the prediction does not model its score');
  }
  return weights;
}
