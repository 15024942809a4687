// Reservations that must be taken before an await and given back if the eviction does not happen.
//
// - InFlightEvictions: one workload's pods evicted and not yet replaced by a Ready pod, shared by every run of every
//   policy in the process. `maxPerWorkload` bounds this number *at any moment* (DESIGN.md), so two policies that
//   select the same Deployment can never have two of its pods in flight with maxPerWorkload 1: the slot is taken
//   synchronously before the eviction call and released when pacing saw the replacement Ready, when the call did not
//   evict, or when the run ends.
// - RunLimits: maxPerCycle, maxPerNode and maxPerNamespace (and, for a run that is not paced, maxPerWorkload) of one run. Lanes run
//   concurrently and each awaits a budget and the API call; checking a limit before the await and counting it after
//   lets every lane pass the check at once. reserve() checks and counts in one synchronous step; release() undoes a
//   reservation whose eviction was not made.
import type { PodInfo } from '../model/types.js';
import { EvictionLimits } from '../planner/budget.js';
import type { PolicySpec } from '../policy/types.js';

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

export class RunLimits {
  private readonly counts: EvictionLimits;

  /**
   * `perWorkloadInRun`: count maxPerWorkload within the run too (a run that executes one plan whole); a paced run
   * leaves it to the shared in-flight slot, which frees as each replacement becomes Ready.
   */
  constructor(
    limits: PolicySpec['eviction'],
    private readonly opts: { readonly perWorkloadInRun: boolean } = { perWorkloadInRun: true },
  ) {
    // The same counters the planner uses for one plan, here for one run.
    this.counts = new EvictionLimits(limits);
  }

  /** Which limit one more eviction of this pod would exceed, or undefined. */
  exceeded(pod: PodInfo): string | undefined {
    return this.counts.exceeded(pod, !this.opts.perWorkloadInRun);
  }

  /** Checks and counts one eviction in one step: undefined when reserved, else the limit that is reached. */
  reserve(pod: PodInfo): string | undefined {
    const reached = this.exceeded(pod);
    if (reached === undefined) this.counts.consume(pod);
    return reached;
  }

  /** Gives back a reservation whose eviction was not made. */
  release(pod: PodInfo): void {
    this.counts.release(pod);
  }

  /** Evictions reserved or made in this run. */
  get reserved(): number {
    return this.counts.counted;
  }

  get cycleFull(): boolean {
    return this.counts.cycleFull;
  }
}
