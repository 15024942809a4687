// RebalancePolicy defaults (DESIGN.md, "RebalancePolicy"): one commented literal, applied by one function; each
// strategy's section brings its own commented defaults (src/strategies/<key>/policy.ts), composed from the registry.
// The CRD schema carries the same values, so a policy read from the cluster arrives already defaulted; a --policy
// file or a snapshot's policy may omit anything.
import { MATCH_EVERYTHING } from '../model/labels.js';
import type { Selector } from '../model/types.js';
import { STRATEGIES, type StrategyRegistry, type StrategySections } from '../strategies/registry.js';
import type { StrategyConfig } from '../strategies/types.js';
import type {
  MaintenanceWindow,
  NoEvictionPolicy,
  Policy,
  PolicyMode,
  PolicySpec,
  PriorityThreshold,
} from './types.js';

/** What parsing found in a spec, validated; anything absent gets its default. */
export interface PolicyInput {
  schedule?: string;
  suspend?: boolean;
  mode?: PolicyMode;
  namespaces?: { include?: readonly string[]; exclude?: readonly string[]; labelSelector?: Selector };
  podSelector?: Selector;
  nodeSelector?: Selector;
  /**
   * Each strategy's section as its policy section read it (src/strategies/<key>/policy.ts), by key; a key is
   * undefined where the policy has no such section (that strategy is off).
   */
  strategies?: Readonly<Record<string, object | undefined>>;
  eviction?: {
    priorityThreshold?: PriorityThreshold;
    maxPerCycle?: number;
    maxPerNode?: number;
    maxPerNamespace?: number;
    maxPerWorkload?: number;
    minPodAgeMs?: number;
    evictLocalStoragePods?: boolean;
    evictBarePods?: boolean;
    evictPodsWithPVC?: boolean;
    protectedStorageClasses?: readonly string[];
    noEvictionPolicy?: NoEvictionPolicy;
    evictSystemCriticalPods?: boolean;
    evictFailedBarePods?: boolean;
    evictPodsWithoutPDB?: boolean;
    minReplicas?: number;
    gracePeriodSeconds?: number;
    nodeFit?: boolean;
    waitForReplacement?: boolean;
    replacementTimeoutMs?: number;
    cooldownMs?: number;
  };
  triggers?: { nodeChanges?: boolean; debounceMs?: number };
  windows?: readonly MaintenanceWindow[];
  timeZone?: string;
}

const MINUTE = 60_000;

/** The section that runs when a policy names no strategy at all: the rebalancer's reason to exist. */
export const DEFAULT_STRATEGY = 'topologySpread';

/** The defaults, one commented value each; the same values as the CRD schema's `default:` entries. */
export const DEFAULT_SPEC: PolicySpec = deepFreeze({
  // Every 5 minutes: frequent enough to catch churn, slow enough that replacements settle between cycles.
  schedule: '*/5 * * * *',
  suspend: false,
  // DryRun: a freshly installed policy only reports; evicting is an explicit decision.
  mode: 'DryRun',
  namespaces: {
    // Empty include = every namespace.
    include: [],
    // kube-system holds the cluster's own components; moving them is never a rebalancer's business by default.
    exclude: ['kube-system'],
  },
  // No selector = every pod (an explicit `{}` means the same; the API's nil "nothing" is not useful for a policy).
  podSelector: MATCH_EVERYTHING,
  // No spec.strategies: topologySpread alone (what a policy names is what runs; see sections() below). Each
  // strategy's defaults, with their reasons, are in its folder: src/strategies/<key>/policy.ts.
  strategies: sections(STRATEGIES, undefined),
  eviction: {
    // system-cluster-critical and above (cluster add-ons, node agents) are never evicted.
    priorityThreshold: { className: 'system-cluster-critical' },
    // Rate limits: small, so one cycle cannot take out a large share of any workload, node or namespace.
    maxPerCycle: 10,
    maxPerNode: 2,
    maxPerNamespace: 5,
    maxPerWorkload: 1,
    // Young pods may still be settling (just placed, rollout in progress).
    minPodAgeMs: 5 * MINUTE,
    // Evicting loses emptyDir/hostPath data; opt-in (or per pod with rebalancer.dev/evict: "always").
    evictLocalStoragePods: false,
    // A bare pod has no controller to recreate it; evicting it deletes it for good.
    evictBarePods: false,
    // PVC-backed pods are recreated by their controller and reattach their claims.
    evictPodsWithPVC: true,
    // evictFailedBarePods, evictPodsWithoutPDB, minReplicas and gracePeriodSeconds (the descheduler's settings) have
    // no default: absent, Failed bare pods stay, pods without a budget are evicted, no replica floor, the pod's grace.
    // Nor do protectedStorageClasses, noEvictionPolicy and evictSystemCriticalPods: absent, every claim protects when
    // evictPodsWithPVC is false, the prefer-no-eviction annotation protects, system-critical pods are never evicted.
    // Only evict when the simulation finds a node the replacement fits on.
    nodeFit: true,
    // Pace on replacements becoming Ready, so capacity never drops more than one step at a time; give up after 5m.
    waitForReplacement: true,
    replacementTimeoutMs: 5 * MINUTE,
    // Long enough to outlast a reschedule-back loop (evict → scheduler puts it back → evict).
    cooldownMs: 30 * MINUTE,
  },
  // React to node changes within seconds; 2 s gathers the burst of updates one node operation makes (a drain, a
  // relabel by a controller) into one cycle, while still reacting far sooner than any schedule.
  triggers: { nodeChanges: true, debounceMs: 2_000 },
  // No windows: evictions may happen whenever a cycle runs, as before windows existed.
  windows: [],
  timeZone: 'UTC',
});

/**
 * spec.strategies: every registered strategy's section. What a policy names is what runs (DESIGN.md): a section
 * present runs (its `enabled` defaults to true, so `enabled: false` is the only way to keep a present one off), with
 * its strategy's defaults under what `given` sets; an absent section is off. A policy that names no section at all
 * (`strategies` absent, null or `{}`) runs topologySpread alone, so a bare policy balances spread and evicts for
 * nothing else: a cordon, a taint or a label change is never acted on unless a policy asks for it.
 */
function sections(
  strategies: StrategyRegistry,
  given: Readonly<Record<string, object | undefined>> | undefined,
): StrategySections {
  const named = given !== undefined && strategies.all.some((s) => given[s.key] !== undefined);
  const out: Record<string, StrategyConfig> = {};
  for (const s of strategies.all) {
    const section = named ? given[s.key] : s.key === DEFAULT_STRATEGY ? {} : undefined;
    out[s.key] =
      section === undefined
        ? { ...s.policy.defaults, enabled: false }
        : { ...s.policy.defaults, enabled: true, ...defined(section) };
  }
  // Every registry extends the built-in one (registry.ts), so every built-in section is there.
  return out as StrategySections;
}

/** Freezes the defaults all the way down, so a caller mutating a defaulted policy cannot change them for everyone. */
function deepFreeze<T extends PolicySpec>(spec: T): T {
  const visit = (value: unknown): void => {
    // The shared MATCH_EVERYTHING selector belongs to labels.ts and is left as it is.
    if (typeof value !== 'object' || value === null || value === MATCH_EVERYTHING || Object.isFrozen(value)) return;
    for (const child of Object.values(value)) visit(child);
    Object.freeze(value);
  };
  visit(spec);
  return spec;
}

/** `o` without its undefined entries, so spreading it over a default keeps the default for those. */
function defined<T extends object>(o: T | undefined): Partial<T> {
  const out: Partial<T> = {};
  if (o === undefined) return out;
  for (const key of Object.keys(o) as Array<keyof T>) {
    if (o[key] !== undefined) out[key] = o[key];
  }
  return out;
}

/**
 * The one place defaults are applied: every value `input` lacks comes from DEFAULT_SPEC, and every section of
 * spec.strategies from its strategy's defaults (one section per strategy of `strategies`), on when the policy
 * names it, off when it does not.
 */
export function applyDefaults(input: PolicyInput, strategies: StrategyRegistry = STRATEGIES): PolicySpec {
  const d = DEFAULT_SPEC;
  return {
    schedule: input.schedule ?? d.schedule,
    suspend: input.suspend ?? d.suspend,
    mode: input.mode ?? d.mode,
    namespaces: { ...d.namespaces, ...defined(input.namespaces) },
    podSelector: input.podSelector ?? d.podSelector,
    // No default: unset, pods on every node.
    ...(input.nodeSelector !== undefined ? { nodeSelector: input.nodeSelector } : {}),
    strategies: sections(strategies, input.strategies),
    eviction: { ...d.eviction, ...defined(input.eviction) },
    triggers: { ...d.triggers, ...defined(input.triggers) },
    windows: input.windows ?? d.windows,
    timeZone: input.timeZone ?? d.timeZone,
  };
}

/** The policy used when neither --policy nor the snapshot gives one: the CRD's defaults. */
export const DEFAULT_POLICY: Policy = Object.freeze({ name: 'default', generation: 0, spec: applyDefaults({}) });
