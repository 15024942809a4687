// V8 options the operator changes while it runs: which memory-first options are in effect, lifting one of them for
// the few seconds a plan takes, and collecting a plan's garbage after it (the options themselves are set at start,
// cli/heapOptions.ts).
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The flags applyOperatorV8Flags set in this process. */
const applied: string[] = [];

/** Records the flags `run` set itself (cli/heapOptions.ts). */
export function noteAppliedFlags(flags: readonly string[]): void {
  applied.push(...flags);
}

/** Whether V8's --optimize-for-size is in effect: given by the user (options, NODE_OPTIONS) or set by `run`. */
export function optimizingForSize(
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const words = [...execArgv, ...(env['NODE_OPTIONS'] ?? '').split(/\s+/), ...applied];
  let on = false;
  for (const w of words) {
    if (/^--optimize[-_]for[-_]size$/.test(w)) on = true;
    else if (/^--no-optimize[-_]for[-_]size$/.test(w)) on = false;
  }
  return on;
}

/**
 * Runs `plan` with --optimize-for-size lifted, when it is in effect. Planning is the one place the operator needs
 * speed: the flag makes V8 optimise less and collect sooner, and at 1,000 nodes / 30,000 pods it tripled a paced
 * step's plan (1.6 s → 3.2 s quiet, twice that on a loaded machine), long enough for the event loop to miss the leader
 * Lease's renewal (bench/RESULTS.md, issue 29). The flag is read at each collection, so it holds again for the rest.
 */
export function planFast<T>(plan: () => T): T {
  if (!optimizingForSize()) return plan();
  setFlagsFromString('--no-optimize-for-size');
  try {
    return plan();
  } finally {
    setFlagsFromString('--optimize-for-size');
  }
}

/** Heap growth since the last collection this module made, past which a slice of a plan collects (planSlice). */
const PLAN_GARBAGE_BYTES = 48 * 1024 * 1024;
let heapAfterCollection = 0;
/** V8's full collection, exposed on first use; null where it cannot be. */
let fullCollection: (() => void) | null | undefined;

function collector(): (() => void) | null {
  if (fullCollection === undefined) {
    try {
      // The flag only exposes `gc` to contexts created after it is set: a new one hands it over (as Jest gets it).
      setFlagsFromString('--expose-gc');
      fullCollection = runInNewContext('gc') as () => void;
      setFlagsFromString('--no-expose-gc');
    } catch {
      fullCollection = null;
    }
  }
  return fullCollection;
}

/**
 * One slice of a paced run's plan (operator/eviction/planSlices.ts): run fast (planFast), then, back under the
 * memory-first options, the garbage collected if it has piled up (collectPlanGarbage). Checked after every slice, not
 * only after the plan: a plan in slices lasts seconds while the run's evictions, answers and watch events go on, and
 * at 30,000 pods, checked only after each plan, the heap reached 394 MiB. (V8 sizes the old generation at each of its
 * own collections by the options in effect then, so the collections inside a slice, with --optimize-for-size lifted,
 * may well have let it grow.)
 */
export function planSlice<T>(work: () => T): T {
  const result = planFast(work);
  collectPlanGarbage();
  return result;
}

/**
 * Under the memory-first options: collects a plan's garbage when the heap has grown by more than PLAN_GARBAGE_BYTES
 * since the last time. With 1 MiB semi-spaces a plan's structures outlive the young generation and are promoted, and
 * V8 collects the old generation only once it has grown by a factor: at 1,000 nodes / 30,000 pods each step's plan
 * left about 27 MiB there, and the heap reached 271–317 MiB (bench/RESULTS.md, issue 29). One full collection of that
 * heap takes 0.1–0.2 s on a loaded machine. With V8's defaults (speed first) nothing is collected here. Returns
 * whether it collected.
 */
export function collectPlanGarbage(heapUsed: () => number = () => getHeapStatistics().used_heap_size): boolean {
  if (!optimizingForSize()) return false;
  if (heapUsed() - heapAfterCollection < PLAN_GARBAGE_BYTES) return false;
  const collect = collector();
  if (collect === null) return false;
  collect();
  heapAfterCollection = heapUsed();
  return true;
}
