// `convert --descheduler-policy`: a kubernetes-sigs descheduler DeschedulerPolicy (v1alpha1 strategies or v1alpha2
// profiles, descheduler v0.26 to v0.36) → RebalancePolicies in DryRun mode. What maps is set explicitly, even when it
// equals our default, so the result reads as a translation; every other setting becomes one comment saying why it
// needs no counterpart or which part has none (also printed on stderr by the CLI), so nothing the user configured
// disappears silently. A plugin the descheduler never had is bad input naming it.
//
// Plugins reach their strategy through the registry (byDeschedulerPlugin): each strategy's folder maps its plugin's
// own args. The args every plugin shares (namespaces, labelSelector, and in v1alpha1 the priority threshold and
// nodeFit) decide which pods a plugin looks at; a RebalancePolicy has one such scope, so plugins of one profile that
// differ in it become one policy per scope.
import { Document, parse, visit } from 'yaml';
import { InputError } from '../errors.js';
import { isObj, stringItems as strings } from '../model/rawJson.js';
import { STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';

export interface ConvertedPolicy {
  readonly name: string;
  readonly spec: Record<string, unknown>;
  /** One line each: a setting that was not carried over, and why. */
  readonly notes: string[];
}

type Obj = Record<string, unknown>;

/** Every strategy (v1alpha1) and plugin (v1alpha2) of the descheduler v0.26 to v0.36, besides DefaultEvictor. */
export const DESCHEDULER_PLUGINS: readonly string[] = [
  'RemoveDuplicates',
  'LowNodeUtilization',
  'HighNodeUtilization',
  'RemovePodsViolatingInterPodAntiAffinity',
  'RemovePodsViolatingNodeAffinity',
  'RemovePodsViolatingNodeTaints',
  'RemovePodsViolatingTopologySpreadConstraint',
  'RemovePodsHavingTooManyRestarts',
  'PodLifeTime',
  'RemoveFailedPods',
];

const EVICTOR = 'DefaultEvictor';

/** v1alpha2 extension points: deschedule and balance enable strategies; the others take the evictor only. */
const STRATEGY_POINTS = ['deschedule', 'balance'];

/** DefaultEvictor's args (v0.26 to v0.36): each is carried over or noted. */
const EVICTOR_ARGS = [
  'nodeSelector',
  'labelSelector',
  'namespaceLabelSelector',
  'priorityThreshold',
  'nodeFit',
  'minReplicas',
  'minPodAge',
  'noEvictionPolicy',
  'podProtections',
  'evictLocalStoragePods',
  'evictDaemonSetPods',
  'evictSystemCriticalPods',
  'ignorePvcPods',
  'ignorePodsWithoutPDB',
  'evictFailedBarePods',
];

/** The top-level fields of a v1alpha2 DeschedulerPolicy (v0.26 to v0.36), besides apiVersion, kind and profiles. */
const V1ALPHA2_TOP = [
  'nodeSelector',
  'maxNoOfPodsToEvictPerNode',
  'maxNoOfPodsToEvictPerNamespace',
  'maxNoOfPodsToEvictTotal',
  'evictionFailureEventNotification',
  'metricsCollector',
  'metricsProviders',
  'prometheus',
  'gracePeriodSeconds',
];

/** v1alpha1 StrategyParameters that nest one strategy's own parameters. */
const NESTED_PARAMS = [
  'nodeResourceUtilizationThresholds',
  'podsHavingTooManyRestarts',
  'podLifeTime',
  'removeDuplicates',
  'failedPods',
];

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** What one descheduler strategy or plugin asks for, whatever the API version. */
interface PluginSettings {
  readonly name: string;
  readonly args: Obj;
}

/** Settings of the evictor (v1alpha2 DefaultEvictor args, or v1alpha1 top-level fields) and the policy's top level. */
interface EvictorSettings {
  readonly args: Obj;
  readonly top: Obj;
  readonly v1alpha1: boolean;
}

function obj(value: unknown): Obj {
  return isObj(value) ? value : {};
}

/** A DNS-1123 name for a profile ("ProfileName" → "profilename"). */
function policyName(base: string): string {
  const name = base
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60);
  return name === '' ? 'from-descheduler' : name;
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
  const apiVersion = raw['apiVersion'];
  if (apiVersion === 'descheduler/v1alpha1') {
    return fromV1alpha1(raw, file, name ?? 'from-descheduler', registry);
  }
  if (apiVersion === 'descheduler/v1alpha2') {
    const profiles = Array.isArray(raw['profiles']) ? raw['profiles'] : [];
    if (profiles.length === 0) throw new InputError(file, undefined, 'profiles', 'must list at least one profile');
    return profiles.flatMap((p, i) => fromProfile(raw, obj(p), i, file, name, registry));
  }
  throw new InputError(
    file,
    undefined,
    'apiVersion',
    `must be descheduler/v1alpha1 or descheduler/v1alpha2 (got ${JSON.stringify(apiVersion)})`,
  );
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
    plugins.push({ name: strategy, args });
  }
  return build(name, plugins, { args: raw, top: raw, v1alpha1: true }, notes, registry);
}

function fromProfile(
  raw: Obj,
  profile: Obj,
  index: number,
  file: string,
  name: string | undefined,
  registry: StrategyRegistry,
): ConvertedPolicy[] {
  const profileName = typeof profile['name'] === 'string' ? profile['name'] : `profile-${index + 1}`;
  const object = `profile ${profileName}`;
  const configs = new Map<string, Obj>();
  const configList = Array.isArray(profile['pluginConfig']) ? profile['pluginConfig'] : [];
  configList.forEach((c, i) => {
    const config = obj(c);
    if (typeof config['name'] !== 'string') return;
    checkPlugin(config['name'], file, object, `pluginConfig[${i}].name`);
    configs.set(config['name'], obj(config['args']));
  });
  const enabled = new Set<string>();
  const points = obj(profile['plugins']);
  for (const [point, set] of Object.entries(points)) {
    const disabled = new Set(strings(obj(set)['disabled']));
    strings(obj(set)['enabled']).forEach((p, i) => {
      checkPlugin(p, file, object, `plugins.${point}.enabled[${i}]`);
      if (disabled.has(p)) return;
      // The evictor's points (filter, preEvictionFilter, sort) take DefaultEvictor, read from its pluginConfig.
      if (STRATEGY_POINTS.includes(point) && p !== EVICTOR) enabled.add(p);
    });
  }
  if (enabled.size === 0 && configs.size === 0) {
    throw new InputError(file, object, 'plugins', 'enables no plugin');
  }
  const plugins = [...enabled].map((p) => ({ name: p, args: configs.get(p) ?? {} }));
  const notes: string[] = [];
  for (const other of configs.keys()) {
    if (other !== EVICTOR && !enabled.has(other)) {
      notes.push(`${other}: configured in pluginConfig but not enabled in plugins, so not carried over`);
    }
  }
  const base = name !== undefined ? (index === 0 ? name : `${name}-${index + 1}`) : profileName;
  const evictor = { args: configs.get(EVICTOR) ?? {}, top: raw, v1alpha1: false };
  return build(policyName(base), plugins, evictor, notes, registry);
}

/** The args of a plugin that decide which pods it looks at, rather than what it does with them. */
interface Scope {
  readonly namespaces: Obj | undefined;
  readonly labelSelector: unknown;
  /** v1alpha1 only: the priority threshold and nodeFit are per strategy there (the evictor's in v1alpha2). */
  readonly priorityThreshold: unknown;
  readonly nodeFit: unknown;
}

function scopeOf(args: Obj): Scope {
  // LowNodeUtilization and HighNodeUtilization call theirs evictableNamespaces: the same scope for us.
  const namespaces = args['namespaces'] ?? args['evictableNamespaces'];
  return {
    namespaces: namespaces === undefined ? undefined : obj(namespaces),
    labelSelector: args['labelSelector'],
    priorityThreshold: args['priorityThreshold'],
    nodeFit: args['nodeFit'],
  };
}

function scopeText(scope: Scope): string {
  const parts: string[] = [];
  const ns = scope.namespaces;
  if (ns !== undefined) {
    const include = strings(ns['include']);
    const exclude = strings(ns['exclude']);
    if (include.length > 0) parts.push(`namespaces ${include.join(', ')}`);
    if (exclude.length > 0) parts.push(`namespaces except ${exclude.join(', ')}`);
  }
  if (scope.labelSelector !== undefined) parts.push(`labelSelector ${JSON.stringify(scope.labelSelector)}`);
  if (scope.priorityThreshold !== undefined)
    parts.push(`priority threshold ${JSON.stringify(scope.priorityThreshold)}`);
  if (scope.nodeFit !== undefined) parts.push(`nodeFit ${JSON.stringify(scope.nodeFit)}`);
  return parts.length === 0 ? 'every pod' : parts.join(', ');
}

function build(
  name: string,
  plugins: readonly PluginSettings[],
  evictor: EvictorSettings,
  profileNotes: string[],
  registry: StrategyRegistry,
): ConvertedPolicy[] {
  const notes = [...profileNotes];
  // Plugins with a strategy, grouped by the pods they look at; the others are named with the reason.
  const scopes = new Map<string, { scope: Scope; plugins: PluginSettings[] }>();
  for (const plugin of plugins) {
    const strategy = registry.byDeschedulerPlugin(plugin.name);
    if (strategy?.descheduler === undefined) {
      notes.push(`${plugin.name}: not carried over: this kube-rebalancer has no strategy for it yet`);
      continue;
    }
    const scope = scopeOf(plugin.args);
    const key = JSON.stringify([
      scope.namespaces ?? null,
      scope.labelSelector ?? null,
      scope.priorityThreshold ?? null,
      scope.nodeFit ?? null,
    ]);
    const entry = scopes.get(key);
    if (entry) entry.plugins.push(plugin);
    else scopes.set(key, { scope, plugins: [plugin] });
  }
  notes.push(...evictorNotes(evictor));
  const groups = [...scopes.values()];
  const names = groups.map((_, i) => (i === 0 ? name : `${name}-${i + 1}`));
  if (groups.length > 1) {
    notes.push(
      `scope: the plugins look at different pods, and a RebalancePolicy has one scope: one policy per scope (${groups
        .map((g, i) => `${names[i]}: ${g.plugins.map((p) => p.name).join(', ')} on ${scopeText(g.scope)}`)
        .join('; ')})`,
    );
    for (const limit of ['maxNoOfPodsToEvictPerNode', 'maxNoOfPodsToEvictPerNamespace', 'maxNoOfPodsToEvictTotal']) {
      if (evictor.top[limit] !== undefined)
        notes.push(`${limit}: each of the ${groups.length} policies has this limit; the descheduler's was one for all`);
    }
  }
  if (groups.length === 0) {
    notes.unshift('nothing in this profile carries over: every strategy below is disabled, so the policy does nothing');
    return [policyOf(name, { scope: scopeOf({}), plugins: [] }, evictor, notes, registry)];
  }
  return groups.map((g, i) => policyOf(names[i]!, g, evictor, [...notes], registry));
}

function policyOf(
  name: string,
  group: { scope: Scope; plugins: readonly PluginSettings[] },
  evictor: EvictorSettings,
  notes: string[],
  registry: StrategyRegistry,
): ConvertedPolicy {
  // Every strategy is named, off unless a plugin maps to it, so the result reads as a complete translation.
  const strategies: Record<string, Obj> = {};
  for (const s of registry.all) strategies[s.key] = { enabled: false };
  for (const plugin of group.plugins) {
    const strategy = registry.byDeschedulerPlugin(plugin.name)!;
    const target = strategies[strategy.key]!;
    target['enabled'] = true;
    // The settings that have an equivalent in ours: each strategy knows its plugin's args.
    strategy.descheduler!.convertArgs(plugin.args, target, notes);
  }
  const spec: Obj = { mode: 'DryRun' };
  const ns = group.scope.namespaces;
  if (ns !== undefined) {
    const include = strings(ns['include']);
    const exclude = strings(ns['exclude']);
    // Both are written: our default exclude (kube-system) is not the plugin's.
    spec['namespaces'] = { include, exclude };
  }
  const selector = combinedSelector(
    evictor.v1alpha1 ? undefined : evictor.args['labelSelector'],
    group.scope.labelSelector,
    notes,
  );
  if (selector !== undefined) spec['podSelector'] = selector;
  spec['strategies'] = strategies;
  spec['eviction'] = evictionOf(evictor, group.scope, notes);
  notes.push(
    'schedule: the descheduler runs as a CronJob or with --descheduling-interval, outside its policy; the default ' +
      'schedule "*/5 * * * *" applies (set spec.schedule to match yours)',
  );
  return { name, spec, notes };
}

/** Both selectors must match (the evictor's and the plugin's): one LabelSelector with the requirements of both. */
function combinedSelector(a: unknown, b: unknown, notes: string[]): Obj | undefined {
  const parts = [a, b].filter((s) => s !== undefined && s !== null).map(obj);
  if (parts.length === 0) return undefined;
  if (parts.length === 1) return parts[0];
  const matchLabels: Record<string, unknown> = {};
  const matchExpressions: unknown[] = [];
  for (const p of parts) {
    for (const [k, v] of Object.entries(obj(p['matchLabels']))) {
      if (k in matchLabels && matchLabels[k] !== v) {
        // Both cannot hold: written as a requirement no pod meets, and said.
        notes.push(
          `labelSelector: the evictor and the plugin require ${k}=${String(matchLabels[k])} and ${k}=${String(v)}; no pod has both`,
        );
        matchExpressions.push({ key: k, operator: 'In', values: [v] });
        continue;
      }
      matchLabels[k] = v;
    }
    if (Array.isArray(p['matchExpressions'])) matchExpressions.push(...(p['matchExpressions'] as unknown[]));
  }
  return {
    ...(Object.keys(matchLabels).length > 0 ? { matchLabels } : {}),
    ...(matchExpressions.length > 0 ? { matchExpressions } : {}),
  };
}

/** Each DefaultEvictor argument and top-level field with no counterpart: one line saying why. */
function evictorNotes(evictor: EvictorSettings): string[] {
  const args = evictor.args;
  const top = evictor.top;
  const out: string[] = [];
  const note = (field: string, why: string): void => void out.push(`${field}: ${why}`);
  if (!evictor.v1alpha1) {
    for (const field of Object.keys(args))
      if (!EVICTOR_ARGS.includes(field))
        note(`DefaultEvictor.${field}`, 'not carried over: not an argument this converter knows');
    for (const field of Object.keys(top))
      if (!['apiVersion', 'kind', 'profiles', ...V1ALPHA2_TOP].includes(field))
        note(field, 'not carried over: not a DeschedulerPolicy field this converter knows');
  }
  if (top['nodeSelector'] !== undefined || args['nodeSelector'] !== undefined)
    note(
      'nodeSelector',
      'not carried over: kube-rebalancer considers every node, as the scheduler does (limit the pods with namespaces ' +
        'and podSelector instead)',
    );
  if (args['namespaceLabelSelector'] !== undefined)
    note(
      'namespaceLabelSelector',
      'not carried over: spec.namespaces lists namespaces by name; list the ones it selects',
    );
  // The deprecated booleans say what podProtections says since v0.34: one reason each.
  for (const [field, protection] of Object.entries(DEPRECATED_PROTECTIONS)) {
    if (args[field] === true) note(field, PROTECTION_WHY[protection]!);
  }
  if (args['minReplicas'] !== undefined)
    note(
      'minReplicas',
      'not carried over: no replica-count floor; PodDisruptionBudgets and eviction.maxPerWorkload (one pod of a ' +
        'workload out at a time) guard small workloads',
    );
  if (args['noEvictionPolicy'] !== undefined)
    note(
      'noEvictionPolicy',
      `${JSON.stringify(args['noEvictionPolicy'])}: the descheduler.alpha.kubernetes.io/prefer-no-eviction annotation ` +
        'always protects a pod here (as Mandatory)',
    );
  out.push(...protectionNotes(obj(args['podProtections'])));
  if (top['evictionFailureEventNotification'] !== undefined)
    note(
      'evictionFailureEventNotification',
      'no counterpart needed: a failed eviction is always an Event (RebalanceEvictionFailed)',
    );
  if (top['metricsCollector'] !== undefined || top['metricsProviders'] !== undefined || top['prometheus'] !== undefined)
    note(
      'metricsCollector/metricsProviders',
      'not carried over: actual usage is read from metrics.k8s.io by the utilization strategies (usage: Metrics)',
    );
  if (top['gracePeriodSeconds'] !== undefined)
    note('gracePeriodSeconds', 'not carried over: evictions give each pod its own terminationGracePeriodSeconds');
  return out;
}

/** The DefaultEvictor's deprecated booleans with no counterpart, and the pod protection each stands for. */
const DEPRECATED_PROTECTIONS: Readonly<Record<string, string>> = {
  evictSystemCriticalPods: 'SystemCriticalPods',
  evictDaemonSetPods: 'DaemonSetPods',
  evictFailedBarePods: 'FailedBarePods',
  ignorePodsWithoutPDB: 'PodsWithoutPDB',
};

/** Why a pod protection the descheduler lets one lift (or add) has no counterpart here. */
const PROTECTION_WHY: Readonly<Record<string, string>> = {
  SystemCriticalPods:
    'not carried over: kube-rebalancer never evicts pods at or above eviction.priorityThreshold (default ' +
    'system-cluster-critical); raise the threshold to include more',
  DaemonSetPods: 'not carried over: a DaemonSet pod would come back on the same node, so none is evicted',
  FailedBarePods:
    'not carried over: failedPods leaves bare pods alone unless eviction.evictBarePods is true, which lifts the ' +
    'protection of Running bare pods too',
  PodsWithoutPDB: 'not carried over: pods without a PodDisruptionBudget are evicted like the others',
};

/** DefaultEvictor's podProtections (v0.34 on): what is not eviction.evictLocalStoragePods or evictPodsWithPVC. */
function protectionNotes(protections: Obj): string[] {
  const out: string[] = [];
  const lists: ReadonlyArray<readonly [string, string]> = [
    ['extraEnabled', 'PodsWithPVC'], // eviction.evictPodsWithPVC: false
    ['defaultDisabled', 'PodsWithLocalStorage'], // eviction.evictLocalStoragePods: true
  ];
  for (const [list, mapped] of lists) {
    for (const p of strings(protections[list])) {
      if (p === mapped) continue;
      out.push(
        `podProtections.${list} ${p}: ${PROTECTION_WHY[p] ?? 'not carried over: kube-rebalancer has no such protection'}`,
      );
    }
  }
  if (obj(protections['config'])['PodsWithPVC'] !== undefined)
    out.push(
      'podProtections.config.PodsWithPVC: not carried over: eviction.evictPodsWithPVC protects every pod with a ' +
        'claim, whatever its storage class',
    );
  return out;
}

function evictionOf(evictor: EvictorSettings, scope: Scope, notes: string[]): Obj {
  const args = evictor.args;
  const top = evictor.top;
  const eviction: Obj = {};
  // v1alpha1 carries the priority threshold and nodeFit per strategy (the scope); v1alpha2 in the evictor.
  const threshold = obj(evictor.v1alpha1 ? scope.priorityThreshold : args['priorityThreshold']);
  if (typeof threshold['value'] === 'number') eviction['priorityThreshold'] = { value: threshold['value'] };
  else if (typeof threshold['name'] === 'string') {
    if (DNS_SUBDOMAIN.test(threshold['name'])) eviction['priorityThreshold'] = { className: threshold['name'] };
    else
      notes.push(
        `priorityThreshold.name: ${JSON.stringify(threshold['name'])} is not a valid PriorityClass name (a lowercase ` +
          'DNS subdomain), so no cluster can have it; the default threshold (system-cluster-critical) applies',
      );
  }
  const limits: ReadonlyArray<readonly [string, string]> = [
    ['maxNoOfPodsToEvictPerNode', 'maxPerNode'],
    ['maxNoOfPodsToEvictPerNamespace', 'maxPerNamespace'],
    ['maxNoOfPodsToEvictTotal', 'maxPerCycle'],
  ];
  for (const [from, to] of limits) if (typeof top[from] === 'number') eviction[to] = top[from];
  const protections = obj(args['podProtections']);
  if (typeof args['evictLocalStoragePods'] === 'boolean')
    eviction['evictLocalStoragePods'] = args['evictLocalStoragePods'];
  if (strings(protections['defaultDisabled']).includes('PodsWithLocalStorage'))
    eviction['evictLocalStoragePods'] = true;
  if (typeof args['ignorePvcPods'] === 'boolean') eviction['evictPodsWithPVC'] = !args['ignorePvcPods'];
  if (strings(protections['extraEnabled']).includes('PodsWithPVC')) eviction['evictPodsWithPVC'] = false;
  const nodeFit = evictor.v1alpha1 ? scope.nodeFit : args['nodeFit'];
  if (typeof nodeFit === 'boolean') eviction['nodeFit'] = nodeFit;
  if (typeof args['minPodAge'] === 'string') eviction['minPodAge'] = args['minPodAge'];
  return eviction;
}

/** A string YAML would read as something else unquoted (YAML 1.1, as kubectl reads, or 1.2): off, yes, ~, 0755, 1e3, 12:30. */
function readsOtherwise(s: string): boolean {
  for (const version of ['1.1', '1.2'] as const) {
    try {
      if (parse(s, { version }) !== s) return true;
    } catch {
      return true;
    }
  }
  return false;
}

/** One object as YAML, with every string that a YAML 1.1 or 1.2 reader would take for another type quoted. */
export function safeYaml(value: unknown): string {
  const doc = new Document(value, { version: '1.1' });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && readsOtherwise(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ lineWidth: 0 });
}

/** The policies as YAML documents, each headed by its notes as comments. */
export function renderConverted(policies: readonly ConvertedPolicy[], source: string): string {
  return policies
    .map((p) => {
      const header = [
        `# Converted from the descheduler policy ${source} by kube-rebalancer convert.`,
        '# DryRun: it plans and reports, and evicts nothing until you set spec.mode: Evict.',
        ...p.notes.map((n) => `# ${n}`),
      ];
      const doc = {
        apiVersion: 'rebalancer.dev/v1alpha1',
        kind: 'RebalancePolicy',
        metadata: { name: p.name },
        spec: p.spec,
      };
      return `${header.join('\n')}\n${safeYaml(doc)}`;
    })
    .join('---\n');
}
