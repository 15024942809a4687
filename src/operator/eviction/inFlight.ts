// One workload's pods evicted and not yet replaced by a Ready pod, shared by every run of every policy in the
// process. `maxPerWorkload` bounds this number *at any moment* (DESIGN.md), so two policies that select the same
// Deployment can never have two of its pods in flight with maxPerWorkload 1: the slot is taken synchronously before
// the eviction call and released when pacing saw the replacement Ready, when the call did not evict, or when the run
// ends (runReservations.ts holds a run's share).

export class InFlightEvictions {
  private readonly byWorkload = new Map<string, number>();

  /** Takes a slot when fewer than `max` evictions of `workload` are in flight; false (nothing taken) otherwise. */
  tryReserve(workload: string, max: number): boolean {
    const current = this.byWorkload.get(workload) ?? 0;
    if (current >= max) return false;
    this.byWorkload.set(workload, current + 1);
    return true;
  }

  release(workload: string): void {
    const current = this.byWorkload.get(workload) ?? 0;
    if (current <= 1) this.byWorkload.delete(workload);
    else this.byWorkload.set(workload, current - 1);
  }

  count(workload: string): number {
    return this.byWorkload.get(workload) ?? 0;
  }

  /** Workloads with at least `max` evictions in flight. */
  *saturated(max: number): Iterable<string> {
    for (const [workload, n] of this.byWorkload) if (n >= max) yield workload;
  }
}
