// One cron schedule per RebalancePolicy (node-cron), kept in step with the policies in the cache:
// - a new policy, or a spec change (metadata.generation moved), replaces the policy's task with one on the new
//   schedule; status-only updates (our own status writes) change nothing;
// - an invalid or suspended policy has no task; a deleted one loses its task and its metric series;
// - never two cycles of one policy at once: a tick that finds the previous cycle still running is skipped and
//   counted as rebalancer_cycles_total{result="skipped_overlap"}.
// - a triggered cycle (a node or policy change, after its debounce: triggers.ts) runs at once when the policy is idle;
//   when a cycle is running, one follow-up cycle is queued (coalesced) and starts as soon as it ends, so a change that
//   arrives mid-cycle is never lost and never makes two cycles of one policy run at once.
// Ticks are ignored while this replica is not the leader. The cron library sits behind CronFactory, so tests drive
// ticks by hand and production uses node-cron.
import cron from 'node-cron';
import type { Logger } from 'pino';
import type { RebalancerMetrics } from '../metrics/metrics.js';
import type { PolicyEntry } from './clusterCache.js';
import type { CycleTrigger } from './debounce.js';

export interface CronTask {
  stop(): void;
}

/** Starts calling `onTick` on the cron `expression` (5 fields, or 6 with seconds first). */
export type CronFactory = (expression: string, onTick: () => void, name: string) => CronTask;

/** node-cron 4, its warnings (missed executions) routed to the operator's logger. */
export function nodeCronFactory(logger: Logger): CronFactory {
  const log = logger.child({ component: 'cron' });
  const adapter = {
    info: (message: string) => log.debug(message),
    warn: (message: string) => log.debug(message),
    error: (message: string | Error) => log.warn(String(message)),
    debug: (message: string | Error) => log.trace(String(message)),
  };
  return (expression, onTick, name) => {
    const task = cron.schedule(expression, () => onTick(), { name, logger: adapter, noOverlap: false });
    return {
      stop: () => {
        void Promise.resolve(task.destroy()).catch(() => undefined);
      },
    };
  };
}

export interface PolicySchedulerDeps {
  readonly cron: CronFactory;
  readonly logger: Logger;
  readonly metrics: RebalancerMetrics;
  readonly isLeader: () => boolean;
  /** Runs one cycle of the policy (never rejects). */
  readonly runCycle: (name: string, trigger: CycleTrigger, changes?: readonly string[]) => Promise<void>;
  /** The spec of a policy changed (or it appeared): update its status, abort its running cycle. */
  readonly specChanged: (entry: PolicyEntry, previousGeneration: number | undefined) => void;
  /** The policy was deleted. */
  readonly removed: (name: string) => void;
}

interface Scheduled {
  readonly uid: string;
  readonly generation: number;
  readonly task: CronTask | undefined;
  readonly schedule: string | undefined;
}

export class PolicyScheduler {
  private readonly scheduled = new Map<string, Scheduled>();
  private readonly running = new Map<string, Promise<void>>();
  /** A triggered cycle to run once the running one ends. */
  private readonly queued = new Map<string, { trigger: CycleTrigger; changes: readonly string[] }>();
  private stopped = false;

  constructor(private readonly deps: PolicySchedulerDeps) {}

  /** Cache listener: keeps the schedules in step with the policies. */
  readonly onPolicy = (event: 'upsert' | 'delete', entry: PolicyEntry): void => {
    if (this.stopped) return;
    const known = this.scheduled.get(entry.name);
    if (event === 'delete') {
      known?.task?.stop();
      this.scheduled.delete(entry.name);
      this.deps.logger.info({ policy: entry.name }, 'policy deleted; schedule removed');
      this.deps.removed(entry.name);
      return;
    }
    if (known !== undefined && known.uid === entry.uid && known.generation === entry.generation) return;
    known?.task?.stop();
    // Same name, another object (deleted and recreated while the watch was down): the old one is gone.
    const replaced = known !== undefined && known.uid !== entry.uid;
    if (replaced) {
      this.scheduled.delete(entry.name);
      this.deps.logger.info({ policy: entry.name, uid: entry.uid }, 'policy recreated; the old one is forgotten');
      this.deps.removed(entry.name);
    }
    const previous = replaced ? undefined : known;
    const policy = entry.policy;
    const schedule = policy !== undefined && !policy.spec.suspend ? policy.spec.schedule : undefined;
    const task =
      schedule === undefined ? undefined : this.deps.cron(schedule, () => void this.tick(entry.name), entry.name);
    this.scheduled.set(entry.name, { uid: entry.uid, generation: entry.generation, task, schedule });
    this.deps.logger.info(
      {
        policy: entry.name,
        generation: entry.generation,
        schedule: schedule ?? null,
        state: policy === undefined ? 'invalid' : policy.spec.suspend ? 'suspended' : 'scheduled',
      },
      previous === undefined ? 'policy scheduled' : 'policy changed; rescheduled',
    );
    this.deps.specChanged(entry, previous?.generation);
  };

  /** The schedule a policy currently runs on (undefined: none). */
  scheduleOf(name: string): string | undefined {
    return this.scheduled.get(name)?.schedule;
  }

  /** A tick: run a cycle unless one is running (then count the overlap) or this replica does not lead. */
  tick(name: string): Promise<void> {
    if (this.stopped || !this.deps.isLeader()) return Promise.resolve();
    this.deps.metrics.markCycleDue(name);
    const inFlight = this.running.get(name);
    if (inFlight !== undefined) {
      this.deps.metrics.observeCycle(name, 0, 'skipped_overlap');
      this.deps.logger.info({ policy: name }, 'previous cycle still running; this tick is skipped');
      return Promise.resolve();
    }
    return this.start(name, 'schedule', undefined);
  }

  /** A triggered cycle: runs now if the policy is idle, else once its running cycle ends (coalesced). */
  trigger(name: string, trigger: CycleTrigger, changes: readonly string[]): Promise<void> {
    if (this.stopped || !this.deps.isLeader()) return Promise.resolve();
    if (this.running.has(name)) {
      const queued = this.queued.get(name);
      this.queued.set(name, { trigger: queued?.trigger ?? trigger, changes: [...(queued?.changes ?? []), ...changes] });
      this.deps.logger.info({ policy: name, trigger, changes }, 'a cycle is running; the triggered cycle follows it');
      return Promise.resolve();
    }
    return this.start(name, trigger, changes);
  }

  private start(name: string, trigger: CycleTrigger, changes: readonly string[] | undefined): Promise<void> {
    const cycle = this.deps.runCycle(name, trigger, changes).finally(() => {
      this.running.delete(name);
      const next = this.queued.get(name);
      this.queued.delete(name);
      if (next !== undefined && this.scheduled.has(name)) void this.trigger(name, next.trigger, next.changes);
    });
    this.running.set(name, cycle);
    return cycle;
  }

  /** Stops every schedule and waits for the running cycles. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queued.clear();
    for (const entry of this.scheduled.values()) entry.task?.stop();
    this.scheduled.clear();
    await Promise.all(this.running.values());
  }
}
