// The scheduler's score phase for one pod over the nodes that passed the filters: each enabled plugin's score,
// normalised over those nodes, times the plugin's weight, summed (kube-scheduler v1.26 prioritizeNodes). All integer,
// so equal totals are the scheduler's ties.
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { ClusterState, Placed } from '../clusterState.js';
import { imageLocalityScore } from './imageLocality.js';
import { interPodRaw, topologyScores } from './interPodAffinity.js';
import { intolerablePreferNoSchedule, nodeAffinityRaw } from './nodePreferences.js';
import { defaultNormalize, minMaxNormalize } from './normalize.js';
import { balancedScore, fitScore, nonZeroRequests, type NodeLoad } from './resources.js';
import { spreadScores } from './topologySpread.js';

/** How the evicted pod is seen while its replacement is scored. */
export interface EvictedView {
  /** Still on its node, terminating: holds its resources and counts for InterPodAffinity, not for spreading. */
  readonly terminating: Placed | undefined;
  /** Already deleted. */
  readonly gone: Placed | undefined;
}

/** One plugin's contribution, for explaining a choice (the scheduler's "Plugin scored node" lines at -v=10). */
export type PluginScores = Readonly<Record<string, number>>;

let plugin = new Float64Array(256);

/**
 * Writes the weighted total of every node of `feasible` (node indices) into `totals`; with `explain`, also each
 * plugin's weighted score per node.
 */
export function scoreNodes(
  state: ClusterState,
  pod: PodInfo,
  evicted: EvictedView,
  feasible: Int32Array,
  totals: Float64Array,
  explain?: Array<Record<string, number>>,
): void {
  const n = feasible.length;
  totals.fill(0, 0, n);
  if (plugin.length < n) plugin = new Float64Array(n * 2);
  const weights = state.profile.scoreWeights;
  const nodes = state.nodeList;
  const addPlugin = (name: string, weight: number | undefined): void => {
    if (weight === undefined || weight === 0) return;
    for (let k = 0; k < n; k++) {
      const weighted = plugin[k]! * weight;
      totals[k]! += weighted;
      if (explain) (explain[k] ??= {})[name] = weighted;
    }
  };
  const load = (index: number, node: NodeInfo): NodeLoad => nodeLoad(state, index, node, evicted.gone);

  let w = weights.NodeResourcesFit;
  if (w) {
    for (let k = 0; k < n; k++)
      plugin[k] = fitScore(state.profile.fitScoring, load(feasible[k]!, nodes[feasible[k]!]!), pod);
    addPlugin('NodeResourcesFit', w);
  }
  w = weights.NodeResourcesBalancedAllocation;
  if (w) {
    for (let k = 0; k < n; k++)
      plugin[k] = balancedScore(load(feasible[k]!, nodes[feasible[k]!]!), pod, state.kubeVersion);
    addPlugin('NodeResourcesBalancedAllocation', w);
  }
  // A plugin that scores every node alike cannot change the choice: it is skipped.
  w = weights.ImageLocality;
  if (w && pod.images !== undefined && pod.images.length > 0 && state.imageStates().any) {
    const images = state.imageStates();
    for (let k = 0; k < n; k++) plugin[k] = imageLocalityScore(images, feasible[k]!, pod, nodes.length);
    addPlugin('ImageLocality', w);
  }
  w = weights.InterPodAffinity;
  const topology = w ? topologyScores(state, pod, evicted.gone) : undefined;
  if (w && topology !== undefined && topology.size > 0) {
    for (let k = 0; k < n; k++) plugin[k] = interPodRaw(topology, nodes[feasible[k]!]!);
    minMaxNormalize(plugin, n);
    addPlugin('InterPodAffinity', w);
  }
  w = weights.NodeAffinity;
  if (w && pod.preferredNodeAffinity.length > 0) {
    for (let k = 0; k < n; k++) plugin[k] = nodeAffinityRaw(pod, nodes[feasible[k]!]!);
    defaultNormalize(plugin, n, false);
    addPlugin('NodeAffinity', w);
  }
  w = weights.PodTopologySpread;
  if (w) {
    spreadScores(state, pod, evicted.terminating ?? evicted.gone, feasible, plugin);
    addPlugin('PodTopologySpread', w);
  }
  w = weights.TaintToleration;
  if (w) {
    for (let k = 0; k < n; k++) plugin[k] = intolerablePreferNoSchedule(pod, nodes[feasible[k]!]!);
    defaultNormalize(plugin, n, true);
    addPlugin('TaintToleration', w);
  }
}

const scratch = { allocatable: {}, requested: {}, nonZeroCpu: 0, nonZeroMemory: 0 };
const freedRequests: Record<string, number> = {};

/** The node's load for scoring; a deleted evicted pod no longer counts on its node. Reuses one object. */
function nodeLoad(state: ClusterState, index: number, node: NodeInfo, gone: Placed | undefined): NodeLoad {
  const usage = state.usageAt(index);
  scratch.allocatable = node.allocatable;
  if (gone === undefined || gone.node !== node) {
    scratch.requested = usage.requested;
    scratch.nonZeroCpu = usage.nonZeroCpu;
    scratch.nonZeroMemory = usage.nonZeroMemory;
    return scratch;
  }
  for (const k in freedRequests) delete freedRequests[k];
  const held = gone.pod.held?.requests ?? gone.pod.requests;
  for (const k in usage.requested) freedRequests[k] = usage.requested[k]! - (held[k] ?? 0);
  const nonZero = gone.pod.held?.nonZeroRequests ?? nonZeroRequests(gone.pod);
  scratch.requested = freedRequests;
  scratch.nonZeroCpu = usage.nonZeroCpu - nonZero.cpu;
  scratch.nonZeroMemory = usage.nonZeroMemory - nonZero.memory;
  return scratch;
}
