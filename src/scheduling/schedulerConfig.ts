// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1 or v1beta3, as kube-scheduler v1.26 reads its
// `--config`) → the SchedulerProfile the landing prediction follows. Pure: text in, a profile or field-exact problems
// out; the shell (schedulerConfigFile.ts) reads the file and turns problems into exit 2.
//
// This file reads the envelope only: apiVersion and kind, the top-level fields, and the profile that schedules the
// pods kube-rebalancer moves (schedulerName `default-scheduler`, or absent). Its `plugins` go to config/pluginSets.ts
// (the score weights after the scheduler's merge with the defaults), its `pluginConfig` entries to their plugins'
// decoders (config/pluginArgs.ts). Everything else of the file (leader election, client connection, other profiles)
// is accepted unread, except `percentageOfNodesToScore`, which is kept, and `extenders`, which the prediction cannot
// follow (a warning).
import { CORE_SCHEMA, load } from 'js-yaml';
import { isObj, typeName, type Obj } from '../model/rawJson.js';
import { argsSettingsOf } from './config/pluginArgs.js';
import { EXTENSION_POINTS, scoreWeightsOf } from './config/pluginSets.js';
import { joinPath, Reader, type ConfigProblem } from './framework/argsReader.js';
import type { SchedulerProfile } from './profile.js';

export type { ConfigProblem } from './framework/argsReader.js';

export type SchedulerConfigResult =
  | { readonly ok: true; readonly profile: SchedulerProfile; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

const API_VERSIONS = ['kubescheduler.config.k8s.io/v1', 'kubescheduler.config.k8s.io/v1beta3'];
const DEFAULT_SCHEDULER = 'default-scheduler';

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
  if (plugins !== undefined) r.known(plugins, joinPath(at, 'plugins'), EXTENSION_POINTS);
  const scoreWeights = scoreWeightsOf(r, plugins, joinPath(at, 'plugins'));
  const settings = argsSettingsOf(r, profile, at);

  if (r.problems.length > 0 || settings === undefined) return { ok: false, problems: r.problems };
  return {
    ok: true,
    profile: {
      source,
      scoreWeights,
      fitScoring: settings.fitScoring,
      spreadDefaulting: settings.spreadDefaulting,
      ...(percentage === undefined ? {} : { percentageOfNodesToScore: percentage }),
      ...(settings.hardPodAffinityWeight === undefined
        ? {}
        : { hardPodAffinityWeight: settings.hardPodAffinityWeight }),
    },
    warnings: r.warnings,
  };
}
