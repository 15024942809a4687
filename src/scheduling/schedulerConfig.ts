// A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1 or v1beta3, as kube-scheduler v1.26 reads its
// `--config`) → the SchedulerProfile the landing prediction follows. Pure: text in, a profile or field-exact problems
// out; the shell (schedulerConfigFile.ts) reads the file and turns problems into exit 2.
//
// This file reads the envelope only: apiVersion and kind, the top-level fields, and every profile (a pod's
// spec.schedulerName picks one; `default-scheduler` when absent, and it must be there: it schedules most of the pods
// kube-rebalancer moves). Each profile's `plugins` go to config/pluginSets.ts (the score weights after the scheduler's
// merge with the defaults), its `pluginConfig` entries to their plugins' decoders (config/pluginArgs.ts), which model
// each field or refuse it by its path. `percentageOfNodesToScore` (global, or the profile's own) is kept for sampling;
// `extenders` are refused (the prediction cannot call them); what does not change where a pod lands (leader
// election, client connection, backoff) is accepted.
import { CORE_SCHEMA, load } from 'js-yaml';
import { isObj, typeName, type Obj } from '../model/rawJson.js';
import { argsSettingsOf } from './config/pluginArgs.js';
import { EXTENSION_POINTS, pluginSettingsOf } from './config/pluginSets.js';
import { joinPath, Reader, type ConfigProblem } from './framework/argsReader.js';
import { DEFAULT_SCHEDULER, type SchedulerProfile, type SchedulerProfiles } from './profile.js';

export type { ConfigProblem } from './framework/argsReader.js';

export type SchedulerConfigResult =
  | {
      readonly ok: true;
      /** The default-scheduler profile (the single-profile view). */
      readonly profile: SchedulerProfile;
      /** Every profile, by schedulerName. */
      readonly profiles: SchedulerProfiles;
      readonly warnings: readonly string[];
    }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

const API_VERSIONS = ['kubescheduler.config.k8s.io/v1', 'kubescheduler.config.k8s.io/v1beta3'];

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

/** Every profile with its path and schedulerName (one empty profile when the file lists none: all defaults). */
function profilesOf(r: Reader, doc: Obj): ReadonlyArray<readonly [Obj, string, string]> {
  const listed = r.objects(r.list(doc, 'profiles', ''), 'profiles');
  if (listed.length === 0) return [[{}, 'profiles[0]', DEFAULT_SCHEDULER]];
  const seen = new Set<string>();
  const out: Array<readonly [Obj, string, string]> = [];
  for (const [profile, at] of listed) {
    r.known(profile, at, ['schedulerName', 'percentageOfNodesToScore', 'plugins', 'pluginConfig']);
    // kube-scheduler defaults an empty schedulerName to default-scheduler and refuses a name given twice.
    const name = r.string(profile, 'schedulerName', at) || DEFAULT_SCHEDULER;
    if (seen.has(name)) r.fail(joinPath(at, 'schedulerName'), `duplicate value ${JSON.stringify(name)}`);
    seen.add(name);
    out.push([profile, at, name]);
  }
  if (!seen.has(DEFAULT_SCHEDULER)) {
    r.fail('profiles', `has no ${DEFAULT_SCHEDULER} profile (the one that schedules the pods kube-rebalancer moves)`);
  }
  return out;
}

/** One profile, read as kube-scheduler reads it; undefined when it has problems (they are in `r`). */
function profileOf(
  r: Reader,
  [profile, at]: readonly [Obj, string, string],
  global: number | undefined,
  source: string,
): SchedulerProfile | undefined {
  // The profile's own percentage wins over the global one (kube-scheduler 1.25+).
  const percentage = r.int(profile, 'percentageOfNodesToScore', at, 0, 100) ?? global;
  const plugins = r.obj(profile, 'plugins', at);
  if (plugins !== undefined) r.known(plugins, joinPath(at, 'plugins'), EXTENSION_POINTS);
  const { scoreWeights, disabledFilters } = pluginSettingsOf(r, plugins, joinPath(at, 'plugins'));
  const settings = argsSettingsOf(r, profile, at);
  if (settings === undefined) return undefined;
  return {
    source,
    scoreWeights,
    ...settings,
    ...(percentage === undefined ? {} : { percentageOfNodesToScore: percentage }),
    ...(disabledFilters.length === 0 ? {} : { disabledFilters }),
  };
}

/**
 * InterPodAffinity's hardPodAffinityWeight is summed into the cluster state's per-domain scores of existing pods'
 * terms, once for all pods: profiles that differ in it are refused rather than scored with the wrong one.
 */
function checkHardWeights(r: Reader, read: ReadonlyArray<readonly [SchedulerProfile, string]>): void {
  const [first, ...rest] = read;
  for (const [p, at] of rest) {
    if ((p.hardPodAffinityWeight ?? 1) !== (first![0].hardPodAffinityWeight ?? 1)) {
      r.fail(
        joinPath(at, 'pluginConfig'),
        `InterPodAffinity hardPodAffinityWeight differs from that of ${first![1]}: profiles with different weights are not modelled`,
      );
    }
  }
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

  const global = r.int(doc, 'percentageOfNodesToScore', '', 0, 100);
  if (r.list(doc, 'extenders', '')?.length) {
    r.fail(
      'extenders',
      'are not modelled: the prediction cannot call them (plan against a configuration without them)',
    );
  }
  const read: Array<readonly [SchedulerProfile, string]> = [];
  const byName = new Map<string, SchedulerProfile>();
  for (const entry of profilesOf(r, doc)) {
    const profile = profileOf(r, entry, global, source);
    if (profile === undefined) continue;
    read.push([profile, entry[1]]);
    if (!byName.has(entry[2])) byName.set(entry[2], profile);
  }
  checkHardWeights(r, read);
  const profile = byName.get(DEFAULT_SCHEDULER);
  if (r.problems.length > 0 || profile === undefined) return { ok: false, problems: r.problems };
  return { ok: true, profile, profiles: { source, byName }, warnings: r.warnings };
}
