// The cluster a DryRun run steps through in place of the real one (executor.ts): Evict waits for each replacement to
// be Ready and plans again from the cache; a dry run evicts nothing, so the cache never moves. The projection starts
// from the cache's snapshot and, after each step, removes the pods whose dry-run evictions the API server accepted and
// places their replacements where the plan predicted, Running and Ready (what Evict waits for), so the next plan sees
// what Evict's next plan would see if every landing went as predicted. Budgets stay as the cluster reports them:
// Evict, too, waits until a replacement is Ready and the budget allows a disruption again.
import type { ClusterSnapshot, PodInfo } from '../../model/types.js';
import type { Move } from '../../planner/plan.js';
import { applyMoves } from '../../planner/simulate.js';

export class DryRunProjection {
  private current: ClusterSnapshot;
  private readonly replacements = new Set<string>();
  private steps = 0;

  constructor(start: ClusterSnapshot) {
    this.current = start;
  }

  get snapshot(): ClusterSnapshot {
    return this.current;
  }

  /** Whether a pod is a replacement this projection placed (it exists only here). */
  isProjected(pod: Pick<PodInfo, 'uid'>): boolean {
    return this.replacements.has(pod.uid);
  }

  /** One step: the moves' pods are gone, their replacements run where the plan put them. */
  apply(moves: readonly Move[]): void {
    this.steps++;
    const before = new Set(this.current.pods.map((p) => p.uid));
    this.current = applyMoves(this.current, moves, this.steps * 1000);
    for (const p of this.current.pods) if (!before.has(p.uid)) this.replacements.add(p.uid);
  }
}
