// One policy run: plan from the watch caches, evict through the Eviction API, pace, re-plan, until done.
//
// How one run finishes the whole job
// ----------------------------------
// A plan can only contain what the cluster allows *now*: with a PodDisruptionBudget of maxUnavailable 1, one
// eviction per workload. Waiting for the next scheduled cycle after each step would take (steps × schedule) to
// balance, so a run keeps going:
//   1. Snapshot the caches (no API call) and plan, holding back the workloads that are busy (an eviction in flight
//      or being paced), cooling down (a replacement landed back), or done for this run (refused, failed, limit).
//   2. Every workload with planned evictions gets a *lane*. Lanes run concurrently (the shared rate limiter bounds
//      the request rate); a lane evicts its workload's first planned pod, then paces (pacing.ts) until the
//      replacement is Ready and the budget allows a disruption again, and ends. With pacing, the other evictions
//      the plan had for that workload are dropped: the next step is re-planned from the fresh cache, because the
//      real scheduler may have put the replacement elsewhere than the simulation did.
//   3. When lanes finish, the run plans again (step 1) for the workloads that are free, batching: it waits until
//      every lane is done or at least `minReplanIntervalMs` (and nine times the last planning time) has passed since
//      the last plan, so a 10,000-pod cluster is not re-planned once per eviction.
//   4. The run ends when a plan yields nothing new and no lane is active. Each re-plan follows at least one
//      finished lane; a lane that did not evict holds its workload for the rest of the run, and every eviction
//      counts against the run's limits (maxPerCycle, maxPerNode, maxPerNamespace, maxPerWorkload, enforced again
//      here with the planner's own counters), so a run is bounded by maxPerCycle + number of workloads plans.
// waitForReplacement: false runs one plan and executes it whole, each lane taking its workload's evictions in order.
// DryRun reports what Evict would do in its place (DESIGN.md, "Reports a user can act on"): server-side dry-run
// evictions change nothing and no replacement comes to wait for, so with waitForReplacement the run projects the
// progress instead (dryRunProjection.ts): each step takes the first planned move of every workload, as a paced lane
// does, sends it as a dry run, then places its replacement where the plan predicted, Ready, and plans again from that
// projected cluster, under the same run limits, until the plan is done or a limit is reached. Without
// waitForReplacement it executes one plan whole, as Evict would.
// Closed loop (paced runs only): lanes take turns in the order their plans made them, each eviction waits until the
// replacements of the ones before it have landed, and a replacement that lands anywhere but its target makes the
// moves still waiting stale: they are planned again from the caches before anything else is evicted
// (landingOrder.ts). Every landing is checked against the prediction (landingWatch.ts: metric, log line, Event when
// elsewhere).
//
// Before each eviction, the lane re-checks against the cache: the pod still exists with the planned uid and is
// not terminating; the run's limits; the pod's budget (exactly one, its status observed by its controller, an
// allowance left after the evictions this operator sent that the cached status does not show yet: pdbLedger.ts) —
// waiting for the budget rather than calling and failing; and, immediately before the call, leadership — checked
// again by the HTTP layer once the request has its token, at the moment it is sent (kubeClient.ts: fencing).
// maxPerCycle/Node/Namespace and the shared per-workload in-flight slot are reserved before the first await and
// given back when no eviction results (runReservations.ts).
// Answers are classified once (evictionErrors.ts); 5xx and network errors are retried with capped exponential
// backoff, at most `maxAttempts` per eviction and `maxRetriesPerRun` per run (evictionRetry.ts).
// evictionOutcomes.ts is the one place an outcome becomes a metric, a log line and an Event.
//
// PolicyRun coordinates; the parts live in their own modules: lanes and the re-plan wait (evictionLanes.ts), the
// run's limits and in-flight slots (runReservations.ts), held workloads (runHolds.ts), the budget wait
// (budgetWait.ts), the call and its retries (evictionRetry.ts), halting (runHalt.ts); what a run is given and
// returns (runTypes.ts).
import type { Logger } from 'pino';
import type { EvictionResult } from '../../metrics/names.js';
import { isPodTerminal } from '../../model/pods.js';
import { workloadKey } from '../../planner/budget.js';
import { planCycleSteps, type Move } from '../../planner/plan.js';
import { planSlice } from '../../v8Flags.js';
import { runInSlices } from './planSlices.js';
import { apportion } from '../../planner/prometheusMeasure.js';
import type { NodeUsageQuery } from '../../model/types.js';
import { STRATEGIES } from '../../strategies/registry.js';
import { waitForBudget } from './budgetWait.js';
import { pdbWaitKey, workloadWaitKey } from '../clusterCache.js';
import { EvictionLanes } from './evictionLanes.js';
import { LandingOrder } from './landingOrder.js';
import type { Landing } from './landing.js';
import { landingPredicted, reportLanding, watchLanding } from './landingWatch.js';
import { EvictionOutcomes, skewNotes } from './evictionOutcomes.js';
import { RetryingEvictions } from './evictionRetry.js';
import { loopKeysFor, waitForReplacement, type EvictionRecord } from './pacing.js';
import { RunHalt } from './runHalt.js';
import { RunHolds } from './runHolds.js';
import { RunReservations } from './runReservations.js';
import { DryRunProjection } from './dryRunProjection.js';
import type { Degradation, RunDeps, RunOptions, RunPlan, RunResult } from './runTypes.js';

/**
 * What one eviction attempt came to; `paced` is set for an eviction whose replacement the lane must wait for.
 * `stale`: the plan the move came from no longer holds, nothing was sent. Undefined: the run halted first.
 */
type Executed = { result: EvictionResult; paced?: EvictionRecord } | 'stale' | undefined;

/**
 * How many evictions a paced run plans at a time: ten seconds of the default client budget (QPS 20), more than a
 * re-plan takes to come round (evictionLanes.ts), and few enough that planning each against the replacements before
 * it stays well under the token bucket's two seconds at 1,000 nodes.
 */
const MOVES_PER_STEP = 200;

/** A paced lane's place in the closed loop's queue (landingOrder.ts). */
type LaneTurn = number;

export class PolicyRun {
  private readonly dryRun: boolean;
  private readonly pacing: boolean;
  /** DryRun with waitForReplacement: the run steps through the projected cluster as a paced Evict run would. */
  private readonly projecting: boolean;
  private projection: DryRunProjection | undefined;
  private limitReached: string | undefined;
  private readonly closedLoop: boolean;
  private readonly lanes = new EvictionLanes();
  private readonly holds = new RunHolds();
  private readonly reservations: RunReservations;
  private readonly outcomes: EvictionOutcomes;
  private readonly halt: RunHalt;
  private readonly sender: RetryingEvictions;
  private degraded: Degradation | undefined;
  /** The run's Prometheus reading (`usage: Prometheus`), with the pods' parts of the first plan. */
  private nodeUsage: NodeUsageQuery | undefined;
  private readonly order = new LandingOrder();
  private readonly landings = new Set<Promise<void>>();

  constructor(
    private readonly deps: RunDeps,
    private readonly opts: RunOptions,
  ) {
    const spec = opts.policy.spec;
    this.dryRun = spec.mode === 'DryRun';
    this.pacing = !this.dryRun && spec.eviction.waitForReplacement;
    this.projecting = this.dryRun && spec.eviction.waitForReplacement;
    this.closedLoop = this.pacing && deps.landingChecks !== false;
    // Paced, maxPerWorkload bounds the workload's evictions in flight (the shared slot), not the run's: one run goes
    // on, one step at a time, until the workload is done (DESIGN.md). Unpaced, the run executes one plan whole.
    this.reservations = new RunReservations(spec.eviction, deps.inFlight, {
      perWorkloadInRun: !this.pacing && !this.projecting,
    });
    this.outcomes = new EvictionOutcomes(opts.policy.name, {
      metrics: deps.metrics,
      events: deps.events,
      log: this.log,
    });
    this.halt = new RunHalt(opts.signal, opts.gate?.signal, () => this.lanes.wakeUp());
    this.sender = new RetryingEvictions({
      evictor: deps.evictor,
      clock: deps.clock,
      retry: deps.retry,
      isLeader: deps.isLeader,
      gateClosed: () => opts.gate?.closed(),
      dryRun: this.dryRun,
      ...(spec.eviction.gracePeriodSeconds !== undefined
        ? { gracePeriodSeconds: spec.eviction.gracePeriodSeconds }
        : {}),
      halt: this.halt,
      log: this.log,
    });
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  private async plan(): Promise<RunPlan> {
    const readAt = this.deps.clock.now();
    const cached =
      this.projection?.snapshot ?? this.deps.cache.snapshot((key, entry) => this.deps.ledger.outstanding(key, entry));
    const measured = this.opts.metrics === undefined ? cached : { ...cached, metrics: this.opts.metrics };
    // Each pod's part of its node's Prometheus value is set from the pods of the first plan, and kept for the run.
    const usage = this.opts.nodeUsage;
    if (usage !== undefined && this.nodeUsage === undefined) {
      this.nodeUsage = usage.available ? apportion(usage, measured) : usage;
    }
    const snapshot = this.nodeUsage === undefined ? measured : { ...measured, nodeUsage: this.nodeUsage };
    const held = this.holds.merged(
      this.opts.held,
      this.lanes.workloads(),
      this.deps.inFlight.saturated(this.opts.policy.spec.eviction.maxPerWorkload),
    );
    // The next plan starts from what this run has spent of its per-cycle limits, so that it picks its pods where the
    // run may still evict (another node, another namespace) rather than one the run would have to refuse.
    const { plan, moves } = await runInSlices(
      planCycleSteps(snapshot, this.opts.policy, {
        heldWorkloads: held,
        spent: this.reservations.limits.spent(),
        domainCounts: false,
        schedulerProfile: this.deps.schedulerProfile,
        // Evictions are sent without waiting for each landing (landingOrder.ts): every prediction allows for the
        // replacements still on their way, those of this plan and those sent before it.
        pendingLandings: true,
        inFlight: this.order.inFlight(),
        ...(this.pacing || this.projecting ? { maxMoves: MOVES_PER_STEP } : {}),
      }),
      planSlice,
    );
    for (const move of moves) this.plannedAt.set(move, readAt);
    return { plan, moves };
  }

  async run(): Promise<RunResult> {
    let plans = 0;
    let first: RunPlan | undefined;
    let last: RunPlan;
    let stale = false;
    for (;;) {
      const started = this.deps.clock.now();
      // The run goes on while the plan is made (planSlices.ts): what goes stale meanwhile applies to its lanes too.
      this.order.planBegins();
      const sentBefore = this.sentCount;
      last = await this.plan();
      const sentWhilePlanning = this.sentCount - sentBefore;
      plans++;
      const planMs = this.deps.clock.now() - started;
      if (first === undefined) {
        first = last;
        this.opts.onFirstPlan?.(first);
      }
      this.log.debug({ plan: plans, evictions: last.moves.length, planMs }, 'planned');
      if (this.projecting) {
        this.projection ??= new DryRunProjection(
          this.deps.cache.snapshot((key, entry) => this.deps.ledger.outstanding(key, entry)),
        );
        const stepped = this.startLanes(last);
        this.order.planDone();
        await this.lanes.settled();
        // The dry runs the API server accepted are placed as the plan predicted; the rest are held for the run.
        const accepted = stepped.filter((m) => this.projectedOk.has(m.pod.uid));
        if (accepted.length === 0) break;
        this.projection.apply(accepted);
        if (this.halt.reason !== undefined || this.reservations.limits.cycleFull) {
          stale = true;
          break;
        }
        continue;
      }
      // A run halted while the plan was made starts nothing from it.
      if (this.halt.reason === undefined) this.startLanes(last);
      this.order.planDone();
      if (this.lanes.size === 0 || !this.pacing) break;
      await this.lanes.waitForProgress(started, planMs, {
        clock: this.deps.clock,
        minReplanIntervalMs: this.deps.minReplanIntervalMs,
        halted: () => this.halt.reason !== undefined,
        queued: () => this.unsent,
        // The next plan should find at least as many evictions queued as went out while this one was made, and half
        // as many again: the client sends on while it is made, and its lanes queue only when it is done.
        lowWater: Math.ceil(1.5 * sentWhilePlanning),
      });
      if (this.halt.reason !== undefined || this.reservations.limits.cycleFull) {
        stale = true;
        break;
      }
    }
    await this.lanes.settled();
    await Promise.all(this.landings);
    this.reservations.releaseAll();
    if (this.reservations.limits.cycleFull) {
      this.limitReached ??= `limit maxPerCycle (${this.opts.policy.spec.eviction.maxPerCycle}) reached`;
    }
    if (stale && this.halt.reason === undefined) {
      // The loop ended on spent limits while lanes were pacing (or projecting): one more look at the cluster, for the
      // report.
      last = await this.plan();
      plans++;
    }
    return {
      firstPlan: first,
      lastPlan: last,
      plans,
      counts: this.outcomes.counts(),
      degraded: this.degraded,
      halted: this.halt.reason,
      limitReached: this.limitReached,
      projected: this.projection !== undefined,
    };
  }

  /** When the cache was read for the plan that made each move (the landing check asks what changed since). */
  private readonly plannedAt = new WeakMap<Move, number>();
  /** The skew each started move's plan reported for its group (evictionOutcomes.ts): what a lane keeps of its plan. */
  private readonly skewNotes = new WeakMap<Move, string>();

  /** Paced lanes whose eviction has not been answered yet: queued, waiting for a budget or a token, or in flight. */
  private unsent = 0;
  /** Paced lanes that have had their eviction answered or given it up, since the run began. */
  private sentCount = 0;

  /** Dry-run evictions of the projection's current step that the API server accepted, by pod uid. */
  private readonly projectedOk = new Set<string>();

  /** Starts a lane per workload of the plan; returns the moves the lanes were given. */
  private startLanes(outcome: RunPlan): Move[] {
    const byWorkload = new Map<string, Move[]>();
    const stepping = this.pacing || this.projecting;
    const unreliable = this.opts.predictionsUnreliable?.();
    for (const move of outcome.moves) {
      const key = workloadKey(move.pod);
      if (this.lanes.has(key) || this.holds.has(key)) continue;
      if (unreliable !== undefined && STRATEGIES.byName(move.strategy)?.kind !== 'housekeeping') {
        this.holds.hold(key, `not evicted by prediction: ${unreliable}`);
        continue;
      }
      // The planner counts limits per plan; the run's own counters decide (per node, namespace and workload).
      // A workload already given its step in this plan is not a limit: its next step is planned again.
      if (stepping && byWorkload.has(key)) continue;
      const limit = this.reservations.limits.exceeded(move.pod);
      if (limit !== undefined) {
        this.limitReached ??= limit;
        this.holds.hold(key, `${limit} in this run`);
        continue;
      }
      let list = byWorkload.get(key);
      if (list === undefined) byWorkload.set(key, (list = []));
      // With pacing only the first step is taken; the rest is re-planned from the fresh cache.
      if (!stepping || list.length === 0) list.push(move);
    }
    for (const [move, note] of skewNotes(outcome.plan, [...byWorkload.values()].flat())) this.skewNotes.set(move, note);
    for (const [key, list] of byWorkload) {
      const first = list[0]!;
      if (this.pacing) this.unsent++;
      const landings = landingPredicted(first) ? [first.target!, ...first.ties].map((n) => n.name) : [];
      const turn = this.closedLoop ? this.order.enqueue(first.pod, landings, first.slack) : undefined;
      this.lanes.start(key, this.lane(key, list, turn), (err) => {
        if (turn !== undefined) this.order.invalidate();
        this.log.error({ workload: key, err: err instanceof Error ? err.message : String(err) }, 'lane failed');
        this.holds.hold(key, 'an internal error stopped this workload for this run');
      });
    }
    return [...byWorkload.values()].flat();
  }

  private async lane(key: string, moves: readonly Move[], turn?: LaneTurn): Promise<void> {
    // A paced lane's one move counts as unsent (startLanes) until its request has been answered or given up.
    let unsent = this.pacing;
    const sent = (): void => {
      if (unsent) {
        this.unsent--;
        this.sentCount++;
      }
      unsent = false;
    };
    try {
      await this.laneMoves(key, moves, turn, sent);
    } finally {
      sent();
    }
  }

  private async laneMoves(
    key: string,
    moves: readonly Move[],
    turn: LaneTurn | undefined,
    sent: () => void,
  ): Promise<void> {
    for (const move of moves) {
      if (this.halt.reason !== undefined) return;
      let executed: Executed;
      try {
        executed = await this.executeOne(move, turn);
      } finally {
        sent();
        // A move that was not made as planned leaves the rest of its plan predicted on a state that did not happen.
        const asPlanned = typeof executed === 'object' && executed.result === 'evicted';
        if (turn !== undefined && !asPlanned && executed !== 'stale') this.order.invalidate();
        if (turn !== undefined) this.order.settle(turn);
      }
      if (executed === undefined || executed === 'stale') return;
      const { result, paced } = executed;
      if (result !== 'evicted' && result !== 'dry_run') {
        this.holds.hold(key, `the last eviction of this workload ended as ${result}; retried next run`);
        return;
      }
      if (this.pacing) {
        if (paced !== undefined) await this.pace(paced, move);
        return;
      }
    }
  }

  /** Runs the checks and the call; returns the recorded result, or undefined when the run was halted first. */
  private async executeOne(move: Move, turn: LaneTurn | undefined): Promise<Executed> {
    const record = (result: EvictionResult, detail: string, code?: string): Executed => {
      this.outcomes.record(move, this.skewNotes.get(move), result, detail, code);
      return { result };
    };
    const pod = move.pod;
    if (this.projection?.isProjected(pod) === true) {
      // A replacement the projection placed: Evict would evict the real one then; the API server has nothing to ask.
      const refusedProjected = this.reservations.reserve(pod);
      if (refusedProjected !== undefined) return record('skipped', refusedProjected);
      this.reservations.releaseSlot(workloadKey(pod));
      this.projectedOk.add(pod.uid);
      return record('dry_run', 'projected: a replacement this dry run assumed');
    }
    const current = this.deps.cache.pod(pod.namespace, pod.name);
    if (current === undefined || current.uid !== pod.uid || current.terminating) {
      return record('not_found', 'the pod is gone or terminating (seen in the cache before the call)');
    }
    const key = workloadKey(pod);
    // The reservations are taken here, synchronously, before the first await; every path that does not evict gives
    // them back.
    const refused = this.reservations.reserve(pod);
    if (refused !== undefined) {
      if (refused.startsWith('limit ')) this.limitReached ??= refused;
      return record('skipped', refused);
    }
    const budget = await waitForBudget(pod, {
      cache: this.deps.cache,
      ledger: this.deps.ledger,
      dryRun: this.dryRun,
      timeoutMs: this.opts.policy.spec.eviction.replacementTimeoutMs,
      signal: this.halt.signal,
    });
    if (budget.kind !== 'ok') {
      this.reservations.giveBack(pod);
      return budget.kind === 'halted' ? undefined : record(budget.result, budget.reason);
    }
    if (turn !== undefined) {
      const go = await this.order.waitTurn(turn, this.halt.signal);
      if (go !== 'go') {
        this.reservations.giveBack(pod);
        if (go === 'stale') this.log.debug({ pod: `${pod.namespace}/${pod.name}` }, 'plan went stale; move re-planned');
        return go === 'stale' ? 'stale' : undefined;
      }
      // The turn passes on as the request is queued, not when it is answered: the client sends in this order, and a
      // lane related to this pod waits for its landing, which counts from now (an answer other than 201 ends it).
      this.order.landingAwaited(turn);
      this.order.settle(turn);
    }
    const readyBefore = this.deps.cache.readyCount(key);
    const podsBefore = new Set(this.deps.cache.workloadPods(key).map((p) => p.uid));
    const answer = await this.sender.send(pod);
    if (answer !== 'ok') {
      if (turn !== undefined) this.order.landingKnown(pod);
      this.reservations.giveBack(pod);
      return answer === 'halted' ? undefined : record(answer.result, answer.message, answer.code);
    }
    const maxPerWorkload = this.opts.policy.spec.eviction.maxPerWorkload;
    if (!this.pacing && !this.projecting && this.reservations.countEvicted(key) >= maxPerWorkload)
      this.holds.hold(key, `limit maxPerWorkload (${maxPerWorkload}) reached in this run`);
    if (this.dryRun) {
      // A dry run evicted nothing: nothing is in flight.
      this.reservations.releaseSlot(key);
      this.projectedOk.add(pod.uid);
      return record('dry_run', 'accepted by the API server (dry run)');
    }
    if (budget.entry !== undefined) {
      this.deps.ledger.debit(budget.key, pod.uid, budget.entry.resourceVersion);
      this.deps.cache.notify(pdbWaitKey(budget.key));
    }
    if (isPodTerminal(pod)) {
      // A Failed pod was replaced when it failed, if its owner replaces pods at all (a Job may not): there is no
      // replacement of this eviction to wait for (the workload's Ready count says nothing about it), and nothing of
      // the workload is out of service because of it. The lane only waits until the cache has seen the pod go, so
      // the next plan does not choose it again.
      if (turn !== undefined) this.order.landingKnown(pod);
      record('evicted', 'evicted');
      const gone = (): boolean => {
        const now = this.deps.cache.pod(pod.namespace, pod.name);
        return now === undefined || now.uid !== pod.uid || now.terminating;
      };
      const timeoutMs = this.opts.policy.spec.eviction.replacementTimeoutMs;
      await this.deps.cache.waitUntil([workloadWaitKey(key)], gone, timeoutMs, this.halt.signal);
      this.reservations.releaseSlot(key);
      return { result: 'evicted' };
    }
    const paced: EvictionRecord = {
      workload: key,
      pod,
      strategy: move.strategy,
      // Housekeeping asks for a new pod, not another place: its replacement on the same node is no loop.
      from: STRATEGIES.byName(move.strategy)?.kind === 'housekeeping' ? undefined : move.from,
      loopKeys: loopKeysFor(
        pod,
        move.spreadKey,
        move.from,
        move.target,
        this.opts.policy.spec.strategies.topologySpread.defaultConstraints.map((c) => c.topologyKey),
      ),
      readyBefore,
      podsBefore,
      pdb: budget.entry === undefined ? undefined : { key: budget.key, resourceVersion: budget.entry.resourceVersion },
    };
    record('evicted', 'evicted');
    if (turn !== undefined) {
      if (landingPredicted(move)) this.watchLanding(move, paced);
      else this.order.landingKnown(pod);
    }
    return { result: 'evicted', paced };
  }

  /**
   * Checks where the replacement lands; until it has, no other eviction of this run is sent. Anywhere but the target
   * makes the current plan stale.
   */
  private watchLanding(move: Move, paced: EvictionRecord): void {
    const timeoutMs = this.opts.policy.spec.eviction.replacementTimeoutMs;
    const done = watchLanding(this.deps.cache, paced, move, timeoutMs, this.halt.signal, this.plannedAt.get(move))
      .then((landing: Landing | undefined) => {
        if (landing === undefined) return;
        reportLanding(landing, this.opts.policy.name, {
          metrics: this.deps.metrics,
          events: this.deps.events,
          log: this.log,
        });
        // A tie taken the other way leaves the predictions of unrelated pods standing: they allowed for it.
        if (landing.outcome === 'tied') this.order.invalidateRelated(move.pod);
        else if (landing.outcome !== 'target') this.order.invalidate();
        this.opts.onLanding?.(landing);
      })
      .catch((err: unknown) => {
        this.log.error({ err: err instanceof Error ? err.message : String(err) }, 'landing check failed');
        this.order.invalidate();
      })
      .finally(() => {
        this.order.landingKnown(move.pod);
        this.landings.delete(done);
      });
    this.landings.add(done);
  }

  /** Waits for the evicted pod's replacement; a replacement still Pending degrades the policy and halts the run. */
  private async pace(record: EvictionRecord, move: Move): Promise<void> {
    const key = record.workload;
    const timeoutMs = this.opts.policy.spec.eviction.replacementTimeoutMs;
    const outcome = await waitForReplacement(this.deps.cache, record, {
      timeoutMs,
      signal: this.halt.signal,
      onLoop: (loop) => {
        this.holds.cool(key, `cooldown: a replacement landed back on ${loop.where}`);
        this.opts.onLoop(loop);
      },
    });
    const podName = `${move.pod.namespace}/${move.pod.name}`;
    switch (outcome.kind) {
      case 'replaced':
        this.reservations.releaseSlot(key);
        return;
      case 'aborted':
        return;
      case 'pending': {
        const r = outcome.replacement;
        this.degraded = {
          reason: 'ReplacementPending',
          message: `replacement ${r.namespace}/${r.name} of evicted pod ${podName} (${key}) is still Pending after ${Math.round(timeoutMs / 1000)}s; evictions paused`,
          pod: { namespace: r.namespace, name: r.name, uid: r.uid },
          workload: key,
        };
        this.log.warn({ workload: key, replacement: `${r.namespace}/${r.name}` }, this.degraded.message);
        this.halt.halt('degraded');
        return;
      }
      case 'not_ready': {
        const detail =
          outcome.replacement === undefined
            ? 'no replacement was seen'
            : `replacement ${outcome.replacement.namespace}/${outcome.replacement.name} is not Ready`;
        const message = `${key} did not recover within ${Math.round(timeoutMs / 1000)}s after evicting ${podName}: ${detail}; no further evictions of it in this run`;
        this.holds.hold(key, message);
        this.log.warn({ workload: key }, message);
        this.deps.events.record(this.opts.policyTarget, 'Warning', 'ReplacementNotReady', message);
        return;
      }
    }
  }
}
