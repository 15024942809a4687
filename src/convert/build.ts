// From the plugins of one descheduler profile (or a v1alpha1 policy) to RebalancePolicies: plugins grouped by the
// pods they look at (a RebalancePolicy has one scope), each group one policy naming exactly the strategies its
// plugins map to, with the evictor's settings as spec.eviction.
import { isObj, stringItems as strings, type Obj } from '../model/rawJson.js';
import { DEFAULT_SPEC } from '../policy/defaults.js';
import type { StrategyRegistry } from '../strategies/registry.js';
import { fieldPath } from './argTypes.js';
import { evictionOf, evictorNotes } from './evictor.js';
import { parseNodeSelector } from './nodeSelector.js';
import type { ConvertedPolicy, EvictorSettings, PluginSettings } from './types.js';
import { carryPrometheusProvider } from './prometheus.js';

function obj(value: unknown): Obj {
  return isObj(value) ? value : {};
}

/** The args of a plugin that decide which pods it looks at, rather than what it does with them. */
interface Scope {
  readonly namespaces: Obj | undefined;
  readonly namespacesPath: string | undefined;
  readonly labelSelector: unknown;
  readonly labelSelectorPath: string | undefined;
  /** v1alpha1 only: the priority threshold and nodeFit are per strategy there (the evictor's in v1alpha2). */
  readonly priorityThreshold: unknown;
  readonly nodeFit: unknown;
  /** LowNodeUtilization's evictionLimits.node: this plugin's own cap per node, on top of the policy's. */
  readonly nodeLimit: unknown;
  /** The args the scope was read from. */
  readonly path: string;
}

function scopeOf(plugin: PluginSettings | undefined): Scope {
  const args = plugin?.args ?? {};
  const path = plugin?.path ?? '';
  // LowNodeUtilization and HighNodeUtilization call theirs evictableNamespaces: the same scope for us.
  const nsKey = args['namespaces'] !== undefined ? 'namespaces' : 'evictableNamespaces';
  const namespaces = args[nsKey];
  return {
    namespaces: namespaces === undefined || namespaces === null ? undefined : obj(namespaces),
    namespacesPath: namespaces === undefined ? undefined : fieldPath(path, nsKey),
    labelSelector: args['labelSelector'] ?? undefined,
    labelSelectorPath: args['labelSelector'] === undefined ? undefined : fieldPath(path, 'labelSelector'),
    priorityThreshold: args['priorityThreshold'],
    nodeFit: args['nodeFit'],
    nodeLimit: obj(args['evictionLimits'])['node'] ?? undefined,
    path,
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
  if (scope.nodeLimit !== undefined) parts.push(`evictionLimits.node ${JSON.stringify(scope.nodeLimit)}`);
  return parts.length === 0 ? 'every pod' : parts.join(', ');
}

interface Group {
  readonly scope: Scope;
  readonly plugins: PluginSettings[];
}

export function build(
  name: string,
  plugins: readonly PluginSettings[],
  evictor: EvictorSettings,
  profileNotes: string[],
  registry: StrategyRegistry,
): ConvertedPolicy[] {
  const notes = [...profileNotes];
  // Plugins with a strategy, grouped by the pods they look at; the others are named with the reason.
  const scopes = new Map<string, Group>();
  for (const plugin of plugins) {
    const strategy = registry.byDeschedulerPlugin(plugin.name);
    if (strategy?.descheduler === undefined) {
      notes.push(`${plugin.name}: not carried over: this kube-rebalancer has no strategy for it yet`);
      continue;
    }
    const scope = scopeOf(plugin);
    const key = JSON.stringify([
      scope.namespaces ?? null,
      scope.labelSelector ?? null,
      scope.priorityThreshold ?? null,
      scope.nodeFit ?? null,
      // A plugin's own per-node cap would narrow the others' if they shared a policy (spec.eviction.maxPerNode).
      scope.nodeLimit ?? null,
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
  }
  if (groups.length === 0) {
    notes.unshift('nothing in this profile carries over: no strategy below runs, so the policy does nothing');
    return [policyOf(name, { scope: scopeOf(undefined), plugins: [] }, evictor, notes, registry)];
  }
  return groups.map((g, i) => policyOf(names[i]!, g, evictor, [...notes], registry));
}

function policyOf(
  name: string,
  group: Group,
  evictor: EvictorSettings,
  notes: string[],
  registry: StrategyRegistry,
): ConvertedPolicy {
  const sources = new Map<string, string>();
  // What a policy names is what runs: exactly the sections of the plugins enabled. topologySpread is the one strategy
  // a policy without any section would run, so it is written switched off when no plugin maps to it.
  const strategies: Record<string, Obj> = {};
  for (const plugin of group.plugins) {
    const strategy = registry.byDeschedulerPlugin(plugin.name)!;
    const target = strategies[strategy.key] ?? { enabled: true };
    strategies[strategy.key] = target;
    sources.set(`spec.strategies.${strategy.key}`, plugin.path);
    // The settings that have an equivalent in ours: each strategy knows its plugin's args.
    strategy.descheduler!.convertArgs(plugin.args, target, notes);
  }
  carryPrometheusProvider(evictor.top, strategies, notes, sources);
  if (strategies['topologySpread'] === undefined) strategies['topologySpread'] = { enabled: false };
  const spec: Obj = { mode: 'DryRun' };
  const ns = group.scope.namespaces;
  if (ns !== undefined) {
    spec['namespaces'] = { include: strings(ns['include']), exclude: strings(ns['exclude']) };
    sources.set('spec.namespaces', group.scope.namespacesPath!);
  } else {
    const exclude = [...DEFAULT_SPEC.namespaces.exclude];
    spec['namespaces'] = { include: [], exclude };
    notes.push(
      `namespaces.exclude: ${exclude.join(', ')}, kube-rebalancer's default: the descheduler looks at every ` +
        'namespace and protects system pods by priority only (set exclude: [] to look at every namespace too)',
    );
  }
  const nsSelector = evictor.v1alpha1 ? undefined : evictor.args['namespaceLabelSelector'];
  if (nsSelector !== undefined && nsSelector !== null) {
    (spec['namespaces'] as Obj)['labelSelector'] = nsSelector;
    sources.set('spec.namespaces.labelSelector', fieldPath(evictor.path, 'namespaceLabelSelector'));
  }
  const selector = combinedSelector(
    evictor.v1alpha1 ? undefined : evictor.args['labelSelector'],
    group.scope.labelSelector,
    notes,
  );
  if (selector !== undefined) {
    spec['podSelector'] = selector;
    const from = group.scope.labelSelectorPath ?? fieldPath(evictor.path, 'labelSelector');
    sources.set('spec.podSelector', from);
  }
  const nodeSelector = evictor.top['nodeSelector'];
  if (typeof nodeSelector === 'string' && nodeSelector.trim() !== '') {
    const parsed = parseNodeSelector(nodeSelector);
    // A bad string was refused before building (convertDeschedulerPolicy).
    if ('selector' in parsed) {
      spec['nodeSelector'] = parsed.selector;
      sources.set('spec.nodeSelector', 'nodeSelector');
    }
  }
  spec['strategies'] = strategies;
  spec['eviction'] = evictionOf(evictor, group.scope, notes, sources);
  notes.push(
    'schedule: the descheduler runs as a CronJob or with --descheduling-interval, outside its policy; the default ' +
      `schedule "${DEFAULT_SPEC.schedule}" applies (set spec.schedule to match yours)`,
  );
  return { name, spec, notes, sources };
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
