// LowNodeUtilization: the descheduler's classification (underutilized at or below every threshold, overutilized
// above any targetThreshold, static or as deviations around the mean), then the fewest evictions that bring each
// overutilized node to its targetThresholds, where the descheduler evicts in order and hopes. A move counts only if
// the replacement, on every node the scheduler might choose, lands on an underutilized node and keeps it at or below
// its targetThresholds; a pod that cannot land so is never a candidate (the planner reports why in `skipped`).
import { lifecycleReason } from '../../model/lifecycleTaints.js';
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
  totalShare,
  usageByNode,
  utilizationOf,
} from '../utilization.js';
import { lowNodeUtilizationSection, type LowNodeUtilizationConfig } from './policy.js';

const NAME = 'LowNodeUtilization';

/**
 * Replacements the exact search (fewest evictions for one node) may simulate in one plan, all nodes together; past
 * it, each node is relieved greedily, the pod that covers most of what is left first.
 */
const SEARCH_BUDGET = 300;
/** The most evictions the exact search looks for (all overutilized nodes together, or one node). */
const JOINT_SEARCH_MAX = 8;
/** Evictions above the lower bound the exact search tries before it leaves the node to the greedy pass. */
const SEARCH_SLACK = 2;

/** Pods alike for the search: one workload, same requests, usage, priority and QoS (their sets land alike). */
function likeKey(pod: PodInfo, amount: Readonly<Record<string, number>>): string {
  const measured = amount === pod.requests ? '' : JSON.stringify(amount);
  return `${pod.namespace}/${pod.workload.kind}/${pod.workload.name}\u0000${JSON.stringify(pod.requests)}\u0000${measured}\u0000${pod.priority}\u0000${pod.qos}`;
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
function lowerBound(
  pods: readonly PodInfo[],
  need: ReadonlyMap<string, number>,
  amountOf: LoadContext['amountOf'],
): number {
  let bound = 0;
  for (const [r, d] of need) {
    const amounts = pods.map((p) => podAmount(amountOf(p), r)).sort((a, b) => b - a);
    let sum = 0;
    let k = 0;
    while (sum < d - 1e-9 && k < amounts.length) sum += amounts[k++]!;
    if (sum < d - 1e-9) return Infinity;
    bound = Math.max(bound, k);
  }
  return bound;
}

/** A sequence of evictions that brings every overutilized node to its targets. */
interface Found {
  readonly moves: ReadonlyArray<{ readonly pod: PodInfo; readonly node: NodeInfo }>;
  /** The highest priority it evicts. */
  readonly priority: number;
  /** How much it moves, as shares of its nodes' allocatable summed over resources. */
  readonly moved: number;
}

/** How much moving `pod` off `node` moves, as shares of the node's allocatable summed over resources. */
function shareOf(pod: PodInfo, node: NodeInfo, amountOf: LoadContext['amountOf']): number {
  let moved = 0;
  for (const [r, amount] of Object.entries(amountOf(pod))) moved += amount / (node.allocatable[r] || 1);
  return moved;
}

function found(moves: ReadonlyArray<{ pod: PodInfo; node: NodeInfo }>, amountOf: LoadContext['amountOf']): Found {
  let moved = 0;
  for (const { pod, node } of moves) moved += shareOf(pod, node, amountOf);
  return { moves: [...moves], priority: Math.max(...moves.map((m) => m.pod.priority)), moved };
}

/**
 * A node's candidates for the last move of a sequence, best first as better() ranks the sequences they would
 * complete (the highest priority evicted, then the share moved; eviction order among equals), so that the first one
 * that completes is the one the search keeps and the rest need no simulated placement. With thousands of possible
 * landings per placement where the scheduler samples, a placement is what a search step costs.
 */
function lastMoveOrder(
  pods: readonly PodInfo[],
  node: NodeInfo,
  chosen: ReadonlyArray<{ pod: PodInfo; node: NodeInfo }>,
  amountOf: LoadContext['amountOf'],
): PodInfo[] {
  const prefix = chosen.reduce((p, c) => Math.max(p, c.pod.priority), -Infinity);
  // better() counts shares within 1e-9 as equal; rounding keeps them in eviction order here too.
  const key = new Map(
    pods.map((pod) => [pod, [Math.max(prefix, pod.priority), Math.round(shareOf(pod, node, amountOf) * 1e9)] as const]),
  );
  return [...pods].sort((a, b) => {
    const [pa, ma] = key.get(a)!;
    const [pb, mb] = key.get(b)!;
    return pa - pb || ma - mb;
  });
}

/**
 * Among sequences of one length: the one whose highest priority is lowest (the descheduler's order protects the
 * higher ones), then the one that moves the least (what it does not move leaves room on the underutilized nodes),
 * then the first in eviction order.
 */
function better(a: Found, b: Found): boolean {
  if (a.priority !== b.priority) return a.priority < b.priority;
  return a.moved < b.moved - 1e-9;
}

class NodeRelief {
  private budget = SEARCH_BUDGET;
  /** The first refusal of each pod not moved, reported once the nodes are done. */
  readonly refusals = new Map<PodInfo, string>();
  private readonly limits = new Map<NodeInfo, Readonly<Record<string, number>>>();

  constructor(
    private readonly ctx: LoadContext,
    private readonly classes: ReadonlyMap<string, NodeClass>,
    private readonly high: Readonly<Record<string, number>>,
    private readonly resources: readonly string[],
  ) {}

  /** Why a replacement of `pod` landing on `targets` would not help (undefined: it helps on every one). */
  private lands(pod: PodInfo): (targets: readonly NodeInfo[]) => string | undefined {
    const amount = this.ctx.amountOf(pod);
    return (targets) => {
      for (const t of targets) {
        if (this.classes.get(t.name) !== 'under') {
          return `its replacement could land on ${t.name}, which is not underutilized`;
        }
        if (!staysWithin(this.ctx.requested(t), this.limitsOf(t), amount)) {
          return `its replacement would take ${t.name} above targetThresholds`;
        }
      }
      return undefined;
    };
  }

  /** A node's targetThresholds in absolute amounts: asked for every possible landing of every attempt. */
  private limitsOf(node: NodeInfo): Readonly<Record<string, number>> {
    let limits = this.limits.get(node);
    if (limits === undefined) this.limits.set(node, (limits = absoluteLimits(node, this.high)));
    return limits;
  }

  private need(node: NodeInfo): Map<string, number> {
    const limits = this.limitsOf(node);
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

  /**
   * Relieves the overutilized nodes (most utilized first): the fewest evictions that bring all of them to their
   * targets, searched over all of them together since they share the underutilized nodes' room; where that search
   * finds nothing within its budget, node by node, the fewest for each, else as near as the room allows.
   */
  relieveAll(over: readonly NodeInfo[]): void {
    const candidates = new Map(over.map((n) => [n, this.candidatesOf(n)]));
    // All nodes together only while the search is small enough to finish; else node by node.
    const together = this.bound(over, candidates) <= JOINT_SEARCH_MAX;
    if (!together || !this.exact(over, candidates)) {
      for (const node of over) {
        if (this.ctx.cycleFull) break;
        if (!this.exact([node], candidates)) this.greedy(node, candidates.get(node)!);
      }
    }
    for (const [pod, reason] of this.refusals) this.ctx.skip(pod, reason);
  }

  /** The pods of a node whose eviction lowers one of its overutilized resources, in eviction order. */
  private candidatesOf(node: NodeInfo): PodInfo[] {
    const need = this.need(node);
    return this.ctx
      .podsOn(node)
      .filter((p) => [...need.keys()].some((r) => podAmount(this.ctx.amountOf(p), r) > 0))
      .sort((a, b) => this.ctx.compare(a, b));
  }

  /** The fewest moves that bring every one of `nodes` to its targets, planned; false (nothing planned) if none. */
  private exact(nodes: readonly NodeInfo[], candidates: ReadonlyMap<NodeInfo, PodInfo[]>): boolean {
    const bound = this.bound(nodes, candidates);
    if (bound === 0) return true;
    // Some node cannot reach its targets whatever moves (the greedy pass gets it as near as it can), or the set is
    // too large to search for.
    if (!Number.isFinite(bound) || bound > JOINT_SEARCH_MAX) return false;
    let best: Found | undefined;
    for (let k = bound; k <= bound + SEARCH_SLACK && this.budget > 0 && best === undefined; k++) {
      best = this.search(nodes, candidates, k, []);
    }
    if (best === undefined) return false;
    // The moves of the best sequence were taken back while the search went on: make them again, in order.
    const mark = this.ctx.mark();
    for (const { pod, node } of best.moves) {
      if (!this.tryMove(pod, node)) {
        this.ctx.undo(mark);
        return false;
      }
    }
    return true;
  }

  /** Fewest moves still needed, each node alone (Infinity when some node's candidates cannot cover it). */
  private bound(nodes: readonly NodeInfo[], candidates: ReadonlyMap<NodeInfo, PodInfo[]>): number {
    let sum = 0;
    for (const node of nodes) {
      const need = this.need(node);
      if (need.size === 0) continue;
      const live = new Set(this.ctx.podsOn(node));
      sum += lowerBound(
        candidates.get(node)!.filter((p) => live.has(p)),
        need,
        (p) => this.ctx.amountOf(p),
      );
    }
    return sum;
  }

  /**
   * Depth-first over sequences of `left` more moves. The nodes are relieved in their order (the first one still
   * above its targets next), and a node's candidates in eviction order; the order of a node's moves matters, since
   * each replacement lands where the ones before it left room (a small pod first may still land on the emptiest
   * node, where after a large one it would tie with a busier one). Each sequence that brings every node to its
   * targets is compared with the best so far (see better()); the moves are taken back either way. Alike pods are
   * tried once per level.
   */
  private search(
    nodes: readonly NodeInfo[],
    candidates: ReadonlyMap<NodeInfo, PodInfo[]>,
    left: number,
    chosen: Array<{ pod: PodInfo; node: NodeInfo }>,
  ): Found | undefined {
    const node = nodes.find((n) => this.need(n).size > 0);
    if (node === undefined) return chosen.length === 0 ? undefined : found(chosen, (p) => this.ctx.amountOf(p));
    if (left === 0 || this.ctx.cycleFull || this.bound(nodes, candidates) > left) return undefined;
    const need = this.need(node);
    let best: Found | undefined;
    const tried = new Set<string>();
    const last = left === 1;
    const order = last
      ? lastMoveOrder(candidates.get(node)!, node, chosen, (p) => this.ctx.amountOf(p))
      : candidates.get(node)!;
    for (const pod of order) {
      const amount = this.ctx.amountOf(pod);
      const key = likeKey(pod, amount);
      if (tried.has(key) || chosen.some((c) => c.pod === pod)) continue;
      if (![...need.keys()].some((r) => podAmount(amount, r) > 0)) continue;
      if (this.budget-- <= 0) break;
      const mark = this.ctx.mark();
      if (!this.tryMove(pod, node)) continue;
      tried.add(key);
      chosen.push({ pod, node });
      const sub = this.search(nodes, candidates, left - 1, chosen);
      chosen.pop();
      this.ctx.undo(mark);
      if (sub !== undefined && (best === undefined || better(sub, best))) best = sub;
      // Ranked best first (lastMoveOrder): nothing after the first completed sequence is better.
      if (last && best !== undefined) break;
    }
    return best;
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
        const amount = this.ctx.amountOf(pod);
        for (const [r, d] of need) cover += Math.min(podAmount(amount, r), d) / (node.allocatable[r] || 1);
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
  const usage = usageByNode(ctx, nodes, resources);
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
    classes.set(
      n.name,
      lifecycleReason(n) === undefined && atOrBelow(u, low) ? 'under' : above(u, high) ? 'over' : 'appropriate',
    );
  }
  return { resources, nodes, usage, high, classes };
}

export const lowNodeUtilization: LoadStrategy<LowNodeUtilizationConfig, 'lowNodeUtilization'> = {
  kind: 'load',
  name: NAME,
  key: 'lowNodeUtilization',
  policy: lowNodeUtilizationSection,

  usage: (config) => config.usage,
  prometheus: (config) => config.prometheus,

  plan(ctx, config): NodeClassification | undefined {
    const { resources, nodes, usage, high, classes } = classifyLow(ctx, config);
    const result: NodeClassification = { strategy: NAME, resources, classes };
    const of = (c: NodeClass): NodeInfo[] => nodes.filter((n) => classes.get(n.name) === c);
    const under = of('under');
    // The descheduler's stop conditions: no room anywhere, too few underutilized nodes, nothing overutilized.
    if (under.length === 0 || under.length <= config.numberOfNodes || under.length === nodes.length) return result;
    const sum = (n: NodeInfo): number => totalShare(usage.get(n)!, resources);
    // The most utilized node first, as the descheduler orders them: it needs the room most.
    const over = of('over').sort((a, b) => sum(b) - sum(a) || (a.name < b.name ? -1 : 1));
    new NodeRelief(ctx, classes, high, resources).relieveAll(over);
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
      convertUsage(args, section, notes, NAME, true);
      // evictionLimits.node becomes the policy's eviction.maxPerNode (convert gives the plugin its own policy for it).
      const limits = args['evictionLimits'];
      for (const key of Object.keys(limits !== null && typeof limits === 'object' ? limits : {}))
        if (key !== 'node')
          notes.push(`${NAME}.evictionLimits.${key}: not carried over: not a limit of the descheduler v0.36`);
    },
  },
};
