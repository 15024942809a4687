// The workloads one policy run holds back from its next plan, with the reason the plan's skipped list shows.

export class RunHolds {
  /** Done for this run: refused, failed, a limit reached, or not recovered. */
  private readonly done = new Map<string, string>();
  /** A replacement landed back where its pod was evicted from. */
  private readonly cooling = new Map<string, string>();

  hold(workload: string, why: string): void {
    this.done.set(workload, why);
  }

  cool(workload: string, why: string): void {
    this.cooling.set(workload, why);
  }

  /** Done for this run (cooling alone does not stop a lane that is already planned). */
  has(workload: string): boolean {
    return this.done.has(workload);
  }

  /**
   * Everything the next plan must hold: `initial` (the caller's cooldowns), then this run's holds, then the
   * workloads with a lane in progress, then those another policy saturated; a later reason replaces an earlier one
   * except the last.
   */
  merged(
    initial: ReadonlyMap<string, string>,
    inProgress: Iterable<string>,
    saturated: Iterable<string>,
  ): Map<string, string> {
    const held = new Map(initial);
    for (const [k, v] of this.cooling) held.set(k, v);
    for (const [k, v] of this.done) held.set(k, v);
    for (const k of inProgress) held.set(k, 'an eviction of this workload is in progress');
    for (const k of saturated) {
      if (!held.has(k)) held.set(k, 'maxPerWorkload evictions of this workload are in flight (another policy)');
    }
    return held;
  }
}
