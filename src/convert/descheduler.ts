// `convert --descheduler-policy`: a kubernetes-sigs descheduler DeschedulerPolicy (v1alpha2 profiles as v0.36
// documents them, or v1alpha1 strategies) → RebalancePolicies in DryRun mode. What maps is set explicitly, even when
// it equals our default, so the result reads as a translation; every default of ours the descheduler does not have is
// written out with a note, and every other setting becomes one note saying why it needs no counterpart or which part
// has none (also printed on stderr by the CLI), so nothing the user configured disappears silently. A plugin the
// descheduler never had, or a value it (or our CRD) would refuse, is bad input naming the DeschedulerPolicy field.
//
// Parts: argTypes.ts (the descheduler's argument types), build.ts (plugins → policies), evictor.ts (DefaultEvictor and
// the top level → spec.eviction), check.ts (the output against the CRD's rules), render.ts (YAML with the notes).
import { InputError } from '../errors.js';
import { parseNodeSelector } from './nodeSelector.js';
import { isObj, stringItems as strings, type Obj } from '../model/rawJson.js';
import { STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';
import { PLUGIN_ARGS, TOP_ARGS, argProblems, refuse } from './argTypes.js';
import { build } from './build.js';
import { pluginProblems } from './pluginRules.js';
import { dropUnreadProviderNotes } from './prometheus.js';
import { checkConverted } from './check.js';
import { EVICTOR, type ConvertedPolicy, type PluginSettings } from './types.js';

export type { ConvertedPolicy } from './types.js';
export { renderConverted, safeYaml } from './render.js';

/** Every strategy (v1alpha1) and plugin (v1alpha2) of the descheduler v0.26 to v0.36, besides DefaultEvictor. */
export const DESCHEDULER_PLUGINS: readonly string[] = Object.keys(PLUGIN_ARGS).filter((p) => p !== EVICTOR);

/** v1alpha2 extension points: deschedule and balance run strategies; filter and preevictionfilter take evictors. */
const STRATEGY_POINTS = ['deschedule', 'balance'];
const POINTS = ['presort', 'sort', 'deschedule', 'balance', 'filter', 'preevictionfilter'];

/** v1alpha1 StrategyParameters that nest one strategy's own parameters. */
const NESTED_PARAMS = [
  'nodeResourceUtilizationThresholds',
  'podsHavingTooManyRestarts',
  'podLifeTime',
  'removeDuplicates',
  'failedPods',
];

/** A cluster-scoped object's name: a DNS-1123 subdomain. */
const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function obj(value: unknown): Obj {
  return isObj(value) ? value : {};
}

/**
 * The profile's name as the policy's when it is a valid object name; otherwise the nearest one (lower-cased, other
 * characters as dashes), with a note. Room is left for the "-2" of a profile split by scope.
 */
function policyName(base: string, notes: string[]): string {
  if (DNS_SUBDOMAIN.test(base) && base.length <= 240) return base;
  const name =
    base
      .toLowerCase()
      .replace(/[^a-z0-9.-]+/g, '-')
      .replace(/^[-.]+|[-.]+$/g, '')
      .slice(0, 240) || 'from-descheduler';
  notes.push(
    `name: ${JSON.stringify(name)} for the profile ${JSON.stringify(base)}: an object name must be a lowercase DNS ` +
      'subdomain (a-z, 0-9, "-" and ".")',
  );
  return name;
}

export function convertDeschedulerPolicy(
  raw: unknown,
  file: string,
  name?: string,
  registry: StrategyRegistry = STRATEGIES,
): ConvertedPolicy[] {
  if (!isObj(raw) || raw['kind'] !== 'DeschedulerPolicy') {
    throw new InputError(file, undefined, 'kind', 'must be DeschedulerPolicy');
  }
  const nodeSelector = raw['nodeSelector'];
  if (typeof nodeSelector === 'string') {
    const parsed = parseNodeSelector(nodeSelector);
    if ('problem' in parsed) throw new InputError(file, undefined, 'nodeSelector', parsed.problem);
  }
  const apiVersion = raw['apiVersion'];
  let policies: ConvertedPolicy[];
  if (apiVersion === 'descheduler/v1alpha1') {
    policies = fromV1alpha1(raw, file, name ?? 'from-descheduler', registry);
  } else if (apiVersion === 'descheduler/v1alpha2') {
    refuse(file, undefined, argProblems(raw, TOP_ARGS, ''));
    const profiles = Array.isArray(raw['profiles']) ? raw['profiles'] : [];
    if (profiles.length === 0) throw new InputError(file, undefined, 'profiles', 'must list at least one profile');
    policies = profiles.flatMap((p, i) => fromProfile(raw, obj(p), i, file, name, registry));
  } else {
    throw new InputError(
      file,
      undefined,
      'apiVersion',
      `must be descheduler/v1alpha1 or descheduler/v1alpha2 (got ${JSON.stringify(apiVersion)})`,
    );
  }
  checkConverted(policies, file, undefined, registry);
  dropUnreadProviderNotes(policies);
  if (policies.length > 1) sharedLimitNotes(raw, policies);
  return policies;
}

/** The descheduler's limits hold for one run of all its profiles; each converted policy counts its own. */
function sharedLimitNotes(raw: Obj, policies: ConvertedPolicy[]): void {
  for (const limit of ['maxNoOfPodsToEvictPerNode', 'maxNoOfPodsToEvictPerNamespace', 'maxNoOfPodsToEvictTotal']) {
    if (raw[limit] === undefined) continue;
    for (const p of policies)
      p.notes.push(
        `${limit}: each of the ${policies.length} policies has this limit; the descheduler's was one for all its ` +
          'profiles (lower it in each to keep the sum)',
      );
  }
}

/** A plugin name must be one the descheduler has: a typo or a plugin of another build is never dropped silently. */
function checkPlugin(plugin: string, file: string, object: string | undefined, field: string): void {
  if (plugin === EVICTOR || DESCHEDULER_PLUGINS.includes(plugin) || STRATEGIES.byDeschedulerPlugin(plugin)) return;
  throw new InputError(
    file,
    object,
    field,
    `unknown plugin ${JSON.stringify(plugin)}: not a plugin of the descheduler v0.26 to v0.36 (${[EVICTOR, ...DESCHEDULER_PLUGINS].join(', ')})`,
  );
}

/** The plugin's args with a type the descheduler decodes, and a note for each argument it does not have. */
function checkArgs(plugin: PluginSettings, file: string, notes: string[]): void {
  const types = PLUGIN_ARGS[plugin.name];
  if (types === undefined) return;
  refuse(file, undefined, argProblems(plugin.args, types, plugin.path));
  for (const key of Object.keys(plugin.args)) {
    if (types[key] === undefined && !V1ALPHA1_SHARED.includes(key))
      notes.push(`${plugin.name}.${key}: not carried over: not an argument of the descheduler v0.36 ${plugin.name}`);
  }
}

/** v1alpha1 StrategyParameters every strategy takes, converted by scope rather than by the strategy. */
const V1ALPHA1_SHARED = ['priorityThreshold', 'nodeFit', 'namespaces', 'labelSelector', 'includeSoftConstraints'];

function fromV1alpha1(raw: Obj, file: string, name: string, registry: StrategyRegistry): ConvertedPolicy[] {
  const plugins: PluginSettings[] = [];
  const notes: string[] = [];
  for (const [strategy, value] of Object.entries(obj(raw['strategies']))) {
    const s = obj(value);
    if (s['enabled'] !== true) continue;
    checkPlugin(strategy, file, undefined, `strategies.${strategy}`);
    const params = obj(s['params']);
    // v1alpha1 nests a strategy's own parameters one level down; the filters sit beside them.
    const args: Obj = { ...params };
    for (const nested of NESTED_PARAMS) {
      delete args[nested];
      Object.assign(args, obj(params[nested]));
    }
    delete args['thresholdPriority'];
    delete args['thresholdPriorityClassName'];
    if (typeof params['thresholdPriority'] === 'number')
      args['priorityThreshold'] = { value: params['thresholdPriority'] };
    else if (typeof params['thresholdPriorityClassName'] === 'string' && params['thresholdPriorityClassName'] !== '')
      args['priorityThreshold'] = { name: params['thresholdPriorityClassName'] };
    if (s['weight'] !== undefined)
      notes.push(`${strategy}.weight: no counterpart needed: the descheduler never used a strategy's weight`);
    plugins.push({ name: strategy, args, path: `strategies.${strategy}.params` });
  }
  refuse(
    file,
    undefined,
    plugins.flatMap((p) => pluginProblems(p, true)),
  );
  return build(policyName(name, notes), plugins, { args: raw, path: '', top: raw, v1alpha1: true }, notes, registry);
}

/** The plugins of one extension point that run: enabled and not disabled (`"*"` disables every one). */
function pointPlugins(point: string, set: Obj, path: string, file: string, object: string, notes: string[]): string[] {
  const disabled = strings(set['disabled']);
  const out: string[] = [];
  strings(set['enabled']).forEach((p, i) => {
    checkPlugin(p, file, object, `${path}.enabled[${i}]`);
    if (disabled.includes(p) || disabled.includes('*')) {
      notes.push(`${point}.${p}: not carried over: ${path}.disabled lists ${disabled.includes('*') ? '"*"' : 'it'}`);
      return;
    }
    out.push(p);
  });
  return out;
}

function fromProfile(
  raw: Obj,
  profile: Obj,
  index: number,
  file: string,
  name: string | undefined,
  registry: StrategyRegistry,
): ConvertedPolicy[] {
  const at = `profiles[${index}]`;
  const profileName = typeof profile['name'] === 'string' ? profile['name'] : `profile-${index + 1}`;
  const object = `profile ${profileName}`;
  const notes: string[] = [];
  const configs = new Map<string, PluginSettings>();
  const configList = Array.isArray(profile['pluginConfig']) ? profile['pluginConfig'] : [];
  configList.forEach((c, i) => {
    const config = obj(c);
    if (typeof config['name'] !== 'string') return;
    checkPlugin(config['name'], file, object, `${at}.pluginConfig[${i}].name`);
    const settings = { name: config['name'], args: obj(config['args']), path: `${at}.pluginConfig[${i}].args` };
    checkArgs(settings, file, notes);
    configs.set(config['name'], settings);
  });
  const enabled = new Set<string>();
  const points = obj(profile['plugins']);
  for (const [point, set] of Object.entries(points)) {
    const path = `${at}.plugins.${point}`;
    if (!POINTS.includes(point)) {
      notes.push(`plugins.${point}: not carried over: not an extension point of the descheduler v0.36`);
      continue;
    }
    for (const p of pointPlugins(point, obj(set), path, file, object, notes)) {
      if (STRATEGY_POINTS.includes(point) && p !== EVICTOR) enabled.add(p);
      else if (p !== EVICTOR)
        // A strategy plugin at an evictor's point acts as a filter there (it never evicts from one).
        notes.push(
          `plugins.${point}.${p}: not carried over: at ${point} the plugin only filters which pods others may ` +
            'evict, and kube-rebalancer has no such filter; enable it under deschedule or balance to run it',
        );
      else if (STRATEGY_POINTS.includes(point))
        notes.push(`plugins.${point}.${EVICTOR}: not carried over: the evictor runs at filter, not at ${point}`);
    }
  }
  // The descheduler's own defaulting puts DefaultEvictor at filter and preevictionfilter when none is named there.
  if (enabled.size === 0 && configs.size === 0) {
    throw new InputError(file, object, `${at}.plugins`, 'enables no plugin');
  }
  const plugins = [...enabled].map((p) => configs.get(p) ?? { name: p, args: {}, path: `${at}.pluginConfig` });
  // The descheduler checks every pluginConfig entry, enabled or not; an enabled plugin without one has no args.
  const checked = [...configs.values(), ...plugins.filter((p) => !configs.has(p.name))];
  refuse(
    file,
    object,
    checked.flatMap((p) => pluginProblems(p, false)),
  );
  for (const other of configs.keys()) {
    if (other !== EVICTOR && !enabled.has(other)) {
      notes.push(`${other}: configured in pluginConfig but not enabled in plugins, so not carried over`);
    }
  }
  const base = name !== undefined ? (index === 0 ? name : `${name}-${index + 1}`) : profileName;
  const evictorConfig = configs.get(EVICTOR);
  const evictor = {
    args: evictorConfig?.args ?? {},
    path: evictorConfig?.path ?? `${at}.pluginConfig`,
    top: raw,
    v1alpha1: false,
  };
  return build(policyName(base, notes), plugins, evictor, notes, registry);
}
