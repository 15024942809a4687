// The scheduler configuration a landing prediction follows: kube-scheduler v1.26's default profile unless the user
// passes the cluster's own KubeSchedulerConfiguration (`--scheduler-config`). The placement reads only this type, so
// the file parser and the plugins meet here and nowhere else; each plugin's args type, defaults and validation live
// in its folder under plugins/.
import type { AddedAffinity } from './plugins/nodeAffinity/args.js';
import {
  DEFAULT_FIT_SCORING,
  type FitIgnored,
  type FitScoring,
  type ResourceWeight,
} from './plugins/nodeResources/args.js';
import { DEFAULT_SPREAD_DEFAULTING, type SpreadDefaulting } from './plugins/podTopologySpread/args.js';

export type { FitScoring, ResourceWeight, ShapePoint } from './plugins/nodeResources/args.js';
export type { ProfileSpreadConstraint, SpreadDefaulting } from './plugins/podTopologySpread/args.js';

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

export interface SchedulerProfile {
  /** Where it came from, for messages: "kube-scheduler v1.26 defaults" or the file's path. */
  readonly source: string;
  /** Weight per enabled score plugin; a disabled plugin is absent (not 0). */
  readonly scoreWeights: Readonly<Partial<Record<ScorePluginName, number>>>;
  /** NodeResourcesFitArgs.scoringStrategy. */
  readonly fitScoring: FitScoring;
  /** PodTopologySpreadArgs: defaultingType and defaultConstraints. */
  readonly spreadDefaulting: SpreadDefaulting;
  /**
   * The file's percentageOfNodesToScore (0 or absent: the adaptive default, see feasibleNodesToFind in
   * framework/sampling.ts); kube-scheduler stops filtering once it has found that share of feasible nodes.
   */
  readonly percentageOfNodesToScore?: number;
  /** InterPodAffinityArgs.hardPodAffinityWeight: what an existing pod's required affinity adds to a node (default 1). */
  readonly hardPodAffinityWeight?: number;
  /** InterPodAffinityArgs.ignorePreferredTermsOfExistingPods, when true. */
  readonly ignorePreferredTermsOfExistingPods?: true;
  /** NodeResourcesFitArgs.ignoredResources and ignoredResourceGroups, when any is set. */
  readonly fitIgnored?: FitIgnored;
  /** NodeResourcesBalancedAllocationArgs.resources, when set (default cpu and memory). */
  readonly balancedResources?: readonly ResourceWeight[];
  /** NodeAffinityArgs.addedAffinity, when set. */
  readonly addedAffinity?: AddedAffinity;
  /** Filter plugins of the default profile the configuration disables (by name), when any. */
  readonly disabledFilters?: readonly string[];
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
  fitScoring: DEFAULT_FIT_SCORING,
  spreadDefaulting: DEFAULT_SPREAD_DEFAULTING,
};

/** The profile a pod names by leaving spec.schedulerName empty. */
export const DEFAULT_SCHEDULER = 'default-scheduler';

/** Every profile of a scheduler configuration, by schedulerName: a pod's spec.schedulerName picks one. */
export interface SchedulerProfiles {
  /** Where it came from, for messages. */
  readonly source: string;
  readonly byName: ReadonlyMap<string, SchedulerProfile>;
}

/** What the landing prediction is given: one profile (default-scheduler's, no other is known) or all of them. */
export type SchedulerSetting = SchedulerProfile | SchedulerProfiles;

export function profilesOf(setting: SchedulerSetting): SchedulerProfiles {
  if ('byName' in setting) return setting;
  return { source: setting.source, byName: new Map([[DEFAULT_SCHEDULER, setting]]) };
}

/** The profile that schedules pods naming `schedulerName` (absent: default-scheduler), or undefined if none does. */
export function profileFor(setting: SchedulerSetting, schedulerName: string | undefined): SchedulerProfile | undefined {
  return profilesOf(setting).byName.get(schedulerName || DEFAULT_SCHEDULER);
}
