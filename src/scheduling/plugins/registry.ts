// The in-tree plugins the prediction runs, in kube-scheduler v1.26's default profile order, and the frameworks built
// from them per profile. Adding a plugin touches its folder and this file only (plugin folders never import one
// another).
import { Framework } from '../framework/runtime.js';
import type { FilterPlugin, ScorePlugin } from '../framework/interface.js';
import type { FilterInput } from '../framework/nodePods.js';
import type { NodeInfo } from '../../model/types.js';
import type { SchedulerProfile } from '../profile.js';
import { imageLocality } from './imageLocality/score.js';
import { interPodAffinityFilter } from './interPodAffinity/filter.js';
import { interPodAffinityScore } from './interPodAffinity/score.js';
import { nodeAffinityScore } from './nodeAffinity/score.js';
import { nodePortsFilter } from './nodePorts/filter.js';
import { balancedAllocation } from './nodeResources/balancedAllocation.js';
import { nodeResourcesFitFilter, nodeResourcesFitScore } from './nodeResources/fit.js';
import { nodeVolumeLimitsFilter } from './nodeVolumeLimits/filter.js';
import { podTopologySpreadFilter } from './podTopologySpread/filter.js';
import { podTopologySpreadScore } from './podTopologySpread/score.js';
import { taintTolerationScore } from './taintToleration/score.js';
import { volumeRestrictionsFilter } from './volumeRestrictions/filter.js';

/**
 * The filters that depend on what runs on the node, in the default profile's order. NodeUnschedulable, NodeAffinity,
 * TaintToleration and VolumeBinding depend on the pod's spec and the node only; the placement applies them once per
 * kind of pod (staticallyAdmitting).
 */
export const FILTER_PLUGINS: readonly FilterPlugin[] = [
  nodePortsFilter,
  volumeRestrictionsFilter,
  nodeVolumeLimitsFilter,
  nodeResourcesFitFilter,
  interPodAffinityFilter,
  podTopologySpreadFilter,
];

/** The score plugins, in the default profile's order. */
export const SCORE_PLUGIN_IMPLS: readonly ScorePlugin[] = [
  nodeResourcesFitScore,
  balancedAllocation,
  imageLocality,
  interPodAffinityScore,
  nodeAffinityScore,
  podTopologySpreadScore,
  taintTolerationScore,
];

const frameworks = new WeakMap<SchedulerProfile, Framework>();

/** The framework of a profile, built once (profiles are immutable). */
export function frameworkFor(profile: SchedulerProfile): Framework {
  let framework = frameworks.get(profile);
  if (framework === undefined) {
    framework = new Framework(profile, FILTER_PLUGINS, SCORE_PLUGIN_IMPLS);
    frameworks.set(profile, framework);
  }
  return framework;
}

/**
 * NodePorts, VolumeRestrictions and NodeVolumeLimits on one node, with the evicted pod still terminating: the filters
 * about what other pods on the node hold.
 */
export function portAndVolumeProblem(input: FilterInput, node: NodeInfo): string | undefined {
  const full = { ...input, terminating: true };
  for (const p of [nodePortsFilter, volumeRestrictionsFilter, nodeVolumeLimitsFilter]) {
    const problem = p.preFilter(full)?.(node, -1);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
