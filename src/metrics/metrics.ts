// Every Prometheus metric of the operator, created in one function on an injected registry (no global registry,
// no module state), with the few operations the rest of the operator needs. Names, help texts and label names
// come from ./names.ts.
//
// Cardinality: policy, strategy and result labels are bounded by the number of policies, the registered strategies
// and an enum. The topology
// series (namespace × workload × topology_key) grow with the cluster, so they are capped (default 10,000 label sets,
// each exported as a skew, a max-skew and an actionable gauge); label sets over the cap are counted in
// rebalancer_metric_series_dropped_total instead of being exported, and series of workloads that disappeared are
// removed on the next report.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { WhenUnsatisfiable } from '../model/types.js';
import type { RebalancePlan, Strategy, TopologyReport } from '../model/plan.js';
import { STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';
import { topologySpread } from '../strategies/topologySpread/strategy.js';
import {
  ABORT_REASONS,
  CYCLE_DURATION_BUCKETS,
  CYCLE_RESULTS,
  CYCLE_TRIGGERS,
  EVICTION_RESULTS,
  LANDING_OUTCOMES,
  METRICS,
  NODE_CLASSES,
} from './names.js';
import type { AbortReason, CycleResult, CycleTriggerLabel, EvictionResult, LandingOutcome } from './names.js';

export const DEFAULT_MAX_SKEW_SERIES = 10_000;

/** The strategy whose violations are the spread groups above maxSkew. */
const TOPOLOGY_SPREAD = topologySpread.name;

export interface MetricsOptions {
  /** Most (namespace, workload, topology_key) label sets exported at once. Default 10,000. */
  readonly maxSkewSeries?: number;
  /** Clock, in milliseconds since the epoch, for the last-success timestamp. Default `Date.now`. */
  readonly now?: () => number;
  /** The strategies whose names label the violation and eviction series. Default: the built-in ones. */
  readonly strategies?: StrategyRegistry;
}

/**
 * One analysed topology group, as far as metrics need it. A planner `TopologyReport` is one: its `workloads`
 * (owning controllers, `Kind/name`) each get a series labelled with the group's namespace and topology key.
 */
export type TopologySeriesInput = Pick<
  TopologyReport,
  'namespace' | 'topologyKey' | 'whenUnsatisfiable' | 'skew' | 'maxSkew'
> & {
  readonly workloads?: readonly string[];
  /** Why the planner cannot repair the skew, if it cannot (then no alert: nobody can act on it). */
  readonly unrepairable?: string;
};

/** How the reporting policy acts on what it reports. */
export interface TopologyOptions {
  /** The policy evicts (mode Evict); a DryRun policy only reports (default true). */
  readonly evicts?: boolean;
}

export type ViolationCounts = Readonly<Partial<Record<Strategy, number>>>;

export interface RebalancerMetrics {
  /**
   * Sets the skew and max-skew gauges of every workload in `reports` and removes the series this policy reported
   * before that are no longer present (a workload or constraint disappeared). A series reported by several
   * policies stays until none of them reports it. When a workload appears in several groups with the same
   * topology key, the worst one (largest skew above its maxSkew, then largest skew) is exported.
   */
  recordTopology(policy: string, reports: readonly TopologySeriesInput[], opts?: TopologyOptions): void;
  /** Sets the violation gauge of every strategy (0 for strategies absent from `countsByStrategy`). */
  recordViolations(policy: string, countsByStrategy: ViolationCounts): void;
  /** Counts one eviction attempt and its outcome. */
  recordEviction(policy: string, strategy: Strategy, result: EvictionResult): void;
  /** Counts one replacement's landing against the prediction. */
  recordLanding(policy: string, outcome: LandingOutcome): void;
  /**
   * Records a finished cycle: its duration (not for `skipped_overlap`, which did not run), its outcome and,
   * on success, the last-success timestamp. `trigger` is what started it (default: its schedule).
   */
  observeCycle(policy: string, seconds: number, result: CycleResult, trigger?: CycleTriggerLabel): void;
  /** Counts a cycle stopped early (it is also observed as result `aborted`). */
  recordAbort(policy: string, reason: AbortReason): void;
  /** A scheduled tick of the policy was acted on by the leader now (for the staleness alert). */
  markCycleDue(policy: string): void;
  /**
   * Removes the series only the leader may export: skew, violations, planned evictions and cycle-due times of every
   * policy (a replica that stops leading must not keep exporting a frozen picture).
   */
  forgetLeaderSeries(): void;
  /** Records a plan's topology and violations in one call. */
  recordPlan(plan: RebalancePlan, opts?: TopologyOptions): void;
  /** The evictions a finished cycle made (evicted, or dry_run for a DryRun policy). */
  recordCycleEvictions(policy: string, count: number): void;
  /** Sets `rebalancer_leader` (1 while this replica holds the lease). */
  setLeader(isLeader: boolean): void;
  /** An Event was dropped: the queue of Events waiting to be sent was full. */
  recordEventDropped(): void;
  /** Removes every series of a policy (it was deleted, or this replica stopped leading). */
  forgetPolicy(policy: string): void;
  /** Number of (namespace, workload, topology_key, when_unsatisfiable) label sets currently exported. */
  skewSeriesCount(): number;
}

interface TopologyLabels {
  readonly namespace: string;
  readonly workload: string;
  readonly topology_key: string;
  readonly when_unsatisfiable: WhenUnsatisfiable;
}

interface SeriesValue {
  readonly labels: TopologyLabels;
  readonly skew: number;
  readonly maxSkew: number;
  /** Reported by an evicting policy and repairable. */
  readonly actionable: boolean;
}

export function createMetrics(registry: Registry, opts: MetricsOptions = {}): RebalancerMetrics {
  const maxSkewSeries = opts.maxSkewSeries ?? DEFAULT_MAX_SKEW_SERIES;
  if (!Number.isInteger(maxSkewSeries) || maxSkewSeries < 0) {
    throw new RangeError(`maxSkewSeries must be a non-negative integer, got ${maxSkewSeries}`);
  }
  const now = opts.now ?? Date.now;
  const strategies = (opts.strategies ?? STRATEGIES).names;
  const registers = [registry];

  const topologySkew = new Gauge({ ...METRICS.topologySkew, registers });
  const topologyMaxSkew = new Gauge({ ...METRICS.topologyMaxSkew, registers });
  const topologyActionable = new Gauge({ ...METRICS.topologyActionable, registers });
  const violations = new Gauge({ ...METRICS.violations, registers });
  const evictions = new Counter({ ...METRICS.evictions, registers });
  const landings = new Counter({ ...METRICS.landings, registers });
  const cycleDuration = new Histogram({ ...METRICS.cycleDuration, buckets: [...CYCLE_DURATION_BUCKETS], registers });
  const cycles = new Counter({ ...METRICS.cycles, registers });
  const lastSuccessfulCycle = new Gauge({ ...METRICS.lastSuccessfulCycle, registers });
  const leader = new Gauge({ ...METRICS.leader, registers });
  const seriesDropped = new Counter({ ...METRICS.seriesDropped, registers });
  const eventsDropped = new Counter({ ...METRICS.eventsDropped, registers });
  const planEvictions = new Gauge({ ...METRICS.planEvictions, registers });
  const nodesByClass = new Gauge({ ...METRICS.nodesByClass, registers });
  const cycleAborts = new Counter({ ...METRICS.cycleAborts, registers });
  const cycleDue = new Gauge({ ...METRICS.cycleDue, registers });

  // Exported (namespace, workload, topology_key, when_unsatisfiable) label sets, and which policies currently report
  // each (and whether that policy could act on it).
  const exported = new Map<string, { readonly labels: TopologyLabels; readonly owners: Map<string, boolean> }>();
  const ownedByPolicy = new Map<string, Set<string>>();

  // The counters exist from the start, so `rate()` and `absent()` see them before the first event.
  leader.set(0);
  seriesDropped.inc(0);
  eventsDropped.inc(0);

  function release(policy: string, key: string): void {
    const entry = exported.get(key);
    if (entry === undefined) return;
    entry.owners.delete(policy);
    if (entry.owners.size > 0) {
      topologyActionable.set({ ...entry.labels }, [...entry.owners.values()].some(Boolean) ? 1 : 0);
      return;
    }
    topologySkew.remove({ ...entry.labels });
    topologyMaxSkew.remove({ ...entry.labels });
    topologyActionable.remove({ ...entry.labels });
    exported.delete(key);
  }

  function write(key: string, value: SeriesValue, policy: string): void {
    let entry = exported.get(key);
    if (entry === undefined) {
      entry = { labels: value.labels, owners: new Map() };
      exported.set(key, entry);
    }
    entry.owners.set(policy, value.actionable);
    topologySkew.set({ ...value.labels }, value.skew);
    topologyMaxSkew.set({ ...value.labels }, value.maxSkew);
    topologyActionable.set({ ...value.labels }, [...entry.owners.values()].some(Boolean) ? 1 : 0);
  }

  function recordTopology(policy: string, reports: readonly TopologySeriesInput[], topo: TopologyOptions = {}): void {
    const desired = collapseReports(reports, topo.evicts ?? true);
    const previous = ownedByPolicy.get(policy) ?? new Set<string>();
    for (const key of previous) {
      if (!desired.has(key)) release(policy, key);
    }
    const owned = new Set<string>();
    const fresh: Array<[string, SeriesValue]> = [];
    for (const [key, value] of desired) {
      if (exported.has(key)) {
        write(key, value, policy);
        owned.add(key);
      } else {
        fresh.push([key, value]);
      }
    }
    // Over the cap, the worst groups win, so violations stay visible; ties are broken by key for stable output.
    fresh.sort(([keyA, a], [keyB, b]) => compareSeverity(b, a) || (keyA < keyB ? -1 : keyA > keyB ? 1 : 0));
    let dropped = 0;
    for (const [key, value] of fresh) {
      if (exported.size >= maxSkewSeries) {
        dropped += 1;
        continue;
      }
      write(key, value, policy);
      owned.add(key);
    }
    if (dropped > 0) seriesDropped.inc(dropped);
    if (owned.size > 0) ownedByPolicy.set(policy, owned);
    else ownedByPolicy.delete(policy);
  }

  function recordViolations(policy: string, countsByStrategy: ViolationCounts): void {
    for (const strategy of strategies) {
      violations.set({ policy, strategy }, countsByStrategy[strategy] ?? 0);
    }
  }

  function observeCycle(
    policy: string,
    seconds: number,
    result: CycleResult,
    trigger: CycleTriggerLabel = 'schedule',
  ): void {
    if (result !== 'skipped_overlap') cycleDuration.observe({ policy }, seconds);
    cycles.inc({ policy, result, trigger });
    if (result === 'success') lastSuccessfulCycle.set({ policy }, now() / 1000);
  }

  function recordPlan(plan: RebalancePlan, topo: TopologyOptions = {}): void {
    recordTopology(plan.policy, plan.topology, topo);
    recordViolations(plan.policy, violationCounts(plan));
    recordNodeClasses(plan);
  }

  // Counts per class, never a series per node: bounded by policies × 3 whatever the cluster's size.
  function recordNodeClasses(plan: RebalancePlan): void {
    if (plan.nodes === undefined) {
      for (const c of NODE_CLASSES) nodesByClass.remove({ policy: plan.policy, class: c });
      return;
    }
    for (const c of NODE_CLASSES) {
      nodesByClass.set({ policy: plan.policy, class: c }, plan.nodes.filter((n) => n.class === c).length);
    }
  }

  // Every outcome's series starts at 0 with a policy's first cycle (or first landing), so increase() over them counts
  // the first miss, and the dashboard's landing panels have data for a policy that has not evicted yet (DryRun).
  const landingPolicies = new Set<string>();
  function startLandings(policy: string): void {
    if (landingPolicies.has(policy)) return;
    landingPolicies.add(policy);
    for (const o of LANDING_OUTCOMES) landings.inc({ policy, outcome: o }, 0);
  }
  function recordLanding(policy: string, outcome: LandingOutcome): void {
    startLandings(policy);
    landings.inc({ policy, outcome });
  }

  function forgetPolicy(policy: string): void {
    landingPolicies.delete(policy);
    for (const key of ownedByPolicy.get(policy) ?? []) release(policy, key);
    ownedByPolicy.delete(policy);
    for (const strategy of strategies) {
      violations.remove({ policy, strategy });
      for (const result of EVICTION_RESULTS) evictions.remove({ policy, strategy, result });
    }
    for (const result of CYCLE_RESULTS)
      for (const trigger of CYCLE_TRIGGERS) cycles.remove({ policy, result, trigger });
    for (const outcome of LANDING_OUTCOMES) landings.remove({ policy, outcome });
    cycleDuration.remove({ policy });
    lastSuccessfulCycle.remove({ policy });
    planEvictions.remove({ policy });
    for (const c of NODE_CLASSES) nodesByClass.remove({ policy, class: c });
    cycleDue.remove({ policy });
    for (const reason of ABORT_REASONS) cycleAborts.remove({ policy, reason });
  }

  function forgetLeaderSeries(): void {
    for (const [policy, keys] of ownedByPolicy) for (const key of keys) release(policy, key);
    ownedByPolicy.clear();
    violations.reset();
    planEvictions.reset();
    nodesByClass.reset();
    cycleDue.reset();
  }

  return {
    recordTopology,
    recordViolations,
    recordEviction: (policy, strategy, result) => evictions.inc({ policy, strategy, result }),
    recordLanding,
    observeCycle,
    recordAbort: (policy, reason) => cycleAborts.inc({ policy, reason }),
    markCycleDue: (policy) => cycleDue.set({ policy }, now() / 1000),
    forgetLeaderSeries,
    recordPlan,
    recordCycleEvictions: (policy, count) => {
      planEvictions.set({ policy }, count);
      startLandings(policy);
    },
    setLeader: (isLeader) => leader.set(isLeader ? 1 : 0),
    recordEventDropped: () => eventsDropped.inc(),
    forgetPolicy,
    skewSeriesCount: () => exported.size,
  };
}

/**
 * Violations of a plan by strategy: the rule violations it lists, and for TopologySpread each hard (DoNotSchedule)
 * spread group skewed above its maxSkew (the planner reports those as topology, not as violations).
 */
export function violationCounts(plan: Pick<RebalancePlan, 'violations' | 'topology'>): ViolationCounts {
  const counts: Partial<Record<Strategy, number>> = {};
  for (const violation of plan.violations) counts[violation.strategy] = (counts[violation.strategy] ?? 0) + 1;
  const hard = plan.topology.filter((t) => t.whenUnsatisfiable === 'DoNotSchedule' && t.skew > t.maxSkew).length;
  if (hard > 0) counts[TOPOLOGY_SPREAD] = (counts[TOPOLOGY_SPREAD] ?? 0) + hard;
  return counts;
}

/** One value per label set; a workload in several groups with the same key keeps its worst group. */
function collapseReports(reports: readonly TopologySeriesInput[], evicts: boolean): Map<string, SeriesValue> {
  const desired = new Map<string, SeriesValue>();
  for (const report of reports) {
    for (const workload of report.workloads ?? []) {
      const labels: TopologyLabels = {
        namespace: report.namespace,
        workload,
        topology_key: report.topologyKey,
        when_unsatisfiable: report.whenUnsatisfiable,
      };
      const value: SeriesValue = {
        labels,
        skew: report.skew,
        maxSkew: report.maxSkew,
        actionable: evicts && report.unrepairable === undefined,
      };
      const key = seriesKey(labels);
      const current = desired.get(key);
      if (current === undefined || compareSeverity(value, current) > 0) desired.set(key, value);
    }
  }
  return desired;
}

/** Positive when `a` is worse than `b`: more skew above the allowed maximum, then more skew. */
function compareSeverity(a: SeriesValue, b: SeriesValue): number {
  return a.skew - a.maxSkew - (b.skew - b.maxSkew) || a.skew - b.skew;
}

function seriesKey(labels: TopologyLabels): string {
  return `${labels.namespace}\u0000${labels.workload}\u0000${labels.topology_key}\u0000${labels.when_unsatisfiable}`;
}
