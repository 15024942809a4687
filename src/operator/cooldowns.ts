// Loop detection's answer: a workload whose replacement landed back where it was evicted from is left alone for the
// policy's cooldown (spec.eviction.cooldownMs). The cooldowns live in the policy's state (policyState.ts, persisted in
// the status so they outlive a leader change); here is how one starts and which are still in force for the planner.
import type { Clock } from '../clock.js';
import type { LoopDetection } from './eviction/pacing.js';
import type { PolicyState } from './policyState.js';
import { rfc3339 } from './status.js';

/** Cooldown holds still in force, for the planner. */
export function cooldownHolds(state: Pick<PolicyState, 'cooldowns'>, now: number): Map<string, string> {
  const held = new Map<string, string>();
  for (const [key, c] of state.cooldowns) {
    if (c.until <= now) state.cooldowns.delete(key);
    else held.set(key, c.reason);
  }
  return held;
}

/** Starts the workload's cooldown after an evict/reschedule loop; returns what the warning and the Event say. */
export function startLoopCooldown(
  state: Pick<PolicyState, 'cooldowns'>,
  loop: LoopDetection,
  cooldownMs: number,
  clock: Clock,
): string {
  const untilWall = clock.wall() + cooldownMs;
  const reason = `cooldown until ${rfc3339(untilWall)}: a replacement landed back on ${loop.where}`;
  state.cooldowns.set(loop.workload, { until: clock.now() + cooldownMs, untilWall, reason });
  return (
    `evict/reschedule loop: ${loop.evicted.namespace}/${loop.evicted.name} was evicted, and its replacement ` +
    `${loop.replacement.namespace}/${loop.replacement.name} landed back on ${loop.where}; ` +
    `${loop.workload} is left alone for ${Math.round(cooldownMs / 1000)}s`
  );
}
