// A cycle of one policy: snapshot from the caches → plan → execute (a PolicyRun, which re-plans as its evictions
// land) → status, metrics and Events. Also the per-policy state that outlives a cycle: cooldowns (workloads whose
// replacement landed back), the Degraded pause, totals, the last-run fields of the status, and the status writes
// that are not tied to a cycle (a new or edited policy: observedGeneration, Invalid, Suspended).
//
// The pause: a replacement still Pending at replacementTimeout pauses the policy (Degraded, ReplacementPending,
// with an Event), because its evictions cannot come back. Ticks are then skipped until that pod is scheduled or
// gone, or the spec changes (an edit is taken as the operator's user acknowledging the problem). A policy whose
// `usage: Metrics` strategies find no metrics.k8s.io is Degraded too (MetricsUnavailable), but keeps running: each
// cycle reads the metrics again, and the first that plans with them clears it.
//
// Leadership. Cooldowns, the pause and the totals live in the policy's status, so they outlive this process. Only the
// leader holds per-policy state: when a replica starts leading it first reads every policy from the API server (not
// its watch cache, which may lag) and rebuilds the state from the status found there; cycles wait for that. When it
// stops leading, its running cycles are aborted and its state is dropped, so it can never write a stale picture
// later; what it did and had not written is carried (carriedRecord.ts) and merged back if it leads again. Every status write is conditional on the resourceVersion last read or written (status.ts); on a conflict
// the live status is read again and merged: totals add what this replica counted but has not written, cooldowns
// are the union, the pause is this replica's own view (it has seen the latest cycle).
//
// A policy is tracked by uid: a policy deleted and recreated under the same name starts from its new status.
// A deleted policy's cycle is aborted, and nothing of it is recorded afterwards (metrics, status, Events).
import type { Logger } from 'pino';
import { violationCounts, type RebalancerMetrics } from '../metrics/metrics.js';
import type { AbortReason, CycleResult } from '../metrics/names.js';
import { isPendingForScheduler } from '../model/pods.js';
import type { UsageMetrics } from '../model/types.js';
import type { PlanOutcome } from '../planner/plan.js';
import type { RebalancePlan } from '../planner/types.js';
import { METRICS_UNAVAILABLE } from '../planner/usageMeasure.js';
import { usesMetrics } from '../planner/utilization.js';
import { STRATEGIES } from '../strategies/registry.js';
import { countSkipReasons } from '../planner/skipReasons.js';
import type { Policy } from '../policy/types.js';
import type { Clock } from '../clock.js';
import type { CycleTrigger } from './debounce.js';
import type { ClusterCache, LastPlanStatus, PolicyEntry } from './clusterCache.js';
import type { EventRecorder, EventTarget } from './events.js';
import { CarriedRecords } from './carriedRecord.js';
import { PolicyRun } from './eviction/executor.js';
import type { Degradation, RunDeps, RunResult } from './eviction/runTypes.js';
import {
  asDryRun,
  createEvictionGate,
  nextBoundary,
  outsideWindowCondition,
  windowNow,
  type WindowClosedDuringCycle,
} from './maintenanceWindows.js';
import type { LoopDetection } from './eviction/pacing.js';
import { stopReport } from './stoppedBy.js';
import { scopeProblem } from './scopeCheck.js';
import type { Landing } from './eviction/landing.js';
import { LandingRecord, PREDICTIONS_UNRELIABLE, schedulerConfigFingerprint } from './landingRecord.js';
import {
  buildStatus,
  POLICY_GROUP,
  POLICY_VERSION,
  rfc3339,
  StatusConflictError,
  type CooldownStatus,
  type LastRunResult,
  type PersistedState,
  type PolicyStatus,
} from './status.js';

interface Cooldown {
  /** Monotonic deadline. */
  readonly until: number;
  /** The same instant on the wall clock, for the status. */
  readonly untilWall: number;
  readonly reason: string;
}

type Pause = Degradation & { readonly since: number };

export interface PolicyState {
  readonly uid: string;
  readonly cooldowns: Map<string, Cooldown>;
  paused: Pause | undefined;
  lastFailure: string | undefined;
  /**
   * The last cycle's strategies that could not plan (`usage: Metrics` without metrics.k8s.io): the policy is
   * Degraded with their reason until a cycle plans with metrics again.
   */
  planDegraded: { readonly reason: string; readonly message: string } | undefined;
  totals: { evicted: number; failed: number };
  /** Counted by this replica and not yet written (added to the live totals when a write conflicts). */
  unwritten: { evicted: number; failed: number };
  lastRunTime: string | undefined;
  lastSuccessfulRunTime: string | undefined;
  lastPlan: LastPlanStatus | undefined;
  lastRunResult: LastRunResult | undefined;
  /** The object version the next status write is conditional on. */
  resourceVersion: string;
  cycles: number;
  run: AbortController | undefined;
  /** Status writes of this policy, one at a time. */
  writes: Promise<void>;
  /** The policy (this uid) was deleted: nothing of it is recorded any more. */
  deleted: boolean;
  /** Monotonic time of the last status write started by a run's checkpoint. */
  checkpointAt: number;
  /** The last cycle stopped evicting because its maintenance window ended (until a window opens again). */
  windowClosed: WindowClosedDuringCycle | undefined;
  /** Wakes at the next window boundary to refresh the OutsideWindow condition. */
  windowTimer: AbortController | undefined;
  /** What the last cycle found wrong with the scope (it selects nothing), for the Ready condition's message. */
  scope: string | undefined;
  /** How the policy's predictions held (status.landing), PredictionsUnreliable included. */
  readonly landing: LandingRecord;
}

/**
 * A long run writes its totals at most this often while it evicts, so a crash or a lost Lease loses at most this
 * much of the count (the rest of the status is written when the run ends).
 */
const CHECKPOINT_MS = 5_000;

export interface PolicyControllerDeps {
  readonly cache: ClusterCache;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: RebalancerMetrics;
  readonly events: EventRecorder;
  readonly isLeader: () => boolean;
  readonly run: RunDeps;
  /** Writes the status on condition of `resourceVersion`; resolves to the new one (StatusConflictError on 409). */
  readonly writeStatus: (name: string, status: PolicyStatus, resourceVersion: string) => Promise<string>;
  /** The policy as it is now on the API server, converted; undefined when it does not exist. */
  readonly readPolicy: (name: string) => Promise<PolicyEntry | undefined>;
  /** Reads metrics.k8s.io, for a cycle of a policy with `usage: Metrics` (never rejects: unavailable says why). */
  readonly readMetrics?: () => Promise<UsageMetrics>;
  /** Aborts every run (shutdown). */
  readonly stopSignal: AbortSignal;
}

export function policyTarget(entry: Pick<PolicyEntry, 'name' | 'uid'>): EventTarget {
  return {
    apiVersion: `${POLICY_GROUP}/${POLICY_VERSION}`,
    kind: 'RebalancePolicy',
    name: entry.name,
    ...(entry.uid !== '' ? { uid: entry.uid } : {}),
  };
}

export function maxSkew(outcome: Pick<PlanOutcome, 'plan'>): number {
  let max = 0;
  for (const t of outcome.plan.topology) max = Math.max(max, t.skew);
  return max;
}

function problemsText(entry: PolicyEntry): string | undefined {
  if (entry.policy !== undefined) return undefined;
  return entry.problems.map((p) => (p.field === '' ? p.problem : `${p.field}: ${p.problem}`)).join('; ');
}

const ABORT_TEXT: Record<AbortReason, { reason: string; text: string }> = {
  spec_changed: { reason: 'SpecChanged', text: 'the spec changed' },
  deleted: { reason: 'PolicyDeleted', text: 'the policy was deleted' },
  leadership_lost: { reason: 'LeadershipLost', text: 'this replica lost the leader lease' },
  shutting_down: { reason: 'ShuttingDown', text: 'the operator is shutting down' },
};

function splitPod(text: string): { namespace: string; name: string } {
  const slash = text.indexOf('/');
  return { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
}

/**
 * The metrics a run records through: nothing once its policy is deleted (its series are gone and stay gone), and no
 * picture of the cluster (skew, violations, planned evictions) once this replica no longer leads. Counters of what
 * did happen (evictions, cycles, aborts) are kept while the policy exists.
 */
function gatedMetrics(metrics: RebalancerMetrics, exists: () => boolean, leads: () => boolean): RebalancerMetrics {
  const picture = (): boolean => exists() && leads();
  return {
    ...metrics,
    recordTopology: (...a) => (picture() ? metrics.recordTopology(...a) : undefined),
    recordViolations: (...a) => (picture() ? metrics.recordViolations(...a) : undefined),
    recordPlan: (...a) => (picture() ? metrics.recordPlan(...a) : undefined),
    recordCycleEvictions: (...a) => (picture() ? metrics.recordCycleEvictions(...a) : undefined),
    recordEviction: (...a) => (exists() ? metrics.recordEviction(...a) : undefined),
    observeCycle: (...a) => (exists() ? metrics.observeCycle(...a) : undefined),
    recordAbort: (...a) => (exists() ? metrics.recordAbort(...a) : undefined),
  };
}

export class PolicyController {
  private readonly states = new Map<string, PolicyState>();
  /** Set while a new leader rebuilds its state from the live statuses; cycles and writes wait for it. */
  private adoption: Promise<void> | undefined;
  /** The states dropped when this replica last stopped leading, merged back when it leads again. */
  private readonly carried = new CarriedRecords<Cooldown, PolicyState>();

  constructor(private readonly deps: PolicyControllerDeps) {}

  /** A state rebuilt from the live status, plus what this replica did while it led before and did not write. */
  private adopted(entry: PolicyEntry): PolicyState {
    const state = this.fresh(entry, entry.status.persisted);
    const added = this.carried.adopt(entry.name, state);
    if (added !== undefined) {
      this.deps.logger.info(
        { policy: entry.name, ...added },
        'merged what this replica did while it led before with the status read back',
      );
    }
    return state;
  }

  private fresh(entry: PolicyEntry, persisted: PersistedState): PolicyState {
    const now = this.deps.clock.now();
    const wall = this.deps.clock.wall();
    const cooldowns = new Map<string, Cooldown>();
    for (const c of persisted.cooldowns) {
      const untilWall = Date.parse(c.until);
      // The remaining time is measured on this replica's monotonic clock from here on.
      if (untilWall > wall) cooldowns.set(c.workload, { until: now + (untilWall - wall), untilWall, reason: c.reason });
    }
    const p = persisted.pause;
    const paused: Pause | undefined =
      p === undefined
        ? undefined
        : {
            reason: 'ReplacementPending',
            message: p.message,
            pod: { ...splitPod(p.pod), uid: p.podUid },
            workload: p.workload,
            since: Date.parse(p.since),
          };
    const seen = entry.status;
    // A new leader keeps a MetricsUnavailable it finds (and sends no second Event) until its own cycle reads again.
    const metricsDown = seen.conditions.find(
      (c) => c.type === 'Degraded' && c.status === 'True' && c.reason === METRICS_UNAVAILABLE,
    );
    return {
      uid: entry.uid,
      cooldowns,
      paused,
      lastFailure: undefined,
      planDegraded:
        metricsDown === undefined ? undefined : { reason: metricsDown.reason, message: metricsDown.message },
      totals: { ...(persisted.totals ?? { evicted: 0, failed: 0 }) },
      unwritten: { evicted: 0, failed: 0 },
      lastRunTime: seen.lastRunTime,
      lastSuccessfulRunTime: seen.lastSuccessfulRunTime,
      lastPlan: seen.lastPlan,
      lastRunResult: undefined,
      resourceVersion: entry.resourceVersion,
      cycles: 0,
      run: undefined,
      writes: Promise.resolve(),
      deleted: false,
      checkpointAt: this.deps.clock.now(),
      windowClosed: undefined,
      windowTimer: undefined,
      scope: undefined,
      landing: new LandingRecord(persisted.landing),
    };
  }

  /** The state of a policy, built from its status when first needed or when the name now belongs to a new object. */
  state(name: string): PolicyState | undefined {
    const entry = this.deps.cache.policy(name);
    const known = this.states.get(name);
    if (entry === undefined) return known;
    if (known !== undefined && (known.uid === entry.uid || entry.uid === '')) return known;
    if (known !== undefined) {
      known.deleted = true;
      known.run?.abort('deleted');
      this.deps.metrics.forgetPolicy(name);
    }
    // Only a leader takes over what was carried (a follower's state is dropped when it starts leading).
    const state =
      known === undefined && this.deps.isLeader() ? this.adopted(entry) : this.fresh(entry, entry.status.persisted);
    this.states.set(name, state);
    return state;
  }

  private live(name: string, state: PolicyState): boolean {
    return this.states.get(name) === state;
  }

  /**
   * This replica now leads: rebuild every policy's state from the live status (a follower's view may be stale),
   * then write the statuses. Cycles that tick meanwhile wait for the rebuild.
   */
  async startedLeading(): Promise<void> {
    this.states.clear();
    const adoption = (async () => {
      const entries = this.deps.cache.policyList();
      await Promise.all(
        entries.map(async (cached) => {
          try {
            const entry = await this.deps.readPolicy(cached.name);
            if (entry !== undefined) this.states.set(entry.name, this.adopted(entry));
          } catch (err) {
            // Unreadable now: the watch cache's copy is the best there is (and the write precondition guards it).
            this.deps.logger.warn(
              { policy: cached.name, err: err instanceof Error ? err.message.split('\n')[0] : String(err) },
              'could not read the policy; its state is rebuilt from the watch cache',
            );
          }
        }),
      );
    })();
    this.adoption = adoption;
    await adoption;
    if (this.adoption === adoption) this.adoption = undefined;
    this.deps.logger.info({ policies: this.states.size }, 'leader state rebuilt from the policies’ status');
    await this.syncAll();
  }

  /** This replica stopped leading: abort its cycles and forget its state (the next leader owns it). */
  stoppedLeading(): void {
    for (const state of this.states.values()) state.run?.abort('leadership_lost');
    this.carried.keep(this.states);
    this.states.clear();
    this.deps.metrics.forgetLeaderSeries();
  }

  /** A policy appeared or its spec changed: abort its running cycle, lift a pause, report the new state. */
  specChanged(entry: PolicyEntry, previousGeneration: number | undefined): void {
    const state = this.state(entry.name);
    if (state === undefined) return;
    if (previousGeneration !== undefined) {
      state.run?.abort('spec_changed');
      if (state.paused !== undefined) {
        this.deps.logger.info({ policy: entry.name }, 'spec changed; the Degraded pause is lifted');
        state.paused = undefined;
      }
    }
    const problems = problemsText(entry);
    if (problems !== undefined && this.deps.isLeader()) {
      this.deps.events.record(policyTarget(entry), 'Warning', 'InvalidPolicy', problems);
      this.deps.logger.warn({ policy: entry.name }, `policy is invalid and will not run: ${problems}`);
    }
    void this.syncStatus(entry.name);
  }

  /** Aborts every running cycle (shutdown). */
  abortRuns(reason: AbortReason): void {
    for (const state of this.states.values()) state.run?.abort(reason);
  }

  removed(name: string): void {
    this.carried.forget(name);
    const state = this.states.get(name);
    state?.windowTimer?.abort();
    this.states.delete(name);
    if (state !== undefined) state.deleted = true;
    state?.run?.abort('deleted');
    this.deps.metrics.forgetPolicy(name);
  }

  /** Writes the status of every policy (a replica that just became leader). */
  async syncAll(): Promise<void> {
    await Promise.all(this.deps.cache.policyList().map((entry) => this.syncStatus(entry.name)));
  }

  /** Writes the policy's status as the state says it should be (leader only; failures are logged). */
  async syncStatus(name: string): Promise<void> {
    if (this.adoption !== undefined) await this.adoption;
    if (!this.deps.isLeader()) return;
    const state = this.state(name);
    if (state === undefined) return;
    const write = state.writes.then(() => this.writeWithMerge(name, state));
    state.writes = write;
    await write;
  }

  private statusOf(entry: PolicyEntry, state: PolicyState): PolicyStatus {
    const policy = entry.policy;
    // Windows are cron expressions in a time zone: wall time.
    const window = policy === undefined ? undefined : windowNow(policy, this.deps.clock.wall());
    // A later window forgets how the previous one ended (the run's own window may still read as open for a moment).
    if (window?.kind === 'open' && window.until !== state.windowClosed?.windowEnd) state.windowClosed = undefined;
    this.armWindowTimer(entry.name, state, window === undefined ? undefined : nextBoundary(window));
    const unreliable = state.landing.unreliableFor(entry.generation, this.schedulerConfig);
    const degraded =
      state.paused !== undefined
        ? { reason: state.paused.reason, message: state.paused.message }
        : state.lastFailure !== undefined
          ? { reason: 'CycleFailed', message: state.lastFailure }
          : unreliable !== undefined
            ? { reason: PREDICTIONS_UNRELIABLE, message: unreliable.message }
            : state.planDegraded;
    const now = this.deps.clock.now();
    const cooldowns: CooldownStatus[] = [];
    for (const [workload, c] of state.cooldowns) {
      if (c.until > now) cooldowns.push({ workload, until: rfc3339(c.untilWall), reason: c.reason });
    }
    const p = state.paused;
    return buildStatus({
      generation: entry.generation,
      now: this.deps.clock.wall(),
      previous: entry.status.conditions,
      invalid: problemsText(entry),
      suspended: policy?.spec.suspend ?? false,
      schedule: policy?.spec.schedule,
      mode: policy?.spec.mode,
      degraded,
      lastRunTime: state.lastRunTime,
      lastSuccessfulRunTime: state.lastSuccessfulRunTime,
      lastPlan: state.lastPlan,
      totals: state.totals,
      ...(policy !== undefined && window !== undefined
        ? { outsideWindow: outsideWindowCondition(policy, window, state.windowClosed) }
        : {}),
      cooldowns,
      pause:
        p === undefined
          ? undefined
          : {
              pod: `${p.pod.namespace}/${p.pod.name}`,
              podUid: p.pod.uid,
              workload: p.workload,
              since: rfc3339(p.since),
              reason: p.reason,
              message: p.message,
            },
      lastRunResult: state.lastRunResult,
      scope: state.scope,
      landing: state.landing.status(),
    });
  }

  /** Which scheduler configuration predictions are made with (a change lifts PredictionsUnreliable). */
  private get schedulerConfig(): string {
    return schedulerConfigFingerprint(this.deps.run.schedulerProfile);
  }

  /** The closed loop's part of a run's options: where landings go, and whether predictions may be acted on. */
  private landingOptions(
    entry: PolicyEntry,
    state: PolicyState,
    log: Logger,
  ): { onLanding: (landing: Landing) => void; predictionsUnreliable: () => string | undefined } {
    const onLanding = (landing: Landing): void => this.onLanding(entry, state, log, landing);
    const unreliable = state.landing.unreliableFor(entry.generation, this.schedulerConfig);
    if (unreliable !== undefined) {
      log.info({ reason: PREDICTIONS_UNRELIABLE }, 'predictions unreliable: nothing is evicted by prediction');
    }
    return {
      onLanding,
      predictionsUnreliable: () => state.landing.unreliableFor(entry.generation, this.schedulerConfig)?.message,
    };
  }

  /** A replacement's landing, into the policy's record; predictions turning unreliable is said once, at once. */
  private onLanding(entry: PolicyEntry, state: PolicyState, log: Logger, landing: Landing): void {
    const verdict = state.landing.add(landing, {
      time: rfc3339(this.deps.clock.wall()),
      generation: entry.generation,
      schedulerConfig: this.schedulerConfig,
    });
    if (verdict === undefined) return;
    log.warn({ reason: PREDICTIONS_UNRELIABLE }, verdict.message);
    this.deps.events.record(policyTarget(entry), 'Warning', PREDICTIONS_UNRELIABLE, verdict.message);
    void this.syncStatus(entry.name);
  }

  /** One conditional write; on a conflict, re-read the live object, merge, and try again (a few times). */
  private async writeWithMerge(name: string, state: PolicyState): Promise<void> {
    for (let attempt = 0; attempt < 4; attempt++) {
      const entry = this.deps.cache.policy(name);
      if (entry === undefined || !this.live(name, state) || !this.deps.isLeader()) return;
      try {
        state.resourceVersion = await this.deps.writeStatus(name, this.statusOf(entry, state), state.resourceVersion);
        state.unwritten = { evicted: 0, failed: 0 };
        return;
      } catch (err) {
        if (!(err instanceof StatusConflictError)) {
          this.deps.logger.warn(
            { policy: name, err: err instanceof Error ? err.message.split('\n')[0] : String(err) },
            'could not write the policy status',
          );
          return;
        }
      }
      try {
        const current = await this.deps.readPolicy(name);
        if (current === undefined || (state.uid !== '' && current.uid !== state.uid)) return;
        this.merge(state, current);
      } catch (err) {
        this.deps.logger.warn(
          { policy: name, err: err instanceof Error ? err.message.split('\n')[0] : String(err) },
          'could not re-read the policy after a conflicting status write',
        );
        return;
      }
    }
    this.deps.logger.warn({ policy: name }, 'policy status not written: it kept changing under the write');
  }

  private merge(state: PolicyState, current: PolicyEntry): void {
    const persisted = current.status.persisted;
    const base = persisted.totals ?? { evicted: 0, failed: 0 };
    state.totals = { evicted: base.evicted + state.unwritten.evicted, failed: base.failed + state.unwritten.failed };
    const theirs = this.fresh(current, persisted);
    for (const [workload, c] of theirs.cooldowns) {
      const mine = state.cooldowns.get(workload);
      if (mine === undefined || mine.until < c.until) state.cooldowns.set(workload, c);
    }
    state.resourceVersion = current.resourceVersion;
  }

  /** One eviction outcome into the totals; a status checkpoint when the last one is CHECKPOINT_MS old. */
  private count(name: string, state: PolicyState, result: string): void {
    if (result !== 'evicted' && result !== 'failed') return;
    state.totals[result]++;
    state.unwritten[result]++;
    const now = this.deps.clock.now();
    if (now - state.checkpointAt < CHECKPOINT_MS) return;
    state.checkpointAt = now;
    void this.syncStatus(name);
  }

  /** Rewrites the status when the window state changes next, so OutsideWindow flips on time without a cycle. */
  private armWindowTimer(name: string, state: PolicyState, at: number | undefined): void {
    state.windowTimer?.abort();
    state.windowTimer = undefined;
    if (at === undefined || this.deps.stopSignal.aborted) return;
    const timer = new AbortController();
    state.windowTimer = timer;
    const stop = (): void => timer.abort();
    this.deps.stopSignal.addEventListener('abort', stop, { once: true });
    // A little after the boundary, so the state read then is the new one.
    // `at` is a window boundary: an instant on the wall clock.
    void this.deps.clock.sleep(Math.max(0, at - this.deps.clock.wall()) + 10, timer.signal).then(() => {
      this.deps.stopSignal.removeEventListener('abort', stop);
      if (!timer.signal.aborted && state.windowTimer === timer) void this.syncStatus(name);
    });
  }

  /** The policy as this cycle runs it (DryRun outside every window), the gate that closes at the window's end. */
  private windowed(
    policy: Policy,
    state: PolicyState,
    now: number,
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
            ...createEvictionGate(window.until, this.deps.clock, policy.spec.timeZone),
            windowEnd: window.until,
          }
        : undefined;
    return { runPolicy: policy, gate, fields: { window: 'open', windowEnds: window.until }, message: 'cycle started' };
  }

  /** Cooldown holds still in force, for the planner. */
  private cooldownHolds(state: PolicyState, now: number): Map<string, string> {
    const held = new Map<string, string>();
    for (const [key, c] of state.cooldowns) {
      if (c.until <= now) state.cooldowns.delete(key);
      else held.set(key, c.reason);
    }
    return held;
  }

  /** Lifts the pause when the Pending replacement was scheduled or is gone; true when the policy may run. */
  private mayRun(entry: PolicyEntry, state: PolicyState, log: Logger): boolean {
    const paused = state.paused;
    if (paused === undefined) return true;
    const pod = this.deps.cache.pod(paused.pod.namespace, paused.pod.name);
    const stillPending =
      pod !== undefined && (paused.pod.uid === '' || pod.uid === paused.pod.uid) && isPendingForScheduler(pod);
    if (stillPending) {
      log.info(
        { replacement: `${paused.pod.namespace}/${paused.pod.name}` },
        'policy paused (Degraded); cycle skipped',
      );
      return false;
    }
    state.paused = undefined;
    const message = `replacement ${paused.pod.namespace}/${paused.pod.name} is no longer Pending; evictions resume`;
    log.info(message);
    this.deps.events.record(policyTarget(entry), 'Normal', 'Resumed', message);
    return true;
  }

  private onLoop(entry: PolicyEntry, policy: Policy, state: PolicyState, log: Logger, loop: LoopDetection): void {
    const cooldownMs = policy.spec.eviction.cooldownMs;
    const untilWall = this.deps.clock.wall() + cooldownMs;
    const reason = `cooldown until ${rfc3339(untilWall)}: a replacement landed back on ${loop.where}`;
    state.cooldowns.set(loop.workload, { until: this.deps.clock.now() + cooldownMs, untilWall, reason });
    const message =
      `evict/reschedule loop: ${loop.evicted.namespace}/${loop.evicted.name} was evicted, and its replacement ` +
      `${loop.replacement.namespace}/${loop.replacement.name} landed back on ${loop.where}; ` +
      `${loop.workload} is left alone for ${Math.round(cooldownMs / 1000)}s`;
    log.warn({ workload: loop.workload, where: loop.where }, message);
    this.deps.events.record(policyTarget(entry), 'Warning', 'RebalanceLoop', message);
    // Persist at once: a leader change before the cycle ends must not forget the cooldown.
    void this.syncStatus(entry.name);
  }

  /**
   * One cycle; never rejects. `trigger` is what started it (logged and counted); `why` the changes, if any.
   * Resolves to why the cycle failed, was interrupted or left the policy Degraded (for `run --once`), else undefined.
   */
  async runCycle(
    name: string,
    trigger: CycleTrigger = 'schedule',
    why?: readonly string[],
  ): Promise<string | undefined> {
    if (this.adoption !== undefined) await this.adoption;
    const entry = this.deps.cache.policy(name);
    const policy = entry?.policy;
    if (entry === undefined || policy === undefined || policy.spec.suspend) return undefined;
    const state = this.state(name);
    if (state === undefined) return;
    state.cycles++;
    const log = this.deps.logger.child({ policy: name, cycle: state.cycles });
    if (!this.mayRun(entry, state, log)) return `paused (Degraded): ${state.paused?.message ?? ''}`;
    const open = (): boolean => this.live(name, state) && this.deps.isLeader();
    const gated = gatedMetrics(
      this.deps.metrics,
      () => !state.deleted,
      () => this.deps.isLeader(),
    );
    // Totals count each eviction as it is made (not when the run ends), with a checkpoint now and then.
    const metrics: RebalancerMetrics = {
      ...gated,
      recordEviction: (policyName, strategy, result) => {
        gated.recordEviction(policyName, strategy, result);
        this.count(name, state, result);
      },
    };
    const started = this.deps.clock.now();
    state.lastRunTime = rfc3339(this.deps.clock.wall());
    const abort = new AbortController();
    const stop = (): void => abort.abort('shutting_down');
    this.deps.stopSignal.addEventListener('abort', stop, { once: true });
    if (this.deps.stopSignal.aborted) abort.abort('shutting_down');
    state.run = abort;
    this.noteScope(entry, policy, state, log);
    const { runPolicy, gate, fields, message } = this.windowed(policy, state, this.deps.clock.wall());
    // Whether this run may act on the skew it finds (mode Evict, inside its window): where it may not, the skew is
    // reported but not alerted on.
    const evicts = runPolicy.spec.mode === 'Evict';
    log.info(
      { mode: policy.spec.mode, generation: entry.generation, trigger, ...(why ? { changes: why } : {}), ...fields },
      message,
    );
    let result: CycleResult = 'success';
    try {
      // Once per cycle, only for a policy that measures by metrics (the metrics API has no watch).
      const usage =
        this.deps.readMetrics !== undefined && usesMetrics(runPolicy.spec, STRATEGIES)
          ? await this.deps.readMetrics()
          : undefined;
      const run = await new PolicyRun(
        { ...this.deps.run, metrics },
        {
          policy: runPolicy,
          ...(gate !== undefined ? { gate } : {}),
          policyTarget: policyTarget(entry),
          logger: log,
          signal: abort.signal,
          held: this.cooldownHolds(state, started),
          onLoop: (loop) => this.onLoop(entry, policy, state, log, loop),
          ...this.landingOptions(entry, state, log),
          onFirstPlan: (outcome) => metrics.recordPlan(outcome.plan, { evicts }),
          ...(usage !== undefined ? { metrics: usage } : {}),
        },
      ).run();
      result = this.finish(entry, state, run, log, metrics, { windowEnd: gate?.windowEnd, evicts });
    } catch (err) {
      result = 'failed';
      state.lastFailure = `cycle failed: ${err instanceof Error ? err.message : String(err)}`;
      state.lastRunResult = { result: 'Failed', reason: 'CycleFailed' };
      log.error({ err: err instanceof Error ? err.message : String(err) }, state.lastFailure);
      if (open()) this.deps.events.record(policyTarget(entry), 'Warning', 'CycleFailed', state.lastFailure);
    } finally {
      gate?.dispose();
      this.deps.stopSignal.removeEventListener('abort', stop);
      if (state.run === abort) state.run = undefined;
    }
    const seconds = (this.deps.clock.now() - started) / 1000;
    metrics.observeCycle(name, seconds, result, trigger);
    if (this.live(name, state)) await this.syncStatus(name);
    return onceOutcome(result, state);
  }

  /** A scope that selects nothing: a warning and an Event when it starts (or changes), the condition meanwhile. */
  private noteScope(entry: PolicyEntry, policy: Policy, state: PolicyState, log: Logger): void {
    const before = state.scope;
    state.scope = scopeProblem(policy, this.deps.cache.scopeView());
    if (state.scope !== undefined && state.scope !== before) {
      log.warn(state.scope);
      this.deps.events.record(policyTarget(entry), 'Warning', 'ScopeSelectsNothing', state.scope);
    }
  }

  /**
   * A strategy that could not plan (no metrics.k8s.io for `usage: Metrics`) makes the policy Degraded with its reason;
   * an Event says so when it starts and when it ends, not every cycle in between.
   */
  private notePlanDegraded(entry: PolicyEntry, state: PolicyState, log: Logger, plan: RebalancePlan): void {
    const list = plan.degraded ?? [];
    const before = state.planDegraded;
    state.planDegraded =
      list.length === 0
        ? undefined
        : { reason: list[0]!.reason, message: list.map((d) => `${d.strategy}: ${d.message}`).join('; ') };
    const now = state.planDegraded;
    if (now !== undefined && (before === undefined || before.reason !== now.reason)) {
      log.warn({ reason: now.reason }, `strategies cannot plan: ${now.message}`);
      this.deps.events.record(policyTarget(entry), 'Warning', now.reason, now.message);
    } else if (now === undefined && before !== undefined) {
      const message = `strategies plan again (${before.reason} cleared)`;
      log.info(message);
      this.deps.events.record(policyTarget(entry), 'Normal', 'Recovered', message);
    }
  }

  /** Metrics, totals, status fields and the summary Event of a finished run. */
  private finish(
    entry: PolicyEntry,
    state: PolicyState,
    run: RunResult,
    log: Logger,
    metrics: RebalancerMetrics,
    { windowEnd, evicts }: { readonly windowEnd: number | undefined; readonly evicts: boolean },
  ): CycleResult {
    const name = entry.name;
    const { counts } = run;
    const last = run.lastPlan.plan;
    const halted = run.halted;
    // A closed window ends a run normally (it did what the window allowed); the other halts are aborts.
    const aborted = halted !== undefined && halted !== 'degraded' && halted !== 'window_closed' ? halted : undefined;
    // An aborted run's last plan is not the cluster's state (and a deleted policy has no series left to update).
    if (aborted === undefined) {
      metrics.recordTopology(name, last.topology, { evicts });
      metrics.recordViolations(name, violationCounts(last));
    }
    metrics.recordCycleEvictions(name, counts.evicted + counts.dry_run);
    const before = maxSkew(run.firstPlan);
    const after = maxSkew(run.lastPlan);
    const skipped = skippedThisRun(run);
    let found = 0;
    for (const n of Object.values(violationCounts(run.firstPlan.plan))) found += n ?? 0;
    for (const s of run.firstPlan.plan.skipped) {
      log.debug({ pod: `${s.namespace}/${s.name}`, strategy: s.strategy, reason: s.reason }, 'pod skipped');
    }
    const {
      stop,
      text: stopText,
      next,
    } = stopReport(
      { halted, degraded: run.degraded?.message, limitReached: run.limitReached, lastPlan: run.lastPlan },
      entry.policy?.spec.schedule,
      this.deps.clock.wall(),
      rfc3339,
    );
    // What on-call reads in `kubectl get rbp`: real evictions only, and the skew the run left behind.
    state.lastPlan = {
      ...(stopText !== undefined ? { stoppedBy: stopText } : {}),
      evictions: counts.evicted,
      dryRunEvictions: counts.dry_run,
      skipped: skipped.length,
      violations: found,
      maxSkewObserved: after,
      maxSkewBefore: before,
      skippedReasons: countSkipReasons(skipped),
    };
    const target = policyTarget(entry);
    if (run.degraded !== undefined) {
      state.paused = { ...run.degraded, since: this.deps.clock.wall() };
      this.deps.events.record(target, 'Warning', 'ReplacementPending', run.degraded.message);
    }
    const summary =
      `${counts.evicted} evicted, ${counts.dry_run} dry-run, ${counts.pdb_blocked} blocked by budgets, ` +
      `${counts.failed} failed, ${counts.not_found} gone, ${skipped.length} skipped${reasonsText(state.lastPlan)}; ` +
      `max skew ${before} → ${after} (${run.plans} plan${run.plans === 1 ? '' : 's'})` +
      (stopText === undefined ? '' : `; stopped by ${stopText}`);
    // `skipped` is every skip the summary counts; the executor's own share is `skippedAtEviction`.
    const { skipped: skippedAtEviction, ...outcomes } = counts;
    const fields = {
      ...outcomes,
      skipped: skipped.length,
      skippedAtEviction,
      plans: run.plans,
      maxSkewBefore: before,
      maxSkewAfter: after,
      halted,
      ...(stop !== undefined ? { stoppedBy: stop } : {}),
      ...(next !== undefined ? { nextCycle: next } : {}),
    };
    if (aborted !== undefined) {
      const why = ABORT_TEXT[aborted];
      log.warn({ ...fields, abortReason: aborted }, `cycle aborted (${why.text}): ${summary}`);
      metrics.recordAbort(name, aborted);
      state.lastRunResult = { result: 'Aborted', reason: why.reason };
      return 'aborted';
    }
    if (run.halted === 'window_closed' && windowEnd !== undefined) {
      state.windowClosed = { at: this.deps.clock.wall(), evicted: counts.evicted, windowEnd };
      const message = `the maintenance window ended during the cycle; evictions stopped: ${summary}`;
      log.warn(fields, message);
      this.deps.events.record(target, 'Normal', 'WindowClosed', message);
    }
    this.notePlanDegraded(entry, state, log, run.firstPlan.plan);
    state.lastFailure = undefined;
    state.lastRunResult = {
      result: 'Succeeded',
      reason: run.degraded !== undefined || state.planDegraded !== undefined ? 'Degraded' : 'Completed',
    };
    state.lastSuccessfulRunTime = rfc3339(this.deps.clock.wall());
    log.info(fields, `cycle finished: ${summary}`);
    const acted = counts.evicted + counts.dry_run + counts.failed + counts.pdb_blocked > 0;
    // The first cycle of a policy since this replica started (or took over) always says what it found, even when it
    // had nothing to do: after a start-up, `kubectl describe rbp` shows the operator is at work. Later quiet cycles
    // stay quiet (an Event every few minutes saying nothing would bury the ones that matter).
    if (acted || run.firstPlan.plan.evictions.length > 0 || state.cycles === 1) {
      this.deps.events.record(target, 'Normal', 'RebalanceCompleted', `Run finished: ${summary}`);
    }
    return 'success';
  }
}

/** What `run --once` reports of a cycle: why it failed, was interrupted or left the policy Degraded; else nothing. */
function onceOutcome(result: CycleResult, state: PolicyState): string | undefined {
  if (result === 'failed') return state.lastFailure ?? 'the cycle failed';
  if (result === 'aborted') return `the cycle was interrupted (${state.lastRunResult?.reason ?? 'Aborted'})`;
  if (state.paused !== undefined) return `Degraded: ${state.paused.message}`;
  return state.planDegraded === undefined
    ? undefined
    : `Degraded (${state.planDegraded.reason}): ${state.planDegraded.message}`;
}

/**
 * Every skip of a run, as status counts it: the first plan's skipped pods, then what the executor skipped or a budget
 * blocked at eviction time (the plan was right, the cluster had moved on).
 */
function skippedThisRun(run: RunResult): string[] {
  const reasons = run.firstPlan.plan.skipped.map((s) => s.reason);
  for (let i = 0; i < run.counts.skipped; i++) reasons.push('skipped at eviction time (a limit or several budgets)');
  for (let i = 0; i < run.counts.pdb_blocked; i++) reasons.push('PodDisruptionBudget allows 0 disruptions');
  return reasons;
}

/** ` (5 PodDisruptionBudget allows 0 disruptions, 4 pod is younger than minPodAge)`: the top reasons, for the Event. */
function reasonsText(last: LastPlanStatus): string {
  const top = last.skippedReasons.slice(0, 3).map((r) => `${r.count} ${r.reason}`);
  if (top.length === 0) return '';
  const more = last.skippedReasons.length > 3 ? ', …' : '';
  return ` (${top.join(', ')}${more})`;
}
