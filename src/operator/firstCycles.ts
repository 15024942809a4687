// Each policy runs a cycle as soon as the caches are synced after the operator starts, and again whenever this
// replica becomes leader (DESIGN.md, "Reports a user can act on"): a policy already in the cluster does not wait for
// its first cron tick (up to its whole period) to show what it sees. Once per leadership term: the start-up and the
// Lease may arrive in either order, and only the first of them to find the caches synced and this replica leading
// starts the cycles.
import type { Logger } from 'pino';

export interface FirstCyclesDeps {
  readonly waitForSync: () => Promise<void>;
  readonly isLeader: () => boolean;
  /** The names of the policies in the cache. */
  readonly policies: () => readonly string[];
  /** Starts a cycle of the policy (coalesced with one already running). */
  readonly start: (name: string) => void;
  readonly logger: Logger;
}

export interface FirstCycles {
  /** The operator started (or, without leader election, is the leader from the start). */
  started(): Promise<void>;
  /** This replica became leader: a new term. */
  startedLeading(): Promise<void>;
}

export function createFirstCycles(deps: FirstCyclesDeps): FirstCycles {
  let term = 0;
  let ranForTerm = -1;
  const run = async (): Promise<void> => {
    await deps.waitForSync();
    // The term as it is once synced: a Lease won while the caches synced is this same start.
    const now = term;
    if (ranForTerm === now || !deps.isLeader()) return;
    ranForTerm = now;
    const names = deps.policies();
    deps.logger.info({ policies: names.length }, 'caches synced and leading: a first cycle of every policy');
    for (const name of names) deps.start(name);
  };
  return {
    started: run,
    startedLeading: () => {
      term++;
      return run();
    },
  };
}
