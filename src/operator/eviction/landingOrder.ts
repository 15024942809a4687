// The closed loop's order within one paced run (DESIGN.md, "The operator checks its own predictions").
//
// A plan is a sequence: the planner placed each replacement where the scheduler would put it and planned the next
// move on that state. Sent all at once, the later moves are predicted on landings nobody has seen yet, and when the
// scheduler breaks a tie the other way every later prediction may be wrong (the cascade of issue 29). So the lanes of
// a run queue up in the order their plans made them (a ticket each), and a lane may send its eviction only when
//   - every lane queued before it has had its turn (sent, or given up), and
//   - the replacement of every eviction sent so far has landed (or its wait ended),
// and only while its prediction still stands. It stops standing when a replacement lands anywhere but the plan's
// target (a tied node included: the later moves assumed the target) or when a lane gives up its move (the pod gone,
// a budget, a limit: the plan assumed it moved): every lane queued so far then drops its move without holding its
// workload, and the run plans those again from what the caches show. A new plan by itself invalidates nothing: its
// lanes queue behind the ones still waiting.
export type Turn = 'go' | 'stale' | 'halted';

export class LandingOrder {
  private nextTicket = 0;
  /** Tickets below this were issued before the last invalidation. */
  private staleBelow = 0;
  /** Tickets not yet settled, in issue order. */
  private readonly open = new Set<number>();
  /** Evictions sent whose replacement has not landed yet (or whose wait has not ended). */
  private pending = 0;
  private readonly waiters = new Set<() => void>();

  /** A place in the queue for a lane about to start. */
  enqueue(): number {
    const ticket = this.nextTicket++;
    this.open.add(ticket);
    return ticket;
  }

  /** The predictions of every lane queued so far no longer stand: those that have not sent drop their moves. */
  invalidate(): void {
    this.staleBelow = this.nextTicket;
    this.wake();
  }

  /** Waits until `ticket` may send, or its prediction went stale, or `signal` fired. */
  async waitTurn(ticket: number, signal: AbortSignal): Promise<Turn> {
    for (;;) {
      if (signal.aborted) return 'halted';
      if (ticket < this.staleBelow) return 'stale';
      if (this.pending === 0 && this.head() === ticket) return 'go';
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

  /** The lane of `ticket` had its turn (sent its eviction or gave up): the next one may go. */
  settle(ticket: number): void {
    this.open.delete(ticket);
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

  /** The first open ticket whose prediction stands. */
  private head(): number | undefined {
    for (const ticket of this.open) if (ticket >= this.staleBelow) return ticket;
    return undefined;
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
