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
//      every lane is done or at least `minReplanIntervalMs` (and twice the last planning time) has passed since
//      the last plan, so a 10,000-pod cluster is not re-planned once per eviction.
//   4. The run ends when a plan yields nothing new and no lane is active. Each re-plan follows at least one
//      finished lane; a lane that did not evict holds its workload for the rest of the run, and every eviction
//      counts against the run's limits (maxPerCycle, maxPerNode, maxPerNamespace, maxPerWorkload, enforced again
//      here with the planner's own counters), so a run is bounded by maxPerCycle + number of workloads plans.
// DryRun (server-side dry-run evictions change nothing) and waitForReplacement: false run one plan and execute it
// whole, each lane taking its workload's evictions in order.
//
// Before each eviction, the lane re-checks against the cache: the pod still exists with the planned uid and is
// not terminating; the run's limits; the pod's budget (exactly one, its status observed by its controller, an
// allowance left after the evictions this operator sent that the cached status does not show yet: PdbLedger) —
// waiting for the budget rather than calling and failing; and, immediately before the call, leadership — checked
// again by the HTTP layer once the request has its token, at the moment it is sent (kubeClient.ts: fencing).
// maxPerCycle/Node/Namespace and the shared per-workload in-flight slot are reserved before the first await and
// given back when no eviction results (inFlight.ts).
// Answers are classified once (evictionErrors.ts); 5xx and network errors are retried with capped exponential
// backoff, at most `maxAttempts` per eviction and `maxRetriesPerRun` per run. recordOutcome() is the one place an
// outcome becomes a metric, a log line and an Event.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { RebalancerMetrics } from '../metrics/metrics.js';
import type { AbortReason, EvictionResult } from '../metrics/names.js';
import { pdbKey } from '../model/pdb.js';
import type { PodInfo } from '../model/types.js';
import { workloadKey } from '../planner/budget.js';
import { planCycle, type Move, type PlanOutcome } from '../planner/plan.js';
import type { RebalancePlan } from '../planner/types.js';
import type { Policy } from '../policy/types.js';
import { backoffDelay } from './backoff.js';
import type { Clock } from './clock.js';
import { ClusterCache, pdbWaitKey, type PdbEntry } from './clusterCache.js';
import { classifyEvictionError, EvictionError } from './evictionErrors.js';
import type { InFlightEvictions } from './inFlight.js';
import { RunLimits } from './inFlight.js';
import { FencedError } from './kubeClient.js';
import type { EventRecorder, EventTarget } from './events.js';
import { loopKeysFor, waitForReplacement, type EvictionRecord, type LoopDetection } from './pacing.js';

// ---- the Eviction API call -----------------------------------------------------------------------------------

export interface EvictionTarget {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface Evictor {
  /** Sends one Eviction; resolves on 2xx, throws what the client threw otherwise. */
  evict(target: EvictionTarget, dryRun: boolean): Promise<void>;
}

/** policy/v1 Eviction with a uid precondition; dryRun=All in the query and the delete options when dry-running. */
/** The Eviction call (kubeClient.ts; named as client-node's CoreV1Api names it). */
export interface EvictionApi {
  createNamespacedPodEviction(p: { name: string; namespace: string; dryRun?: string; body: unknown }): Promise<unknown>;
}

export function createApiEvictor(core: EvictionApi): Evictor {
  return {
    async evict(target, dryRun) {
      await core.createNamespacedPodEviction({
        name: target.name,
        namespace: target.namespace,
        ...(dryRun ? { dryRun: 'All' } : {}),
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: target.name, namespace: target.namespace },
          deleteOptions: { preconditions: { uid: target.uid }, ...(dryRun ? { dryRun: ['All'] } : {}) },
        },
      });
    },
  };
}

// ---- budget bookkeeping --------------------------------------------------------------------------------------

/**
 * Evictions this operator sent that the cached budget does not reflect yet. The Eviction API decrements
 * status.disruptionsAllowed in the same request, so the debit holds until the cache shows a newer version of the
 * budget than the one the eviction was checked against. Shared by all runs (budgets are cluster objects).
 */
export class PdbLedger {
  private readonly debits = new Map<string, Map<string, string>>();

  debit(key: string, podUid: string, resourceVersion: string): void {
    let pods = this.debits.get(key);
    if (pods === undefined) this.debits.set(key, (pods = new Map<string, string>()));
    pods.set(podUid, resourceVersion);
  }

  outstanding(key: string, entry: PdbEntry | undefined): number {
    const pods = this.debits.get(key);
    if (pods === undefined) return 0;
    for (const [uid, rv] of pods) if (entry === undefined || entry.resourceVersion !== rv) pods.delete(uid);
    if (pods.size === 0) this.debits.delete(key);
    return pods.size;
  }
}

// ---- the run -------------------------------------------------------------------------------------------------

export interface RetryOptions {
  readonly initialMs: number;
  readonly maxMs: number;
  /** Attempts per eviction, the first included. */
  readonly maxAttempts: number;
  /** Retries (attempts after the first) in one run, across all evictions. */
  readonly maxRetriesPerRun: number;
  readonly random?: () => number;
}

export const DEFAULT_RETRY: RetryOptions = { initialMs: 500, maxMs: 10_000, maxAttempts: 4, maxRetriesPerRun: 50 };

export interface RunDeps {
  readonly cache: ClusterCache;
  readonly evictor: Evictor;
  readonly clock: Clock;
  readonly metrics: RebalancerMetrics;
  readonly events: EventRecorder;
  readonly ledger: PdbLedger;
  /** Evictions in flight per workload, shared by every run of every policy (maxPerWorkload holds across them). */
  readonly inFlight: InFlightEvictions;
  readonly isLeader: () => boolean;
  readonly retry: RetryOptions;
  /** Least time between two plans of one run while lanes are still active (default 1 s). */
  readonly minReplanIntervalMs: number;
}

export interface RunOptions {
  readonly policy: Policy;
  readonly policyTarget: EventTarget;
  readonly logger: Logger;
  /**
   * Aborts the run: no eviction starts after it fires (the one in flight completes). Its `reason` (an AbortReason)
   * is reported as the run's `halted`.
   */
  readonly signal: AbortSignal;
  /** Workloads held when the run starts (cooldowns), with the reason. */
  readonly held: ReadonlyMap<string, string>;
  /** A replacement landed back: the caller holds the workload for the policy's cooldown. */
  readonly onLoop: (loop: LoopDetection) => void;
  /** The first plan, as soon as it exists (topology metrics, status). */
  readonly onFirstPlan?: (outcome: PlanOutcome) => void;
  /** Closes when the maintenance window ends (maintenanceWindows.ts): no eviction is sent after, the run halts. */
  readonly gate?: EvictionGate;
}

export interface EvictionGate {
  /** Why evictions must stop now, or undefined while they may go on. */
  closed(): string | undefined;
  /** Aborts when the gate closes. */
  readonly signal: AbortSignal;
}

export interface Degradation {
  readonly reason: 'ReplacementPending';
  readonly message: string;
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string };
  readonly workload: string;
}

export type RunCounts = Record<EvictionResult, number>;

export interface RunResult {
  readonly firstPlan: PlanOutcome;
  /** The last plan made: with pacing, one made after the last eviction, so its skew is the cluster's now. */
  readonly lastPlan: PlanOutcome;
  readonly plans: number;
  readonly counts: RunCounts;
  readonly degraded: Degradation | undefined;
  /** Why the run stopped early, if it did. */
  readonly halted: AbortReason | 'degraded' | 'window_closed' | undefined;
}

function abortReason(signal: AbortSignal): AbortReason {
  const reason: unknown = signal.reason;
  return reason === 'spec_changed' || reason === 'deleted' || reason === 'leadership_lost' ? reason : 'shutting_down';
}

type Halt = NonNullable<RunResult['halted']>;

const EVENT_REASONS: Partial<Record<EvictionResult, { type: 'Normal' | 'Warning'; reason: string }>> = {
  evicted: { type: 'Normal', reason: 'RebalanceEviction' },
  dry_run: { type: 'Normal', reason: 'RebalanceDryRun' },
  pdb_blocked: { type: 'Warning', reason: 'RebalanceBlocked' },
  failed: { type: 'Warning', reason: 'RebalanceEvictionFailed' },
};

/** `topology.kubernetes.io/zone skew 5 → 1 planned` for the spread group a move belongs to, if found. */
export function skewNote(plan: RebalancePlan, move: Move): string | undefined {
  if (move.strategy !== 'TopologySpread') return undefined;
  const workload = `${move.pod.workload.kind}/${move.pod.workload.name}`;
  const report = plan.topology.find(
    (t) =>
      t.namespace === move.pod.namespace &&
      (t.workloads ?? []).includes(workload) &&
      move.reason.startsWith(`${t.topologyKey}:`),
  );
  return report === undefined ? undefined : `${report.topologyKey} skew ${report.skew} → ${report.skewAfter} planned`;
}

export class PolicyRun {
  private readonly counts: RunCounts = { evicted: 0, dry_run: 0, pdb_blocked: 0, not_found: 0, failed: 0, skipped: 0 };
  private readonly limits: RunLimits;
  /** In-flight slots this run holds, by workload; whatever is left is released when the run ends. */
  private readonly slots = new Map<string, number>();
  private readonly lanes = new Map<string, Promise<void>>();
  /** Workloads done for this run, with why (shown in the plan's skipped list). */
  private readonly runHolds = new Map<string, string>();
  private readonly cooling = new Map<string, string>();
  /** Evictions made by lanes that are about to pace, by workload. */
  private readonly pending = new Map<string, EvictionRecord>();
  private readonly abort = new AbortController();
  private readonly dryRun: boolean;
  private readonly pacing: boolean;
  private retriesLeft: number;
  private readonly evictedPerWorkload = new Map<string, number>();
  private halted: Halt | undefined;
  private degraded: Degradation | undefined;
  private finishedSincePlan = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly deps: RunDeps,
    private readonly opts: RunOptions,
  ) {
    const spec = opts.policy.spec;
    this.dryRun = spec.mode === 'DryRun';
    this.pacing = !this.dryRun && spec.eviction.waitForReplacement;
    // Paced, maxPerWorkload bounds the workload's evictions in flight (the shared slot), not the run's: one run goes
    // on, one step at a time, until the workload is done (DESIGN.md). Unpaced, the run executes one plan whole.
    this.limits = new RunLimits(spec.eviction, { perWorkloadInRun: !this.pacing });
    this.retriesLeft = deps.retry.maxRetriesPerRun;
    // Every lane (one per workload, a thousand in a large run) waits on this signal at once; that is by design,
    // not a listener leak, so Node's default warning threshold of 10 does not apply.
    setMaxListeners(0, this.abort.signal);
    if (opts.signal.aborted) this.halt(abortReason(opts.signal));
    else opts.signal.addEventListener('abort', () => this.halt(abortReason(opts.signal)), { once: true });
    const gate = opts.gate?.signal;
    if (gate?.aborted === true) this.halt('window_closed');
    else gate?.addEventListener('abort', () => this.halt('window_closed'), { once: true });
  }

  private get log(): Logger {
    return this.opts.logger;
  }

  private halt(why: Halt): void {
    if (this.halted !== undefined) return;
    this.halted = why;
    this.abort.abort();
    this.wake?.();
  }

  private heldWorkloads(): Map<string, string> {
    const held = new Map(this.opts.held);
    for (const [k, v] of this.cooling) held.set(k, v);
    for (const [k, v] of this.runHolds) held.set(k, v);
    for (const k of this.lanes.keys()) held.set(k, 'an eviction of this workload is in progress');
    for (const k of this.deps.inFlight.saturated(this.opts.policy.spec.eviction.maxPerWorkload)) {
      if (!held.has(k)) held.set(k, 'maxPerWorkload evictions of this workload are in flight (another policy)');
    }
    return held;
  }

  /** The policy as the next plan must see it: maxPerCycle lowered by the evictions this run made or reserved. */
  private policyForPlan(): Policy {
    const policy = this.opts.policy;
    const used = this.limits.reserved;
    if (used === 0) return policy;
    const eviction = {
      ...policy.spec.eviction,
      maxPerCycle: Math.max(0, policy.spec.eviction.maxPerCycle - used),
    };
    return { ...policy, spec: { ...policy.spec, eviction } };
  }

  private plan(): PlanOutcome {
    const snapshot = this.deps.cache.snapshot((key, entry) => this.deps.ledger.outstanding(key, entry));
    return planCycle(snapshot, this.policyForPlan(), { heldWorkloads: this.heldWorkloads() });
  }

  async run(): Promise<RunResult> {
    let plans = 0;
    let first: PlanOutcome | undefined;
    let last: PlanOutcome;
    let stale = false;
    for (;;) {
      const started = this.deps.clock.now();
      last = this.plan();
      plans++;
      const planMs = this.deps.clock.now() - started;
      if (first === undefined) {
        first = last;
        this.opts.onFirstPlan?.(first);
      }
      this.log.debug({ plan: plans, evictions: last.moves.length, planMs }, 'planned');
      this.startLanes(last);
      if (this.lanes.size === 0 || !this.pacing) break;
      await this.waitForProgress(started, planMs);
      if (this.halted !== undefined || this.limitsSpent()) {
        stale = true;
        break;
      }
    }
    await Promise.all(this.lanes.values());
    for (const [key, n] of this.slots) for (let i = 0; i < n; i++) this.deps.inFlight.release(key);
    this.slots.clear();
    if (stale && this.halted === undefined) {
      // The loop ended on spent limits while lanes were pacing: one more look at the cluster, for the report.
      last = this.plan();
      plans++;
    }
    return {
      firstPlan: first,
      lastPlan: last,
      plans,
      counts: { ...this.counts },
      degraded: this.degraded,
      halted: this.halted,
    };
  }

  private limitsSpent(): boolean {
    return this.limits.cycleFull;
  }

  /** Waits until re-planning is worth it: a lane finished and (all are done or the batching interval passed). */
  private async waitForProgress(lastPlanAt: number, planMs: number): Promise<void> {
    const interval = Math.max(this.deps.minReplanIntervalMs, 2 * planMs);
    this.finishedSincePlan = 0;
    for (;;) {
      if (this.halted !== undefined || this.lanes.size === 0) return;
      const now = this.deps.clock.now();
      if (this.finishedSincePlan > 0 && now >= lastPlanAt + interval) return;
      const progress = new Promise<void>((resolve) => (this.wake = resolve));
      const timer = new AbortController();
      const waits: Promise<void>[] = [progress];
      if (this.finishedSincePlan > 0) waits.push(this.deps.clock.sleep(lastPlanAt + interval - now, timer.signal));
      await Promise.race(waits);
      timer.abort();
      this.wake = undefined;
    }
  }

  private startLanes(outcome: PlanOutcome): void {
    const byWorkload = new Map<string, Move[]>();
    for (const move of outcome.moves) {
      const key = workloadKey(move.pod);
      if (this.lanes.has(key) || this.runHolds.has(key)) continue;
      // The planner counts limits per plan; the run's own counters decide (per node, namespace and workload).
      const limit = this.limits.exceeded(move.pod);
      if (limit !== undefined) {
        this.runHolds.set(key, `${limit} in this run`);
        continue;
      }
      let list = byWorkload.get(key);
      if (list === undefined) byWorkload.set(key, (list = []));
      // With pacing only the first step is taken; the rest is re-planned from the fresh cache.
      if (!this.pacing || list.length === 0) list.push(move);
    }
    for (const [key, list] of byWorkload) {
      const lane = this.lane(key, list, outcome.plan).then(
        () => this.laneDone(key),
        (err: unknown) => {
          this.log.error({ workload: key, err: err instanceof Error ? err.message : String(err) }, 'lane failed');
          this.runHolds.set(key, 'an internal error stopped this workload for this run');
          this.laneDone(key);
        },
      );
      this.lanes.set(key, lane);
    }
  }

  private laneDone(key: string): void {
    this.lanes.delete(key);
    this.finishedSincePlan++;
    this.wake?.();
  }

  private async lane(key: string, moves: readonly Move[], plan: RebalancePlan): Promise<void> {
    for (const move of moves) {
      if (this.halted !== undefined) return;
      const result = await this.executeOne(move, plan);
      if (result === undefined) return;
      if (result !== 'evicted' && result !== 'dry_run') {
        this.runHolds.set(key, `the last eviction of this workload ended as ${result}; retried next run`);
        return;
      }
      if (this.pacing) {
        await this.pace(key, move);
        return;
      }
    }
  }

  // ---- one eviction ------------------------------------------------------------------------------------------

  /** Runs the checks and the call; returns the recorded result, or undefined when the run was halted first. */
  private async executeOne(move: Move, plan: RebalancePlan): Promise<EvictionResult | undefined> {
    const record = (result: EvictionResult, detail: string, code?: string): void =>
      this.recordOutcome(move, plan, result, detail, code);
    const pod = move.pod;
    const current = this.deps.cache.pod(pod.namespace, pod.name);
    if (current === undefined || current.uid !== pod.uid || current.terminating) {
      record('not_found', 'the pod is gone or terminating (seen in the cache before the call)');
      return 'not_found';
    }
    const key = workloadKey(pod);
    // Both reservations are taken here, synchronously, before the first await; every path that does not evict
    // gives them back.
    const limit = this.limits.reserve(pod);
    if (limit !== undefined) {
      record('skipped', limit);
      return 'skipped';
    }
    const maxPerWorkload = this.opts.policy.spec.eviction.maxPerWorkload;
    if (!this.deps.inFlight.tryReserve(key, maxPerWorkload)) {
      this.limits.release(pod);
      record('skipped', `${maxPerWorkload} eviction(s) of ${key} already in flight (maxPerWorkload, across policies)`);
      return 'skipped';
    }
    this.slots.set(key, (this.slots.get(key) ?? 0) + 1);
    const giveBack = (): void => {
      this.limits.release(pod);
      this.releaseSlot(key);
    };
    const budget = await this.awaitBudget(move);
    if (budget.kind === 'halted') {
      giveBack();
      return undefined;
    }
    if (budget.kind === 'refused') {
      giveBack();
      record(budget.result, budget.reason);
      return budget.result;
    }
    const readyBefore = this.deps.cache.readyCount(key);
    const podsBefore = new Set(this.deps.cache.workloadPods(key).map((p) => p.uid));
    const answer = await this.callWithRetries(pod);
    if (answer === 'halted') {
      giveBack();
      return undefined;
    }
    if (answer instanceof EvictionError) {
      giveBack();
      record(answer.result, answer.message, answer.code);
      return answer.result;
    }
    const perWorkload = (this.evictedPerWorkload.get(key) ?? 0) + 1;
    this.evictedPerWorkload.set(key, perWorkload);
    if (!this.pacing && perWorkload >= maxPerWorkload)
      this.runHolds.set(key, `limit maxPerWorkload (${maxPerWorkload}) reached in this run`);
    if (this.dryRun) {
      // A dry run evicted nothing: nothing is in flight.
      this.releaseSlot(key);
      record('dry_run', 'accepted by the API server (dry run)');
      return 'dry_run';
    }
    if (budget.entry !== undefined) {
      this.deps.ledger.debit(budget.key, pod.uid, budget.entry.resourceVersion);
      this.deps.cache.notify(pdbWaitKey(budget.key));
    }
    this.pending.set(key, {
      workload: key,
      pod,
      strategy: move.strategy,
      from: move.from,
      loopKeys: loopKeysFor(
        pod,
        move.strategy,
        move.from,
        move.target,
        this.opts.policy.spec.strategies.topologySpread.defaultConstraints.map((c) => c.topologyKey),
      ),
      readyBefore,
      podsBefore,
      pdb: budget.entry === undefined ? undefined : { key: budget.key, resourceVersion: budget.entry.resourceVersion },
    });
    record('evicted', 'evicted');
    return 'evicted';
  }

  private releaseSlot(key: string): void {
    const held = this.slots.get(key) ?? 0;
    if (held === 0) return;
    if (held === 1) this.slots.delete(key);
    else this.slots.set(key, held - 1);
    this.deps.inFlight.release(key);
  }

  /** Waits (bounded by replacementTimeout) until the pod's budget allows one more disruption. */
  private async awaitBudget(
    move: Move,
  ): Promise<
    | { kind: 'ok'; key: string; entry: PdbEntry | undefined }
    | { kind: 'refused'; result: EvictionResult; reason: string }
    | { kind: 'halted' }
  > {
    const pdbs = this.deps.cache.pdbsFor(move.pod);
    if (pdbs.length > 1) {
      return {
        kind: 'refused',
        result: 'skipped',
        reason: `the pod is selected by ${pdbs.length} PodDisruptionBudgets (${pdbs.map((p) => pdbKey(p.info)).join(', ')}); the Eviction API refuses such pods`,
      };
    }
    const first = pdbs[0];
    if (first === undefined) return { kind: 'ok', key: '', entry: undefined };
    const key = pdbKey(first.info);
    // A dry run changes nothing, and the server checks the budget itself: no point waiting for it.
    if (this.dryRun) return { kind: 'ok', key, entry: first };
    const available = (): boolean => {
      const entry = this.deps.cache.pdb(key);
      return entry !== undefined && ClusterCache.allowance(entry, this.deps.ledger.outstanding(key, entry)) >= 1;
    };
    const timeout = this.opts.policy.spec.eviction.replacementTimeoutMs;
    const ok = await this.deps.cache.waitUntil([pdbWaitKey(key)], available, timeout, this.abort.signal);
    if (this.halted !== undefined) return { kind: 'halted' };
    const entry = this.deps.cache.pdb(key);
    if (!ok || entry === undefined) {
      return {
        kind: 'refused',
        result: 'pdb_blocked',
        reason: `PodDisruptionBudget ${key} allowed no disruption for ${Math.round(timeout / 1000)}s (not sent)`,
      };
    }
    return { kind: 'ok', key, entry };
  }

  /** The call, retried on retryable answers; leadership is checked immediately before every attempt. */
  private async callWithRetries(pod: PodInfo): Promise<EvictionError | 'ok' | 'halted'> {
    const retry = this.deps.retry;
    for (let attempt = 0; ; attempt++) {
      if (this.halted !== undefined) return 'halted';
      if (!this.deps.isLeader()) {
        this.halt('leadership_lost');
        return 'halted';
      }
      if (!this.dryRun && this.opts.gate?.closed() !== undefined) {
        this.halt('window_closed');
        return 'halted';
      }
      try {
        await this.deps.evictor.evict({ namespace: pod.namespace, name: pod.name, uid: pod.uid }, this.dryRun);
        return 'ok';
      } catch (err) {
        if (err instanceof FencedError) {
          this.halt('leadership_lost');
          return 'halted';
        }
        const error = classifyEvictionError(err, this.deps.clock.wall());
        if (!error.retryable || attempt + 1 >= retry.maxAttempts || this.retriesLeft <= 0) return error;
        this.retriesLeft--;
        const delay = error.retryAfterMs ?? backoffDelay(attempt, { ...retry, jitter: 0.2 });
        this.log.info(
          {
            pod: `${pod.namespace}/${pod.name}`,
            code: error.code,
            status: error.status,
            err: error.message,
            retryInMs: Math.round(delay),
          },
          'eviction failed, retrying',
        );
        await this.deps.clock.sleep(delay, this.abort.signal);
      }
    }
  }

  // ---- pacing ------------------------------------------------------------------------------------------------

  private async pace(key: string, move: Move): Promise<void> {
    const record = this.pending.get(key);
    this.pending.delete(key);
    if (record === undefined) return;
    const timeoutMs = this.opts.policy.spec.eviction.replacementTimeoutMs;
    const outcome = await waitForReplacement(this.deps.cache, record, {
      timeoutMs,
      signal: this.abort.signal,
      onLoop: (loop) => {
        this.cooling.set(key, `cooldown: a replacement landed back on ${loop.where}`);
        this.opts.onLoop(loop);
      },
    });
    const podName = `${move.pod.namespace}/${move.pod.name}`;
    switch (outcome.kind) {
      case 'replaced':
        this.releaseSlot(key);
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
        this.halt('degraded');
        return;
      }
      case 'not_ready': {
        const detail =
          outcome.replacement === undefined
            ? 'no replacement was seen'
            : `replacement ${outcome.replacement.namespace}/${outcome.replacement.name} is not Ready`;
        const message = `${key} did not recover within ${Math.round(timeoutMs / 1000)}s after evicting ${podName}: ${detail}; no further evictions of it in this run`;
        this.runHolds.set(key, message);
        this.log.warn({ workload: key }, message);
        this.deps.events.record(this.opts.policyTarget, 'Warning', 'ReplacementNotReady', message);
        return;
      }
    }
  }

  // ---- outcomes ----------------------------------------------------------------------------------------------

  /** The one place an eviction outcome is recorded: the metric, the log line and the Event. */
  private recordOutcome(move: Move, plan: RebalancePlan, result: EvictionResult, detail: string, code?: string): void {
    this.counts[result]++;
    const policy = this.opts.policy.name;
    this.deps.metrics.recordEviction(policy, move.strategy, result);
    const pod = move.pod;
    const skew = skewNote(plan, move);
    const fields = {
      pod: `${pod.namespace}/${pod.name}`,
      uid: pod.uid,
      node: move.from.name,
      target: move.target?.name,
      workload: workloadKey(pod),
      strategy: move.strategy,
      result,
      ...(code !== undefined ? { code } : {}),
      ...(skew !== undefined ? { skew } : {}),
    };
    const ok = result === 'evicted' || result === 'dry_run';
    if (ok) this.log.info(fields, `${result === 'dry_run' ? 'dry-run eviction' : 'evicted'}: ${move.reason}`);
    else this.log.warn(fields, `eviction ${result}: ${detail}`);
    const kind = EVENT_REASONS[result];
    if (kind === undefined) return;
    const why = `${move.strategy}: ${move.reason}${skew !== undefined ? `; ${skew}` : ''}`;
    const message =
      result === 'evicted'
        ? `Evicted by RebalancePolicy ${policy} (${why})`
        : result === 'dry_run'
          ? `Would be evicted by RebalancePolicy ${policy}, dry run accepted by the API server (${why})`
          : `Eviction by RebalancePolicy ${policy} ${result === 'pdb_blocked' ? 'blocked' : 'failed'}: ${detail}`;
    this.deps.events.record(
      { apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      kind.type,
      kind.reason,
      message,
      {
        key: `${policy}\u0000${kind.reason}\u0000${workloadKey(pod)}`,
        label: `${pod.workload.kind} ${pod.namespace}/${pod.workload.name}`,
      },
    );
  }
}
