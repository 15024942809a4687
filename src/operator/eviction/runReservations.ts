// What one policy run may still evict: its own limits (maxPerCycle, maxPerNode, maxPerNamespace and, for a run
// that is not paced, maxPerWorkload) and the shared per-workload in-flight slots it holds.
//
// Lanes run concurrently and each awaits a budget and the API call; checking a limit before the await and counting
// it after would let every lane pass the check at once. reserve() checks and counts in one synchronous step;
// giveBack() undoes a reservation whose eviction was not made. Slots left when the run ends are released then.
import type { PodInfo } from '../../model/types.js';
import { EvictionLimits, workloadKey, type SpentLimits } from '../../planner/budget.js';
import type { PolicySpec } from '../../policy/types.js';
import type { InFlightEvictions } from './inFlight.js';

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

  /** What the run has spent of its per-cycle limits, for its next plan. */
  spent(): SpentLimits {
    return this.counts.spent();
  }

  get cycleFull(): boolean {
    return this.counts.cycleFull;
  }
}

export class RunReservations {
  readonly limits: RunLimits;
  /** In-flight slots this run holds, by workload. */
  private readonly slots = new Map<string, number>();
  private readonly evicted = new Map<string, number>();
  private readonly maxPerWorkload: number;

  constructor(
    spec: PolicySpec['eviction'],
    private readonly inFlight: InFlightEvictions,
    opts: { readonly perWorkloadInRun: boolean },
  ) {
    this.limits = new RunLimits(spec, opts);
    this.maxPerWorkload = spec.maxPerWorkload;
  }

  /** Takes the run's limits and the workload's in-flight slot: undefined when both are taken, else why not. */
  reserve(pod: PodInfo): string | undefined {
    const limit = this.limits.reserve(pod);
    if (limit !== undefined) return limit;
    const key = workloadKey(pod);
    if (!this.inFlight.tryReserve(key, this.maxPerWorkload)) {
      this.limits.release(pod);
      return `${this.maxPerWorkload} eviction(s) of ${key} already in flight (maxPerWorkload, across policies)`;
    }
    this.slots.set(key, (this.slots.get(key) ?? 0) + 1);
    return undefined;
  }

  /** Undoes reserve() for an eviction that was not made. */
  giveBack(pod: PodInfo): void {
    this.limits.release(pod);
    this.releaseSlot(workloadKey(pod));
  }

  /** Frees one slot of the workload: its eviction is no longer in flight (replaced, or a dry run). */
  releaseSlot(workload: string): void {
    const held = this.slots.get(workload) ?? 0;
    if (held === 0) return;
    if (held === 1) this.slots.delete(workload);
    else this.slots.set(workload, held - 1);
    this.inFlight.release(workload);
  }

  /** The run ended: every slot it still holds is freed. */
  releaseAll(): void {
    for (const [key, n] of this.slots) for (let i = 0; i < n; i++) this.inFlight.release(key);
    this.slots.clear();
  }

  /** Counts an eviction the API accepted; returns the workload's evictions in this run so far. */
  countEvicted(workload: string): number {
    const n = (this.evicted.get(workload) ?? 0) + 1;
    this.evicted.set(workload, n);
    return n;
  }
}
