// Rule fixing: the violations the rule strategies found (taints, node affinity, anti-affinity, ...), each cleared by
// one move of the offending pod, or, for a rule with peers (required anti-affinity), by moving the rule's owner or
// every pod its rule matches, as a set that is kept whole or not at all. Moves go through the plan's transaction;
// what a violation is and where its pod may land are the strategies' (RuleStrategy.clears).
import { nodeAdmitsPod } from '../model/admission.js';
import type { NodeInfo, PodInfo } from '../model/types.js';
import { volumesReachable } from '../model/volumes.js';
import type { RuleStrategy, ViolationRecord } from '../strategies/types.js';
import { configOf } from '../strategies/registry.js';
import { compareCandidates } from './candidates.js';
import type { Attempt, AttemptRules, PlanTransaction } from './transaction.js';
import type { Strategy } from '../model/plan.js';

/** Text of a move whose replacement has no node yet (nodeFit off). */
const NO_CAPACITY =
  'no current node can take its replacement, which stays Pending until capacity is added (nodeFit: false)';

export class RuleFixer {
  constructor(
    private readonly tx: PlanTransaction,
    /** Pods (uids) whose rule violation is cleared after the spread groups, not before (see planCycle). */
    private readonly postponed: ReadonlySet<string>,
  ) {}

  /** The rule strategy that found a violation. */
  private ruleOf(v: ViolationRecord): RuleStrategy {
    const strategy = this.tx.strategies.byName(v.strategy);
    if (strategy?.kind !== 'rule')
      throw new Error(`violation of ${v.strategy}, which is not a registered rule strategy`);
    return strategy;
  }

  actsOn(v: ViolationRecord): boolean {
    if (!v.soft) return true;
    const rule = this.ruleOf(v);
    return rule.actsOnSoft(configOf(this.tx.spec.strategies, rule));
  }

  /** Whether the violation still holds in the current plan state (an earlier move may have cleared it). */
  stillHolds(v: ViolationRecord): boolean {
    if (this.tx.state.isRemoved(v.pod)) return false;
    return v.peer === undefined || !this.tx.state.isRemoved(v.peer);
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
    const clears = this.ruleOf(v).clears(v, pod, from, this.tx.moveContext);
    return (target) => {
      if (!target) return 'no target node';
      return clears(target) ? undefined : 'the replacement would land where the rule is still broken';
    };
  }

  /** `late`: only the postponed violations (after the spread groups); otherwise all but those. */
  fixViolations(late = false): void {
    const rank = new Map(this.tx.strategies.rules.map((s, i) => [s.name, i]));
    const order = (v: ViolationRecord): number => rank.get(v.strategy) ?? -1;
    const violations = this.tx.analysis.violations
      .filter((v) => this.actsOn(v))
      .sort((a, b) => Number(a.soft) - Number(b.soft) || order(a) - order(b));
    const degree = conflictDegrees(violations);
    const byOwner = conflictsByOwner(violations);
    const owners = new Set<string>();
    for (const v of violations) {
      if (!this.stillHolds(v)) continue;
      if (late !== (v.ruleOwner === undefined && this.postponed.has(v.pod.uid))) continue;
      if (this.tx.limits.cycleFull) {
        this.tx.skip(
          v.pod,
          v.strategy,
          `${this.tx.limits.exceeded(v.pod) ?? 'limit reached'}; left for ${this.tx.limits.stepFull ? 'a later step' : 'the next cycle'}`,
        );
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
      if (result.ok) this.tx.commit(v.pod, result, v.strategy, this.withCapacityNote(v.reason, result.target));
      else this.tx.skip(v.pod, v.strategy, result.reason);
    }
  }

  /** Tries to evict `pod` so that the violation `v` (whose rule belongs to `owner`) is cleared where it lands. */
  private attemptClearing(v: ViolationRecord, pod: PodInfo, owner: PodInfo): Attempt {
    const from = this.tx.state.nodeOf(pod);
    if (!from) return { ok: false, reason: 'pod is already planned for eviction', placement: false };
    return this.tx.attempt(pod, this.clearingRules(v, pod, owner, from));
  }

  /** The acted-on violations of a pod's own rule (no peers) that still hold: what the plan search may clear. */
  openOwnViolations(): ViolationRecord[] {
    return this.tx.analysis.violations.filter((v) => v.ruleOwner === undefined && this.actsOn(v) && this.stillHolds(v));
  }

  /** What a move of `pod` from `from` must achieve to clear `v`, whose rule belongs to `owner`. */
  clearingRules(v: ViolationRecord, pod: PodInfo, owner: PodInfo, from: NodeInfo): AttemptRules {
    const clears = this.clearance(v, pod, from);
    return {
      strategy: v.strategy,
      helps: (_p, target) => clears(target),
      fallbackTarget: () => this.ruleTarget(pod, from, clears),
      // Moving the pod whose rule is broken needs no cap; moving another pod only helps the rule's owner, so it
      // must not be of higher priority than the owner.
      maxPriority: pod === owner ? undefined : owner.priority,
      withoutTarget: !v.soft && this.ruleOf(v).withoutTarget,
    };
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
    if (!this.tx.state.isLive(owner)) return;
    const peers: PodInfo[] = [];
    for (const v of conflicts) {
      const other = v.pod === owner ? v.peer : v.pod;
      if (other !== undefined && this.tx.state.isLive(other) && !peers.includes(other)) peers.push(other);
    }
    if (peers.length === 0) return;
    const options = [[owner], peers.sort(compareCandidates)];
    // Fewest evictions first; between equal sets, the pod in the most conflicts (one eviction may clear several),
    // then the eviction order.
    const weight = (set: readonly PodInfo[]): number => Math.max(...set.map((p) => degree.get(p.uid) ?? 0));
    options.sort((a, b) => a.length - b.length || weight(b) - weight(a) || compareCandidates(a[0]!, b[0]!));
    for (const set of options) {
      const mark = this.tx.moves.length;
      let refused: { pod: PodInfo; reason: string } | undefined;
      for (const pod of set) {
        const v = conflicts.find((c) => c.pod === pod) ?? conflicts[0]!;
        const result = this.attemptClearing(v, pod, owner);
        if (!result.ok) {
          refused = { pod, reason: result.reason };
          break;
        }
        this.tx.commit(pod, result, strategy, this.withCapacityNote(reasonFor(owner, pod, conflicts), result.target));
      }
      if (refused === undefined) return;
      const why =
        `evicting it alone would not clear the anti-affinity of ${owner.namespace}/${owner.name}: ` +
        `${refused.pod.namespace}/${refused.pod.name} must move too and cannot (${refused.reason})`;
      this.tx.rollback(mark, why);
      this.tx.skip(refused.pod, strategy, refused.reason);
      for (const pod of set) if (pod !== refused.pod) this.tx.skip(pod, strategy, why);
    }
  }

  /** nodeFit off: the least-loaded node (by pod count) where the violated rule holds, resources ignored. */
  private ruleTarget(
    pod: PodInfo,
    from: NodeInfo,
    clears: (target: NodeInfo) => string | undefined,
  ): NodeInfo | undefined {
    let best: NodeInfo | undefined;
    for (const node of this.tx.state.nodeList) {
      if (node === from || !nodeAdmitsPod(pod, node) || !volumesReachable(pod, node)) continue;
      if (clears(node) !== undefined) continue;
      if (!best || this.tx.state.usageOf(node.name).pods < this.tx.state.usageOf(best.name).pods) best = node;
    }
    return best;
  }
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
