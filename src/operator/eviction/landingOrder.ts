// The closed loop's order within one paced run (DESIGN.md, "The operator checks its own predictions").
//
// A plan is a sequence: the planner placed each replacement where the scheduler would put it and planned the next
// move on that state. Sent all at once, the later moves are predicted on landings nobody has seen yet, and when the
// scheduler breaks a tie the other way every later prediction of that plan may be wrong (the cascade of issue 29).
// So the lanes of one plan take turns in plan order, and a lane may send its eviction only when
//   - every earlier lane of the plan has had its turn (sent, or given up), and
//   - the replacement of every eviction sent so far has landed (or its wait ended),
// and only while the plan still describes the cluster. It stops describing it when a replacement lands anywhere but
// the plan's target (a tied node included: the later moves assumed the target), when a lane gives up its move (the
// pod gone, a budget, a limit: the plan assumed it moved), or when the run plans again. Lanes of a plan that no
// longer holds drop their move without holding their workload; the run plans it again from what the caches show.
export type Turn = 'go' | 'stale' | 'halted';

export class LandingOrder {
  /** The plan lanes may act on; bumped by a new plan and by anything that makes the current one stale. */
  private plan = 0;
  private turn = 0;
  private readonly done = new Set<number>();
  /** Evictions sent whose replacement has not landed yet (or whose wait has not ended). */
  private pending = 0;
  private readonly waiters = new Set<() => void>();

  /** A new plan: its lanes take turns from index 0. Returns its number. */
  newPlan(): number {
    this.plan++;
    this.turn = 0;
    this.done.clear();
    this.wake();
    return this.plan;
  }

  /** The current plan no longer describes the cluster: its lanes that have not sent drop their moves. */
  invalidate(plan: number): void {
    if (plan !== this.plan) return;
    this.plan++;
    this.turn = 0;
    this.done.clear();
    this.wake();
  }

  /** Whatever plan is current no longer describes the cluster (a landing it did not predict). */
  invalidateCurrent(): void {
    this.invalidate(this.plan);
  }

  /** Waits until lane `index` of `plan` may send, or the plan went stale, or `signal` fired. */
  async waitTurn(plan: number, index: number, signal: AbortSignal): Promise<Turn> {
    for (;;) {
      if (signal.aborted) return 'halted';
      if (plan !== this.plan) return 'stale';
      if (index === this.turn && this.pending === 0) return 'go';
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.add(wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** Lane `index` of `plan` had its turn (sent its eviction or gave up): the next one may go. */
  settle(plan: number, index: number): void {
    if (plan !== this.plan) return;
    this.done.add(index);
    while (this.done.has(this.turn)) this.turn++;
    this.wake();
  }

  /** An eviction was sent: no lane sends until its replacement's landing is known. */
  landingAwaited(): void {
    this.pending++;
  }

  landingKnown(): void {
    this.pending--;
    this.wake();
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
