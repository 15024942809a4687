// V8 options the operator changes while it runs: which memory-first options are in effect, and lifting one of them
// for the few seconds a plan takes (the options themselves are set at start, cli/heapOptions.ts).
import { setFlagsFromString } from 'node:v8';

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
