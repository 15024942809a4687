// A paced run's plan shares the event loop with the run's evictions. At 1,000 nodes / 30,000 pods one step's plan
// (200 evictions, each predicted against the hundreds of replacements on their way) took 3–5 s on the bench's loaded
// machine, and held the loop all that time: no eviction was sent, no answer read, and the client's token bucket,
// which holds 2 s of refill at the default QPS and burst, lost the rest (bench/RESULTS.md, issue 29). So the plan runs
// in slices of about SLICE_MS, the planner's steps (planner/steps.ts) between them, and each slice gives the loop back:
// the evictions queued before it go out on time while it is made.
import { performance } from 'node:perf_hooks';
import type { PlanSteps } from '../../planner/steps.js';

/** Work between two returns to the event loop; far below the bucket's 2 s and the Lease's renew deadline. */
export const SLICE_MS = 25;

/**
 * Runs `steps` to the end, `slice` around each run of them (planFast), returning to the event loop whenever a slice
 * has taken `sliceMs` of real time. Real time, not the injected clock: the slices are about the loop itself, and the
 * result does not depend on where they fall.
 */
export async function runInSlices<T>(
  steps: PlanSteps<T>,
  slice: <R>(work: () => R) => R = (work) => work(),
  sliceMs = SLICE_MS,
): Promise<T> {
  for (;;) {
    const until = performance.now() + sliceMs;
    const next = slice(() => {
      for (;;) {
        const step = steps.next();
        if (step.done === true || performance.now() >= until) return step;
      }
    });
    if (next.done === true) return next.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
