// `convert --descheduler-policy`: a kubernetes-sigs descheduler DeschedulerPolicy (v1alpha1 strategies or v1alpha2
// profiles) → RebalancePolicies in DryRun mode, one per profile. What maps is set explicitly, even when it equals
// our default, so the result reads as a translation; what cannot carry over becomes a comment saying why, so
// nothing the user configured disappears silently.
import { stringify } from 'yaml';
import { InputError } from '../errors.js';
import { isObj, stringItems as strings } from '../model/rawJson.js';
import { STRATEGIES } from '../strategies/registry.js';

export interface ConvertedPolicy {
  readonly name: string;
  readonly spec: Record<string, unknown>;
  /** One line each: a setting that was not carried over, and why. */
  readonly notes: string[];
}

type Obj = Record<string, unknown>;

/** Strategies (v1alpha1) and plugins (v1alpha2) whose names are the same, and what each means for us. */
const NOT_CARRIED: Readonly<Record<string, string>> = {
  LowNodeUtilization:
    'balances resource utilisation between nodes; kube-rebalancer restores placement rules (spread, affinity, ' +
    'taints) and leaves utilisation to the scheduler and the cluster autoscaler',
  HighNodeUtilization:
    'packs pods onto fewer nodes for scale-down; that is the cluster autoscaler or Karpenter consolidation, not ' +
    'a placement rule',
  PodLifeTime:
    'evicts pods by age whatever their placement; kube-rebalancer only evicts a pod when its replacement lands ' +
    'strictly better (use a CronJob with kubectl rollout restart for age-based restarts)',
  RemoveDuplicates:
    'spreads replicas one per node without a rule to say so; declare it as a topologySpreadConstraint on ' +
    'kubernetes.io/hostname (or strategies.topologySpread.defaultConstraints) and kube-rebalancer enforces it',
  RemovePodsHavingTooManyRestarts:
    'restarts are a health problem, not a placement one; a replacement simulated elsewhere would not restart ' +
    'less, so kube-rebalancer has no equivalent',
  RemoveFailedPods:
    'failed pods are not running anywhere, so there is nothing to rebalance; kube-rebalancer never evicts ' +
    'non-Running pods (the pod garbage collector removes them)',
};

const DNS_SUBDOMAIN = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** What one descheduler strategy or plugin asks for, whatever the API version. */
interface PluginSettings {
  readonly name: string;
  readonly args: Obj;
}

/** Settings of the evictor (v1alpha2 DefaultEvictor args, or v1alpha1 top-level fields and strategy params). */
interface EvictorSettings {
  readonly args: Obj;
  readonly top: Obj;
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
    .slice(0, 63);
  return name === '' ? 'from-descheduler' : name;
}

export function convertDeschedulerPolicy(raw: unknown, file: string, name?: string): ConvertedPolicy[] {
  if (!isObj(raw) || raw['kind'] !== 'DeschedulerPolicy') {
    throw new InputError(file, undefined, 'kind', 'must be DeschedulerPolicy');
  }
  const apiVersion = raw['apiVersion'];
  if (apiVersion === 'descheduler/v1alpha1') {
    return [fromV1alpha1(raw, name ?? 'from-descheduler')];
  }
  if (apiVersion === 'descheduler/v1alpha2') {
    const profiles = Array.isArray(raw['profiles']) ? raw['profiles'] : [];
    if (profiles.length === 0) throw new InputError(file, undefined, 'profiles', 'must list at least one profile');
    return profiles.map((p, i) => fromProfile(raw, obj(p), i, file, name));
  }
  throw new InputError(
    file,
    undefined,
    'apiVersion',
    `must be descheduler/v1alpha1 or descheduler/v1alpha2 (got ${JSON.stringify(apiVersion)})`,
  );
}

function fromV1alpha1(raw: Obj, name: string): ConvertedPolicy {
  const plugins: PluginSettings[] = [];
  const notes: string[] = [];
  for (const [strategy, value] of Object.entries(obj(raw['strategies']))) {
    const s = obj(value);
    if (s['enabled'] !== true) continue;
    const params = obj(s['params']);
    // v1alpha1 nests a strategy's own parameters one level down; the filters sit beside them.
    const args: Obj = { ...params, ...obj(params['nodeResourceUtilizationThresholds']) };
    if (params['thresholdPriority'] !== undefined) args['priorityThreshold'] = { value: params['thresholdPriority'] };
    if (params['thresholdPriorityClassName'] !== undefined)
      args['priorityThreshold'] = { name: params['thresholdPriorityClassName'] };
    plugins.push({ name: strategy, args });
  }
  const evictor: EvictorSettings = { args: raw, top: raw };
  return build(name, plugins, evictor, notes);
}

function fromProfile(raw: Obj, profile: Obj, index: number, file: string, name?: string): ConvertedPolicy {
  const profileName = typeof profile['name'] === 'string' ? profile['name'] : `profile-${index + 1}`;
  const configs = new Map<string, Obj>();
  for (const c of Array.isArray(profile['pluginConfig']) ? profile['pluginConfig'] : []) {
    const config = obj(c);
    if (typeof config['name'] === 'string') configs.set(config['name'], obj(config['args']));
  }
  const enabled = new Set<string>();
  const points = obj(profile['plugins']);
  for (const point of ['deschedule', 'balance']) for (const p of strings(obj(points[point])['enabled'])) enabled.add(p);
  if (enabled.size === 0 && configs.size === 0) {
    throw new InputError(file, `profile ${profileName}`, 'plugins', 'enables no plugin');
  }
  const plugins = [...enabled].map((p) => ({ name: p, args: configs.get(p) ?? {} }));
  const notes: string[] = [];
  const evictor: EvictorSettings = { args: configs.get('DefaultEvictor') ?? {}, top: raw };
  for (const other of configs.keys()) {
    if (other !== 'DefaultEvictor' && !enabled.has(other)) {
      notes.push(`${other}: configured in pluginConfig but not enabled in plugins, so not carried over`);
    }
  }
  const base = name !== undefined ? (index === 0 ? name : `${name}-${index + 1}`) : profileName;
  return build(policyName(base), plugins, evictor, notes);
}

function build(
  name: string,
  plugins: readonly PluginSettings[],
  evictor: EvictorSettings,
  notes: string[],
): ConvertedPolicy {
  // Every strategy is named, off unless a plugin maps to it, so the result reads as a complete translation.
  const strategies: Record<string, Obj> = {};
  for (const s of STRATEGIES.all) strategies[s.key] = { enabled: false };
  const namespaceSettings = new Map<string, Obj>();
  const selectors = new Map<string, unknown>();
  for (const plugin of plugins) {
    const strategy = STRATEGIES.byDeschedulerPlugin(plugin.name);
    if (strategy?.descheduler === undefined) {
      const why = NOT_CARRIED[plugin.name] ?? 'not a strategy kube-rebalancer knows';
      notes.push(`${plugin.name}: not carried over: ${why}`);
      continue;
    }
    const target = strategies[strategy.key]!;
    target['enabled'] = true;
    const args = plugin.args;
    // The settings that have an equivalent in ours: each strategy knows its plugin's args.
    strategy.descheduler.convertArgs(args, target, notes);
    if (args['namespaces'] !== undefined)
      namespaceSettings.set(JSON.stringify(args['namespaces']), obj(args['namespaces']));
    if (args['labelSelector'] !== undefined)
      selectors.set(JSON.stringify(args['labelSelector']), args['labelSelector']);
  }

  const spec: Obj = { mode: 'DryRun' };
  const namespaces = [...namespaceSettings.values()];
  if (namespaces.length > 0) {
    const first = namespaces[0]!;
    spec['namespaces'] = {
      ...(first['include'] !== undefined ? { include: strings(first['include']) } : {}),
      ...(first['exclude'] !== undefined ? { exclude: strings(first['exclude']) } : {}),
    };
    if (namespaces.length > 1)
      notes.push(
        `namespaces: the strategies filter different namespaces; a RebalancePolicy has one namespaces field, so the ` +
          `first was kept (split the policy in two for the others: ${namespaces
            .slice(1)
            .map((n) => JSON.stringify(n))
            .join(', ')})`,
      );
  }
  const labelSelectors = [...selectors.values()];
  const evictorSelector = evictor.args['labelSelector'];
  if (evictorSelector !== undefined && evictor.args !== evictor.top) labelSelectors.unshift(evictorSelector);
  if (labelSelectors.length > 0) {
    spec['podSelector'] = labelSelectors[0];
    if (labelSelectors.length > 1)
      notes.push('labelSelector: the strategies select different pods; one podSelector was kept (the first)');
  }
  spec['strategies'] = strategies;
  if (!Object.values(strategies).some((st) => st['enabled'] === true)) {
    notes.unshift('nothing in this profile carries over: every strategy below is disabled, so the policy does nothing');
  }
  spec['eviction'] = evictionOf(evictor, plugins, notes);
  if (evictor.top['nodeSelector'] !== undefined || evictor.args['nodeSelector'] !== undefined) {
    notes.push(
      'nodeSelector: not carried over: kube-rebalancer considers every node, as the scheduler does (limit the pods ' +
        'with namespaces and podSelector instead)',
    );
  }
  notes.push(
    'schedule: the descheduler runs as a CronJob or with --descheduling-interval, outside its policy; the default ' +
      'schedule "*/5 * * * *" applies (set spec.schedule to match yours)',
  );
  return { name, spec, notes };
}

function evictionOf(evictor: EvictorSettings, plugins: readonly PluginSettings[], notes: string[]): Obj {
  const args = evictor.args;
  const top = evictor.top;
  const eviction: Obj = {};
  // v1alpha1 carries the priority threshold per strategy; the first one set wins.
  const threshold = obj(
    args['priorityThreshold'] ?? plugins.map((p) => p.args['priorityThreshold']).find((t) => t !== undefined),
  );
  if (typeof threshold['value'] === 'number') eviction['priorityThreshold'] = { value: threshold['value'] };
  else if (typeof threshold['name'] === 'string') {
    if (DNS_SUBDOMAIN.test(threshold['name'])) eviction['priorityThreshold'] = { className: threshold['name'] };
    else
      notes.push(
        `priorityThreshold.name: ${JSON.stringify(threshold['name'])} is not a valid PriorityClass name (a lowercase ` +
          'DNS subdomain), so no cluster can have it; the default threshold (system-cluster-critical) applies',
      );
  }
  if (args['evictSystemCriticalPods'] === true)
    notes.push(
      'evictSystemCriticalPods: not carried over: kube-rebalancer never evicts pods at or above ' +
        'eviction.priorityThreshold (default system-cluster-critical); raise the threshold to include more',
    );
  const limits: ReadonlyArray<readonly [string, string]> = [
    ['maxNoOfPodsToEvictPerNode', 'maxPerNode'],
    ['maxNoOfPodsToEvictPerNamespace', 'maxPerNamespace'],
    ['maxNoOfPodsToEvictTotal', 'maxPerCycle'],
  ];
  for (const [from, to] of limits) if (typeof top[from] === 'number') eviction[to] = top[from];
  if (typeof args['evictLocalStoragePods'] === 'boolean')
    eviction['evictLocalStoragePods'] = args['evictLocalStoragePods'];
  if (typeof args['ignorePvcPods'] === 'boolean') eviction['evictPodsWithPVC'] = !args['ignorePvcPods'];
  const nodeFit = args['nodeFit'] ?? plugins.map((p) => p.args['nodeFit']).find((v) => v !== undefined);
  if (typeof nodeFit === 'boolean') eviction['nodeFit'] = nodeFit;
  if (typeof args['minPodAge'] === 'string') eviction['minPodAge'] = args['minPodAge'];
  if (args['evictFailedBarePods'] === true)
    notes.push('evictFailedBarePods: not carried over: kube-rebalancer never evicts pods that are not Running');
  return eviction;
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
      return `${header.join('\n')}\n${stringify(doc, { lineWidth: 0 })}`;
    })
    .join('---\n');
}
