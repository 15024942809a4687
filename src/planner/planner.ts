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
// The engine in its parts: the ledger of skipped pods (skipLedger.ts), the transaction every move goes through
// (transaction.ts: attempt, commit, roll back), rule fixing (ruleFixing.ts), spread balancing (spreadBalancing.ts)
// and its search for a group at a dead end (spreadSearch.ts). This class puts them together behind the entry points
// the phases use.
//
// This module is the engine; `plan.ts` runs it, then the load and housekeeping phases, which import this module and
// not plan.ts, so the phases and the cycle that calls them form no import circle.
import type { Analysis } from '../analysis/analyze.js';
import type { PolicySpec } from '../policy/types.js';
import type { ClusterState } from '../scheduling/clusterState.js';
import type { EvictionLimits } from './budget.js';
import type { HousekeepingPlanner } from './housekeeping.js';
import type { Move } from './move.js';
import type { PodInfo } from '../model/types.js';
import { PLAN_SEARCH_MOVES, searchFewerMoves } from './planSearch.js';
import { RuleFixer } from './ruleFixing.js';
import { SpreadBalancer } from './spreadBalancing.js';
import type { PlanSteps } from './steps.js';
import { PlanTransaction, type Attempt, type AttemptRules, type Landing, type PlanOptions } from './transaction.js';
import type { Strategy } from '../model/plan.js';

export { compareCandidates } from './candidates.js';
export type { Attempt, AttemptRules, PlanOptions } from './transaction.js';

export class Planner {
  readonly state: ClusterState;
  readonly moves: Move[];
  readonly limits: EvictionLimits;
  /** Group id → why its skew cannot be repaired by any eviction (the spread balancer's finding). */
  readonly unrepairable: Map<string, string>;
  private readonly tx: PlanTransaction;
  private readonly rules: RuleFixer;
  private readonly spread: SpreadBalancer;

  constructor(
    readonly analysis: Analysis,
    spec: PolicySpec,
    options: PlanOptions,
    /** Pods (uids) whose rule violation is cleared after the spread groups, not before (see planCycle). */
    postponed: ReadonlySet<string> = new Set(),
  ) {
    this.tx = new PlanTransaction(analysis, spec, options);
    this.rules = new RuleFixer(this.tx, postponed);
    this.spread = new SpreadBalancer(this.tx);
    this.state = this.tx.state;
    this.moves = this.tx.moves;
    this.limits = this.tx.limits;
    this.unrepairable = this.spread.unrepairable;
  }

  /** What the housekeeping phase (housekeeping.ts) plans with: this plan's state, gates and moves. */
  housekeeping(): HousekeepingPlanner {
    return this.tx.housekeeping();
  }

  skippedList(): Array<{ pod: PodInfo; strategy: Strategy; reason: string }> {
    return this.tx.skippedList();
  }

  skip(pod: PodInfo, strategy: Strategy, reason: string): void {
    this.tx.skip(pod, strategy, reason);
  }

  /** Checks every rule for evicting `pod` and simulates its replacement; does not change the state. */
  attempt(pod: PodInfo, rules: AttemptRules): Attempt {
    return this.tx.attempt(pod, rules);
  }

  commit(pod: PodInfo, landing: Landing, strategy: Strategy, reason: string, spreadKey?: string): void {
    this.tx.commit(pod, landing, strategy, reason, spreadKey);
  }

  /** Drops the moves planned after `mark`, reporting each dropped pod with `why` (see PlanTransaction.rollback). */
  rollback(mark: number, why: string): void {
    this.tx.rollback(mark, why);
  }

  /** Drops the moves after `mark` without reporting them. */
  takeBack(mark: number): void {
    this.tx.takeBack(mark);
  }

  /** `late`: only the postponed violations (after the spread groups); otherwise all but those. */
  fixViolations(late = false): void {
    this.rules.fixViolations(late);
  }

  /** The spread groups, most excess first, in steps (steps.ts): one after each group. */
  balanceGroupSteps(): PlanSteps<void> {
    return this.spread.balanceGroupSteps();
  }

  /**
   * Looks for a smaller set of spread moves that leaves no more undone than greedy's, or a small one that balances
   * where greedy stopped short (planSearch.ts), and plans it instead; true if it did.
   */
  searchFewer(): boolean {
    const spread = this.spread;
    let own: Set<string> | undefined;
    const ownViolation = (pod: PodInfo): boolean => {
      own ??= new Set(
        this.analysis.violations.filter((v) => v.ruleOwner === undefined && this.rules.actsOn(v)).map((v) => v.pod.uid),
      );
      return own.has(pod.uid);
    };
    const found = searchFewerMoves({
      tx: this.tx,
      excessOf: (g) => spread.excessOf(g),
      memberPriority: (g) => spread.memberPriority(g),
      emptiestNode: (g, pod) => spread.emptiestNode(g, pod),
      leftUndone: () => this.leftUndone(),
      openViolations: () => this.rules.openOwnViolations(),
      clearingRules: (v, from) => this.rules.clearingRules(v, v.pod, v.pod, from),
      ownViolation,
    });
    if (found) {
      for (const g of this.state.groups()) if (spread.excessOf(g) === 0) this.unrepairable.delete(g.group.id);
    }
    // A violation refused before the spread moves may be clearable once they are made (its replacement had no node
    // within the spread's maxSkew then). Only for a plan the search covers: retrying every refused violation after a
    // thousand moves would cost a large cluster a second pass for little.
    const spreadMoves = this.moves.filter((m) => m.spreadKey !== undefined).length;
    if (spreadMoves > 0 && spreadMoves <= PLAN_SEARCH_MOVES && !this.limits.cycleFull && this.leftUndone()[0] > 0) {
      this.fixViolations();
    }
    return found;
  }

  /**
   * The pods moved to clear a rule violation of their own (no peers) that a spread group left at a dead end counts:
   * their replacement, placed before the group's moves, may be what holds the group (zone a: a1 a2 a3, zone b: b1 b2
   * b3 without disk=ssd; pods a1:4 a2:1 b3:1 needing ssd, spread by zone and hostname: the b3 pod cleared first
   * lands on b1, and once a1→b2 is made, the empty a3 holds the hostname minimum at 0 while zone a is full).
   */
  postponable(): Set<string> {
    const stuck = [...this.spread.deadEnds].filter((g) => this.spread.excessOf(g) > 0);
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
    const violations = this.analysis.violations.filter((v) => this.rules.actsOn(v) && this.rules.stillHolds(v)).length;
    let groups = 0;
    let excess = 0;
    for (const g of this.state.groups()) {
      if (this.tx.skewStrategyOf(g.group) === undefined) continue;
      const e = this.spread.excessOf(g);
      if (e > 0) [groups, excess] = [groups + 1, excess + e];
    }
    return [violations, groups, excess];
  }
}
