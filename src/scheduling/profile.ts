// The scheduler configuration a landing prediction follows: kube-scheduler v1.26's default profile unless the user
// passes the cluster's own KubeSchedulerConfiguration (`--scheduler-config`). The placement reads only this type, so
// the file parser and the scoring code meet here and nowhere else.
import type { NodeInclusionPolicy, WhenUnsatisfiable } from '../model/types.js';

/** The score plugins of the default profile whose weights a configuration can change. */
export type ScorePluginName =
  | 'NodeResourcesFit'
  | 'NodeResourcesBalancedAllocation'
  | 'ImageLocality'
  | 'InterPodAffinity'
  | 'NodeAffinity'
  | 'PodTopologySpread'
  | 'TaintToleration';

export const SCORE_PLUGINS: readonly ScorePluginName[] = [
  'NodeResourcesFit',
  'NodeResourcesBalancedAllocation',
  'ImageLocality',
  'InterPodAffinity',
  'NodeAffinity',
  'PodTopologySpread',
  'TaintToleration',
];

export interface ResourceWeight {
  readonly name: string;
  readonly weight: number;
}

/** One point of RequestedToCapacityRatio's piecewise-linear shape: utilization 0–100 maps to score 0–10. */
export interface ShapePoint {
  readonly utilization: number;
  readonly score: number;
}

export type FitScoring =
  | { readonly type: 'LeastAllocated'; readonly resources: readonly ResourceWeight[] }
  | { readonly type: 'MostAllocated'; readonly resources: readonly ResourceWeight[] }
  | {
      readonly type: 'RequestedToCapacityRatio';
      readonly resources: readonly ResourceWeight[];
      readonly shape: readonly ShapePoint[];
    };

/** A PodTopologySpreadArgs.defaultConstraints entry (no labelSelector: the scheduler derives it from the pod's owners). */
export interface ProfileSpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: WhenUnsatisfiable;
  readonly nodeAffinityPolicy?: NodeInclusionPolicy;
  readonly nodeTaintsPolicy?: NodeInclusionPolicy;
}

export interface SchedulerProfile {
  /** Where it came from, for messages: "kube-scheduler v1.26 defaults" or the file's path. */
  readonly source: string;
  /** Weight per enabled score plugin; a disabled plugin is absent (not 0). */
  readonly scoreWeights: Readonly<Partial<Record<ScorePluginName, number>>>;
  readonly fitScoring: FitScoring;
  /**
   * PodTopologySpreadArgs: `System` is v1.26's built-in default (zone maxSkew 5 and hostname maxSkew 3, both
   * ScheduleAnyway, for pods with no constraints of their own that belong to a Service, ReplicaSet or StatefulSet);
   * `List` uses the given constraints instead (an empty list turns defaulting off).
   */
  readonly spreadDefaulting:
    { readonly type: 'System' } | { readonly type: 'List'; readonly constraints: readonly ProfileSpreadConstraint[] };
  /** InterPodAffinityArgs.hardPodAffinityWeight: what an existing pod's required affinity adds to a node (default 1). */
  readonly hardPodAffinityWeight?: number;
}

/** v1.26's default profile (pkg/scheduler/apis/config/v1beta3 and v1 defaults, read from upstream source). */
export const DEFAULT_PROFILE: SchedulerProfile = {
  source: 'kube-scheduler v1.26 defaults',
  scoreWeights: {
    NodeResourcesFit: 1,
    NodeResourcesBalancedAllocation: 1,
    ImageLocality: 1,
    InterPodAffinity: 2,
    NodeAffinity: 2,
    PodTopologySpread: 2,
    TaintToleration: 3,
  },
  fitScoring: {
    type: 'LeastAllocated',
    resources: [
      { name: 'cpu', weight: 1 },
      { name: 'memory', weight: 1 },
    ],
  },
  spreadDefaulting: { type: 'System' },
};
