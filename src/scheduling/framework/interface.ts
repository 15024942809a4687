// The extension points of kube-scheduler's framework that the landing prediction runs (pkg/scheduler/framework/
// interface.go): PreFilter/Filter and PreScore/Score/NormalizeScore. A plugin answers for one pod being placed; the
// runtime (runtime.ts) calls the enabled plugins in the profile's order and owns the weights, so a plugin never sees
// another plugin or its weight. Plugins read their own arguments from the profile (their args.ts parsed them).
//
// The shape is the scheduler's, the calling convention is ours: PreFilter returns the pod's Filter as a closure over
// what it worked out (the scheduler's CycleState), and PreScore a scorer over all feasible nodes at once, because
// the planner places thousands of replacements per plan and allocates as little as it can per node.
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { ClusterState, Placed } from '../clusterState.js';
import type { ScorePluginName, SchedulerProfile } from '../profile.js';

/** The pod being placed and the pod it replaces. */
export interface PlacementInput {
  readonly state: ClusterState;
  readonly pod: PodInfo;
  /** The pod it replaces, evicted from its node; undefined for a new pod. */
  readonly evicted: Placed | undefined;
  /**
   * The evicted pod is still terminating on its node (it holds its resources and counts for InterPodAffinity, not for
   * PodTopologySpread); otherwise it is gone.
   */
  readonly terminating: boolean;
}

/** Why the node (at `index` in the state's nodeList) cannot take the pod, naming the plugin's reason, or undefined. */
export type NodeFilter = (node: NodeInfo, index: number) => string | undefined;

export interface FilterPlugin {
  readonly name: string;
  /** PreFilter: the pod's Filter, or undefined when the plugin has nothing to check for this pod (Skip). */
  preFilter(input: PlacementInput): NodeFilter | undefined;
}

/** How the evicted pod is seen while its replacement is scored. */
export interface EvictedView {
  /** Still on its node, terminating: holds its resources and counts for InterPodAffinity, not for spreading. */
  readonly terminating: Placed | undefined;
  /** Already deleted. */
  readonly gone: Placed | undefined;
}

export interface ScoreInput {
  readonly state: ClusterState;
  readonly profile: SchedulerProfile;
  readonly pod: PodInfo;
  readonly evicted: EvictedView;
}

/** A plugin's Score and NormalizeScore for one pod over the feasible nodes. */
export interface NodeScorer {
  /** Writes the raw score of every node of `feasible` (node indices) into `out`, in the same order. */
  score(feasible: Int32Array, out: Float64Array): void;
  /** Scales the raw scores to 0–100 in place; absent when Score already gives 0–100. */
  normalize?(scores: Float64Array, n: number): void;
}

export interface ScorePlugin {
  readonly name: ScorePluginName;
  /** PreScore: the pod's scorer, or undefined when the plugin scores every node alike for this pod (Skip). */
  preScore(input: ScoreInput): NodeScorer | undefined;
}
