// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1 or v1beta3, as kube-scheduler v1.26 reads its
// `--config`) → the SchedulerProfile the landing prediction follows. Pure: text in, a profile or field-exact problems
// out; the shell (schedulerConfigFile.ts) reads the file and turns problems into exit 2.
//
// Read from the profile that schedules the pods kube-rebalancer moves (schedulerName `default-scheduler`, or absent):
// - the score plugins and their weights, merged with v1.26's defaults as the scheduler merges them: the defaults are
//   all `multiPoint` plugins; the file's multiPoint.disabled removes defaults (`*` all of them), multiPoint.enabled
//   re-weights a default in place or adds one; then, for the score point, score.enabled plugins are used as written
//   and score.disabled (`*` for all) keeps multiPoint plugins out; a weight of 0 or none is 1;
// - NodeResourcesFitArgs.scoringStrategy: type, resources with weights (default cpu and memory, 1 each), and
//   requestedToCapacityRatio.shape;
// - PodTopologySpreadArgs: defaultingType (System, the default) and defaultConstraints (List only);
// - InterPodAffinityArgs.hardPodAffinityWeight (0–100).
// Everything else of the file (leader election, client connection, other profiles, other plugins' args) is accepted
// unread, except `percentageOfNodesToScore`, which is kept, and `extenders`, which the prediction cannot follow (a
// warning).
import { CORE_SCHEMA, load } from 'js-yaml';
import { isObj, typeName, type Obj } from '../model/rawJson.js';
import type { NodeInclusionPolicy, WhenUnsatisfiable } from '../model/types.js';
import {
  DEFAULT_PROFILE,
  SCORE_PLUGINS,
  type FitScoring,
  type ProfileSpreadConstraint,
  type ResourceWeight,
  type SchedulerProfile,
  type ScorePluginName,
  type ShapePoint,
} from './profile.js';

export interface ConfigProblem {
  /** The field path in the file, such as `profiles[0].plugins.score.enabled[1].weight`; '' for the whole file. */
  readonly field: string;
  readonly problem: string;
}

export type SchedulerConfigResult =
  | { readonly ok: true; readonly profile: SchedulerProfile; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

const API_VERSIONS = ['kubescheduler.config.k8s.io/v1', 'kubescheduler.config.k8s.io/v1beta3'];
const DEFAULT_SCHEDULER = 'default-scheduler';

/**
 * v1.26's in-tree plugins (pkg/scheduler/framework/plugins/registry.go): a name outside this list makes kube-scheduler
 * refuse to start, and is most likely a typo here too.
 */
const IN_TREE_PLUGINS = new Set([
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

/** In-tree score plugins the prediction does not model: VolumeBinding scores only under an alpha feature gate. */
const UNMODELLED_SCORE_PLUGINS = new Set(['VolumeBinding', 'SelectorSpread']);

const isScorePlugin = (name: string): name is ScorePluginName => (SCORE_PLUGINS as readonly string[]).includes(name);

/** The default profile's score plugins in v1 and v1beta3 (multiPoint, with these weights). */
const DEFAULT_MULTIPOINT: ReadonlyArray<{ readonly name: string; readonly weight: number }> = SCORE_PLUGINS.map(
  (name) => ({ name, weight: DEFAULT_PROFILE.scoreWeights[name]! }),
);

/** KubeSchedulerConfiguration's fields in v1 and v1beta3 (v1.26). */
const TOP_LEVEL_FIELDS = [
  'apiVersion',
  'kind',
  'parallelism',
  'leaderElection',
  'clientConnection',
  'healthzBindAddress',
  'metricsBindAddress',
  'enableProfiling',
  'enableContentionProfiling',
  'percentageOfNodesToScore',
  'podInitialBackoffSeconds',
  'podMaxBackoffSeconds',
  'profiles',
  'extenders',
];

const EXTENSION_POINTS = [
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

const FIT_TYPES = ['LeastAllocated', 'MostAllocated', 'RequestedToCapacityRatio'] as const;
const WHEN_UNSATISFIABLE: readonly WhenUnsatisfiable[] = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION: readonly NodeInclusionPolicy[] = ['Honor', 'Ignore'];
/** RequestedToCapacityRatio's shape scores run 0–10 (MaxCustomPriorityScore); resource weights 1–100. */
const MAX_SHAPE_SCORE = 10;
const MAX_RESOURCE_WEIGHT = 100;

/** Collects problems with their field paths; readers return undefined after recording one. */
class Reader {
  readonly problems: ConfigProblem[] = [];
  readonly warnings: string[] = [];

  fail(field: string, problem: string): undefined {
    this.problems.push({ field, problem });
    return undefined;
  }

  obj(parent: Obj, key: string, path: string): Obj | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    return isObj(value) ? value : this.fail(join(path, key), `must be an object (got ${typeName(value)})`);
  }

  list(parent: Obj, key: string, path: string): readonly unknown[] | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    return Array.isArray(value) ? value : this.fail(join(path, key), `must be a list (got ${typeName(value)})`);
  }

  string(parent: Obj, key: string, path: string): string | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    return typeof value === 'string' ? value : this.fail(join(path, key), `must be a string (got ${typeName(value)})`);
  }

  int(parent: Obj, key: string, path: string, min: number, max: number): number | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
      return this.fail(join(path, key), `must be an integer (got ${typeName(value)})`);
    }
    if (value < min || value > max)
      return this.fail(join(path, key), `must be between ${min} and ${max} (got ${value})`);
    return value;
  }

  oneOf<T extends string>(parent: Obj, key: string, path: string, allowed: readonly T[]): T | undefined {
    const value = this.string(parent, key, path);
    if (value === undefined) return undefined;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    return this.fail(join(path, key), `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }

  /** Strict decoding, as kube-scheduler's: a field the type does not have is an error (a typo would be ignored). */
  known(o: Obj, path: string, fields: readonly string[]): void {
    for (const key of Object.keys(o)) {
      if (!fields.includes(key)) this.fail(join(path, key), `unknown field (known: ${fields.join(', ')})`);
    }
  }

  /** The objects of a list, each with its path; non-objects are recorded as problems and skipped. */
  objects(list: readonly unknown[] | undefined, path: string): Array<readonly [Obj, string]> {
    const out: Array<readonly [Obj, string]> = [];
    (list ?? []).forEach((item, i) => {
      const at = `${path}[${i}]`;
      if (isObj(item)) out.push([item, at]);
      else this.fail(at, `must be an object (got ${typeName(item)})`);
    });
    return out;
  }
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** The YAML document, or the problem with the text. */
function documentOf(text: string, source: string): { doc: Obj } | { problem: string } {
  let doc: unknown;
  try {
    doc = load(text, { schema: CORE_SCHEMA, filename: source });
  } catch (error) {
    const mark = (error as { mark?: { line: number; column: number } }).mark;
    const where = mark === undefined ? '' : ` at line ${mark.line + 1}, column ${mark.column + 1}`;
    const reason = (error as { reason?: string }).reason ?? String(error);
    return { problem: `invalid YAML${where}: ${reason}` };
  }
  return isObj(doc) ? { doc } : { problem: `must be a KubeSchedulerConfiguration (got ${typeName(doc)})` };
}

/** apiVersion and kind: nothing else is read when they are wrong. */
function checkType(r: Reader, doc: Obj): void {
  const apiVersion = r.string(doc, 'apiVersion', '');
  if (apiVersion === undefined || !API_VERSIONS.includes(apiVersion)) {
    r.fail('apiVersion', `must be ${API_VERSIONS.join(' or ')} (got ${JSON.stringify(doc['apiVersion'] ?? null)})`);
  }
  if (doc['kind'] !== 'KubeSchedulerConfiguration') {
    r.fail('kind', `must be KubeSchedulerConfiguration (got ${JSON.stringify(doc['kind'] ?? null)})`);
  }
}

/** The default-scheduler profile and its path (an empty one when the file lists no profiles: all defaults). */
function defaultProfileOf(r: Reader, doc: Obj): readonly [Obj, string] {
  const profiles = r.objects(r.list(doc, 'profiles', ''), 'profiles');
  const named = profiles.filter(([p]) => (p['schedulerName'] ?? DEFAULT_SCHEDULER) === DEFAULT_SCHEDULER);
  if (profiles.length > 0 && named.length === 0) {
    r.fail('profiles', `has no ${DEFAULT_SCHEDULER} profile (the one that schedules the pods kube-rebalancer moves)`);
  }
  if (named.length > 1) r.fail(named[1]![1], `a second ${DEFAULT_SCHEDULER} profile`);
  const [profile, at] = named[0] ?? [{}, 'profiles[0]'];
  r.known(profile, at, ['schedulerName', 'plugins', 'pluginConfig']);
  return [profile, at];
}

/** Parses the text of a KubeSchedulerConfiguration; `source` names it in the profile (its path). */
export function parseSchedulerConfig(text: string, source: string): SchedulerConfigResult {
  const parsed = documentOf(text, source);
  if ('problem' in parsed) return { ok: false, problems: [{ field: '', problem: parsed.problem }] };
  const { doc } = parsed;
  const r = new Reader();
  checkType(r, doc);
  if (r.problems.length > 0) return { ok: false, problems: r.problems };
  r.known(doc, '', TOP_LEVEL_FIELDS);

  const percentage = r.int(doc, 'percentageOfNodesToScore', '', 0, 100);
  if (r.list(doc, 'extenders', '')?.length) {
    r.warnings.push('extenders are not modelled: the prediction does not call them');
  }
  const [profile, at] = defaultProfileOf(r, doc);
  const plugins = r.obj(profile, 'plugins', at);
  if (plugins !== undefined) r.known(plugins, join(at, 'plugins'), EXTENSION_POINTS);
  const scoreWeights = scoreWeightsOf(r, plugins, join(at, 'plugins'));
  const args = pluginArgs(r, profile, at);
  const fit = args.get('NodeResourcesFit');
  const interPod = args.get('InterPodAffinity');
  const spread = args.get('PodTopologySpread');
  const fitScoring = fit === undefined ? DEFAULT_PROFILE.fitScoring : fitScoringOf(r, fit[0], fit[1]);
  const hardPodAffinityWeight = interPod === undefined ? undefined : hardWeightOf(r, interPod[0], interPod[1]);
  const spreadDefaulting =
    spread === undefined ? DEFAULT_PROFILE.spreadDefaulting : spreadDefaultingOf(r, spread[0], spread[1]);

  if (r.problems.length > 0 || fitScoring === undefined || spreadDefaulting === undefined) {
    return { ok: false, problems: r.problems };
  }
  return {
    ok: true,
    profile: {
      source,
      scoreWeights,
      fitScoring,
      spreadDefaulting,
      ...(percentage === undefined ? {} : { percentageOfNodesToScore: percentage }),
      ...(hardPodAffinityWeight === undefined ? {} : { hardPodAffinityWeight }),
    },
    warnings: r.warnings,
  };
}

interface PluginSet {
  readonly enabled: ReadonlyArray<{ readonly name: string; readonly weight: number }>;
  readonly disabled: ReadonlySet<string>;
}

/** `plugins.<point>`: enabled (name, weight) and disabled names; `score` requires score plugins. */
function pluginSetOf(r: Reader, plugins: Obj | undefined, point: string, path: string): PluginSet {
  const set = plugins === undefined ? undefined : r.obj(plugins, point, path);
  const at = join(path, point);
  const enabled: Array<{ name: string; weight: number }> = [];
  const disabled = new Set<string>();
  if (set === undefined) return { enabled, disabled };
  r.known(set, at, ['enabled', 'disabled']);
  for (const [p, pAt] of r.objects(r.list(set, 'enabled', at), `${at}.enabled`)) {
    r.known(p, pAt, ['name', 'weight']);
    const name = r.string(p, 'name', pAt);
    if (name === undefined || name === '') {
      r.fail(join(pAt, 'name'), 'is required');
      continue;
    }
    if (!IN_TREE_PLUGINS.has(name)) {
      r.fail(
        join(pAt, 'name'),
        `unknown plugin ${JSON.stringify(name)}: kube-scheduler v1.26 has no such in-tree plugin`,
      );
      continue;
    }
    if (point === 'score' && !isScorePlugin(name) && !UNMODELLED_SCORE_PLUGINS.has(name)) {
      r.fail(join(pAt, 'name'), `${name} is not a score plugin`);
      continue;
    }
    // The scheduler refuses a negative weight and reads 0 (or none) as 1.
    const weight = r.int(p, 'weight', pAt, 0, Number.MAX_SAFE_INTEGER) ?? 0;
    enabled.push({ name, weight: weight === 0 ? 1 : weight });
  }
  for (const [p, pAt] of r.objects(r.list(set, 'disabled', at), `${at}.disabled`)) {
    r.known(p, pAt, ['name', 'weight']);
    const name = r.string(p, 'name', pAt);
    if (name === undefined || name === '') r.fail(join(pAt, 'name'), 'is required');
    else disabled.add(name);
  }
  return { enabled, disabled };
}

/** The weights of the modelled score plugins after the scheduler's merge of defaults, multiPoint and score. */
function scoreWeightsOf(r: Reader, plugins: Obj | undefined, path: string): SchedulerProfile['scoreWeights'] {
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

/** pluginConfig entries by plugin name: the `args` object and its path. */
function pluginArgs(r: Reader, profile: Obj, at: string): Map<string, readonly [Obj, string]> {
  const out = new Map<string, readonly [Obj, string]>();
  for (const [entry, eAt] of r.objects(r.list(profile, 'pluginConfig', at), join(at, 'pluginConfig'))) {
    const name = r.string(entry, 'name', eAt);
    if (name === undefined || name === '') {
      r.fail(join(eAt, 'name'), 'is required');
      continue;
    }
    if (out.has(name)) {
      r.fail(join(eAt, 'name'), `repeated config for plugin ${name}`);
      continue;
    }
    const args = r.obj(entry, 'args', eAt) ?? {};
    out.set(name, [args, join(eAt, 'args')]);
  }
  return out;
}

const ARGS_META = ['apiVersion', 'kind'];

function fitScoringOf(r: Reader, args: Obj, at: string): FitScoring | undefined {
  r.known(args, at, [...ARGS_META, 'ignoredResources', 'ignoredResourceGroups', 'scoringStrategy']);
  const strategy = r.obj(args, 'scoringStrategy', at);
  if (strategy === undefined) return DEFAULT_PROFILE.fitScoring;
  const sAt = join(at, 'scoringStrategy');
  r.known(strategy, sAt, ['type', 'resources', 'requestedToCapacityRatio']);
  const type = r.oneOf(strategy, 'type', sAt, FIT_TYPES) ?? 'LeastAllocated';
  const resources: ResourceWeight[] = [];
  for (const [res, rAt] of r.objects(r.list(strategy, 'resources', sAt), join(sAt, 'resources'))) {
    r.known(res, rAt, ['name', 'weight']);
    const name = r.string(res, 'name', rAt);
    if (name === undefined || name === '') {
      r.fail(join(rAt, 'name'), 'is required');
      continue;
    }
    if (resources.some((x) => x.name === name)) r.fail(join(rAt, 'name'), `resource ${name} is listed twice`);
    const weight = r.int(res, 'weight', rAt, 1, MAX_RESOURCE_WEIGHT);
    if (weight === undefined && res['weight'] === undefined) r.fail(join(rAt, 'weight'), 'is required');
    if (weight !== undefined) resources.push({ name, weight });
  }
  const weights = resources.length > 0 ? resources : DEFAULT_PROFILE.fitScoring.resources;
  const ratio = r.obj(strategy, 'requestedToCapacityRatio', sAt);
  if (type !== 'RequestedToCapacityRatio') {
    if (ratio !== undefined)
      r.fail(join(sAt, 'requestedToCapacityRatio'), `is only read with type RequestedToCapacityRatio`);
    return { type, resources: weights };
  }
  const rAt = join(sAt, 'requestedToCapacityRatio');
  if (ratio === undefined) return r.fail(rAt, 'is required with type RequestedToCapacityRatio');
  r.known(ratio, rAt, ['shape']);
  const shape: ShapePoint[] = [];
  const points = r.objects(r.list(ratio, 'shape', rAt), join(rAt, 'shape'));
  if (points.length === 0) return r.fail(join(rAt, 'shape'), 'must have at least one point');
  for (const [point, pAt] of points) {
    r.known(point, pAt, ['utilization', 'score']);
    const utilization = r.int(point, 'utilization', pAt, 0, 100);
    const score = r.int(point, 'score', pAt, 0, MAX_SHAPE_SCORE);
    if (point['utilization'] === undefined) r.fail(join(pAt, 'utilization'), 'is required');
    if (point['score'] === undefined) r.fail(join(pAt, 'score'), 'is required');
    if (utilization === undefined || score === undefined) continue;
    const last = shape[shape.length - 1];
    if (last !== undefined && utilization <= last.utilization) {
      r.fail(join(pAt, 'utilization'), 'must be greater than the previous point’s (points in increasing utilization)');
    }
    shape.push({ utilization, score });
  }
  return { type, resources: weights, shape };
}

function hardWeightOf(r: Reader, args: Obj, at: string): number | undefined {
  r.known(args, at, [...ARGS_META, 'hardPodAffinityWeight', 'ignorePreferredTermsOfExistingPods']);
  return r.int(args, 'hardPodAffinityWeight', at, 0, 100);
}

function spreadDefaultingOf(r: Reader, args: Obj, at: string): SchedulerProfile['spreadDefaulting'] | undefined {
  r.known(args, at, [...ARGS_META, 'defaultConstraints', 'defaultingType']);
  const type = r.oneOf(args, 'defaultingType', at, ['System', 'List'] as const) ?? 'System';
  const list = r.objects(r.list(args, 'defaultConstraints', at), join(at, 'defaultConstraints'));
  if (type === 'System') {
    if (list.length > 0) {
      return r.fail(
        join(at, 'defaultConstraints'),
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
      r.fail(join(cAt, 'labelSelector'), 'must not be set: the scheduler derives it from each pod’s owners');
    }
    const maxSkew = r.int(c, 'maxSkew', cAt, 1, Number.MAX_SAFE_INTEGER);
    const topologyKey = r.string(c, 'topologyKey', cAt);
    const whenUnsatisfiable = r.oneOf(c, 'whenUnsatisfiable', cAt, WHEN_UNSATISFIABLE);
    const nodeAffinityPolicy = r.oneOf(c, 'nodeAffinityPolicy', cAt, INCLUSION);
    const nodeTaintsPolicy = r.oneOf(c, 'nodeTaintsPolicy', cAt, INCLUSION);
    if (c['maxSkew'] === undefined) r.fail(join(cAt, 'maxSkew'), 'is required');
    if (topologyKey === undefined || topologyKey === '') r.fail(join(cAt, 'topologyKey'), 'is required');
    if (c['whenUnsatisfiable'] === undefined) r.fail(join(cAt, 'whenUnsatisfiable'), 'is required');
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
