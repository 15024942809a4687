// What ended a cycle that left work undone (DESIGN.md, "Reports a user can act on"): the limit with its value and
// where it was reached (`maxPerNode 2 reached on node node-a`), a budget, the end of the maintenance window or the
// Degraded pause. Reported in the cycle's log line, its Event and status.lastPlan.stoppedBy, with the next cycle's
// time, so a user reads why the skew is still there and when the rest follows.
//
// The run's own limits come first: the planner's per-plan limits only pace a paced run (maxPerWorkload above all,
// which bounds evictions in flight, not a cycle's), so its skipped list would name the wrong one.
import type { RunPlan } from './eviction/runTypes.js';
import type { Halt } from './eviction/runHalt.js';
import { compileWindows, nextStart } from '../policy/windows.js';

/** `limit maxPerNode (2) reached on node a` → `maxPerNode 2 reached on node a`; other texts as they are. */
export function limitText(reason: string): string {
  const m = /^limit (\w+) \((\d+)\) reached(.*?)( in this run)?$/.exec(reason);
  return m === null ? reason : `${m[1]} ${m[2]} reached${m[3]}`;
}

const LIMIT = /^limit \w+ \(\d+\) reached/;
const BUDGET = /^PodDisruptionBudget \S+ allows 0 disruptions/;

export interface StopInput {
  readonly halted: Halt | undefined;
  /** The pause's message when the run left the policy Degraded. */
  readonly degraded: string | undefined;
  /** The first of the run's own limits that held an eviction back. */
  readonly limitReached: string | undefined;
  /** The run's last plan: what is left after it. */
  readonly lastPlan: RunPlan;
}

/** Whether the last plan leaves anything to do: moves it would still make, or pods a limit or a budget held back. */
function workLeft(last: RunPlan): boolean {
  return last.moves.length > 0 || last.plan.skipped.some((s) => LIMIT.test(s.reason) || BUDGET.test(s.reason));
}

/** What stopped the run with work left, or undefined when it finished its plan (or nothing was left). */
export function stoppedBy(input: StopInput): string | undefined {
  if (input.halted === 'window_closed') return 'the maintenance window ended';
  if (input.halted === 'degraded') return `the Degraded pause (${input.degraded ?? 'a replacement is Pending'})`;
  if (input.halted !== undefined || !workLeft(input.lastPlan)) return undefined;
  if (input.limitReached !== undefined) return limitText(input.limitReached);
  const skipped = input.lastPlan.plan.skipped;
  const limit = skipped.find((s) => LIMIT.test(s.reason)) ?? skipped.find((s) => BUDGET.test(s.reason));
  return limit === undefined ? undefined : limitText(limit.reason);
}

/**
 * The next tick of a cron schedule after `now` (epoch ms), in the process's time zone as node-cron runs it; undefined
 * when the expression uses a form the window arithmetic does not follow.
 */
export function nextTick(schedule: string, now: number, timeZone?: string): number | undefined {
  const zone = timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  try {
    const compiled = compileWindows([{ schedule, durationMs: 1 }], zone);
    return nextStart(compiled.windows[0]!, zone, now + 1000);
  } catch {
    return undefined;
  }
}

/** stoppedBy with the time of the next cycle, for the status, the log line and the Event. */
export function stopReport(
  input: StopInput,
  schedule: string | undefined,
  now: number,
  rfc3339: (ms: number) => string,
): { readonly stop: string | undefined; readonly text: string | undefined; readonly next: string | undefined } {
  const stop = stoppedBy(input);
  if (stop === undefined) return { stop, text: undefined, next: undefined };
  const at = schedule === undefined ? undefined : nextTick(schedule, now);
  const next = at === undefined ? undefined : rfc3339(at);
  const text = `${stop}; the rest ${next === undefined ? 'follows on the schedule' : `at the next cycle, ${next}`}`;
  return { stop, text, next };
}
