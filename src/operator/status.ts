// RebalancePolicy.status: a pure builder (what the status should say) and the one call that writes it
// (a JSON patch of the status subresource, so spec edits racing with it never conflict).
//
// Conditions (each with observedGeneration; lastTransitionTime kept while the condition's status is unchanged):
//   Invalid    True when the spec does not parse (message: every problem with its field path); such a policy never runs.
//   Suspended  True when spec.suspend is set.
//   Degraded   True when a replacement stayed Pending past replacementTimeout (ReplacementPending: the policy is
//              paused until the replacement is scheduled or the spec changes) or the last cycle failed (CycleFailed).
//   Ready      True when the policy is valid, not suspended and not degraded: it runs on its schedule.
//   OutsideWindow  (only for a policy with spec.windows) True outside every maintenance window, with the next
//              window's start; reason WindowClosed when a window ended during a cycle (maintenanceWindows.ts).
import type { CustomObjectsApi } from '@kubernetes/client-node';
import type { LastPlanStatus, PolicyCondition } from './clusterCache.js';

export const POLICY_GROUP = 'rebalancer.dev';
export const POLICY_VERSION = 'v1alpha1';
export const POLICY_PLURAL = 'rebalancepolicies';

export interface PolicyStatus {
  readonly observedGeneration: number;
  readonly conditions: readonly PolicyCondition[];
  readonly lastRunTime?: string;
  readonly lastSuccessfulRunTime?: string;
  readonly lastPlan?: LastPlanStatus;
  readonly totals: { readonly evicted: number; readonly failed: number };
}

export interface StatusInput {
  readonly generation: number;
  readonly now: number;
  /** The conditions currently on the object (for lastTransitionTime). */
  readonly previous: readonly PolicyCondition[];
  /** Problems of an invalid spec, one line. */
  readonly invalid: string | undefined;
  readonly suspended: boolean;
  readonly schedule: string | undefined;
  readonly mode: string | undefined;
  readonly degraded: { readonly reason: string; readonly message: string } | undefined;
  readonly lastRunTime: string | undefined;
  readonly lastSuccessfulRunTime: string | undefined;
  readonly lastPlan: LastPlanStatus | undefined;
  readonly totals: { readonly evicted: number; readonly failed: number };
  readonly outsideWindow?: { readonly status: boolean; readonly reason: string; readonly message: string };
}

function condition(input: StatusInput, type: string, value: boolean, reason: string, message: string): PolicyCondition {
  const status = value ? 'True' : 'False';
  const before = input.previous.find((c) => c.type === type);
  const lastTransitionTime =
    before !== undefined && before.status === status && before.lastTransitionTime !== ''
      ? before.lastTransitionTime
      : rfc3339(input.now);
  return { type, status, reason, message, lastTransitionTime, observedGeneration: input.generation };
}

/** The Ready condition's reason and message: the first of Invalid, Suspended, Degraded that holds, else Scheduled. */
function readiness(input: StatusInput): { ready: boolean; reason: string; message: string } {
  if (input.invalid !== undefined) {
    return { ready: false, reason: 'Invalid', message: 'the spec is invalid; the policy does not run' };
  }
  if (input.suspended)
    return { ready: false, reason: 'Suspended', message: 'spec.suspend is true; the policy does not run' };
  if (input.degraded !== undefined) {
    return { ready: false, reason: 'Degraded', message: `degraded: ${input.degraded.message}` };
  }
  const message = `runs on schedule ${JSON.stringify(input.schedule ?? '')} in ${input.mode ?? 'DryRun'} mode`;
  return { ready: true, reason: 'Scheduled', message };
}

export function buildStatus(input: StatusInput): PolicyStatus {
  const invalid = input.invalid !== undefined;
  const degraded = !invalid && input.degraded !== undefined;
  const suspended = !invalid && input.suspended;
  const ready = readiness(input);
  const conditions: PolicyCondition[] = [
    condition(input, 'Ready', ready.ready, ready.reason, ready.message),
    condition(
      input,
      'Degraded',
      degraded,
      degraded ? (input.degraded?.reason ?? 'Degraded') : 'AsExpected',
      degraded ? (input.degraded?.message ?? '') : '',
    ),
    condition(input, 'Invalid', invalid, invalid ? 'InvalidSpec' : 'Valid', input.invalid ?? ''),
    condition(
      input,
      'Suspended',
      suspended,
      suspended ? 'Suspended' : 'NotSuspended',
      suspended ? 'spec.suspend is true' : '',
    ),
  ];
  const w = input.outsideWindow;
  if (w !== undefined) conditions.push(condition(input, 'OutsideWindow', w.status, w.reason, w.message));
  return {
    observedGeneration: input.generation,
    conditions,
    ...(input.lastRunTime !== undefined ? { lastRunTime: input.lastRunTime } : {}),
    ...(input.lastSuccessfulRunTime !== undefined ? { lastSuccessfulRunTime: input.lastSuccessfulRunTime } : {}),
    ...(input.lastPlan !== undefined ? { lastPlan: input.lastPlan } : {}),
    totals: input.totals,
  };
}

/** Writes the whole status of a policy (JSON patch `add /status`, which replaces it). */
export async function writePolicyStatus(
  api: Pick<CustomObjectsApi, 'patchClusterCustomObjectStatus'>,
  name: string,
  status: PolicyStatus,
): Promise<void> {
  await api.patchClusterCustomObjectStatus({
    group: POLICY_GROUP,
    version: POLICY_VERSION,
    plural: POLICY_PLURAL,
    name,
    body: [{ op: 'add', path: '/status', value: status }],
  });
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
