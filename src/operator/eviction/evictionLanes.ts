// The lanes of one policy run: one concurrent task per workload with planned evictions, and the wait that batches
// re-plans while lanes finish.
import type { Clock } from '../../clock.js';

export interface ReplanWait {
  readonly clock: Clock;
  /** Least time between two plans while lanes are still active. */
  readonly minReplanIntervalMs: number;
  /** True once the run halted: stop waiting. */
  readonly halted: () => boolean;
  /** Lanes that have not sent their eviction yet (queued in the closed loop); absent: not counted. */
  readonly queued?: () => number;
  /**
   * Fewer queued than this and the run re-plans at minReplanIntervalMs (default QUEUE_LOW_WATER): enough to keep the
   * client busy while the next plan is made, which the run measures (the evictions sent during the last one).
   */
  readonly lowWater?: number;
}

/**
 * Fewer evictions queued or waiting for the client than this (three seconds of the default budget) and the run
 * re-plans as soon as a lane has finished and minReplanIntervalMs has passed: planned now, the next step is queued
 * before the client idles, and what the plan holds up the token bucket gives back (it refills for two seconds).
 */
const QUEUE_LOW_WATER = 60;

/** Re-plan no sooner than this many times the last plan took (see waitForProgress). */
const REPLAN_COST_FACTOR = 9;

export class EvictionLanes {
  private readonly active = new Map<string, Promise<void>>();
  private finishedSincePlan = 0;
  private wake: (() => void) | undefined;

  get size(): number {
    return this.active.size;
  }

  has(workload: string): boolean {
    return this.active.has(workload);
  }

  workloads(): Iterable<string> {
    return this.active.keys();
  }

  /** Starts `work` as the workload's lane; `onError` turns a failure into a hold, the lane still counts as done. */
  start(workload: string, work: Promise<void>, onError: (err: unknown) => void): void {
    const lane = work.then(
      () => this.done(workload),
      (err: unknown) => {
        onError(err);
        this.done(workload);
      },
    );
    this.active.set(workload, lane);
  }

  /** Wakes a pending waitForProgress (the run halted). */
  wakeUp(): void {
    this.wake?.();
  }

  /** Resolves when every lane started so far has finished. */
  async settled(): Promise<void> {
    await Promise.all(this.active.values());
  }

  /**
   * Waits until re-planning is worth it: a lane finished and (all are done or the batching interval passed). The
   * interval is at least REPLAN_COST_FACTOR times the last planning time, so planning takes at most about a tenth of
   * a long run: at 10,000 pods a whole plan costs 100–300 ms, and re-planning every second spent a third of a core on
   * plans (and their garbage) that the API budget, not the planner, was pacing anyway.
   */
  async waitForProgress(lastPlanAt: number, planMs: number, wait: ReplanWait): Promise<void> {
    const batched = Math.max(wait.minReplanIntervalMs, REPLAN_COST_FACTOR * planMs);
    this.finishedSincePlan = 0;
    for (;;) {
      if (wait.halted() || this.active.size === 0) return;
      const starving = wait.queued !== undefined && wait.queued() < Math.max(QUEUE_LOW_WATER, wait.lowWater ?? 0);
      const interval = starving ? wait.minReplanIntervalMs : batched;
      const now = wait.clock.now();
      if (this.finishedSincePlan > 0 && now >= lastPlanAt + interval) return;
      const progress = new Promise<void>((resolve) => (this.wake = resolve));
      const timer = new AbortController();
      const waits: Promise<void>[] = [progress];
      if (this.finishedSincePlan > 0) waits.push(wait.clock.sleep(lastPlanAt + interval - now, timer.signal));
      await Promise.race(waits);
      timer.abort();
      this.wake = undefined;
    }
  }

  private done(workload: string): void {
    this.active.delete(workload);
    this.finishedSincePlan++;
    this.wake?.();
  }
}
