// The metric catalogue: every metric the operator exports, named once, with its type, help text and label names.
// The values of the `strategy` label are the registry's strategy names (src/strategies/registry.ts).
// `createMetrics` builds the metrics from this table, and the tests check the PrometheusRule and the Grafana dashboard
// against it, so a query can never name a metric or a label that does not exist.
export type MetricType = 'gauge' | 'counter' | 'histogram';

export interface MetricDefinition {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labelNames: readonly string[];
}

/** Outcome of one eviction attempt (label `result` of `rebalancer_evictions_total`), defined in src/model. */
export { EVICTION_RESULTS, type EvictionResult } from '../model/evictionResult.js';

/**
 * Where a replacement of an evicted pod landed, against the plan's prediction (label `outcome` of
 * `rebalancer_landings_total`): on the target, on one of the nodes scored equal to it, on another node, or on none
 * within replacementTimeout.
 */
export const LANDING_OUTCOMES = ['target', 'tied', 'elsewhere', 'unscheduled'] as const;
export type LandingOutcome = (typeof LANDING_OUTCOMES)[number];

/** Outcome of one planning cycle (label `result` of `rebalancer_cycles_total`). */
export const CYCLE_RESULTS = ['success', 'failed', 'aborted', 'skipped_overlap'] as const;
export type CycleResult = (typeof CYCLE_RESULTS)[number];

/** Why a cycle was stopped before its end (label `reason` of `rebalancer_cycle_aborts_total`); none is a failure. */
export const ABORT_REASONS = ['spec_changed', 'deleted', 'leadership_lost', 'shutting_down'] as const;
export type AbortReason = (typeof ABORT_REASONS)[number];

/**
 * What started a cycle (label `trigger` of `rebalancer_cycles_total`): its cron schedule, a node change, a policy
 * change, or the operator starting (or this replica becoming leader).
 */
export const CYCLE_TRIGGERS = ['schedule', 'node', 'policy', 'start'] as const;
export type CycleTriggerLabel = (typeof CYCLE_TRIGGERS)[number];

/** A node's utilization class (label `class` of `rebalancer_nodes_by_utilization`). */
export const NODE_CLASSES = ['under', 'appropriate', 'over'] as const;

/** Buckets of `rebalancer_cycle_duration_seconds`: a cycle takes milliseconds on a small cluster, minutes at worst. */
export const CYCLE_DURATION_BUCKETS: readonly number[] = [
  0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];

// when_unsatisfiable keeps hard (DoNotSchedule) and soft (ScheduleAnyway) constraints apart, so alerts can
// ignore soft ones that the scheduler itself may leave skewed.
const TOPOLOGY_LABELS = ['namespace', 'workload', 'topology_key', 'when_unsatisfiable'] as const;

export const METRICS = {
  topologySkew: {
    name: 'rebalancer_topology_skew',
    type: 'gauge',
    help: 'Topology spread skew of a workload per topology key, as kube-scheduler computes it (max minus global min).',
    labelNames: TOPOLOGY_LABELS,
  },
  topologyMaxSkew: {
    name: 'rebalancer_topology_max_skew',
    type: 'gauge',
    help: "The configured limit: maxSkew of the workload's spread constraint for this topology key (not an observed value; the observed skew is rebalancer_topology_skew).",
    labelNames: TOPOLOGY_LABELS,
  },
  topologyActionable: {
    name: 'rebalancer_topology_actionable',
    type: 'gauge',
    help: '1 when a policy in mode Evict acts on this group and its skew is repairable; 0 when the skew is only reported (DryRun, or the planner finds it unrepairable). RebalancerSkewAboveMax fires only where it is 1.',
    labelNames: TOPOLOGY_LABELS,
  },
  violations: {
    name: 'rebalancer_violations',
    type: 'gauge',
    help: 'Violations the last plan of a policy found, per strategy: pods breaking a rule, and for TopologySpread the hard (DoNotSchedule) spread groups skewed above maxSkew.',
    labelNames: ['policy', 'strategy'],
  },
  evictions: {
    name: 'rebalancer_evictions_total',
    type: 'counter',
    help: 'Eviction attempts by outcome (evicted, dry_run, pdb_blocked, not_found, failed, skipped).',
    labelNames: ['policy', 'strategy', 'result'],
  },
  landings: {
    name: 'rebalancer_landings_total',
    type: 'counter',
    help: "Replacements of evicted pods by where they landed against the plan's prediction (target, tied: another node scored equal, elsewhere, unscheduled).",
    labelNames: ['policy', 'outcome'],
  },
  cycleDuration: {
    name: 'rebalancer_cycle_duration_seconds',
    type: 'histogram',
    help: 'Wall-clock duration of a rebalancing cycle (snapshot, analysis, planning and evictions).',
    labelNames: ['policy'],
  },
  cycles: {
    name: 'rebalancer_cycles_total',
    type: 'counter',
    help: 'Rebalancing cycles by outcome (success, failed, aborted, skipped_overlap) and trigger (schedule, node, policy).',
    labelNames: ['policy', 'result', 'trigger'],
  },
  cycleAborts: {
    name: 'rebalancer_cycle_aborts_total',
    type: 'counter',
    help: 'Cycles stopped before their end, by reason (spec_changed, deleted, leadership_lost, shutting_down).',
    labelNames: ['policy', 'reason'],
  },
  cycleDue: {
    name: 'rebalancer_cycle_due_timestamp_seconds',
    type: 'gauge',
    help: 'Unix time of the last scheduled tick the leader acted on for a policy (a cycle that should have run).',
    labelNames: ['policy'],
  },
  lastSuccessfulCycle: {
    name: 'rebalancer_last_successful_cycle_timestamp_seconds',
    type: 'gauge',
    help: 'Unix time at which the last successful cycle of a policy finished.',
    labelNames: ['policy'],
  },
  leader: {
    name: 'rebalancer_leader',
    type: 'gauge',
    help: '1 when this replica holds the leader lease and runs cycles, 0 otherwise.',
    labelNames: [],
  },
  seriesDropped: {
    name: 'rebalancer_metric_series_dropped_total',
    type: 'counter',
    help: 'Topology skew series not exported because the series cap was reached (counted once per series per cycle).',
    labelNames: [],
  },
  eventsDropped: {
    name: 'rebalancer_events_dropped_total',
    type: 'counter',
    help: 'Kubernetes Events not recorded because the queue of Events waiting behind evictions was full.',
    labelNames: [],
  },
  nodesByClass: {
    name: 'rebalancer_nodes_by_utilization',
    type: 'gauge',
    help: 'Nodes per utilization class (under, appropriate, over) in the last cycle of a policy with a utilization strategy.',
    labelNames: ['policy', 'class'],
  },
  planEvictions: {
    name: 'rebalancer_plan_evictions',
    type: 'gauge',
    help: 'Evictions the last finished cycle of a policy made over all its re-plans: pods evicted, or for a DryRun policy the dry-run evictions it would have made.',
    labelNames: ['policy'],
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricKey = keyof typeof METRICS;

/** Every exported metric, for tests and documentation. */
export const METRIC_DEFINITIONS: readonly MetricDefinition[] = Object.values(METRICS);

/** Every exported metric name. */
export const METRIC_NAMES: readonly string[] = METRIC_DEFINITIONS.map((metric) => metric.name);

/** Label names of each metric, by metric name. */
export const METRIC_LABELS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  METRIC_DEFINITIONS.map((metric) => [metric.name, metric.labelNames]),
);
