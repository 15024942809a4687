// The search for a better plan: once the greedy steps have planned the spread groups' moves, a bounded iterative
// deepening over all the acted-on groups together looks for fewer moves that do as much, or few that do more. Apart
// from the greedy steps (spreadBalancing.ts) and from the search of one group at a dead end (spreadSearch.ts) because
// what it replaces is the whole spread part of the plan, and what it must match is the plan's outcome, not one
// group's skew.
import type { SpreadGroup } from '../analysis/topologySpread.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import type { GroupState } from '../scheduling/clusterState.js';
import type { SkewStrategy, ViolationRecord } from '../strategies/types.js';
import { movesStateKey, replicaKey } from './candidates.js';
import type { Move } from './move.js';
import type { Strategy } from '../model/plan.js';
import type { AttemptRules, PlanTransaction } from './transaction.js';

/** What the search needs of the planner (Planner implements it; an interface keeps the import one-way). */
export interface PlanSearchContext {
  readonly tx: PlanTransaction;
  excessOf(g: GroupState): number;
  memberPriority(g: SpreadGroup): number;
  emptiestNode(g: GroupState, pod: PodInfo): NodeInfo | undefined;
  /** What the plan leaves undone in its state now, most important first (Planner.leftUndone). */
  leftUndone(): readonly number[];
  /** The acted-on violations of a pod's own rule that still hold, and what a move must do to clear one (ruleFixing). */
  openViolations(): readonly ViolationRecord[];
  clearingRules(v: ViolationRecord, from: NodeInfo): AttemptRules;
  /** Whether the pod breaks a rule of its own (no peers) that the policy acts on. */
  ownViolation(pod: PodInfo): boolean;
}

/**
 * Plans of more spread moves than this are left as greedy made them: the search is exponential in the depth, and a
 * plan that large is paced over several cycles anyway, where one eviction saved matters least.
 */
export const PLAN_SEARCH_MOVES = 8;
/**
 * The work the search may do, counted in nodes a simulated replacement is scored against (attempts × nodes) plus
 * pods looked at, so a large cluster, where one attempt scores thousands of nodes and a group counts thousands of
 * pods, stops after a few attempts and pays next to nothing.
 */
const PLAN_SEARCH_WORK = 100_000;
/** At most this many simulated replacements, however small the cluster. */
const PLAN_SEARCH_ATTEMPTS = 6_000;

/** What a search move is for: a skewed group it takes the pod out of, or a violation it clears. */
type Why = { readonly group: GroupState } | { readonly violation: ViolationRecord };

/** What a move is planned for, once its landing is known. */
interface Purpose {
  readonly reason: Why;
  readonly strategy: Strategy;
  readonly spreadKey: string | undefined;
}

/** A move the search may try: the pod, the rules attempt() checks, and what it is for where it lands. */
interface Option {
  readonly pod: PodInfo;
  readonly from: NodeInfo;
  readonly rules: AttemptRules;
  readonly why: (target: NodeInfo | undefined) => Purpose;
}

interface Found {
  readonly moves: Move[];
  readonly why: Why[];
  readonly undone: readonly number[];
}

/** Lexicographic: whether `a` leaves less undone than `b` (-1), as much (0) or more (1). */
function compareUndone(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
}

/**
 * Greedy steps take, group by group, the best-looking move of the moment; with selectors shared between workloads
 * that can cost a move: zones a/b/c one node each, w0 spread by zone over every tier=web pod (maxSkew 2) with a1:2
 * b1:1, w1 (tier=web, a soft zone spread of its own) b1:8. Greedy evicts w1 pods, whose replacements the scheduler
 * alternates between a1 and c1 by w1's own soft spread: five moves. Moving w0's b1 pod to c1 first and three w1 pods
 * after balances in four. Greedy can also stop short where another order balances, or leave a pod that breaks its
 * nodeSelector where its replacement had no node until the spread moves were made (test/planner/fewestShared
 * Selectors.test.ts has each case).
 *
 * So the spread moves (at most PLAN_SEARCH_MOVES of them, after the rule moves, which stay unless they only cleared
 * pods' own violations and the plan is that small) are taken back and a set is searched for by iterative deepening
 * from a lower bound: when greedy left nothing undone, one with fewer moves that leaves nothing undone either;
 * otherwise one of at most three moves more than greedy's (and PLAN_SEARCH_MOVES) that brings every acted-on group to
 * maxSkew and leaves less undone (violations, groups above maxSkew, their excess: as planCycle weighs two plans), so
 * each of its moves belongs to a set that does. A move is a live pod a skewed acted-on group counts (replicas alike
 * where the scheduler looks tried once per state), or the pod of a violation of its own rule that still holds,
 * checked by attempt() as every move is: protections, PDBs, limits, priority (not above the pods of a group it moves
 * for), the scheduler simulation, and on every tied landing that it takes the pod out of its domain in a skewed group
 * (or clears the violation) and leaves no hard or considered soft group above max(its skew then, its maxSkew), so no
 * constraint ends worse than it started. Pods and groups are walked in the state's order, which is the canonical
 * order (canonicalOrder.ts), so the plan does not depend on the order of the input. Without a set found within the
 * budget, greedy's moves are put back as they were.
 */
export function searchFewerMoves(ctx: PlanSearchContext): boolean {
  const tx = ctx.tx;
  if (tx.limits.cycleFull) return false;
  const spreadAt = tx.moves.findIndex((m) => m.spreadKey !== undefined);
  let first = spreadAt < 0 ? tx.moves.length : spreadAt;
  const spreadMoves = tx.moves.length - first;
  // Rule moves after the spread moves (a violation cleared late, planCycle) depend on them: such a plan is kept.
  if (spreadMoves > PLAN_SEARCH_MOVES || tx.moves.slice(first).some((m) => m.spreadKey === undefined)) return false;
  const goal = ctx.leftUndone();
  // Greedy left nothing undone: a set must be smaller and leave nothing undone either. Greedy stopped short: a set
  // that brings every acted-on group to maxSkew and leaves less undone is worth the moves it adds (each of them then
  // belongs to a set that does), searched with a smaller budget since it often does not exist.
  const complete = goal.every((n) => n === 0);
  if (spreadMoves === 0 && complete) return false;
  // A pod's own violation cleared first may be what holds a group (its replacement took the room the group needed)
  // or cost a move (cleared later, it lands where a spread move would have put a pod): such moves are searched again
  // with the rest.
  if (tx.moves.length <= PLAN_SEARCH_MOVES && tx.moves.slice(0, first).every((m) => ctx.ownViolation(m.pod))) {
    first = 0;
  }
  const greedy = tx.moves.slice(first);
  if (complete && greedy.length < 2) return false;
  // Greedy held back by a limit (maxPerWorkload pacing a workload, a spent PDB): the search would meet it too.
  if (!complete && heldByLimits(ctx)) return false;
  // Stopped short, greedy is rarely far off: a set much larger than its own is not looked for (that search is the
  // one that usually finds nothing, and would pay its whole budget every cycle).
  const deepest = complete ? greedy.length - 1 : Math.min(PLAN_SEARCH_MOVES, greedy.length + 3);
  tx.takeBack(first);
  const acted = [...tx.state.groups()].filter((g) => tx.skewStrategyOf(g.group) !== undefined);
  let attempts = complete ? PLAN_SEARCH_ATTEMPTS : PLAN_SEARCH_ATTEMPTS / 5;
  let work = PLAN_SEARCH_WORK;
  const spent = (): boolean => attempts <= 0 || work <= 0;
  let found: Found | undefined;
  const why: Why[] = [];
  // A set of moves makes the same state whatever their order: a state is searched once per depth left.
  const seen = new Map<string, number>();

  const skewed = (): GroupState[] => acted.filter((g) => ctx.excessOf(g) > 0);
  const movesNeeded = (groups: readonly GroupState[]): number =>
    groups.reduce((most, g) => Math.max(most, lowerBound(g, ctx.excessOf(g))), 0);

  const descend = (left: number): void => {
    const undone = ctx.leftUndone();
    // Complete: as much done in fewer moves (depth bounds it). Otherwise: every group at maxSkew and less undone.
    const better = complete ? undone.every((n) => n === 0) : undone[1] === 0 && compareUndone(undone, goal) < 0;
    if (better && (found === undefined || compareUndone(undone, found.undone) < 0)) {
      found = { moves: tx.moves.slice(first), why: [...why], undone };
    }
    if (left === 0 || (found !== undefined && found.undone.every((n) => n === 0))) return;
    const groups = skewed();
    // Each violation that must be cleared takes a move of its pod; less undone with every group at maxSkew means
    // fewer violations than greedy left, or as many when greedy left a group above maxSkew.
    const violations = complete ? undone[0]! : undone[0]! - goal[0]! + (goal[1] === 0 ? 1 : 0);
    if (Math.max(movesNeeded(groups), violations) > left) return;
    const key = movesStateKey(tx.moves.slice(first));
    if ((seen.get(key) ?? -1) >= left) return;
    seen.set(key, left);
    for (const option of options(groups)) {
      attempts--;
      work -= tx.state.nodeList.length;
      if (spent()) return;
      const result = tx.attempt(option.pod, option.rules);
      if (!result.ok) continue;
      const { reason, strategy, spreadKey } = option.why(result.target);
      const { pod, from } = option;
      const { target, ties, slack } = result;
      tx.place({ pod, from, target, ties, strategy, reason: '', spreadKey, ...(slack === undefined ? {} : { slack }) });
      why.push(reason);
      descend(left - 1);
      why.pop();
      tx.takeBack(tx.moves.length - 1);
      if (found !== undefined && found.undone.every((n) => n === 0)) return;
    }
  };

  /** The moves to try from the current state: one pod per replica class, each with its rules and its purpose. */
  function* options(groups: readonly GroupState[]): Generator<Option> {
    const tried = new Set<string>();
    for (const g of groups) {
      for (const pod of g.group.matching) {
        if (--work <= 0) return;
        const from = tx.liveAt(pod);
        if (from === undefined || !g.group.domainsByNode.has(from.name)) continue;
        const wk = replicaKey(pod);
        if (tried.has(wk)) continue;
        tried.add(wk);
        const selecting = tx.state.groupsSelecting(pod.namespace, pod.labels);
        const reasons = groups.filter((r) => ctx.memberPriority(r.group) >= pod.priority && selecting.includes(r));
        if (reasons.length === 0) continue;
        const why = (target: NodeInfo | undefined): Purpose => {
          const group = reasons.find((r) => movesOut(r, from, target))!;
          const strategy = tx.skewStrategyOf(group.group)!.name;
          return { reason: { group }, strategy, spreadKey: group.group.constraint.topologyKey };
        };
        yield { pod, from, rules: rulesFor(ctx, reasons), why };
      }
    }
    // A pod whose own rule is broken (a nodeSelector, a taint) may move in the same set: its replacement may have a
    // node only once some spread moves are made, or may be what fills a domain.
    for (const v of ctx.openViolations()) {
      const from = tx.liveAt(v.pod);
      if (from === undefined || tried.has(replicaKey(v.pod))) continue;
      tried.add(replicaKey(v.pod));
      const why = (): Purpose => ({ reason: { violation: v }, strategy: v.strategy, spreadKey: undefined });
      yield { pod: v.pod, from, rules: ctx.clearingRules(v, from), why };
    }
  }

  for (let depth = Math.max(1, movesNeeded(skewed())); depth <= deepest && !spent(); depth++) {
    seen.clear();
    descend(depth);
    if (found !== undefined) break;
  }
  if (found === undefined) {
    for (const m of greedy) tx.place(m);
    return false;
  }
  for (const [i, m] of found.moves.entries()) {
    const w = found.why[i]!;
    if ('violation' in w) {
      tx.commit(m.pod, m, w.violation.strategy, w.violation.reason);
      continue;
    }
    const g = w.group;
    const s: SkewStrategy = tx.skewStrategyOf(g.group)!;
    tx.commit(m.pod, m, s.name, s.reason(g.group, g.counts, m.from, m.target), g.group.constraint.topologyKey);
  }
  const kept = new Set(found.moves.map((m) => m.pod.uid));
  for (const m of greedy) {
    if (kept.has(m.pod.uid)) continue;
    const set = complete ? 'a smaller set' : 'a set that brings every spread group to maxSkew';
    tx.skip(m.pod, m.strategy, `${set} (${found.moves.length} evictions) does without it`);
  }
  return true;
}

/** Whether a limit or a PodDisruptionBudget refuses a live pod of a skewed acted-on group now. */
function heldByLimits(ctx: PlanSearchContext): boolean {
  const tx = ctx.tx;
  for (const g of tx.state.groups()) {
    if (tx.skewStrategyOf(g.group) === undefined || ctx.excessOf(g) === 0) continue;
    for (const pod of g.group.matching) {
      if (!tx.state.isLive(pod)) continue;
      if (tx.limits.exceeded(pod) !== undefined || tx.budgets.refusal(pod) !== undefined) return true;
    }
  }
  return false;
}

/**
 * The fewest moves that can bring a group within its maxSkew. A move lowers the skew by 2 at most (one pod off a
 * fullest domain, one onto an emptiest). And a move takes one pod out of one domain, while at the end no domain may
 * hold more than the smallest count plus maxSkew, the smallest being at most an even share of the group's pods (0 while
 * there are fewer domains than minDomains); replacements never add pods to the group. On a plan greedy made as small
 * as it can be, this bound usually equals its length, and the search costs nothing.
 */
function lowerBound(g: GroupState, excess: number): number {
  if (excess === 0) return 0;
  const c = g.group.constraint;
  let total = 0;
  for (const n of g.counts.values()) total += n;
  const domains = g.counts.size;
  const share = domains < (c.minDomains ?? 1) || domains === 0 ? 0 : Math.floor(total / domains);
  let over = 0;
  for (const n of g.counts.values()) over += Math.max(0, n - share - c.maxSkew);
  return Math.max(Math.ceil(excess / 2), over);
}

/** Whether a replacement on `target` leaves the group's domain the pod runs in (what a move for the group must do). */
function movesOut(g: GroupState, from: NodeInfo, target: NodeInfo | undefined): boolean {
  const d = g.group.domainsByNode;
  return target === undefined || d.get(target.name) !== d.get(from.name);
}

/**
 * The rules of a search move: it must take the pod out of its domain in one of the skewed groups it is moved for
 * (`reasons`), on every node the scheduler may pick; attempt() adds that no hard or considered soft group ends above
 * max(its skew now, its maxSkew) there. nodeFit off: the emptiest eligible domain of the first group.
 */
function rulesFor(ctx: PlanSearchContext, reasons: readonly GroupState[]): AttemptRules {
  const first = reasons[0]!;
  return {
    strategy: ctx.tx.skewStrategyOf(first.group)!.name,
    helps: (_pod, target, from) =>
      reasons.some((r) => movesOut(r, from, target)) ? undefined : 'the replacement would stay in its domain',
    fallbackTarget: (pod) => ctx.emptiestNode(first, pod),
  };
}
