// The ledger of skipped pods: every pod a plan refused to move, with the strategy that wanted it and why. It is the
// report's `skipped` list, so its order (the order first refused) and its one entry per pod and strategy are part of
// what a plan prints; a pod that a later set of moves did move is left out when the list is read.
import type { PodInfo } from '../model/types.js';
import type { Move } from './move.js';
import type { Strategy } from '../model/plan.js';

interface SkipEntry {
  pod: PodInfo;
  readonly strategy: Strategy;
  reason: string;
}

export class SkipLedger {
  /** Pods refused, one entry per pod and strategy, in the order first refused (the report's order). */
  private readonly skipped: SkipEntry[] = [];
  /**
   * The same entries by pod uid and strategy. Two levels rather than one `uid + strategy` key: a cycle that spends its
   * budget early refuses thousands of pods, and a key string built per refusal was a measurable part of it.
   */
  private readonly skippedByPod = new Map<string, SkipEntry[]>();

  /** The entries of pods that none of `moves` moves, in the order first refused. */
  list(moves: readonly Move[]): Array<{ pod: PodInfo; strategy: Strategy; reason: string }> {
    const moved = new Set(moves.map((m) => m.pod.uid));
    return this.skipped.filter((s) => !moved.has(s.pod.uid));
  }

  /** Adds the pod's entry for the strategy; an existing one keeps its place and is replaced only with `replace`. */
  record(pod: PodInfo, strategy: Strategy, reason: string, replace: boolean): void {
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
}
