// A plan made in steps: the planner's long loops yield between units of work (a spread group, a phase), so that the
// operator can give the event loop back between them (operator/eviction/planSlices.ts) while the CLI runs the same
// steps to the end at once. The steps share no state with the world outside the plan: the snapshot, the options and
// the planner's own state are fixed when the plan starts, so where it pauses changes nothing in what it returns.

/** Steps that yield nothing between units of work, and return the plan's result. */
export type PlanSteps<T> = Generator<void, T, void>;

/** Runs every step at once: the result, as if the plan had no steps. */
export function finish<T>(steps: PlanSteps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done === true) return next.value;
  }
}
