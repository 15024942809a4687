// The transaction of a plan: a move is attempted (every gate checked and its replacement simulated, the state left
// as it was), committed (the state, the budgets and the limits spent, the groups it changes stamped) or taken back
// (rolled back with a reason each dropped pod is reported with, or taken back silently when it was only looked ahead).
// Rule fixing, spread balancing and the load and housekeeping phases all move pods through this one class, so a
// gate or a landing check is written once and a set of moves that cannot be completed is dropped whole.
import type { Analysis } from '../analysis/analyze.js';
import type { SpreadGroup } from '../analysis/topologySpread.js';
import { nodeAdmitsPod } from '../model/admission.js';
import { MATCH_EVERYTHING } from '../model/labels.js';
import { lifecycleReason } from '../model/lifecycleTaints.js';
import { matchesNodeSelectorTerm } from '../model/nodeAffinity.js';
import { computeAllowances, pdbsForPod } from '../model/pdb.js';
import { skewTuple } from '../model/spread.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import { volumeText } from '../model/volumes.js';
import { resolvePriorityThreshold } from '../policy/parse.js';
import type { PolicySpec } from '../policy/types.js';
import { ClusterState, type GroupState, type Placed } from '../scheduling/clusterState.js';
import { deletedAtOnce } from '../scheduling/deletion.js';
import { placeReplacement, placementCheck } from '../scheduling/placement.js';
import { pendingOf } from './pendingMoves.js';
import { DEFAULT_PROFILE, type SchedulerSetting } from '../scheduling/profile.js';
import { configOf, STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';
import type { MoveContext, SkewStrategy } from '../strategies/types.js';
import { DisruptionBudgets, EvictionLimits, workloadKey, type SpentLimits } from './budget.js';
import { ownerPodCounter, protectionReason, type EvictabilityContext } from './evictability.js';
import type { HousekeepingPlanner } from './housekeeping.js';
import type { Move } from './move.js';
import { SkipLedger } from './skipLedger.js';
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
  readonly schedulerProfile?: SchedulerSetting;
  /**
   * Which landings a move must be right on: every node the scheduler may pick (`everyTie`, the default and the only
   * safe choice), or `targetOnly` — kept for the property test that shows why every tie must be checked.
   */
  readonly landingCheck?: 'everyTie' | 'targetOnly';
  /**
   * What the run this plan belongs to has already spent of maxPerCycle, maxPerNode and maxPerNamespace (the executor's
   * re-plans); a plan of its own starts from nothing.
   */
  readonly spent?: SpentLimits;
  /**
   * The operator's runs, which send the evictions of a plan without waiting for each replacement to land: each move's
   * replacement is pending for the moves planned after it (scheduling/pending.ts), on any of its possible landings or
   * not landed yet, so their predictions hold whichever node the scheduler picks and in whatever order. `plan` and `simulate` assume each lands on its target.
   */
  readonly pendingLandings?: boolean;
  /**
   * Replacements of evictions the run has sent (or is about to send) whose landing is not known yet: the evicted pod
   * and the nodes it may land on. Unrelated ones bound the predictions (pending.ts); a pod related to one waits.
   */
  readonly inFlight?: readonly InFlightLanding[];
  /**
   * The most evictions this plan may hold: a paced run plans a step at a time (what the client budget sends before the
   * next plan), since every prediction of a larger plan is worked out against all the replacements before it.
   */
  readonly maxMoves?: number;
}

/** An eviction's replacement the run is waiting to see land. */
export interface InFlightLanding {
  readonly pod: PodInfo;
  readonly nodes: readonly string[];
}

/** Where a replacement lands: the node the plan assumes, and the others the scheduler may pick as well. */
export interface Landing {
  readonly target: NodeInfo | undefined;
  readonly ties: readonly NodeInfo[];
  /** PlacementResult.slack. */
  readonly slack?: number;
}

export type Attempt =
  | {
      readonly ok: true;
      readonly target: NodeInfo | undefined;
      readonly ties: readonly NodeInfo[];
      readonly slack?: number;
    }
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

const NO_TIES: readonly NodeInfo[] = Object.freeze([]);

export class PlanTransaction {
  readonly state: ClusterState;
  readonly moves: Move[] = [];
  /** While a spread group looks ahead (SpreadBalancer.completesLater): the limits that only pace the work are lifted. */
  lookingAhead = false;
  /** The pods refused (the report's `skipped`). */
  private readonly ledger = new SkipLedger();
  readonly budgets: DisruptionBudgets;
  readonly limits: EvictionLimits;
  readonly evictability: EvictabilityContext;
  readonly strategies: StrategyRegistry;
  /** What the strategies' justifications may ask of the simulation. */
  readonly moveContext: MoveContext;
  /** The skew strategy acting on each spread group (null: none does), by group id. */
  private readonly groupStrategies = new Map<string, SkewStrategy | null>();
  /** Counts commits; `changedAt` says when a move last changed a group's counts (for retrying held groups). */
  private commits = 0;
  readonly changedAt = new Map<GroupState, number>();

  constructor(
    readonly analysis: Analysis,
    readonly spec: PolicySpec,
    readonly options: PlanOptions,
  ) {
    const snapshot = analysis.snapshot;
    this.strategies = options.strategies ?? STRATEGIES;
    this.state = new ClusterState(analysis, options.schedulerProfile ?? DEFAULT_PROFILE);
    for (const f of options.inFlight ?? []) {
      const nodes = f.nodes.flatMap((name) => {
        const i = this.state.nodeIndex.get(name);
        return i === undefined ? [] : [i];
      });
      if (nodes.length > 0) this.state.addPending({ pod: f.pod, nodes, at: undefined });
    }
    this.moveContext = {
      nodeFit: spec.eviction.nodeFit,
      fits: (pod, from, scope) => placementCheck(this.state, pod, { pod, node: from }, scope),
    };
    this.budgets = new DisruptionBudgets(snapshot.pdbs, computeAllowances(snapshot));
    this.limits = new EvictionLimits(spec.eviction, options.spent, options.maxMoves);
    const nodeLabels = new Map(snapshot.nodes.map((n) => [n.name, n.labels]));
    this.evictability = {
      spec,
      now: snapshot.now,
      priorityThreshold: resolvePriorityThreshold({ name: '', generation: 0, spec }, snapshot.priorityClasses),
      inScope: analysis.inScope,
      podSelector: spec.podSelector ?? MATCH_EVERYTHING,
      ownerPods: ownerPodCounter(snapshot.pods),
      hasBudget: (pod) => pdbsForPod(pod, snapshot.pdbs).length > 0,
      nodeLabels: (pod) => (pod.nodeName === undefined ? undefined : nodeLabels.get(pod.nodeName)),
    };
  }

  /** How many moves have been committed (see changedAt). */
  get clock(): number {
    return this.commits;
  }

  /** The node of a pod that is live in the plan's state (undefined once moved or gone). */
  readonly liveAt = (pod: PodInfo): NodeInfo | undefined =>
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
      pendingLandings: this.options.pendingLandings === true,
    };
  }

  skippedList(): Array<{ pod: PodInfo; strategy: Strategy; reason: string }> {
    return this.ledger.list(this.moves);
  }

  skip(pod: PodInfo, strategy: Strategy, reason: string): void {
    this.ledger.record(pod, strategy, reason, false);
  }

  /** Checks every rule for evicting `pod` and simulates its replacement; does not change the state. */
  attempt(pod: PodInfo, rules: AttemptRules): Attempt {
    const refuse = (reason: string, placement = false): Attempt => ({ ok: false, reason, placement });
    const from = this.state.nodeOf(pod);
    if (!from || this.state.isRemoved(pod)) return refuse('pod is already planned for eviction');
    const gated = this.gates(pod, rules);
    if (gated !== undefined) return refuse(gated);
    const evicted: Placed = { pod, node: from };
    // A pod held by a zonal volume can only come back where the volume is: when that is what keeps it, say so first.
    const placementRefusal = (reason: string): Attempt => {
      const volume = this.limitingVolume(pod);
      return refuse(volume === undefined ? reason : `${volume}; ${reason}`, true);
    };
    let target: NodeInfo | undefined;
    let ties: readonly NodeInfo[] = NO_TIES;
    let slack: number | undefined;
    if (this.spec.eviction.nodeFit) {
      const atOnce = deletedAtOnce(pod, this.spec.eviction.gracePeriodSeconds);
      const placement = placeReplacement(this.state, pod, evicted, atOnce);
      if (!placement.node) return placementRefusal(placement.reason ?? 'no node can take a replacement');
      target = placement.node;
      ties = placement.ties;
      slack = placement.slack;
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
    return { ok: true, target, ties, ...(slack === undefined ? {} : { slack }) };
  }

  /** The first gate that refuses evicting `pod` before any simulation: hold, protection, priority, budget, limit. */
  private gates(pod: PodInfo, rules: AttemptRules): string | undefined {
    const held = this.options.heldWorkloads?.get(workloadKey(pod)) ?? this.waitingFor(pod);
    if (held !== undefined) return held;
    const protectedBy = this.protection(pod);
    if (protectedBy !== undefined) return protectedBy;
    if (rules.maxPriority !== undefined && pod.priority > rules.maxPriority) {
      return `priority ${pod.priority} is higher than that of the pod it would make room for (${rules.maxPriority})`;
    }
    return this.budgets.refusal(pod, this.lookingAhead) ?? this.limits.exceeded(pod, this.lookingAhead);
  }

  /**
   * A replacement in flight whose landing changes this pod's prediction beyond its node's resources (the same
   * selectors, inter-pod terms): the pod waits until it has landed and the cache shows where.
   */
  private waitingFor(pod: PodInfo): string | undefined {
    if (this.options.inFlight === undefined || this.options.inFlight.length === 0) return undefined;
    const p = this.state.pending.relatedInFlight(pod);
    if (p === undefined) return undefined;
    return `waits for the replacement of ${p.pod.namespace}/${p.pod.name} to land (where it lands changes this prediction)`;
  }

  /**
   * Why the pod is not to be evicted whatever the move: its protections, or another scheduler placing it by rules
   * kube-rebalancer was not given (never evicted by prediction).
   */
  private protection(pod: PodInfo): string | undefined {
    return protectionReason(pod, this.evictability) ?? this.state.unknownScheduler(pod);
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
      return node === target ? why : `the scheduler may also pick ${node!.name} (a possible landing), where ${why}`;
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
    const { target, ties, slack } = landing;
    const from = this.state.nodeOf(pod)!;
    this.place({ pod, from, target, ties, strategy, reason, spreadKey, ...(slack === undefined ? {} : { slack }) });
    this.commits++;
    for (const g of this.state.groupsSelecting(pod.namespace, pod.labels)) this.changedAt.set(g, this.commits);
  }

  /** Makes the move in the plan's state, without telling the groups it changes (see commit). */
  place(move: Move): void {
    this.budgets.consume(move.pod);
    this.limits.consume(move.pod);
    this.state.commit(move.pod, move.target);
    if (this.pendsLanding(move)) this.state.addPending(pendingOf(this.state, move));
    this.moves.push(move);
  }

  /** Whether the move's replacement is pending for the moves after it (see PlanOptions.pendingLandings). */
  private pendsLanding(move: Move): boolean {
    return this.options.pendingLandings === true && move.target !== undefined;
  }

  /**
   * Drops the moves planned after `mark` (a length of `moves`), last first, and gives back what they spent.
   * Each dropped pod is reported with `why`: a set of moves is kept only if it achieves something as a whole.
   */
  rollback(mark: number, why: string): void {
    for (const m of this.moves.slice(mark)) {
      this.ledger.record(m.pod, m.strategy, why, true);
    }
    this.takeBack(mark);
  }

  /** Drops the moves after `mark` without reporting them (see rollback for moves that are refused). */
  takeBack(mark: number): void {
    while (this.moves.length > mark) {
      const m = this.moves.pop()!;
      if (this.pendsLanding(m)) this.state.withdrawPending(m.pod);
      this.state.uncommit(m.pod, m.from, m.target);
      this.budgets.release(m.pod);
      this.limits.release(m.pod);
    }
  }

  /** The skew strategy that acts on a spread group, if one does (memoised: it depends on the spec only). */
  skewStrategyOf(g: SpreadGroup): SkewStrategy | undefined {
    let found = this.groupStrategies.get(g.id);
    if (found === undefined) {
      found = this.strategies.skew.find((s) => s.actsOn(g, configOf(this.spec.strategies, s))) ?? null;
      this.groupStrategies.set(g.id, found);
    }
    return found ?? undefined;
  }
}
