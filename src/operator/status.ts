// RebalancePolicy.status: a pure builder (what the status should say), the reader of the state a previous leader
// persisted there, and the one call that writes it.
//
// What must outlive a process lives here (DESIGN.md): active cooldowns (`until` is wall time, as people read it),
// the Degraded pause (the Pending replacement it waits for, by uid) and the totals. A new leader reads them back from
// the live object before its first cycle.
//
// The write is a JSON patch of the status subresource that carries the resourceVersion the writer last read or
// wrote: the API server answers 409 when the object changed since (a spec edit, or a write by another leader), so a
// replica holding a stale picture can never overwrite a newer status; the caller re-reads and merges (cycle.ts).
//
// Conditions (each with observedGeneration; lastTransitionTime kept while the condition's status is unchanged):
//   Invalid    True when the spec does not parse (message: every problem with its field path); such a policy never runs.
//   Suspended  True when spec.suspend is set.
//   Degraded   True when a replacement stayed Pending past replacementTimeout (ReplacementPending: the policy is
//              paused until the replacement is scheduled or the spec changes), the last cycle failed (CycleFailed),
//              or a `usage: Metrics` strategy had no metrics.k8s.io to plan with (MetricsUnavailable: the message
//              names the API and the HTTP status; the next cycle that reads metrics clears it), or replacements
//              kept landing elsewhere than predicted (PredictionsUnreliable, landingRecord.ts: nothing is evicted by
//              prediction until the spec or the scheduler configuration changes).
//   Ready      True when the policy is valid, not suspended and not degraded: it runs on its schedule. Its reason is
//              OutsideWindow (still True) outside every maintenance window, for the STATUS printer column; its message
//              says when the scope selects nothing (a namespace that does not exist, a selector matching no pod).
//   OutsideWindow  (only for a policy with spec.windows) True outside every maintenance window, with the next
//              window's start; reason WindowClosed when a window ended during a cycle (maintenanceWindows.ts).
import type { KubeApi } from '../kube/kubeClient.js';
import { readLanding, type LandingStatus } from './landingRecord.js';

export const POLICY_GROUP = 'rebalancer.dev';
export const POLICY_VERSION = 'v1alpha1';
export const POLICY_PLURAL = 'rebalancepolicies';

export interface LastPlanStatus {
  /** Pods the last cycle evicted (dry runs are not evictions). */
  readonly evictions: number;
  /** Evictions the last cycle only tried with dryRun (a DryRun policy's "would evict"). */
  readonly dryRunEvictions?: number;
  readonly skipped: number;
  /** Rule violations and hard spread groups above maxSkew the cycle found. */
  readonly violations: number;
  /** Largest topology skew when the cycle ended (after its evictions and their replacements). */
  readonly maxSkewObserved: number;
  /** Largest topology skew when the cycle began. */
  readonly maxSkewBefore?: number;
  /** Why pods were skipped, by class, most frequent first (at most 10); the counts add up to `skipped` when ≤ 10 classes. */
  readonly skippedReasons: readonly { readonly reason: string; readonly count: number }[];
  /** What ended the cycle with work left (a limit, a budget, the window, the pause) and when the next one runs. */
  readonly stoppedBy?: string;
}

export interface PolicyCondition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration?: number;
}

export interface CooldownStatus {
  /** `namespace/Kind/name`. */
  readonly workload: string;
  /** RFC 3339 (wall clock). */
  readonly until: string;
  readonly reason: string;
}

export interface PauseStatus {
  /** `namespace/name` of the replacement that stayed Pending. */
  readonly pod: string;
  readonly podUid: string;
  readonly workload: string;
  /** RFC 3339. */
  readonly since: string;
  readonly reason: string;
  readonly message: string;
}

/** How the last cycle ended; an aborted cycle is not a failed one. */
export type RunResultName = 'Succeeded' | 'Failed' | 'Aborted';

export interface LastRunResult {
  readonly result: RunResultName;
  /** For Aborted: SpecChanged, LeadershipLost, ShuttingDown; for Failed: CycleFailed; else Completed. */
  readonly reason: string;
}

/** The state a leader carries over from the status (the part that must survive it). */
export interface PersistedState {
  readonly totals: { readonly evicted: number; readonly failed: number } | undefined;
  readonly cooldowns: readonly CooldownStatus[];
  readonly pause: PauseStatus | undefined;
  /** How predictions held, and the PredictionsUnreliable verdict if any (landingRecord.ts). */
  readonly landing?: LandingStatus | undefined;
}

export interface PolicyStatus {
  readonly observedGeneration: number;
  readonly conditions: readonly PolicyCondition[];
  readonly lastRunTime?: string;
  readonly lastSuccessfulRunTime?: string;
  readonly lastPlan?: LastPlanStatus;
  readonly totals: { readonly evicted: number; readonly failed: number };
  readonly cooldowns: readonly CooldownStatus[];
  readonly pause?: PauseStatus;
  readonly lastRunResult?: LastRunResult;
  readonly landing?: LandingStatus;
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
  readonly cooldowns?: readonly CooldownStatus[];
  readonly pause?: PauseStatus | undefined;
  readonly lastRunResult?: LastRunResult | undefined;
  readonly outsideWindow?: { readonly status: boolean; readonly reason: string; readonly message: string };
  /** What is wrong with the policy's scope (a namespace that does not exist, a selector matching no pod). */
  readonly scope?: string | undefined;
  readonly landing?: LandingStatus | undefined;
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
  const runs = `runs on schedule ${JSON.stringify(input.schedule ?? '')} in ${input.mode ?? 'DryRun'} mode`;
  const message = input.scope === undefined ? runs : `${runs}; ${input.scope}`;
  // Outside every window the policy runs but cannot evict: the STATUS printer column (this reason) says so.
  if (input.outsideWindow?.status === true) {
    return { ready: true, reason: 'OutsideWindow', message: `${message}; ${input.outsideWindow.message}` };
  }
  return { ready: true, reason: 'Ready', message };
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
    cooldowns: input.cooldowns ?? [],
    ...(input.pause !== undefined ? { pause: input.pause } : {}),
    ...(input.lastRunResult !== undefined ? { lastRunResult: input.lastRunResult } : {}),
    ...(input.landing !== undefined ? { landing: input.landing } : {}),
  };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : '');
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** The persisted part of a status object as read from the API (anything malformed is dropped, never thrown). */
export function readPersisted(status: unknown): PersistedState {
  const s = isObj(status) ? status : {};
  const totals = isObj(s['totals'])
    ? { evicted: count(s['totals']['evicted']), failed: count(s['totals']['failed']) }
    : undefined;
  const cooldowns: CooldownStatus[] = [];
  for (const c of Array.isArray(s['cooldowns']) ? s['cooldowns'] : []) {
    if (!isObj(c) || text(c['workload']) === '' || Number.isNaN(Date.parse(text(c['until'])))) continue;
    cooldowns.push({ workload: text(c['workload']), until: text(c['until']), reason: text(c['reason']) });
  }
  const p = s['pause'];
  const pause =
    isObj(p) && text(p['pod']).includes('/') && !Number.isNaN(Date.parse(text(p['since'])))
      ? {
          pod: text(p['pod']),
          podUid: text(p['podUid']),
          workload: text(p['workload']),
          since: text(p['since']),
          reason: text(p['reason']) || 'ReplacementPending',
          message: text(p['message']),
        }
      : undefined;
  return { totals, cooldowns, pause, landing: readLanding(s['landing']) };
}

/** The API server refused the write because the object changed since `resourceVersion` (409). */
export class StatusConflictError extends Error {
  readonly code = 'E_STATUS_CONFLICT' as const;
  constructor(name: string) {
    super(`RebalancePolicy ${JSON.stringify(name)} changed since it was read; status not written`);
    this.name = 'StatusConflictError';
  }
}

/**
 * Writes the whole status of a policy (JSON patch `add /status`, which replaces it), on condition that the object is
 * still at `resourceVersion`. Resolves to the new resourceVersion; rejects with StatusConflictError on 409.
 */
export async function writePolicyStatus(
  api: Pick<KubeApi['custom'], 'patchClusterCustomObjectStatus'>,
  name: string,
  status: PolicyStatus,
  resourceVersion: string,
): Promise<string> {
  try {
    const written: unknown = await api.patchClusterCustomObjectStatus({
      group: POLICY_GROUP,
      version: POLICY_VERSION,
      plural: POLICY_PLURAL,
      name,
      body: [
        { op: 'replace', path: '/metadata/resourceVersion', value: resourceVersion },
        { op: 'add', path: '/status', value: status },
      ],
    });
    const meta = isObj(written) && isObj(written['metadata']) ? written['metadata'] : {};
    return text(meta['resourceVersion']);
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === 409) throw new StatusConflictError(name);
    throw err;
  }
}

/**
 * Reads one policy as it is now on the server (not the watch cache): what a new leader starts from. A list narrowed
 * to the name, because the shipped ClusterRole grants list and watch on policies, not get.
 */
export async function readPolicy(
  api: Pick<KubeApi['custom'], 'listClusterCustomObject'>,
  name: string,
): Promise<unknown> {
  const list: unknown = await api.listClusterCustomObject({
    group: POLICY_GROUP,
    version: POLICY_VERSION,
    plural: POLICY_PLURAL,
    fieldSelector: `metadata.name=${name}`,
  });
  const items = isObj(list) && Array.isArray(list['items']) ? (list['items'] as unknown[]) : [];
  return items[0];
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
