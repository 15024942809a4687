// RebalancePolicy (rebalancer.dev/v1alpha1) after defaulting and validation.
// Field names follow DESIGN.md; durations are held in milliseconds, selectors compiled.
import type { NodeInclusionPolicy, Selector, WhenUnsatisfiable } from '../model/types.js';

export type PolicyMode = 'Evict' | 'DryRun';

/** A policy-level default constraint: a TopologySpreadConstraint without labelSelector (the workload's labels are used). */
export interface DefaultConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: WhenUnsatisfiable;
  readonly minDomains: number;
  readonly nodeAffinityPolicy: NodeInclusionPolicy;
  readonly nodeTaintsPolicy: NodeInclusionPolicy;
}

export type PriorityThreshold = { readonly value: number } | { readonly className: string };

/** An excludedTaints entry: "key" matches any value, "key=value" only that value. */
export interface TaintMatcher {
  readonly key: string;
  readonly value: string | undefined;
}

/** A maintenance window: opens at each start of `schedule` (cron, in the policy's timeZone), stays open `durationMs`. */
export interface MaintenanceWindow {
  readonly schedule: string;
  readonly durationMs: number;
}

export interface PolicySpec {
  readonly schedule: string;
  readonly suspend: boolean;
  readonly mode: PolicyMode;
  readonly namespaces: { readonly include: readonly string[]; readonly exclude: readonly string[] };
  readonly podSelector: Selector;
  readonly strategies: {
    readonly topologySpread: {
      readonly enabled: boolean;
      readonly includeSoftConstraints: boolean;
      readonly defaultConstraints: readonly DefaultConstraint[];
    };
    readonly podAntiAffinity: { readonly enabled: boolean };
    readonly podAffinity: { readonly enabled: boolean };
    readonly nodeAffinity: { readonly enabled: boolean; readonly required: boolean; readonly preferred: boolean };
    readonly nodeTaints: {
      readonly enabled: boolean;
      readonly includePreferNoSchedule: boolean;
      readonly excludedTaints: readonly TaintMatcher[];
    };
  };
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
