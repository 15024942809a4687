// The order the operator's parts start and stop in, kept in one place instead of by hand in createOperator, in the
// shape of controller-runtime's manager: the caches first (nothing can plan before they list), then whatever needs
// neither caches synced nor leadership, then the leader elector, then the controllers that act for the leader; and
// on the way down the exact reverse, each part stopped only once the one after it has stopped. So cycles end and
// write their status while the Lease is still held, and the Lease is let go before the caches stop feeding anyone.
//
// Two differences from controller-runtime, both on purpose:
// - Nothing waits for the caches to sync before the elector starts: a replica may win the Lease while it lists, and
//   the controllers gate their first cycle on the sync themselves (firstCycles.ts), so a slow list does not hold up a
//   leader change.
// - The controllers run on every replica and check leadership on each tick, status write and eviction (the fence in
//   src/kube), rather than being started when the Lease is won: needLeaderElection only places them after the
//   elector. A runnable also has an explicit stop(), which is called whether or not it was started, because the
//   operator may be shut down before it starts (and a start that has already begun cannot be taken back by a signal).
//
// It imports nothing of the operator (test/architecture/imports.test.ts holds it to that), so it can be read alone.

export interface Runnable {
  /** Says which part it is (in errors, and in the order a test reads back). */
  readonly name: string;
  /** A watch cache, or what the caches need (the server's version): started first, stopped last. */
  readonly cache?: boolean;
  /** The leader election: started after the caches and whatever needs no leadership. */
  readonly elector?: boolean;
  /** Acts for the leader only: started after the elector and stopped before it. */
  readonly needLeaderElection?: boolean;
  start(): void;
  /** Must be safe to call when start() never ran. */
  stop(): void | Promise<void>;
}

/** Start order: caches, then the rest, then the elector, then what needs leadership. */
function phaseOf(runnable: Runnable): number {
  if (runnable.cache === true) return 0;
  if (runnable.elector === true) return 2;
  if (runnable.needLeaderElection === true) return 3;
  return 1;
}

export class Manager {
  private readonly runnables: Runnable[] = [];
  private started = false;
  private stopped: Promise<void> | undefined;

  /** Adds a runnable; only before start(): one added later would never start. */
  add(runnable: Runnable): void {
    const roles = [runnable.cache, runnable.elector, runnable.needLeaderElection].filter((r) => r === true).length;
    if (roles > 1) throw new Error(`runnable ${runnable.name}: at most one of cache, elector, needLeaderElection`);
    if (this.started || this.stopped !== undefined) {
      throw new Error(`runnable ${runnable.name} added after the manager started`);
    }
    this.runnables.push(runnable);
  }

  /** The runnables in start order: by phase, and in the order they were added within one. */
  order(): readonly Runnable[] {
    return this.runnables
      .map((runnable, index) => ({ runnable, index, phase: phaseOf(runnable) }))
      .sort((a, b) => a.phase - b.phase || a.index - b.index)
      .map((entry) => entry.runnable);
  }

  /** Starts every runnable in order, once; nothing starts after stop() began. */
  start(): void {
    if (this.started || this.stopped !== undefined) return;
    this.started = true;
    for (const runnable of this.order()) runnable.start();
  }

  /**
   * Stops every runnable in the reverse of the start order, each after the one before it has finished stopping; the
   * same promise on every call. A runnable whose stop fails does not keep the others running: the first error is
   * thrown once all of them have been stopped.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      let failure: { error: unknown } | undefined;
      for (const runnable of [...this.order()].reverse()) {
        try {
          await runnable.stop();
        } catch (error) {
          failure ??= { error };
        }
      }
      if (failure !== undefined) throw failure.error;
    })();
    return this.stopped;
  }
}
