// The search of a spread group that greedy steps left at a dead end: the fewest further moves that bring it to
// maxSkew, by iterative deepening, bounded so that a large cluster does not pay for it. Apart from the greedy steps
// (spreadBalancing.ts) because it is a different algorithm over the same transaction: it places and takes back
// moves freely and commits only the set it keeps.
import type { SpreadGroup } from '../analysis/topologySpread.js';
import { skewTuple, type SkewTuple } from '../model/spread.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import type { GroupState } from '../scheduling/clusterState.js';
import type { SkewStrategy } from '../strategies/types.js';
import { movesStateKey, replicaKey } from './candidates.js';
import type { Move } from './move.js';
import type { AttemptRules, PlanTransaction } from './transaction.js';

/** What the search needs of the spread balancer (SpreadBalancer implements it; an interface keeps the import one-way). */
export interface SearchContext {
  readonly tx: PlanTransaction;
  readonly unrepairable: Map<string, string>;
  relatedGroups(g: GroupState): readonly GroupState[];
  excessOf(g: GroupState): number;
  memberPriority(g: SpreadGroup): number;
  emptiestNode(g: GroupState, pod: PodInfo): NodeInfo | undefined;
}

/** The fallback search of a spread group (searchGroup): replacements it may simulate, and moves in a set. */
const SEARCH_BUDGET = 2000;
const SEARCH_DEPTH = 6;

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
export function searchGroup(ctx: SearchContext, g: GroupState, s: SkewStrategy): boolean {
  const tx = ctx.tx;
  if (tx.limits.cycleFull) return false;
  const c = g.group.constraint;
  const start = tx.moves.length;
  const rules = (before: SkewTuple): AttemptRules => ({
    strategy: s.name,
    helps: (pod, target, from) =>
      target !== from && tx.state.tupleAfter(g, pod, from, target)[0] <= before[0]
        ? undefined
        : 'the replacement would raise the skew',
    fallbackTarget: (pod) => ctx.emptiestNode(g, pod),
    maxPriority: ctx.memberPriority(g.group),
  });
  let budget = SEARCH_BUDGET;
  let found: { moves: Move[]; excess: number } | undefined;
  // A set of moves makes the same state whatever their order: a state is searched once per depth left.
  const seen = new Map<string, number>();
  const descend = (left: number): void => {
    const before = skewTuple(g.counts, c.minDomains);
    if (before[0] <= c.maxSkew) {
      const excess = relatedExcess(ctx, g);
      if (found === undefined || excess < found.excess) found = { moves: tx.moves.slice(start), excess };
      return;
    }
    // A move takes one pod from a domain and adds at most one to another: the skew falls by 2 at most.
    if (2 * left < before[0] - c.maxSkew) return;
    const key = movesStateKey(tx.moves.slice(start));
    if ((seen.get(key) ?? -1) >= left) return;
    seen.set(key, left);
    const tried = new Set<string>();
    for (const pod of g.group.matching) {
      const node = tx.liveAt(pod);
      if (node === undefined || !g.group.domainsByNode.has(node.name)) continue;
      const wk = replicaKey(pod);
      if (tried.has(wk)) continue;
      if (budget-- <= 0) return;
      const result = tx.attempt(pod, rules(before));
      if (!result.ok) {
        if (result.placement) tried.add(wk);
        continue;
      }
      tried.add(wk);
      tx.place({
        pod,
        from: node,
        target: result.target,
        ties: result.ties,
        ...(result.slack === undefined ? {} : { slack: result.slack }),
        strategy: s.name,
        reason: '',
        spreadKey: c.topologyKey,
      });
      descend(left - 1);
      tx.takeBack(tx.moves.length - 1);
    }
  };
  for (let depth = 1; depth <= SEARCH_DEPTH && found === undefined && budget > 0; depth++) {
    seen.clear();
    descend(depth);
  }
  if (found === undefined) return false;
  for (const m of found.moves) {
    tx.commit(m.pod, m, s.name, s.reason(g.group, g.counts, m.from, m.target), c.topologyKey);
  }
  ctx.unrepairable.delete(g.group.id);
  return true;
}

/** How much skew above their maxSkew the acted-on groups related to `g` (itself excluded) have, summed. */
function relatedExcess(ctx: SearchContext, g: GroupState): number {
  let excess = 0;
  for (const other of ctx.relatedGroups(g)) {
    if (other !== g && ctx.tx.skewStrategyOf(other.group) !== undefined) excess += ctx.excessOf(other);
  }
  return excess;
}
