// The planner: the fewest evictions that restore balance, each one justified by a simulated reschedule.
//
// What is broken, which pods may move and what a move must achieve is each strategy's (src/strategies, one registry);
// this is the engine that tries the moves. Order of work: rule violations first (one move of the offending pod; for a
// rule with peers, anti-affinity, the rule's owner or every pod its rule matches, as a set), then the spread groups a
// skew strategy acts on, most excess first. For a group, every step moves one pod from a fullest domain to where the
// scheduler simulation puts its replacement, re-measuring after each move; a step is kept only if it strictly lowers
// the group's (skew, domains at max, domains at min), creates no new hard violation and leaves no hard spread group,
// nor a soft one the policy acts on (includeSoftConstraints), above max(its skew before, its maxSkew), on any node
// the scheduler may pick; and a run of steps is kept only if it ends with the skew lower, since an
// eviction that lowers no skew is not worth its disruption. Moves are undoable, so a set that cannot be completed is
// dropped whole. A group that greedy steps leave at a dead end gets a bounded search for the fewest further moves
// (searchGroup), and a violation cleared first that left one there is tried after the groups instead (planCycle).
// PodDisruptionBudgets, pod protections, priority and the policy's limits are checked before a move is simulated; a
// refused candidate is reported in `skipped` and the next candidate is tried, so a spent budget is routed around
// rather than hit.
//
// This module is the engine; `plan.ts` runs it, then the load and housekeeping phases, which import this module and
// not plan.ts, so the phases and the cycle that calls them form no import circle.
import type { Analysis } from '../analysis/analyze.js';
import type { SpreadGroup } from '../analysis/topologySpread.js';
import { nodeAdmitsPod } from '../model/admission.js';
import { MATCH_EVERYTHING } from '../model/labels.js';
import { matchesNodeSelectorTerm } from '../model/nodeAffinity.js';
import { computeAllowances } from '../model/pdb.js';
import { skewTuple, type SkewTuple } from '../model/spread.js';
import { tolerationsText } from '../model/taints.js';
import type { NodeInfo, PodInfo, QosClass } from '../model/types.js';
import { volumeKey, volumesReachable, volumeText } from '../model/volumes.js';
import { resolvePriorityThreshold } from '../policy/parse.js';
import type { PolicySpec } from '../policy/types.js';
import { ClusterState, type GroupState, type Placed } from '../scheduling/clusterState.js';
import { placeReplacement, placementCheck } from '../scheduling/placement.js';
import { lifecycleReason } from '../model/lifecycleTaints.js';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../scheduling/profile.js';
import { configOf, STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';
import type { MoveContext, RuleStrategy, SkewStrategy, ViolationRecord } from '../strategies/types.js';
import { DisruptionBudgets, EvictionLimits, workloadKey } from './budget.js';
import { ownerPodCounter, protectionReason, type EvictabilityContext } from './evictability.js';
import { pdbsForPod } from '../model/pdb.js';
import type { HousekeepingPlanner } from './housekeeping.js';
import type { Move } from './move.js';
import type { Strategy } from '../model/plan.js';

export interface PlanOptions {
  /** Workloads (`namespace/Kind/name`) the operator holds back this cycle, with the reason (cooldown, pacing). */
  readonly heldWorkloads?: ReadonlyMap<string, string>;
  /** The strategies to plan with: the built-in ones unless a caller registered others. */
  readonly strategies?: StrategyRegistry;
  /**
   * False leaves each topology report's `domains` empty. The operator reads skews only (metrics, status), and per-domain
   * counts are most of a plan's report: a hostname spread over 300 nodes makes 300 entries per workload, 300,000 at
   * 10,000 pods, built again by every re-plan (issue 24). Default true: `plan` and `simulate` print them.
   */
  readonly domainCounts?: boolean;
  /** The scheduler configuration replacements are placed by (`--scheduler-config`); v1.26's defaults when absent. */
  readonly schedulerProfile?: SchedulerProfile;
  /**
   * Which landings a move must be right on: every node the scheduler may pick (`everyTie`, the default and the only
   * safe choice), or `targetOnly` — kept for the property test that shows why every tie must be checked.
   */
  readonly landingCheck?: 'everyTie' | 'targetOnly';
}

interface SkipEntry {
  pod: PodInfo;
  readonly strategy: Strategy;
  reason: string;
}

const QOS_RANK: Readonly<Record<QosClass, number>> = { BestEffort: 0, Burstable: 1, Guaranteed: 2 };

/** Eviction order: lower priority first, then BestEffort before Burstable before Guaranteed, then the youngest. */
export function compareCandidates(a: PodInfo, b: PodInfo): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.qos !== b.qos) return QOS_RANK[a.qos] - QOS_RANK[b.qos];
  if (a.createdAt !== b.createdAt) return b.createdAt - a.createdAt;
  // Equal creation times: the later name goes first (a controller's later replica, as the descheduler picks
  // the last pods of a domain's list).
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? 1 : -1;
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/** Where a replacement lands: the node the plan assumes, and the others the scheduler may pick as well. */
interface Landing {
  readonly target: NodeInfo | undefined;
  readonly ties: readonly NodeInfo[];
}

export type Attempt =
  | { readonly ok: true; readonly target: NodeInfo | undefined; readonly ties: readonly NodeInfo[] }
  | { readonly ok: false; readonly reason: string; readonly placement: boolean };

export interface AttemptRules {
  readonly strategy: Strategy;
  /** Why landing on `target` (or one of the nodes it ties with) would not help (undefined: it helps). */
  readonly helps: (
    pod: PodInfo,
    target: NodeInfo | undefined,
    from: NodeInfo,
    ties: readonly NodeInfo[],
  ) => string | undefined;
  /** The target when nodeFit is off: a node where the move helps, ignoring resources and other pods. */
  readonly fallbackTarget: (pod: PodInfo, from: NodeInfo) => NodeInfo | undefined;
  /** Pods above this priority are not evicted for this purpose (the beneficiary's own priority). */
  readonly maxPriority?: number;
  /** nodeFit off: the move is worth making even when no current node can take the replacement. */
  readonly withoutTarget?: boolean;
}

/** The fallback search of a spread group (searchGroup): replacements it may simulate, and moves in a set. */
const SEARCH_BUDGET = 2000;
const SEARCH_DEPTH = 6;

const NO_TIES: readonly NodeInfo[] = Object.freeze([]);

/** Text of a move whose replacement has no node yet (nodeFit off). */
const NO_CAPACITY =
  'no current node can take its replacement, which stays Pending until capacity is added (nodeFit: false)';

export class Planner {
  readonly state: ClusterState;
  readonly moves: Move[] = [];
  /** While completesLater() looks ahead: the limits that only pace the work (see there) are lifted. */
  private lookingAhead = false;
  readonly unrepairable = new Map<string, string>();
  /** Pods refused, one entry per pod and strategy, in the order first refused (the report's order). */
  private readonly skipped: SkipEntry[] = [];
  /**
   * The same entries by pod uid and strategy. Two levels rather than one `uid + strategy` key: a cycle that spends its
   * budget early refuses thousands of pods, and a key string built per refusal was a measurable part of it.
   */
  private readonly skippedByPod = new Map<string, SkipEntry[]>();
  private readonly budgets: DisruptionBudgets;
  readonly limits: EvictionLimits;
  private readonly evictability: EvictabilityContext;
  private readonly strategies: StrategyRegistry;
  /** What the strategies' justifications may ask of the simulation. */
  private readonly moveContext: MoveContext;
  /** The skew strategy acting on each spread group (null: none does), by group id. */
  private readonly groupStrategies = new Map<string, SkewStrategy | null>();
  /** Counts commits; `changedAt` says when a move last changed a group's counts (for retrying held groups). */
  private clock = 0;
  private readonly changedAt = new Map<GroupState, number>();
  private readonly related = new Map<GroupState, readonly GroupState[]>();
  /** Groups whose last greedy step found no candidate the scheduler would place usefully (see searchGroup). */
  private readonly deadEnds = new Set<GroupState>();
  /** The highest priority of each spread group's members, by group id. */
  private readonly memberPriorities = new Map<string, number>();

  constructor(
    readonly analysis: Analysis,
    private readonly spec: PolicySpec,
    private readonly options: PlanOptions,
    /** Pods (uids) whose rule violation is cleared after the spread groups, not before (see planCycle). */
    private readonly postponed: ReadonlySet<string> = new Set(),
  ) {
    const snapshot = analysis.snapshot;
    this.strategies = options.strategies ?? STRATEGIES;
    this.state = new ClusterState(analysis, options.schedulerProfile ?? DEFAULT_PROFILE);
    this.moveContext = {
      nodeFit: spec.eviction.nodeFit,
      fits: (pod, from, scope) => placementCheck(this.state, pod, { pod, node: from }, scope),
    };
    this.budgets = new DisruptionBudgets(snapshot.pdbs, computeAllowances(snapshot));
    this.limits = new EvictionLimits(spec.eviction);
    this.evictability = {
      spec,
      now: snapshot.now,
      priorityThreshold: resolvePriorityThreshold({ name: '', generation: 0, spec }, snapshot.priorityClasses),
      inScope: analysis.inScope,
      podSelector: spec.podSelector ?? MATCH_EVERYTHING,
      ownerPods: ownerPodCounter(snapshot.pods),
      hasBudget: (pod) => pdbsForPod(pod, snapshot.pdbs).length > 0,
    };
  }

  /** The node of a pod that is live in the plan's state (undefined once moved or gone). */
  private readonly liveAt = (pod: PodInfo): NodeInfo | undefined =>
    this.state.isLive(pod) ? this.state.nodeOf(pod) : undefined;

  /** What the housekeeping phase (housekeeping.ts) plans with: this plan's state, gates and moves. */
  housekeeping(): HousekeepingPlanner {
    const { analysis, spec, strategies, state, budgets, limits, evictability, moves } = this;
    const skip = (pod: PodInfo, strategy: Strategy, reason: string): void => this.skip(pod, strategy, reason);
    return {
      analysis,
      spec,
      strategies,
      state,
      budgets,
      limits,
      evictability,
      moves,
      skip,
      held: this.options.heldWorkloads,
    };
  }

  skippedList(): Array<{ pod: PodInfo; strategy: Strategy; reason: string }> {
    const moved = new Set(this.moves.map((m) => m.pod.uid));
    return this.skipped.filter((s) => !moved.has(s.pod.uid));
  }

  skip(pod: PodInfo, strategy: Strategy, reason: string): void {
    this.recordSkip(pod, strategy, reason, false);
  }

  /** Adds the pod's entry for the strategy; an existing one keeps its place and is replaced only with `replace`. */
  private recordSkip(pod: PodInfo, strategy: Strategy, reason: string, replace: boolean): void {
    const ofPod = this.skippedByPod.get(pod.uid);
    const known = ofPod?.find((e) => e.strategy === strategy);
    if (known === undefined) {
      const entry: SkipEntry = { pod, strategy, reason };
      if (ofPod === undefined) this.skippedByPod.set(pod.uid, [entry]);
      else ofPod.push(entry);
      this.skipped.push(entry);
    } else if (replace) {
      known.pod = pod;
      known.reason = reason;
    }
  }

  /** Checks every rule for evicting `pod` and simulates its replacement; does not change the state. */
  attempt(pod: PodInfo, rules: AttemptRules): Attempt {
    const refuse = (reason: string, placement = false): Attempt => ({ ok: false, reason, placement });
    const from = this.state.nodeOf(pod);
    if (!from || this.state.isRemoved(pod)) return refuse('pod is already planned for eviction');
    const held = this.options.heldWorkloads?.get(workloadKey(pod));
    if (held !== undefined) return refuse(held);
    const protectedBy = protectionReason(pod, this.evictability);
    if (protectedBy !== undefined) return refuse(protectedBy);
    if (rules.maxPriority !== undefined && pod.priority > rules.maxPriority) {
      return refuse(
        `priority ${pod.priority} is higher than that of the pod it would make room for (${rules.maxPriority})`,
      );
    }
    const budget = this.budgets.refusal(pod, this.lookingAhead);
    if (budget !== undefined) return refuse(budget);
    const limit = this.limits.exceeded(pod, this.lookingAhead);
    if (limit !== undefined) return refuse(limit);
    const evicted: Placed = { pod, node: from };
    // A pod held by a zonal volume can only come back where the volume is: when that is what keeps it, say so first.
    const placementRefusal = (reason: string): Attempt => {
      const volume = this.limitingVolume(pod);
      return refuse(volume === undefined ? reason : `${volume}; ${reason}`, true);
    };
    let target: NodeInfo | undefined;
    let ties: readonly NodeInfo[] = NO_TIES;
    if (this.spec.eviction.nodeFit) {
      const placement = placeReplacement(this.state, pod, evicted);
      if (!placement.node) return placementRefusal(placement.reason ?? 'no node can take a replacement');
      target = placement.node;
      ties = placement.ties;
    } else {
      target = rules.fallbackTarget(pod, from);
      // The descheduler's nodeFit off: a broken rule is cleared even when the replacement must wait for capacity
      // to be added (an autoscaler provisions for Pending pods); a volume that no new node can reach is no such case.
      const volume = pod.volumeTopology[0];
      if (!target && rules.withoutTarget && volume !== undefined) {
        return refuse(`${volumeText(pod, volume)}; no node there where the replacement would help`, true);
      }
      if (!target && !rules.withoutTarget) return placementRefusal('no node where the replacement would help');
    }
    // A node in its lifecycle's hands (cordoned, not ready, being removed) is never where a move is meant to land.
    const leaving = [...(target === undefined ? [] : [target]), ...ties]
      .map(lifecycleReason)
      .find((r) => r !== undefined);
    if (leaving !== undefined) return placementRefusal(`${leaving}: never a landing target`);
    const unhelpful = target === undefined ? undefined : rules.helps(pod, target, from, ties);
    if (unhelpful !== undefined) return placementRefusal(unhelpful);
    const dependents = this.state.affinityDependents(pod, from);
    if (dependents.length > 0) {
      const d = dependents[0]!;
      return refuse(`the required pod affinity of ${d.namespace}/${d.name} depends on this pod`);
    }
    const worsenedHardGroup = this.hardGroupCheck(pod, from);
    const worsened = worsenedHardGroup(target);
    if (worsened !== undefined) return placementRefusal(worsened);
    // The scheduler picks at random among the top-scored nodes: the move must be right whichever it picks.
    const wrong = this.wrongLanding(pod, from, target, ties, rules, worsenedHardGroup);
    if (wrong !== undefined) return placementRefusal(wrong);
    return { ok: true, target, ties };
  }

  /**
   * Why the replacement landing on `target` or on one of its `ties` would not do (undefined: every one does): it
   * must help as the rules say, push no hard spread group above max(its skew now, its maxSkew), and still pass the
   * inter-pod filters once the evicted pod is gone (while it terminates, it can satisfy its own replacement's
   * required affinity in a domain that is left without a partner when it goes).
   */
  private wrongLanding(
    pod: PodInfo,
    from: NodeInfo,
    target: NodeInfo | undefined,
    ties: readonly NodeInfo[],
    rules: AttemptRules,
    worsenedHardGroup: (node: NodeInfo | undefined) => string | undefined,
  ): string | undefined {
    const landings =
      target === undefined ? [undefined] : this.options.landingCheck === 'targetOnly' ? [target] : [target, ...ties];
    const afterGone =
      target === undefined ? undefined : placementCheck(this.state, pod, { pod, node: from }, 'interPod');
    for (const node of landings) {
      const why =
        (node === undefined ? undefined : rules.helps(pod, node, from, NO_TIES)) ??
        worsenedHardGroup(node) ??
        (node !== undefined && afterGone !== undefined && !afterGone(node)
          ? 'its inter-pod affinity would not hold there once the evicted pod is gone'
          : undefined);
      if (why === undefined) continue;
      return node === target ? why : `the scheduler may also pick ${node!.name} (tied top score), where ${why}`;
    }
    return undefined;
  }

  /** The pod's first volume that rules out a node the pod's spec would admit, as text; undefined if none does. */
  private limitingVolume(pod: PodInfo): string | undefined {
    for (const v of pod.volumeTopology) {
      const limits = this.state.nodeList.some(
        (node) => nodeAdmitsPod(pod, node) && !v.terms.some((t) => matchesNodeSelectorTerm(t, node)),
      );
      if (limits) return volumeText(pod, v);
    }
    return undefined;
  }

  /**
   * Finds, for a landing of `pod` evicted from `from`, a hard spread group the move would push above max(its skew now,
   * its maxSkew), or a soft (ScheduleAnyway) one the policy acts on: a constraint the policy considers must never end
   * worse than it started (issue 29: a move for another group took a soft zone skew from 2 to 4). Built once per attempt, while the state stands still: the groups that count the pod, their limits,
   * and the skew per landing domain, since a placement's tied nodes (hundreds of them at 150,000 pods) share a few.
   */
  private hardGroupCheck(pod: PodInfo, from: NodeInfo): (target: NodeInfo | undefined) => string | undefined {
    const checks: Array<{ g: GroupState; limit: number; after: Map<string | undefined, number> }> = [];
    for (const g of this.state.groupsSelecting(pod.namespace, pod.labels)) {
      const c = g.group.constraint;
      if (c.whenUnsatisfiable !== 'DoNotSchedule' && this.skewStrategyOf(g.group) === undefined) continue;
      checks.push({ g, limit: Math.max(skewTuple(g.counts, c.minDomains)[0], c.maxSkew), after: new Map() });
    }
    return (target) => {
      for (const { g, limit, after } of checks) {
        // The skew after the move depends on the landing's domain only (the group selects the pod).
        const domain = target === undefined ? undefined : g.group.domainsByNode.get(target.name);
        let skew = after.get(domain);
        if (skew === undefined) {
          skew = this.state.tupleAfter(g, pod, from, target)[0];
          after.set(domain, skew);
        }
        if (skew > limit) {
          const c = g.group.constraint;
          const soft = c.whenUnsatisfiable === 'DoNotSchedule' ? '' : ' (ScheduleAnyway)';
          return `the move would raise the skew of ${c.topologyKey} spread${soft} (${g.group.workloads.join(', ')}) to ${skew}`;
        }
      }
      return undefined;
    };
  }

  commit(pod: PodInfo, landing: Landing, strategy: Strategy, reason: string, spreadKey?: string): void {
    const { target, ties } = landing;
    this.place({ pod, from: this.state.nodeOf(pod)!, target, ties, strategy, reason, spreadKey });
    this.clock++;
    for (const g of this.state.groupsSelecting(pod.namespace, pod.labels)) this.changedAt.set(g, this.clock);
  }

  /** Makes the move in the plan's state, without telling the groups it changes (see commit). */
  private place(move: Move): void {
    this.budgets.consume(move.pod);
    this.limits.consume(move.pod);
    this.state.commit(move.pod, move.target);
    this.moves.push(move);
  }

  /**
   * Drops the moves planned after `mark` (a length of `moves`), last first, and gives back what they spent.
   * Each dropped pod is reported with `why`: a set of moves is kept only if it achieves something as a whole.
   */
  rollback(mark: number, why: string): void {
    for (const m of this.moves.slice(mark)) {
      this.recordSkip(m.pod, m.strategy, why, true);
    }
    this.takeBack(mark);
  }

  // ---- violations -------------------------------------------------------------------------------------------------

  /** The rule strategy that found a violation. */
  private ruleOf(v: ViolationRecord): RuleStrategy {
    const strategy = this.strategies.byName(v.strategy);
    if (strategy?.kind !== 'rule')
      throw new Error(`violation of ${v.strategy}, which is not a registered rule strategy`);
    return strategy;
  }

  private actsOn(v: ViolationRecord): boolean {
    if (!v.soft) return true;
    const rule = this.ruleOf(v);
    return rule.actsOnSoft(configOf(this.spec.strategies, rule));
  }

  /** Whether the violation still holds in the current plan state (an earlier move may have cleared it). */
  private stillHolds(v: ViolationRecord): boolean {
    if (this.state.isRemoved(v.pod)) return false;
    return v.peer === undefined || !this.state.isRemoved(v.peer);
  }

  /**
   * For one candidate pod of a violation: why landing on a target would not clear it (undefined: it would).
   * Built once per candidate, so checking many targets (nodeFit off) does not rebuild the placement context.
   */
  private clearance(
    v: ViolationRecord,
    pod: PodInfo,
    from: NodeInfo,
  ): (target: NodeInfo | undefined) => string | undefined {
    const clears = this.ruleOf(v).clears(v, pod, from, this.moveContext);
    return (target) => {
      if (!target) return 'no target node';
      return clears(target) ? undefined : 'the replacement would land where the rule is still broken';
    };
  }

  /** `late`: only the postponed violations (after the spread groups); otherwise all but those. */
  fixViolations(late = false): void {
    const rank = new Map(this.strategies.rules.map((s, i) => [s.name, i]));
    const order = (v: ViolationRecord): number => rank.get(v.strategy) ?? -1;
    const violations = this.analysis.violations
      .filter((v) => this.actsOn(v))
      .sort((a, b) => Number(a.soft) - Number(b.soft) || order(a) - order(b));
    const degree = conflictDegrees(violations);
    const byOwner = conflictsByOwner(violations);
    const owners = new Set<string>();
    for (const v of violations) {
      if (!this.stillHolds(v)) continue;
      if (late !== (v.ruleOwner === undefined && this.postponed.has(v.pod.uid))) continue;
      if (this.limits.cycleFull) {
        this.skip(v.pod, v.strategy, `${this.limits.exceeded(v.pod) ?? 'limit reached'}; left for the next cycle`);
        continue;
      }
      if (v.ruleOwner !== undefined) {
        // One broken rule with peers (anti-affinity), whatever the number of pods it matches, is cleared as a whole.
        const key = ownerKey(v.strategy, v.ruleOwner);
        if (owners.has(key)) continue;
        owners.add(key);
        this.clearConflict(v.strategy, v.ruleOwner, byOwner.get(key) ?? [], degree);
        continue;
      }
      const result = this.attemptClearing(v, v.pod, v.pod);
      if (result.ok) this.commit(v.pod, result, v.strategy, this.withCapacityNote(v.reason, result.target));
      else this.skip(v.pod, v.strategy, result.reason);
    }
  }

  /** Tries to evict `pod` so that the violation `v` (whose rule belongs to `owner`) is cleared where it lands. */
  private attemptClearing(v: ViolationRecord, pod: PodInfo, owner: PodInfo): Attempt {
    const from = this.state.nodeOf(pod);
    if (!from) return { ok: false, reason: 'pod is already planned for eviction', placement: false };
    const clears = this.clearance(v, pod, from);
    return this.attempt(pod, {
      strategy: v.strategy,
      helps: (_p, target) => clears(target),
      fallbackTarget: () => this.ruleTarget(pod, from, clears),
      // Moving the pod whose rule is broken needs no cap; moving another pod only helps the rule's owner, so it
      // must not be of higher priority than the owner.
      maxPriority: pod === owner ? undefined : owner.priority,
      withoutTarget: !v.soft && this.ruleOf(v).withoutTarget,
    });
  }

  private withCapacityNote(reason: string, target: NodeInfo | undefined): string {
    return target === undefined ? `${reason}; ${NO_CAPACITY}` : reason;
  }

  /**
   * `owner`'s rule (required anti-affinity) matches pods in its domain: either the owner moves, or every one of
   * those pods does. The cheaper set that can move entirely is planned; a partial set would leave the rule broken,
   * so a set with a pod that cannot move is dropped whole.
   */
  private clearConflict(
    strategy: Strategy,
    owner: PodInfo,
    conflicts: readonly ViolationRecord[],
    degree: Map<string, number>,
  ): void {
    if (!this.state.isLive(owner)) return;
    const peers: PodInfo[] = [];
    for (const v of conflicts) {
      const other = v.pod === owner ? v.peer : v.pod;
      if (other !== undefined && this.state.isLive(other) && !peers.includes(other)) peers.push(other);
    }
    if (peers.length === 0) return;
    const options = [[owner], peers.sort(compareCandidates)];
    // Fewest evictions first; between equal sets, the pod in the most conflicts (one eviction may clear several),
    // then the eviction order.
    const weight = (set: readonly PodInfo[]): number => Math.max(...set.map((p) => degree.get(p.uid) ?? 0));
    options.sort((a, b) => a.length - b.length || weight(b) - weight(a) || compareCandidates(a[0]!, b[0]!));
    for (const set of options) {
      const mark = this.moves.length;
      let refused: { pod: PodInfo; reason: string } | undefined;
      for (const pod of set) {
        const v = conflicts.find((c) => c.pod === pod) ?? conflicts[0]!;
        const result = this.attemptClearing(v, pod, owner);
        if (!result.ok) {
          refused = { pod, reason: result.reason };
          break;
        }
        this.commit(pod, result, strategy, this.withCapacityNote(reasonFor(owner, pod, conflicts), result.target));
      }
      if (refused === undefined) return;
      const why =
        `evicting it alone would not clear the anti-affinity of ${owner.namespace}/${owner.name}: ` +
        `${refused.pod.namespace}/${refused.pod.name} must move too and cannot (${refused.reason})`;
      this.rollback(mark, why);
      this.skip(refused.pod, strategy, refused.reason);
      for (const pod of set) if (pod !== refused.pod) this.skip(pod, strategy, why);
    }
  }

  /** nodeFit off: the least-loaded node (by pod count) where the violated rule holds, resources ignored. */
  private ruleTarget(
    pod: PodInfo,
    from: NodeInfo,
    clears: (target: NodeInfo) => string | undefined,
  ): NodeInfo | undefined {
    let best: NodeInfo | undefined;
    for (const node of this.state.nodeList) {
      if (node === from || !nodeAdmitsPod(pod, node) || !volumesReachable(pod, node)) continue;
      if (clears(node) !== undefined) continue;
      if (!best || this.state.usageOf(node.name).pods < this.state.usageOf(best.name).pods) best = node;
    }
    return best;
  }

  /**
   * The pods moved to clear a rule violation of their own (no peers) that a spread group left at a dead end counts:
   * their replacement, placed before the group's moves, may be what holds the group (zone a: a1 a2 a3, zone b: b1 b2
   * b3 without disk=ssd; pods a1:4 a2:1 b3:1 needing ssd, spread by zone and hostname: the b3 pod cleared first
   * lands on b1, and once a1→b2 is made, the empty a3 holds the hostname minimum at 0 while zone a is full).
   */
  postponable(): Set<string> {
    const stuck = [...this.deadEnds].filter((g) => this.excessOf(g) > 0);
    const out = new Set<string>();
    if (stuck.length === 0 || this.limits.cycleFull) return out;
    const own = new Set(this.analysis.violations.filter((v) => v.ruleOwner === undefined).map((v) => v.pod.uid));
    for (const m of this.moves) {
      if (m.spreadKey !== undefined || !own.has(m.pod.uid)) continue;
      const groups = this.state.groupsSelecting(m.pod.namespace, m.pod.labels);
      if (stuck.some((g) => groups.includes(g))) out.add(m.pod.uid);
    }
    return out;
  }

  /** What a plan leaves undone: acted-on violations still holding, acted-on groups above maxSkew, their excess. */
  leftUndone(): [number, number, number] {
    const violations = this.analysis.violations.filter((v) => this.actsOn(v) && this.stillHolds(v)).length;
    let groups = 0;
    let excess = 0;
    for (const g of this.state.groups()) {
      if (this.skewStrategyOf(g.group) === undefined) continue;
      const e = this.excessOf(g);
      if (e > 0) [groups, excess] = [groups + 1, excess + e];
    }
    return [violations, groups, excess];
  }

  /** How far the group's skew is above its maxSkew (0 within it). */
  private excessOf(g: GroupState): number {
    return Math.max(0, skewTuple(g.counts, g.group.constraint.minDomains)[0] - g.group.constraint.maxSkew);
  }

  // ---- topology spread --------------------------------------------------------------------------------------------

  /** The skew strategy that acts on a spread group, if one does (memoised: it depends on the spec only). */
  private skewStrategyOf(g: SpreadGroup): SkewStrategy | undefined {
    let found = this.groupStrategies.get(g.id);
    if (found === undefined) {
      found = this.strategies.skew.find((s) => s.actsOn(g, configOf(this.spec.strategies, s))) ?? null;
      this.groupStrategies.set(g.id, found);
    }
    return found ?? undefined;
  }

  balanceGroups(): void {
    const groups = [...this.state.groups()]
      .filter((g) => this.skewStrategyOf(g.group) !== undefined && g.group.skew > g.group.constraint.maxSkew)
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
        this.balanceGroup(g, this.skewStrategyOf(g.group)!);
        triedAt.set(g, this.clock);
      }
      if (this.limits.cycleFull) return;
      pending = pending.filter(
        (g) =>
          this.excessOf(g) > 0 && this.relatedGroups(g).some((r) => (this.changedAt.get(r) ?? 0) > triedAt.get(g)!),
      );
    }
    for (const g of groups) {
      if (this.limits.cycleFull) return;
      if (!this.deadEnds.has(g)) continue;
      if (this.excessOf(g) > 0) {
        this.searchGroup(g, this.skewStrategyOf(g.group)!);
      }
    }
  }

  /** The groups that count one of the pods this group counts (itself included): those whose state can hold it. */
  private relatedGroups(g: GroupState): readonly GroupState[] {
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
      for (const other of this.state.groupsSelecting(pod.namespace, pod.labels)) out.add(other);
    }
    return out;
  }

  private balanceGroup(g: GroupState, s: SkewStrategy): void {
    const c = g.group.constraint;
    if (this.limits.cycleFull) {
      this.deferred(g, s);
      return;
    }
    // An eviction is worth its disruption if it lowers the skew, or if it belongs to a set of this plan's moves that
    // brings the skew to maxSkew. A step may only lower the number of domains at the maximum or minimum: such a run
    // is kept while the group reaches maxSkew; otherwise the first run that needed several moves is dropped (with
    // every move after it) and the group is planned again with steps that each lower the skew.
    const alone = `evicting it would not lower the skew of ${c.topologyKey} spread (${g.group.workloads.join(', ')}) by itself`;
    let strict = false;
    let mark = this.moves.length;
    let lowest = skewTuple(g.counts, c.minDomains)[0];
    let firstSet: number | undefined;
    for (;;) {
      const skew = skewTuple(g.counts, c.minDomains)[0];
      if (skew < lowest) {
        if (this.moves.length - mark > 1) firstSet ??= mark;
        [mark, lowest] = [this.moves.length, skew];
      }
      if (skew <= c.maxSkew) return;
      const step = this.bestStep(g, s, strict);
      if (step.kind === 'move') {
        this.commit(step.pod, step, s.name, step.reason, c.topologyKey);
        continue;
      }
      const why = step.lastReason === undefined ? '' : ` (${step.lastReason})`;
      if (this.moves.length > mark && this.completesLater(g, s, strict)) return;
      if (this.moves.length > mark) {
        this.rollback(mark, `${alone}, and the evictions that would lower it with it cannot all be made${why}`);
      }
      if (firstSet !== undefined) {
        this.rollback(firstSet, `${alone}, and the set it belongs to does not bring the skew to maxSkew${why}`);
        [strict, firstSet, mark, lowest] = [true, undefined, this.moves.length, skewTuple(g.counts, c.minDomains)[0]];
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
    const mark = this.moves.length;
    this.lookingAhead = true;
    try {
      for (;;) {
        if (skewTuple(g.counts, c.minDomains)[0] <= c.maxSkew) return true;
        const step = this.bestStep(g, s, strict);
        if (step.kind !== 'move') return false;
        this.commit(step.pod, step, s.name, step.reason, c.topologyKey);
      }
    } finally {
      this.lookingAhead = false;
      this.takeBack(mark);
    }
  }

  /**
   * Greedy steps, each from a fullest domain, can reach a dead end that another set of moves avoids: zones a/b/c
   * (c with two nodes), zone maxSkew 2 and hostname maxSkew 1 with minDomains 4, pods b1:6 c1:3. Greedy moves b1→a1,
   * then no node passes both filters; moving c1→c2 first lifts the hostname minimum and opens the way (four
   * evictions). So for a group greedy left at such a dead end, once every group has had its turn (a group held by
   * another's counts is not searched for while greedy may still free it), the fewest further moves that bring it to
   * maxSkew are searched for, by iterative deepening over every pod the group counts (replicas alike where the
   * scheduler looks tried once), each one checked by attempt() as any step is, and kept only if it does not raise
   * the group's skew. Among the smallest sets, the one that leaves the related acted-on groups the least skew above
   * their maxSkew is planned. The search stops after SEARCH_BUDGET simulated replacements, so a large cluster does
   * not pay for it; without a set found, nothing is added.
   */
  private searchGroup(g: GroupState, s: SkewStrategy): boolean {
    if (this.limits.cycleFull) return false;
    const c = g.group.constraint;
    const start = this.moves.length;
    const rules = (before: SkewTuple): AttemptRules => ({
      strategy: s.name,
      helps: (pod, target, from) =>
        target !== from && this.state.tupleAfter(g, pod, from, target)[0] <= before[0]
          ? undefined
          : 'the replacement would raise the skew',
      fallbackTarget: (pod) => this.emptiestNode(g, pod),
      maxPriority: this.memberPriority(g.group),
    });
    let budget = SEARCH_BUDGET;
    let found: { moves: Move[]; excess: number } | undefined;
    // A set of moves makes the same state whatever their order: a state is searched once per depth left.
    const seen = new Map<string, number>();
    const descend = (left: number): void => {
      const before = skewTuple(g.counts, c.minDomains);
      if (before[0] <= c.maxSkew) {
        const excess = this.relatedExcess(g);
        if (found === undefined || excess < found.excess) found = { moves: this.moves.slice(start), excess };
        return;
      }
      // A move takes one pod from a domain and adds at most one to another: the skew falls by 2 at most.
      if (2 * left < before[0] - c.maxSkew) return;
      const key = this.moves
        .slice(start)
        .map((m) => `${replicaKey(m.pod)}\u0000${m.target?.name ?? ''}`)
        .sort()
        .join('\u0001');
      if ((seen.get(key) ?? -1) >= left) return;
      seen.set(key, left);
      const tried = new Set<string>();
      for (const pod of g.group.matching) {
        const node = this.liveAt(pod);
        if (node === undefined || !g.group.domainsByNode.has(node.name)) continue;
        const wk = replicaKey(pod);
        if (tried.has(wk)) continue;
        if (budget-- <= 0) return;
        const result = this.attempt(pod, rules(before));
        if (!result.ok) {
          if (result.placement) tried.add(wk);
          continue;
        }
        tried.add(wk);
        this.place({
          pod,
          from: node,
          target: result.target,
          ties: result.ties,
          strategy: s.name,
          reason: '',
          spreadKey: c.topologyKey,
        });
        descend(left - 1);
        this.takeBack(this.moves.length - 1);
      }
    };
    for (let depth = 1; depth <= SEARCH_DEPTH && found === undefined && budget > 0; depth++) {
      seen.clear();
      descend(depth);
    }
    if (found === undefined) return false;
    for (const m of found.moves) {
      this.commit(m.pod, m, s.name, s.reason(g.group, g.counts, m.from, m.target), c.topologyKey);
    }
    this.unrepairable.delete(g.group.id);
    return true;
  }

  /** How much skew above their maxSkew the acted-on groups related to `g` (itself excluded) have, summed. */
  private relatedExcess(g: GroupState): number {
    let excess = 0;
    for (const other of this.relatedGroups(g)) {
      if (other !== g && this.skewStrategyOf(other.group) !== undefined) excess += this.excessOf(other);
    }
    return excess;
  }

  /** Drops the moves after `mark` without reporting them (see rollback for moves that are refused). */
  takeBack(mark: number): void {
    while (this.moves.length > mark) {
      const m = this.moves.pop()!;
      this.state.uncommit(m.pod, m.from, m.target);
      this.budgets.release(m.pod);
      this.limits.release(m.pod);
    }
  }

  /** The cycle's eviction budget is spent: say so once for the group instead of trying every pod. */
  private deferred(g: GroupState, s: SkewStrategy): void {
    const first = g.group.members.find((p) => this.state.isLive(p));
    const limit = first && this.limits.exceeded(first);
    if (first && limit) this.skip(first, s.name, `${limit}; the group's skew is left for the next cycle`);
  }

  /** The best next move of the group; `strict`: only a move that lowers the skew itself. */
  private bestStep(
    g: GroupState,
    s: SkewStrategy,
    strict: boolean,
  ):
    | { kind: 'move'; pod: PodInfo; target: NodeInfo | undefined; ties: readonly NodeInfo[]; reason: string }
    | { kind: 'none'; unrepairable: string | undefined; lastReason: string | undefined } {
    const before = skewTuple(g.counts, g.group.constraint.minDomains);
    const candidates = s.candidates(g.group, g.counts, this.liveAt).sort(compareCandidates);
    const rules: AttemptRules = {
      strategy: s.name,
      helps: (pod, target, from) =>
        s.helps(this.state.tupleAfter(g, pod, from, target), before, strict)
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
      const result = this.attempt(pod, rules);
      if (!result.ok) {
        this.skip(pod, s.name, result.reason);
        if (result.placement) refusedWorkloads.add(wk);
        placementOnly &&= result.placement;
        lastReason = result.reason;
        continue;
      }
      const benefit = this.benefit(g, pod, result.target);
      found.push({ pod, target: result.target, ties: result.ties, ...benefit });
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
    const reason = s.reason(g.group, g.counts, this.state.nodeOf(best.pod)!, best.target);
    return { kind: 'move', pod: best.pod, target: best.target, ties: best.ties, reason };
  }

  /**
   * How many other acted-on groups above their maxSkew select one of the candidates: the most other groups one move
   * could improve. A candidate of another workload may serve its own workload's spread too, so the search does not
   * stop at a candidate that improves all of its own groups while another could improve more.
   */
  private otherSkewedGroups(g: GroupState, candidates: readonly PodInfo[]): number {
    let n = 0;
    for (const other of this.groupsCounting(candidates)) {
      if (other !== g && this.skewStrategyOf(other.group) !== undefined && this.excessOf(other) > 0) n++;
    }
    return n;
  }

  /** The highest priority among the pods that carry the group's constraint (memoised: a plan never changes it). */
  private memberPriority(g: SpreadGroup): number {
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
    const from = this.state.nodeOf(pod)!;
    let improved = 0;
    let excess = 0;
    for (const other of this.state.groupsSelecting(pod.namespace, pod.labels)) {
      const s = other === g ? undefined : this.skewStrategyOf(other.group);
      if (s === undefined) continue;
      const c = other.group.constraint;
      const after = this.state.tupleAfter(other, pod, from, target);
      // A group within its maxSkew is not one to improve, but a move that pushes it above is one more to repair.
      excess += Math.max(0, after[0] - c.maxSkew);
      const before = skewTuple(other.counts, c.minDomains);
      if (before[0] > c.maxSkew && s.helps(after, before, false)) improved++;
    }
    return { improved, excess };
  }

  /** nodeFit off: an eligible node in the emptiest domain, ignoring resources and other filters. */
  private emptiestNode(g: GroupState, pod: PodInfo): NodeInfo | undefined {
    let best: NodeInfo | undefined;
    let bestCount = Infinity;
    for (const [nodeName, domain] of g.group.domainsByNode) {
      const count = g.counts.get(domain)!;
      const node = this.state.nodes.get(nodeName)!;
      if (count < bestCount && nodeAdmitsPod(pod, node) && volumesReachable(pod, node)) {
        best = node;
        bestCount = count;
      }
    }
    return best;
  }
}

/**
 * Replicas of one workload on one node fare alike where the scheduler looks unless their spec or volumes differ:
 * pods with the same key are interchangeable as candidates of a move.
 */
function replicaKey(pod: PodInfo): string {
  return `${workloadKey(pod)}\u0000${pod.nodeName}\u0000${pod.requiredNodeAffinity.text}\u0000${tolerationsText(pod.tolerations)}\u0000${volumeKey(pod)}`;
}

function ownerKey(strategy: string, owner: PodInfo): string {
  return `${strategy}\u0000${owner.uid}`;
}

/** Violations of rules with peers, by the strategy and pod whose rule they break (both sides of each pair). */
function conflictsByOwner(violations: readonly ViolationRecord[]): Map<string, ViolationRecord[]> {
  const out = new Map<string, ViolationRecord[]>();
  for (const v of violations) {
    if (v.ruleOwner === undefined) continue;
    const key = ownerKey(v.strategy, v.ruleOwner);
    const list = out.get(key);
    if (list) list.push(v);
    else out.set(key, [v]);
  }
  return out;
}

/** The conflict as seen from the pod being evicted (for a pod matched by another's rule, its own side). */
function reasonFor(owner: PodInfo, pod: PodInfo, conflicts: readonly ViolationRecord[]): string {
  const own = conflicts.find((o) => o.pod === pod);
  return own?.reason ?? `conflicts with ${owner.namespace}/${owner.name}'s required anti-affinity`;
}

/** How many conflicts (violated rules with peers) each pod is part of. */
function conflictDegrees(violations: readonly ViolationRecord[]): Map<string, number> {
  const degree = new Map<string, number>();
  const seen = new Set<string>();
  for (const v of violations) {
    if (v.peer === undefined) continue;
    const [a, b] = [v.pod.uid, v.peer.uid].sort();
    const pair = `${a}\u0000${b}`;
    if (seen.has(pair)) continue;
    seen.add(pair);
    degree.set(v.pod.uid, (degree.get(v.pod.uid) ?? 0) + 1);
    degree.set(v.peer.uid, (degree.get(v.peer.uid) ?? 0) + 1);
  }
  return degree;
}

/** Lexicographic order of what two plans leave undone, then their evictions. */
