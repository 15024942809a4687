// A cycle of one policy: snapshot from the caches → plan → execute (a PolicyRun, which re-plans as its evictions
// land) → status, metrics and Events. PolicyController holds the per-policy state that outlives a cycle and orders
// its status writes, including those not tied to a cycle (a new or edited policy: observedGeneration, Invalid,
// Suspended). Its parts live beside it: the state, its rebuild and merge (policyState.ts), the status it composes to
// (policyStatus.ts), windows and their timer (cycleWindows.ts), loop cooldowns (cooldowns.ts), the notes on a
// condition changing (conditionNotes.ts), and what a run reports (cycleReport.ts).
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
import type { NodeUsageQuery, UsageMetrics } from '../model/types.js';
import { prometheusSourceOf, usesMetrics } from '../planner/utilization.js';
import type { PrometheusSource } from '../strategies/types.js';
import { STRATEGIES } from '../strategies/registry.js';
import type { Policy } from '../policy/types.js';
import type { Clock } from '../clock.js';
import type { CycleTrigger } from './debounce.js';
import type { ClusterCache, PolicyEntry } from './clusterCache.js';
import type { EventRecorder } from './events.js';
import { CarriedRecords } from './carriedRecord.js';
import { mayRun, notePlanDegraded, noteScope } from './conditionNotes.js';
import { cooldownHolds, startLoopCooldown } from './cooldowns.js';
import { ABORT_TEXT, gatedMetrics, onceOutcome, summarizeRun } from './cycleReport.js';
import { armWindowTimer, windowedRun } from './cycleWindows.js';
import { PolicyRun } from './eviction/executor.js';
import type { RunDeps, RunResult } from './eviction/runTypes.js';
import { nextBoundary, windowNow } from './maintenanceWindows.js';
import type { LoopDetection } from './eviction/pacing.js';
import type { Landing } from './eviction/landing.js';
import { PREDICTIONS_UNRELIABLE, schedulerConfigFingerprint } from './landingRecord.js';
import { freshState, mergeLiveStatus, type Cooldown, type PolicyState } from './policyState.js';
import { composeStatus, policyTarget, problemsText } from './policyStatus.js';
import { rfc3339, StatusConflictError, type PolicyStatus } from './status.js';

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
  /** Runs a policy's Prometheus query, for a cycle of a policy with `usage: Prometheus` (never rejects). */
  readonly readNodeUsage?: (source: PrometheusSource) => Promise<NodeUsageQuery>;
  /** Aborts every run (shutdown). */
  readonly stopSignal: AbortSignal;
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
    const state = freshState(entry, entry.status.persisted, this.deps.clock);
    const added = this.carried.adopt(entry.name, state);
    if (added !== undefined) {
      this.deps.logger.info(
        { policy: entry.name, ...added },
        'merged what this replica did while it led before with the status read back',
      );
    }
    return state;
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
      known === undefined && this.deps.isLeader()
        ? this.adopted(entry)
        : freshState(entry, entry.status.persisted, this.deps.clock);
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
    armWindowTimer(state, window === undefined ? undefined : nextBoundary(window), {
      clock: this.deps.clock,
      stopSignal: this.deps.stopSignal,
      onBoundary: () => void this.syncStatus(entry.name),
    });
    return composeStatus(entry, state, window, { clock: this.deps.clock, schedulerConfig: this.schedulerConfig });
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
        // What this write carries; outcomes counted while it is on the wire stay unwritten after it succeeds, so a
        // later conflict merges them into the live totals instead of dropping them.
        const status = this.statusOf(entry, state);
        const sent = { ...state.unwritten };
        state.resourceVersion = await this.deps.writeStatus(name, status, state.resourceVersion);
        state.unwritten = {
          evicted: state.unwritten.evicted - sent.evicted,
          failed: state.unwritten.failed - sent.failed,
        };
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
        mergeLiveStatus(state, current, this.deps.clock);
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

  private onLoop(entry: PolicyEntry, policy: Policy, state: PolicyState, log: Logger, loop: LoopDetection): void {
    const message = startLoopCooldown(state, loop, policy.spec.eviction.cooldownMs, this.deps.clock);
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
    if (!mayRun(this.deps, entry, state, log)) return `paused (Degraded): ${state.paused?.message ?? ''}`;
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
    noteScope(this.deps, entry, policy, state, log);
    const { runPolicy, gate, fields, message } = windowedRun(policy, state, this.deps.clock.wall(), this.deps.clock);
    // Whether this run may act on the skew it finds (mode Evict, inside its window): where it may not, the skew is
    // reported but not alerted on.
    const evicts = runPolicy.spec.mode === 'Evict';
    log.info(
      { mode: policy.spec.mode, generation: entry.generation, trigger, ...(why ? { changes: why } : {}), ...fields },
      message,
    );
    let result: CycleResult = 'success';
    try {
      const readings = await this.readUsage(runPolicy.spec);
      const run = await new PolicyRun(
        { ...this.deps.run, metrics },
        {
          policy: runPolicy,
          ...(gate !== undefined ? { gate } : {}),
          policyTarget: policyTarget(entry),
          logger: log,
          signal: abort.signal,
          held: cooldownHolds(state, started),
          onLoop: (loop) => this.onLoop(entry, policy, state, log, loop),
          ...this.landingOptions(entry, state, log),
          onFirstPlan: (outcome) => metrics.recordPlan(outcome.plan, { evicts }),
          ...readings,
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

  /**
   * The usage readings a cycle's run measures by, read once per cycle and only for a policy that asks: metrics.k8s.io
   * (the metrics API has no watch) and the policy's own Prometheus query.
   */
  private async readUsage(spec: Policy['spec']): Promise<{ metrics?: UsageMetrics; nodeUsage?: NodeUsageQuery }> {
    const out: { metrics?: UsageMetrics; nodeUsage?: NodeUsageQuery } = {};
    if (this.deps.readMetrics !== undefined && usesMetrics(spec, STRATEGIES))
      out.metrics = await this.deps.readMetrics();
    const source = prometheusSourceOf(spec, STRATEGIES);
    if (source !== undefined && this.deps.readNodeUsage !== undefined) {
      out.nodeUsage = await this.deps.readNodeUsage(source);
    }
    return out;
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
    // A dry run changed nothing: the cluster is as the first plan saw it. Its projected last plan says what an Evict
    // run would leave (the summary's "→"), not what the metrics and the status report as observed.
    const last = (run.projected ? run.firstPlan : run.lastPlan).plan;
    const halted = run.halted;
    // A closed window ends a run normally (it did what the window allowed); the other halts are aborts.
    const aborted = halted !== undefined && halted !== 'degraded' && halted !== 'window_closed' ? halted : undefined;
    // An aborted run's last plan is not the cluster's state (and a deleted policy has no series left to update).
    if (aborted === undefined) {
      metrics.recordTopology(name, last.topology, { evicts });
      metrics.recordViolations(name, violationCounts(last));
    }
    metrics.recordCycleEvictions(name, counts.evicted + counts.dry_run);
    const { lastPlan, summary, fields } = summarizeRun(run, log, entry.policy?.spec.schedule, this.deps.clock.wall());
    // What on-call reads in `kubectl get rbp`: real evictions only, and the skew the run left behind.
    state.lastPlan = lastPlan;
    const target = policyTarget(entry);
    if (run.degraded !== undefined) {
      state.paused = { ...run.degraded, since: this.deps.clock.wall() };
      this.deps.events.record(target, 'Warning', 'ReplacementPending', run.degraded.message);
    }
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
    notePlanDegraded(this.deps.events, entry, state, log, run.firstPlan.plan);
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
