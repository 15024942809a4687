// The plan: the stable JSON contract of `plan -o json` (DESIGN.md, "Plan output").

/**
 * A registered strategy's name (src/strategies/registry.ts): `TopologySpread`, `PodAntiAffinity`, `PodAffinity`,
 * `NodeAffinity`, `NodeTaints` for the built-in ones.
 */
export type Strategy = string;

export interface PlannedEviction {
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  readonly strategy: Strategy;
  readonly reason: string;
  readonly priority: number;
  /** Where the simulated replacement lands (extension of the contract; absent when nodeFit is off). */
  readonly target?: string;
  /**
   * The other nodes the scheduler scores equal to `target`, from which it picks at random (empty when the choice is
   * unique); present whenever `target` is. The eviction is planned only if it is right on every one of them.
   */
  readonly targetTies?: readonly string[];
  /** The pod's workload, `Kind/name` (extension: used for pacing and metrics). */
  readonly workload?: string;
  /** The pod's uid, so the executor can send an Eviction with a uid precondition (extension). */
  readonly uid?: string;
}

export interface SkippedPod {
  readonly namespace: string;
  readonly name: string;
  readonly strategy: Strategy;
  readonly reason: string;
}

export interface TopologyReport {
  readonly namespace: string;
  readonly selector: string;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  readonly maxSkew: number;
  /** Pods per domain (sorted by domain); empty when the planner was asked for no domain counts (the operator). */
  readonly domains: Readonly<Record<string, number>>;
  readonly skew: number;
  readonly skewAfter: number;
  /** Extensions: the owning workloads (`Kind/name`), minDomains, and why the skew cannot be repaired, if so. */
  readonly workloads?: readonly string[];
  readonly minDomains?: number;
  readonly unrepairable?: string;
}

export interface Violation {
  readonly strategy: Strategy;
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  readonly reason: string;
  /** Extension: true for preferences (preferred node affinity, PreferNoSchedule) that are only reported. */
  readonly soft?: boolean;
}

/** A node as the utilization strategies classified it (DESIGN.md, "Utilization and housekeeping strategies"). */
export interface NodeReport {
  readonly name: string;
  readonly class: 'under' | 'appropriate' | 'over';
  /**
   * Share of allocatable per resource (cpu, memory, pods and the thresholds' resources), 0–1: requested, or with
   * `usage: Metrics` used (cpu and memory from metrics.k8s.io; see `nodesMeasuredBy`).
   */
  readonly utilization: Readonly<Record<string, number>>;
  /** Extension: the same after the plan's evictions, replacements where the simulation lands them. */
  readonly utilizationAfter?: Readonly<Record<string, number>>;
}

/** A strategy that could not plan this cycle (extension): a `usage: Metrics` section without metrics.k8s.io. */
export interface DegradedStrategy {
  readonly strategy: Strategy;
  /** `MetricsUnavailable`: the policy's Degraded condition carries it. */
  readonly reason: string;
  readonly message: string;
}

export interface RebalancePlan {
  readonly apiVersion: 'rebalancer.dev/v1alpha1';
  readonly kind: 'RebalancePlan';
  readonly policy: string;
  readonly evictions: readonly PlannedEviction[];
  readonly skipped: readonly SkippedPod[];
  readonly topology: readonly TopologyReport[];
  readonly violations: readonly Violation[];
  /** Only when a utilization strategy is enabled: every node's class and utilization. */
  readonly nodes?: readonly NodeReport[];
  /** Extension, with `nodes`: what its utilization measures, requests or metrics.k8s.io usage. */
  readonly nodesMeasuredBy?: 'Requests' | 'Metrics' | 'Prometheus';
  /** Extension, only when some strategy could not plan: which, and why (never a silent fallback). */
  readonly degraded?: readonly DegradedStrategy[];
  readonly summary: {
    readonly nodes: number;
    readonly pods: number;
    readonly violations: number;
    readonly evictions: number;
    readonly skipped: number;
  };
}
