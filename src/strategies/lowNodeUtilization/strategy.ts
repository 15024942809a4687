// LowNodeUtilization: the descheduler's classification (underutilized at or below every threshold, overutilized
// above any targetThreshold, static or as deviations around the mean), then the fewest evictions that bring each
// overutilized node to its targetThresholds, where the descheduler evicts in order and hopes. A move counts only if
// the replacement, on every node the scheduler might choose, lands on an underutilized node and keeps it at or below
// its targetThresholds; a pod that cannot land so is never a candidate (the planner reports why in `skipped`).
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { LoadContext, LoadStrategy, NodeClass, NodeClassification } from '../types.js';
import {
  absoluteLimits,
  atOrBelow,
  above,
  classifiedNodes,
  convertUsage,
  copyThresholds,
  effectiveThresholds,
  percentText,
  podAmount,
  resourcesOf,
  staysWithin,
  utilizationOf,
} from '../utilization.js';
import { lowNodeUtilizationSection, type LowNodeUtilizationConfig } from './policy.js';

const NAME = 'LowNodeUtilization';

/**
 * Replacements the exact search (fewest evictions for one node) may simulate in one plan, all nodes together; past
 * it, each node is relieved greedily, the pod that covers most of what is left first.
 */
const SEARCH_BUDGET = 600;
/** Evictions above the lower bound the exact search tries before it leaves the node to the greedy pass. */
const SEARCH_SLACK = 2;

/** Pods alike for the search: one workload, same requests, priority and QoS (their sets land alike). */
function likeKey(pod: PodInfo): string {
  return `${pod.namespace}/${pod.workload.kind}/${pod.workload.name}\u0000${JSON.stringify(pod.requests)}\u0000${pod.priority}\u0000${pod.qos}`;
}

/** The overutilized resources of a node, with how much must leave it for each to be at its target. */
function deficits(
  requested: Readonly<Record<string, number>>,
  limits: Readonly<Record<string, number>>,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const r in limits) {
    const d = (requested[r] ?? 0) - limits[r]!;
    if (d > 1e-9) out.set(r, d);
  }
  return out;
}

/** Fewest pods of `pods` whose amounts could cover every deficit, each resource alone (a lower bound). */
function lowerBound(pods: readonly PodInfo[], need: ReadonlyMap<string, number>): number {
  let bound = 0;
  for (const [r, d] of need) {
    const amounts = pods.map((p) => podAmount(p.requests, r)).sort((a, b) => b - a);
    let sum = 0;
    let k = 0;
    while (sum < d - 1e-9 && k < amounts.length) sum += amounts[k++]!;
    if (sum < d - 1e-9) return Infinity;
    bound = Math.max(bound, k);
  }
  return bound;
}

class NodeRelief {
  private budget = SEARCH_BUDGET;
  /** The first refusal of each pod not moved, reported once the node is done. */
  readonly refusals = new Map<PodInfo, string>();

  constructor(
    private readonly ctx: LoadContext,
    private readonly classes: ReadonlyMap<string, NodeClass>,
    private readonly high: Readonly<Record<string, number>>,
    private readonly resources: readonly string[],
  ) {}

  /** Why a replacement of `pod` landing on `targets` would not help (undefined: it helps on every one). */
  private lands(pod: PodInfo): (targets: readonly NodeInfo[]) => string | undefined {
    return (targets) => {
      for (const t of targets) {
        if (this.classes.get(t.name) !== 'under') {
          return `its replacement could land on ${t.name}, which is not underutilized`;
        }
        if (!staysWithin(this.ctx.requested(t), absoluteLimits(t, this.high), pod.requests)) {
          return `its replacement would take ${t.name} above targetThresholds`;
        }
      }
      return undefined;
    };
  }

  private need(node: NodeInfo): Map<string, number> {
    const limits = absoluteLimits(node, this.high);
    return deficits(this.ctx.requested(node), limits);
  }

  private reason(node: NodeInfo): string {
    const u = utilizationOf(node, this.ctx.requested(node), this.resources);
    const over = this.resources
      .filter((r) => (u[r] ?? 0) * 100 > this.high[r]! + 1e-9)
      .map((r) => `${r} ${percentText(u[r]!)} > ${this.high[r]}%`);
    return `node ${node.name} is above targetThresholds (${over.join(', ')})`;
  }

  private tryMove(pod: PodInfo, node: NodeInfo): boolean {
    const result = this.ctx.move(pod, this.reason(node), this.lands(pod));
    if (typeof result !== 'string') return true;
    if (!this.refusals.has(pod)) this.refusals.set(pod, result);
    return false;
  }

  /** Relieves one overutilized node: the fewest evictions that bring it to its targets, else as near as room allows. */
  relieve(node: NodeInfo): void {
    this.refusals.clear();
    const need = this.need(node);
    if (need.size === 0) return;
    const candidates = this.ctx
      .podsOn(node)
      .filter((p) => [...need.keys()].some((r) => podAmount(p.requests, r) > 0))
      .sort((a, b) => this.ctx.compare(a, b));
    const bound = lowerBound(candidates, need);
    let done = false;
    for (let k = bound; k <= Math.min(candidates.length, bound + SEARCH_SLACK) && this.budget > 0 && !done; k++) {
      done = this.search(node, candidates, 0, k);
    }
    if (!done) this.greedy(node, candidates);
    for (const [pod, reason] of this.refusals) this.ctx.skip(pod, reason);
  }

  /**
   * Depth-first over sets of `left` more candidates, in eviction order (so among the smallest sets, the one of the
   * lowest priorities is found first). Alike pods are tried once per level. True, with the moves kept, when a set
   * brings the node to its targets.
   */
  private search(node: NodeInfo, candidates: readonly PodInfo[], start: number, left: number): boolean {
    const need = this.need(node);
    if (need.size === 0) return true;
    if (left === 0 || this.ctx.cycleFull) return false;
    // Even the `left` largest remaining candidates could not cover a deficit: no set below here does.
    for (const [r, d] of need) {
      let max = 0;
      for (let i = start; i < candidates.length; i++) max = Math.max(max, podAmount(candidates[i]!.requests, r));
      if (max * left < d - 1e-9) return false;
    }
    const tried = new Set<string>();
    for (let i = start; i < candidates.length; i++) {
      const pod = candidates[i]!;
      const key = likeKey(pod);
      if (tried.has(key)) continue;
      if (![...need.keys()].some((r) => podAmount(pod.requests, r) > 0)) continue;
      if (this.budget-- <= 0) return false;
      const mark = this.ctx.mark();
      if (!this.tryMove(pod, node)) continue;
      tried.add(key);
      if (this.search(node, candidates, i + 1, left - 1)) return true;
      this.ctx.undo(mark);
    }
    return false;
  }

  /** The pod that covers most of what is left (as shares of allocatable) first, ties in eviction order. */
  private greedy(node: NodeInfo, candidates: readonly PodInfo[]): void {
    const left = new Set(candidates);
    for (;;) {
      const need = this.need(node);
      if (need.size === 0 || this.ctx.cycleFull) return;
      let best: PodInfo | undefined;
      let bestCover = 0;
      for (const pod of left) {
        let cover = 0;
        for (const [r, d] of need) cover += Math.min(podAmount(pod.requests, r), d) / (node.allocatable[r] || 1);
        if (cover > bestCover + 1e-12) [best, bestCover] = [pod, cover];
      }
      if (best === undefined) return;
      left.delete(best);
      this.tryMove(best, node);
    }
  }
}

/** The descheduler's classification of the Ready nodes, on the plan's state. */
export function classifyLow(ctx: LoadContext, config: LowNodeUtilizationConfig) {
  const resources = resourcesOf(config.thresholds);
  const nodes = classifiedNodes(ctx);
  const usage = new Map(nodes.map((n) => [n, utilizationOf(n, ctx.requested(n), resources)]));
  const { low, high } = effectiveThresholds(
    nodes,
    (n) => usage.get(n)!,
    config.thresholds,
    config.targetThresholds,
    config.useDeviationThresholds,
  );
  const classes = new Map<string, NodeClass>();
  for (const n of nodes) {
    const u = usage.get(n)!;
    classes.set(n.name, !n.unschedulable && atOrBelow(u, low) ? 'under' : above(u, high) ? 'over' : 'appropriate');
  }
  return { resources, nodes, usage, high, classes };
}

export const lowNodeUtilization: LoadStrategy<LowNodeUtilizationConfig, 'lowNodeUtilization'> = {
  kind: 'load',
  name: NAME,
  key: 'lowNodeUtilization',
  policy: lowNodeUtilizationSection,

  plan(ctx, config): NodeClassification {
    const { resources, nodes, usage, high, classes } = classifyLow(ctx, config);
    const result: NodeClassification = { strategy: NAME, resources, classes };
    const of = (c: NodeClass): NodeInfo[] => nodes.filter((n) => classes.get(n.name) === c);
    const under = of('under');
    // The descheduler's stop conditions: no room anywhere, too few underutilized nodes, nothing overutilized.
    if (under.length === 0 || under.length <= config.numberOfNodes || under.length === nodes.length) return result;
    const sum = (n: NodeInfo): number => resources.reduce((s, r) => s + (usage.get(n)![r] ?? 0), 0);
    // The most utilized node first, as the descheduler orders them: it needs the room most.
    const over = of('over').sort((a, b) => sum(b) - sum(a) || (a.name < b.name ? -1 : 1));
    const relief = new NodeRelief(ctx, classes, high, resources);
    for (const node of over) {
      if (ctx.cycleFull) break;
      relief.relieve(node);
    }
    return result;
  },

  descheduler: {
    plugin: NAME,
    convertArgs(args, section, notes) {
      copyThresholds(args, section, 'thresholds');
      copyThresholds(args, section, 'targetThresholds');
      if (typeof args['useDeviationThresholds'] === 'boolean')
        section['useDeviationThresholds'] = args['useDeviationThresholds'];
      if (typeof args['numberOfNodes'] === 'number') section['numberOfNodes'] = args['numberOfNodes'];
      convertUsage(args, section, notes, NAME);
      if (args['evictionLimits'] !== undefined) {
        notes.push(
          `${NAME}.evictionLimits: kube-rebalancer's limits are the policy's eviction.maxPerNode and maxPerCycle`,
        );
      }
    },
  },
};
