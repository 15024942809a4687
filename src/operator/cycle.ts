// A cycle of one policy: snapshot from the caches → plan → execute (a PolicyRun, which re-plans as its evictions
// land) → status, metrics and Events. Also the per-policy state that outlives a cycle: cooldowns (workloads whose
// replacement landed back), the Degraded pause, totals, the last-run fields of the status, and the status writes
// that are not tied to a cycle (a new or edited policy: observedGeneration, Invalid, Suspended).
//
// The pause: a replacement still Pending at replacementTimeout pauses the policy (Degraded, ReplacementPending,
// with an Event), because its evictions cannot come back. Ticks are then skipped until that pod is scheduled or
// gone, or the spec changes (an edit is taken as the operator's user acknowledging the problem).
// Only the leader writes status; a replica that becomes leader rewrites every policy's status.
import type { Logger } from 'pino';
import type { RebalancerMetrics } from '../metrics/metrics.js';
import type { CycleResult } from '../metrics/names.js';
import type { PlanOutcome } from '../planner/plan.js';
import { countSkipReasons } from '../planner/skipReasons.js';
import type { Policy } from '../policy/types.js';
import type { Clock } from './clock.js';
import type { CycleTrigger } from './debounce.js';
import type { ClusterCache, LastPlanStatus, PolicyEntry } from './clusterCache.js';
import type { EventRecorder, EventTarget } from './events.js';
import { PolicyRun, type Degradation, type RunDeps, type RunResult } from './executor.js';
import {
  asDryRun,
  createEvictionGate,
  nextBoundary,
  outsideWindowCondition,
  windowNow,
  type WindowClosedDuringCycle,
} from './maintenanceWindows.js';
import type { LoopDetection } from './pacing.js';
import { buildStatus, POLICY_GROUP, POLICY_VERSION, rfc3339, type PolicyStatus } from './status.js';

export interface PolicyState {
  readonly cooldowns: Map<string, { readonly until: number; readonly reason: string }>;
  paused: (Degradation & { readonly since: number }) | undefined;
  lastFailure: string | undefined;
  totals: { evicted: number; failed: number } | undefined;
  lastRunTime: string | undefined;
  lastSuccessfulRunTime: string | undefined;
  lastPlan: LastPlanStatus | undefined;
  cycles: number;
  run: AbortController | undefined;
  /** The last cycle stopped evicting because its maintenance window ended (until a window opens again). */
  windowClosed: WindowClosedDuringCycle | undefined;
  /** Wakes at the next window boundary to refresh the OutsideWindow condition. */
  windowTimer: AbortController | undefined;
}

export interface PolicyControllerDeps {
  readonly cache: ClusterCache;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: RebalancerMetrics;
  readonly events: EventRecorder;
  readonly isLeader: () => boolean;
  readonly run: RunDeps;
  readonly writeStatus: (name: string, status: PolicyStatus) => Promise<void>;
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

export function maxSkew(outcome: PlanOutcome): number {
  let max = 0;
  for (const t of outcome.plan.topology) max = Math.max(max, t.skew);
  return max;
}

function problemsText(entry: PolicyEntry): string | undefined {
  if (entry.policy !== undefined) return undefined;
  return entry.problems.map((p) => (p.field === '' ? p.problem : `${p.field}: ${p.problem}`)).join('; ');
}

export class PolicyController {
  private readonly states = new Map<string, PolicyState>();

  constructor(private readonly deps: PolicyControllerDeps) {}

  state(name: string): PolicyState {
    let state = this.states.get(name);
    if (state === undefined) {
      const seen = this.deps.cache.policy(name)?.status;
      state = {
        cooldowns: new Map(),
        paused: undefined,
        lastFailure: undefined,
        totals: seen?.totals === undefined ? undefined : { ...seen.totals },
        lastRunTime: seen?.lastRunTime,
        lastSuccessfulRunTime: seen?.lastSuccessfulRunTime,
        lastPlan: seen?.lastPlan,
        cycles: 0,
        run: undefined,
        windowClosed: undefined,
        windowTimer: undefined,
      };
      this.states.set(name, state);
    }
    return state;
  }

  /** A policy appeared or its spec changed: abort its running cycle, lift a pause, report the new state. */
  specChanged(entry: PolicyEntry, previousGeneration: number | undefined): void {
    const state = this.state(entry.name);
    if (previousGeneration !== undefined) {
      state.run?.abort();
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

  /** Aborts every running cycle (this replica stopped leading). */
  abortRuns(): void {
    for (const state of this.states.values()) state.run?.abort();
  }

  removed(name: string): void {
    this.states.get(name)?.run?.abort();
    this.states.get(name)?.windowTimer?.abort();
    this.states.delete(name);
    this.deps.metrics.forgetPolicy(name);
  }

  /** Writes the status of every policy (a replica that just became leader). */
  async syncAll(): Promise<void> {
    await Promise.all(this.deps.cache.policyList().map((entry) => this.syncStatus(entry.name)));
  }

  /** Writes the policy's status as the state says it should be (leader only; failures are logged). */
  async syncStatus(name: string): Promise<void> {
    const entry = this.deps.cache.policy(name);
    if (entry === undefined || !this.deps.isLeader()) return;
    const state = this.state(name);
    const policy = entry.policy;
    const now = this.deps.clock.now();
    const window = policy === undefined ? undefined : windowNow(policy, now);
    if (window?.kind === 'open') state.windowClosed = undefined;
    this.armWindowTimer(name, state, window === undefined ? undefined : nextBoundary(window));
    const degraded =
      state.paused !== undefined
        ? { reason: state.paused.reason, message: state.paused.message }
        : state.lastFailure !== undefined
          ? { reason: 'CycleFailed', message: state.lastFailure }
          : undefined;
    const status = buildStatus({
      generation: entry.generation,
      now: this.deps.clock.now(),
      previous: entry.status.conditions,
      invalid: problemsText(entry),
      suspended: policy?.spec.suspend ?? false,
      schedule: policy?.spec.schedule,
      mode: policy?.spec.mode,
      degraded,
      lastRunTime: state.lastRunTime,
      lastSuccessfulRunTime: state.lastSuccessfulRunTime,
      lastPlan: state.lastPlan,
      totals: state.totals ?? { evicted: 0, failed: 0 },
      ...(policy !== undefined && window !== undefined
        ? { outsideWindow: outsideWindowCondition(policy, window, state.windowClosed) }
        : {}),
    });
    try {
      await this.deps.writeStatus(name, status);
    } catch (err) {
      this.deps.logger.warn(
        { policy: name, err: err instanceof Error ? err.message.split('\n')[0] : String(err) },
        'could not write the policy status',
      );
    }
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
    void this.deps.clock.sleep(Math.max(0, at - this.deps.clock.now()) + 10, timer.signal).then(() => {
      this.deps.stopSignal.removeEventListener('abort', stop);
      if (!timer.signal.aborted && state.windowTimer === timer) void this.syncStatus(name);
    });
  }

  /** The policy as this cycle runs it (DryRun outside every window), the gate that closes at the window's end. */
  private windowed(
    policy: Policy,
    state: PolicyState,
    now: number,
  ): { runPolicy: Policy; gate: ReturnType<typeof createEvictionGate> | undefined; fields: object; message: string } {
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
        ? createEvictionGate(window.until, this.deps.clock, policy.spec.timeZone)
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
    const stillPending = pod !== undefined && pod.uid === paused.pod.uid && pod.phase === 'Pending';
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
    const until = this.deps.clock.now() + policy.spec.eviction.cooldownMs;
    const reason = `cooldown until ${rfc3339(until)}: a replacement landed back on ${loop.where}`;
    state.cooldowns.set(loop.workload, { until, reason });
    const message =
      `evict/reschedule loop: ${loop.evicted.namespace}/${loop.evicted.name} was evicted, and its replacement ` +
      `${loop.replacement.namespace}/${loop.replacement.name} landed back on ${loop.where}; ` +
      `${loop.workload} is left alone for ${Math.round(policy.spec.eviction.cooldownMs / 1000)}s`;
    log.warn({ workload: loop.workload, where: loop.where }, message);
    this.deps.events.record(policyTarget(entry), 'Warning', 'RebalanceLoop', message);
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
    const entry = this.deps.cache.policy(name);
    const policy = entry?.policy;
    if (entry === undefined || policy === undefined || policy.spec.suspend) return undefined;
    const state = this.state(name);
    state.cycles++;
    const log = this.deps.logger.child({ policy: name, cycle: state.cycles });
    if (!this.mayRun(entry, state, log)) return `paused (Degraded): ${state.paused?.message ?? ''}`;
    const started = this.deps.clock.now();
    state.lastRunTime = rfc3339(started);
    const abort = new AbortController();
    const stop = (): void => abort.abort();
    this.deps.stopSignal.addEventListener('abort', stop, { once: true });
    if (this.deps.stopSignal.aborted) abort.abort();
    state.run = abort;
    const { runPolicy, gate, fields, message } = this.windowed(policy, state, started);
    log.info(
      { mode: policy.spec.mode, generation: entry.generation, trigger, ...(why ? { changes: why } : {}), ...fields },
      message,
    );
    let result: CycleResult = 'success';
    try {
      const run = await new PolicyRun(this.deps.run, {
        policy: runPolicy,
        ...(gate !== undefined ? { gate } : {}),
        policyTarget: policyTarget(entry),
        logger: log,
        signal: abort.signal,
        held: this.cooldownHolds(state, started),
        onLoop: (loop) => this.onLoop(entry, policy, state, log, loop),
        onFirstPlan: (outcome) => this.deps.metrics.recordPlan(outcome.plan),
      }).run();
      result = this.finish(entry, state, run, log);
    } catch (err) {
      result = 'failed';
      state.lastFailure = `cycle failed: ${err instanceof Error ? err.message : String(err)}`;
      log.error({ err: err instanceof Error ? err.message : String(err) }, state.lastFailure);
      if (this.deps.isLeader())
        this.deps.events.record(policyTarget(entry), 'Warning', 'CycleFailed', state.lastFailure);
    } finally {
      gate?.dispose();
      this.deps.stopSignal.removeEventListener('abort', stop);
      if (state.run === abort) state.run = undefined;
    }
    const seconds = (this.deps.clock.now() - started) / 1000;
    this.deps.metrics.observeCycle(name, seconds, result, trigger);
    await this.syncStatus(name);
    if (result === 'failed') return state.lastFailure ?? 'the cycle was interrupted (shutting down or leadership lost)';
    return state.paused === undefined ? undefined : `Degraded: ${state.paused.message}`;
  }

  /** Metrics, totals, status fields and the summary Event of a finished run. */
  private finish(entry: PolicyEntry, state: PolicyState, run: RunResult, log: Logger): CycleResult {
    const name = entry.name;
    const { counts } = run;
    const last = run.lastPlan.plan;
    this.deps.metrics.recordTopology(name, last.topology);
    const violations: Record<string, number> = {};
    for (const v of last.violations) violations[v.strategy] = (violations[v.strategy] ?? 0) + 1;
    this.deps.metrics.recordViolations(name, violations);
    const totals = (state.totals ??= { evicted: 0, failed: 0 });
    totals.evicted += counts.evicted;
    totals.failed += counts.failed;
    const before = maxSkew(run.firstPlan);
    const after = maxSkew(run.lastPlan);
    const skipped = skippedThisRun(run);
    for (const s of run.firstPlan.plan.skipped) {
      log.debug({ pod: `${s.namespace}/${s.name}`, strategy: s.strategy, reason: s.reason }, 'pod skipped');
    }
    state.lastPlan = {
      evictions: counts.evicted + counts.dry_run,
      skipped: skipped.length,
      violations: run.firstPlan.plan.violations.length,
      maxSkewObserved: before,
      skippedReasons: countSkipReasons(skipped),
    };
    const target = policyTarget(entry);
    if (run.degraded !== undefined) {
      state.paused = { ...run.degraded, since: this.deps.clock.now() };
      this.deps.events.record(target, 'Warning', 'ReplacementPending', run.degraded.message);
    }
    const summary =
      `${counts.evicted} evicted, ${counts.dry_run} dry-run, ${counts.pdb_blocked} blocked by budgets, ` +
      `${counts.failed} failed, ${counts.not_found} gone, ${skipped.length} skipped${reasonsText(state.lastPlan)}; ` +
      `max skew ${before} → ${after} (${run.plans} plan${run.plans === 1 ? '' : 's'})`;
    const fields = { ...counts, plans: run.plans, maxSkewBefore: before, maxSkewAfter: after, halted: run.halted };
    if (run.halted === 'stopped' || run.halted === 'leadership') {
      log.warn(
        fields,
        `cycle interrupted (${run.halted === 'stopped' ? 'shutting down' : 'leadership lost'}): ${summary}`,
      );
      return 'failed';
    }
    if (run.halted === 'window_closed') {
      state.windowClosed = { at: this.deps.clock.now(), evicted: counts.evicted };
      const message = `the maintenance window ended during the cycle; evictions stopped: ${summary}`;
      log.warn(fields, message);
      this.deps.events.record(target, 'Normal', 'WindowClosed', message);
    }
    state.lastFailure = undefined;
    state.lastSuccessfulRunTime = rfc3339(this.deps.clock.now());
    log.info(fields, `cycle finished: ${summary}`);
    const acted = counts.evicted + counts.dry_run + counts.failed + counts.pdb_blocked > 0;
    if (acted || run.firstPlan.plan.evictions.length > 0) {
      this.deps.events.record(target, 'Normal', 'RebalanceCompleted', `Run finished: ${summary}`);
    }
    return 'success';
  }
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
