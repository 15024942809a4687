// RebalancePolicy (rebalancer.dev/v1alpha1) after defaulting and validation.
// Field names follow DESIGN.md; durations are held in milliseconds, selectors compiled.
import type { Selector } from '../model/types.js';
import type { StrategySections } from '../strategies/registry.js';

export type PolicyMode = 'Evict' | 'DryRun';

export type NoEvictionPolicy = 'Mandatory' | 'Preferred';

export type PriorityThreshold = { readonly value: number } | { readonly className: string };

/** A maintenance window: opens at each start of `schedule` (cron, in the policy's timeZone), stays open `durationMs`. */
export interface MaintenanceWindow {
  readonly schedule: string;
  readonly durationMs: number;
}

export interface PolicySpec {
  readonly schedule: string;
  readonly suspend: boolean;
  readonly mode: PolicyMode;
  readonly namespaces: {
    readonly include: readonly string[];
    readonly exclude: readonly string[];
    /** Only namespaces whose labels match (the descheduler's namespaceLabelSelector); undefined: no label filter. */
    readonly labelSelector?: Selector;
  };
  readonly podSelector: Selector;
  /** Only pods on nodes whose labels match may be evicted (the descheduler's nodeSelector); undefined: every node. */
  readonly nodeSelector?: Selector;
  /** One section per registered strategy, by its key; each section's type is its strategy's (src/strategies). */
  readonly strategies: StrategySections;
  readonly eviction: {
    readonly priorityThreshold: PriorityThreshold;
    readonly maxPerCycle: number;
    readonly maxPerNode: number;
    readonly maxPerNamespace: number;
    readonly maxPerWorkload: number;
    readonly minPodAgeMs: number;
    readonly evictLocalStoragePods: boolean;
    readonly evictBarePods: boolean;
    readonly evictPodsWithPVC: boolean;
    /**
     * With evictPodsWithPVC false: only pods with a claim of one of these StorageClasses are protected (a claim whose
     * class is not known counts as protected); absent or empty: every pod with a claim.
     */
    readonly protectedStorageClasses?: readonly string[];
    /**
     * What descheduler.alpha.kubernetes.io/prefer-no-eviction means: Mandatory (absent) protects the pod; Preferred
     * lets it be evicted, after every other candidate of the same choice.
     */
    readonly noEvictionPolicy?: NoEvictionPolicy;
    /**
     * Lifts the system-critical protection: pods at or above system-cluster-critical (2000000000) may be evicted when
     * priorityThreshold is above them; absent or false, they never are, whatever the threshold.
     */
    readonly evictSystemCriticalPods?: boolean;
    /** failedPods may remove Failed bare pods; Running bare pods stay protected unless evictBarePods. */
    readonly evictFailedBarePods?: boolean;
    /** false: pods no PodDisruptionBudget selects are never evicted; absent: they are. */
    readonly evictPodsWithoutPDB?: boolean;
    /** A pod of a workload with fewer pods than this is never evicted (absent, 0 and 1: no floor). */
    readonly minReplicas?: number;
    /** The Eviction's deleteOptions.gracePeriodSeconds; undefined: the pod's own. */
    readonly gracePeriodSeconds?: number;
    readonly nodeFit: boolean;
    readonly waitForReplacement: boolean;
    readonly replacementTimeoutMs: number;
    readonly cooldownMs: number;
  };
  readonly triggers: { readonly nodeChanges: boolean; readonly debounceMs: number };
  /** Empty: evictions may happen at any time. */
  readonly windows: readonly MaintenanceWindow[];
  /** IANA name, checked with Intl when parsed. */
  readonly timeZone: string;
}

export interface Policy {
  readonly name: string;
  readonly generation: number;
  readonly spec: PolicySpec;
}
