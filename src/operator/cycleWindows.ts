// What a policy's maintenance windows mean for the controller: the policy and gate a cycle runs with (DryRun outside
// every window, a gate that closes at the window's end inside one), and the timer that rewrites the status at the
// next window boundary, so OutsideWindow flips on time even when no cycle runs then. The window arithmetic itself is in
// maintenanceWindows.ts; this is the per-policy timing kept apart from the cycle.
import type { Policy } from '../policy/types.js';
import type { Clock } from '../clock.js';
import { asDryRun, createEvictionGate, windowNow } from './maintenanceWindows.js';
import type { PolicyState } from './policyState.js';

/** Rewrites the status when the window state changes next, so OutsideWindow flips on time without a cycle. */
export function armWindowTimer(
  state: Pick<PolicyState, 'windowTimer'>,
  at: number | undefined,
  {
    clock,
    stopSignal,
    onBoundary,
  }: { readonly clock: Clock; readonly stopSignal: AbortSignal; readonly onBoundary: () => void },
): void {
  state.windowTimer?.abort();
  state.windowTimer = undefined;
  if (at === undefined || stopSignal.aborted) return;
  const timer = new AbortController();
  state.windowTimer = timer;
  const stop = (): void => timer.abort();
  stopSignal.addEventListener('abort', stop, { once: true });
  // A little after the boundary, so the state read then is the new one.
  // `at` is a window boundary: an instant on the wall clock.
  void clock.sleep(Math.max(0, at - clock.wall()) + 10, timer.signal).then(() => {
    stopSignal.removeEventListener('abort', stop);
    if (!timer.signal.aborted && state.windowTimer === timer) onBoundary();
  });
}

/** The policy as this cycle runs it (DryRun outside every window), the gate that closes at the window's end. */
export function windowedRun(
  policy: Policy,
  state: Pick<PolicyState, 'windowClosed'>,
  now: number,
  clock: Clock,
): {
  runPolicy: Policy;
  gate: (ReturnType<typeof createEvictionGate> & { readonly windowEnd: number }) | undefined;
  fields: object;
  message: string;
} {
  const window = windowNow(policy, now);
  if (window.kind === 'always') return { runPolicy: policy, gate: undefined, fields: {}, message: 'cycle started' };
  if (window.kind === 'closed') {
    const evict = policy.spec.mode === 'Evict';
    return {
      runPolicy: evict ? asDryRun(policy) : policy,
      gate: undefined,
      fields: { window: 'closed', nextWindow: window.nextStart },
      message: evict ? 'cycle started outside every maintenance window: planning as DryRun' : 'cycle started',
    };
  }
  state.windowClosed = undefined;
  const gate =
    policy.spec.mode === 'Evict'
      ? {
          ...createEvictionGate(window.until, clock, policy.spec.timeZone),
          windowEnd: window.until,
        }
      : undefined;
  return { runPolicy: policy, gate, fields: { window: 'open', windowEnds: window.until }, message: 'cycle started' };
}
