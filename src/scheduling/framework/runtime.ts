// The framework's runtime for one profile (kube-scheduler's frameworkImpl): the enabled filter plugins in the
// profile's order, the enabled score plugins with their weights. It runs PreFilter once per pod and Filter per node,
// then PreScore, Score and NormalizeScore over the feasible nodes, each plugin's score times its weight, summed
// (kube-scheduler v1.26 prioritizeNodes). All integer, so equal totals are the scheduler's ties.
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { ClusterState } from '../clusterState.js';
import type { SchedulerProfile } from '../profile.js';
import type { EvictedView, FilterPlugin, NodeFilter, PlacementInput, ScorePlugin } from './interface.js';
import { windowWinners, type WeightedScorer } from './windows.js';
import type { ScoreBounds } from '../state/pendingSet.js';

/** One plugin's contribution, for explaining a choice (the scheduler's "Plugin scored node" lines at -v=10). */
export type PluginScores = Readonly<Record<string, number>>;

/** The pod's filters after PreFilter: the plugins that did not skip, in order. */
export type PodFilters = readonly NodeFilter[];

/** Reused between placements: the planner scores thousands of replacements per plan. */
let plugin = new Float64Array(256);

export class Framework {
  private readonly weighted: ReadonlyArray<{ readonly plugin: ScorePlugin; readonly weight: number }>;
  private readonly filters: readonly FilterPlugin[];

  constructor(
    readonly profile: SchedulerProfile,
    filters: readonly FilterPlugin[],
    scores: readonly ScorePlugin[],
  ) {
    // A filter the profile disables is not applied (a disabled score plugin has no weight).
    const disabled = profile.disabledFilters ?? [];
    this.filters = filters.filter((p) => !disabled.includes(p.name));
    // A weight of 0 cannot happen in a parsed profile (0 reads as 1); absent means disabled.
    this.weighted = scores.flatMap((p) => {
      const weight = profile.scoreWeights[p.name];
      return weight ? [{ plugin: p, weight }] : [];
    });
  }

  /** PreFilter of every filter plugin; `only` restricts them to the named one, `except` leaves the named one out. */
  preFilter(input: PlacementInput, only?: string, except?: string): PodFilters {
    const out: NodeFilter[] = [];
    for (const p of this.filters) {
      if (only !== undefined && p.name !== only) continue;
      if (except !== undefined && p.name === except) continue;
      const filter = p.preFilter(input);
      if (filter !== undefined) out.push(filter);
    }
    return out;
  }

  /** The first filter's reason the node cannot take the pod, or undefined. */
  static filter(filters: PodFilters, node: NodeInfo, index: number): string | undefined {
    for (let i = 0; i < filters.length; i++) {
      const problem = filters[i]!(node, index);
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  /**
   * Writes the weighted total of every node of `feasible` (node indices) into `totals`; with `explain`, also each
   * plugin's weighted score per node.
   */
  score(
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
    const input = { state, profile: this.profile, pod, evicted };
    for (const { plugin: p, weight } of this.weighted) {
      const scorer = p.preScore(input);
      if (scorer === undefined) continue;
      scorer.score(feasible, plugin);
      scorer.normalize?.(plugin, n);
      for (let k = 0; k < n; k++) {
        const weighted = plugin[k]! * weight;
        totals[k]! += weighted;
        if (explain) (explain[k] ??= {})[p.name] = weighted;
      }
    }
  }

  /**
   * Sampling: which of the `feasible` nodes (in the walk's order) have the top total in some window of `k`
   * consecutive ones (framework/windows.ts); a flag per position.
   */
  windowWinners(
    state: ClusterState,
    pod: PodInfo,
    evicted: EvictedView,
    feasible: Int32Array,
    k: number,
    bounds?: ScoreBounds,
  ): Uint8Array {
    const input = { state, profile: this.profile, pod, evicted };
    const scorers: WeightedScorer[] = [];
    for (const { plugin: p, weight } of this.weighted) {
      const scorer = p.preScore(input);
      if (scorer !== undefined) scorers.push({ name: p.name, weight, scorer });
    }
    return windowWinners(feasible, k, scorers, bounds);
  }
}
