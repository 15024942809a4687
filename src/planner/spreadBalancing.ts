// Spread balancing: the spread groups a skew strategy acts on, most excess first, each repaired by greedy steps that
// move one pod from a fullest domain to where the scheduler puts its replacement, a run of steps kept only if it
// lowers the skew (or reaches maxSkew once the limits that only pace the work are lifted). A group held by another's
// counts is tried again once they change; a group greedy leaves at a dead end gets the bounded search of
// spreadSearch.ts.
import type { SpreadGroup } from '../analysis/topologySpread.js';
import { nodeAdmitsPod } from '../model/admission.js';
import { skewTuple } from '../model/spread.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import { volumesReachable } from '../model/volumes.js';
import type { GroupState } from '../scheduling/clusterState.js';
import type { SkewStrategy } from '../strategies/types.js';
import { compareCandidates, replicaKey } from './candidates.js';
import { searchGroup, type SearchContext } from './spreadSearch.js';
import type { PlanSteps } from './steps.js';
import type { AttemptRules, PlanTransaction } from './transaction.js';

export class SpreadBalancer implements SearchContext {
  readonly unrepairable = new Map<string, string>();
  private readonly related = new Map<GroupState, readonly GroupState[]>();
  /** Groups whose last greedy step found no candidate the scheduler would place usefully (see spreadSearch.ts). */
  readonly deadEnds = new Set<GroupState>();
  /** The highest priority of each spread group's members, by group id. */
  private readonly memberPriorities = new Map<string, number>();

  constructor(readonly tx: PlanTransaction) {}

  /** How far the group's skew is above its maxSkew (0 within it). */
  excessOf(g: GroupState): number {
    return Math.max(0, skewTuple(g.counts, g.group.constraint.minDomains)[0] - g.group.constraint.maxSkew);
  }

  /** Balances the groups a skew strategy acts on, most excess first; a step after each group balanced or searched. */
  *balanceGroupSteps(): PlanSteps<void> {
    const groups = [...this.tx.state.groups()]
      .filter((g) => this.tx.skewStrategyOf(g.group) !== undefined && g.group.skew > g.group.constraint.maxSkew)
      .sort(
        (a, b) =>
          b.group.skew - b.group.constraint.maxSkew - (a.group.skew - a.group.constraint.maxSkew) ||
          (a.group.id < b.group.id ? -1 : 1),
      );
    // A group can be held back by another's state: the move it needs would push a group that counts the same pods
    // above its maxSkew, until that group's own moves change its counts. So a group left above its maxSkew is tried
    // again once a move changed a group that counts one of its pods (each pass plans more evictions, and a pod is
    // evicted once at most, so the passes end).
    const triedAt = new Map<GroupState, number>();
    let pending = groups;
    while (pending.length > 0) {
      for (const g of pending) {
        this.unrepairable.delete(g.group.id);
        this.balanceGroup(g, this.tx.skewStrategyOf(g.group)!);
        triedAt.set(g, this.tx.clock);
        yield;
      }
      if (this.tx.limits.cycleFull) return;
      pending = pending.filter(
        (g) =>
          this.excessOf(g) > 0 && this.relatedGroups(g).some((r) => (this.tx.changedAt.get(r) ?? 0) > triedAt.get(g)!),
      );
    }
    for (const g of groups) {
      if (this.tx.limits.cycleFull) return;
      if (!this.deadEnds.has(g)) continue;
      if (this.excessOf(g) > 0) {
        searchGroup(this, g, this.tx.skewStrategyOf(g.group)!);
        yield;
      }
    }
  }

  /** The groups that count one of the pods this group counts (itself included): those whose state can hold it. */
  relatedGroups(g: GroupState): readonly GroupState[] {
    let found = this.related.get(g);
    if (found === undefined) {
      found = [...this.groupsCounting(g.group.matching).add(g)];
      this.related.set(g, found);
    }
    return found;
  }

  /** The groups that count one of `pods` (pods of one namespace; each label set is looked up once). */
  private groupsCounting(pods: readonly PodInfo[]): Set<GroupState> {
    const out = new Set<GroupState>();
    const seen = new Set<PodInfo['labels']>();
    for (const pod of pods) {
      if (seen.has(pod.labels)) continue;
      seen.add(pod.labels);
      for (const other of this.tx.state.groupsSelecting(pod.namespace, pod.labels)) out.add(other);
    }
    return out;
  }

  private balanceGroup(g: GroupState, s: SkewStrategy): void {
    const c = g.group.constraint;
    if (this.tx.limits.cycleFull) {
      this.deferred(g, s);
      return;
    }
    // An eviction is worth its disruption if it lowers the skew, or if it belongs to a set of this plan's moves that
    // brings the skew to maxSkew. A step may only lower the number of domains at the maximum or minimum: such a run
    // is kept while the group reaches maxSkew; otherwise the first run that needed several moves is dropped (with
    // every move after it) and the group is planned again with steps that each lower the skew.
    const alone = `evicting it would not lower the skew of ${c.topologyKey} spread (${g.group.workloads.join(', ')}) by itself`;
    let strict = false;
    let mark = this.tx.moves.length;
    let lowest = skewTuple(g.counts, c.minDomains)[0];
    let firstSet: number | undefined;
    for (;;) {
      const skew = skewTuple(g.counts, c.minDomains)[0];
      if (skew < lowest) {
        if (this.tx.moves.length - mark > 1) firstSet ??= mark;
        [mark, lowest] = [this.tx.moves.length, skew];
      }
      if (skew <= c.maxSkew) return;
      const step = this.bestStep(g, s, strict);
      if (step.kind === 'move') {
        this.tx.commit(step.pod, step, s.name, step.reason, c.topologyKey);
        continue;
      }
      const why = step.lastReason === undefined ? '' : ` (${step.lastReason})`;
      if (this.tx.moves.length > mark && this.completesLater(g, s, strict)) return;
      if (this.tx.moves.length > mark) {
        this.tx.rollback(mark, `${alone}, and the evictions that would lower it with it cannot all be made${why}`);
      }
      if (firstSet !== undefined) {
        this.tx.rollback(firstSet, `${alone}, and the set it belongs to does not bring the skew to maxSkew${why}`);
        [strict, firstSet, mark, lowest] = [
          true,
          undefined,
          this.tx.moves.length,
          skewTuple(g.counts, c.minDomains)[0],
        ];
        continue;
      }
      if (step.unrepairable !== undefined) this.deadEnds.add(g);
      // After dropping a set, the skew was still lowered by it: the rest is not known to be unrepairable.
      if (step.unrepairable !== undefined && !strict) this.unrepairable.set(g.group.id, step.unrepairable);
      return;
    }
  }

  /**
   * Whether the group's open set of moves reaches maxSkew once the limits that only pace the work are lifted: a
   * budget spent by this plan alone and maxPerWorkload. Both bound evictions in flight, not evictions in a cycle: the
   * executor makes the rest one at a time as replacements become Ready, re-planning from the cluster each time, and
   * `simulate` in its next cycles. Then the moves planned so far are worth their disruption. The moves looked ahead
   * are taken back (they are not part of this plan) and nothing is reported for them.
   */
  private completesLater(g: GroupState, s: SkewStrategy, strict: boolean): boolean {
    const c = g.group.constraint;
    const mark = this.tx.moves.length;
    this.tx.lookingAhead = true;
    try {
      for (;;) {
        if (skewTuple(g.counts, c.minDomains)[0] <= c.maxSkew) return true;
        const step = this.bestStep(g, s, strict);
        if (step.kind !== 'move') return false;
        this.tx.commit(step.pod, step, s.name, step.reason, c.topologyKey);
      }
    } finally {
      this.tx.lookingAhead = false;
      this.tx.takeBack(mark);
    }
  }

  /** The cycle's eviction budget is spent: say so once for the group instead of trying every pod. */
  private deferred(g: GroupState, s: SkewStrategy): void {
    const first = g.group.members.find((p) => this.tx.state.isLive(p));
    const limit = first && this.tx.limits.exceeded(first);
    const later = this.tx.limits.stepFull ? 'a later step' : 'the next cycle';
    if (first && limit) this.tx.skip(first, s.name, `${limit}; the group's skew is left for ${later}`);
  }

  /** The best next move of the group; `strict`: only a move that lowers the skew itself. */
  private bestStep(
    g: GroupState,
    s: SkewStrategy,
    strict: boolean,
  ):
    | {
        kind: 'move';
        pod: PodInfo;
        target: NodeInfo | undefined;
        ties: readonly NodeInfo[];
        slack?: number;
        reason: string;
      }
    | { kind: 'none'; unrepairable: string | undefined; lastReason: string | undefined } {
    const before = skewTuple(g.counts, g.group.constraint.minDomains);
    const candidates = s.candidates(g.group, g.counts, this.tx.liveAt).sort(compareCandidates);
    const rules: AttemptRules = {
      strategy: s.name,
      helps: (pod, target, from) =>
        s.helps(this.tx.state.tupleAfter(g, pod, from, target), before, strict)
          ? undefined
          : 'the replacement would not reduce the skew',
      fallbackTarget: (pod) => this.emptiestNode(g, pod),
      // A candidate may be another workload's pod that the selector counts: it must not be of higher priority than
      // the pods the constraint belongs to (the members never are, so they are not held back by it).
      maxPriority: this.memberPriority(g.group),
    };
    const possible = this.otherSkewedGroups(g, candidates);
    const found: Array<{
      pod: PodInfo;
      target: NodeInfo | undefined;
      ties: readonly NodeInfo[];
      slack?: number;
      improved: number;
      excess: number;
    }> = [];
    const refusedWorkloads = new Set<string>();
    const foundWorkloads = new Set<string>();
    let placementOnly = true;
    let lastReason: string | undefined;
    for (const pod of candidates) {
      // Replicas of one workload on one node fare alike where the scheduler looks unless their spec or volumes
      // differ; a refusal of the pod itself (protection, budget, age, limits) says nothing about the others.
      const wk = replicaKey(pod);
      // A replica like one already found would land alike and achieve the same: the first in eviction order stands.
      if (refusedWorkloads.has(wk) || foundWorkloads.has(wk)) continue;
      const result = this.tx.attempt(pod, rules);
      if (!result.ok) {
        this.tx.skip(pod, s.name, result.reason);
        if (result.placement) refusedWorkloads.add(wk);
        placementOnly &&= result.placement;
        lastReason = result.reason;
        continue;
      }
      const benefit = this.benefit(g, pod, result.target);
      const slack = result.slack === undefined ? {} : { slack: result.slack };
      found.push({ pod, target: result.target, ties: result.ties, ...slack, ...benefit });
      foundWorkloads.add(wk);
      // Look further only while another candidate could improve more skewed groups than this one does, or leave them
      // closer to their maxSkew.
      if ((benefit.improved === possible && benefit.excess === 0) || found.length >= 4) break;
    }
    if (found.length === 0) {
      return {
        kind: 'none',
        unrepairable: placementOnly && candidates.length > 0 ? lastReason : undefined,
        lastReason,
      };
    }
    // Prefer the move that also improves other skewed groups, then the one that leaves them the least skew above
    // their maxSkew (zones 7/3 by nodes 3+4/2+1: a pod from the fullest node serves the hostname spread too, where a
    // pod from the other node of the zone would need one more eviction later); ties keep the eviction order.
    const best = found.reduce((a, b) =>
      b.improved > a.improved || (b.improved === a.improved && b.excess < a.excess) ? b : a,
    );
    const reason = s.reason(g.group, g.counts, this.tx.state.nodeOf(best.pod)!, best.target);
    const slack = best.slack === undefined ? {} : { slack: best.slack };
    return { kind: 'move', pod: best.pod, target: best.target, ties: best.ties, ...slack, reason };
  }

  /**
   * How many other acted-on groups above their maxSkew select one of the candidates: the most other groups one move
   * could improve. A candidate of another workload may serve its own workload's spread too, so the search does not
   * stop at a candidate that improves all of its own groups while another could improve more.
   */
  private otherSkewedGroups(g: GroupState, candidates: readonly PodInfo[]): number {
    let n = 0;
    for (const other of this.groupsCounting(candidates)) {
      if (other !== g && this.tx.skewStrategyOf(other.group) !== undefined && this.excessOf(other) > 0) n++;
    }
    return n;
  }

  /** The highest priority among the pods that carry the group's constraint (memoised: a plan never changes it). */
  memberPriority(g: SpreadGroup): number {
    let found = this.memberPriorities.get(g.id);
    if (found === undefined) {
      found = -Infinity;
      for (const pod of g.members) found = Math.max(found, pod.priority);
      this.memberPriorities.set(g.id, found);
    }
    return found;
  }

  /**
   * How many other acted-on skewed groups the move improves, and how much skew above maxSkew the other acted-on
   * groups would have after it (summed).
   */
  private benefit(g: GroupState, pod: PodInfo, target: NodeInfo | undefined): { improved: number; excess: number } {
    const from = this.tx.state.nodeOf(pod)!;
    let improved = 0;
    let excess = 0;
    for (const other of this.tx.state.groupsSelecting(pod.namespace, pod.labels)) {
      const s = other === g ? undefined : this.tx.skewStrategyOf(other.group);
      if (s === undefined) continue;
      const c = other.group.constraint;
      const after = this.tx.state.tupleAfter(other, pod, from, target);
      // A group within its maxSkew is not one to improve, but a move that pushes it above is one more to repair.
      excess += Math.max(0, after[0] - c.maxSkew);
      const before = skewTuple(other.counts, c.minDomains);
      if (before[0] > c.maxSkew && s.helps(after, before, false)) improved++;
    }
    return { improved, excess };
  }

  /** nodeFit off: an eligible node in the emptiest domain, ignoring resources and other filters. */
  emptiestNode(g: GroupState, pod: PodInfo): NodeInfo | undefined {
    let best: NodeInfo | undefined;
    let bestCount = Infinity;
    for (const [nodeName, domain] of g.group.domainsByNode) {
      const count = g.counts.get(domain)!;
      const node = this.tx.state.nodes.get(nodeName)!;
      if (count < bestCount && nodeAdmitsPod(pod, node) && volumesReachable(pod, node)) {
        best = node;
        bestCount = count;
      }
    }
    return best;
  }
}
