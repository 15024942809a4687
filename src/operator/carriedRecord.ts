// What a replica did while it led, carried across a lost Lease. Losing the Lease drops the leader's per-policy state
// (it must never write a stale picture as a follower), but the evictions it made and had not yet written to the
// status (the API server was down, the write failed or never came) are facts: thrown away, the status ends with
// fewer evictions than were made, and cooldowns and loop detection, which rest on that record, forget them. So the
// dropped states are kept here; when this replica leads again, each policy's state rebuilt from the live status gets
// what this replica counted and did not write added back, and cooldowns are the union (the later deadline wins).
// The state is then written at once (PolicyController.startedLeading). A policy recreated under the same name (a new
// uid) takes nothing.

/** What of a policy's leader state (policyState.ts) is carried; named here so this module imports nothing. */
export interface CarriedState<C extends { readonly until: number }> {
  readonly uid: string;
  readonly deleted: boolean;
  readonly cooldowns: Map<string, C>;
  totals: { evicted: number; failed: number };
  unwritten: { evicted: number; failed: number };
}

export interface Adopted {
  readonly evicted: number;
  readonly failed: number;
  readonly cooldowns: number;
}

export class CarriedRecords<C extends { readonly until: number }, S extends CarriedState<C>> {
  private readonly byName = new Map<string, S>();

  /** The states of a replica that stops leading (kept by reference: an eviction in flight may still count). */
  keep(states: ReadonlyMap<string, S>): void {
    for (const [name, state] of states) if (!state.deleted) this.byName.set(name, state);
  }

  /** Adds what was carried for `name` into `fresh` (rebuilt from the live status); undefined when nothing was. */
  adopt(name: string, fresh: S): Adopted | undefined {
    const old = this.byName.get(name);
    if (old === undefined) return undefined;
    this.byName.delete(name);
    if (old.deleted || (fresh.uid !== '' && old.uid !== '' && old.uid !== fresh.uid)) return undefined;
    const { evicted, failed } = old.unwritten;
    fresh.unwritten = { evicted: fresh.unwritten.evicted + evicted, failed: fresh.unwritten.failed + failed };
    fresh.totals = { evicted: fresh.totals.evicted + evicted, failed: fresh.totals.failed + failed };
    let cooldowns = 0;
    for (const [workload, c] of old.cooldowns) {
      const theirs = fresh.cooldowns.get(workload);
      if (theirs === undefined || theirs.until < c.until) {
        fresh.cooldowns.set(workload, c);
        cooldowns++;
      }
    }
    return evicted + failed + cooldowns > 0 ? { evicted, failed, cooldowns } : undefined;
  }

  /** Forgets a deleted policy's carried state. */
  forget(name: string): void {
    this.byName.delete(name);
  }
}
