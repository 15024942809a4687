// Leader election on a thread of its own, as client-go runs it on a goroutine of its own: the Lease is renewed while
// the main thread is busy. A paced run's plan at 1,000 nodes / 30,000 pods holds the main thread for seconds on a
// loaded machine, and a renewal waiting behind it lost the Lease (14 times in one 30,000-pod run; bench/RESULTS.md,
// issue 29), aborting the run each time.
//
// The worker (leaseWorker.ts) runs the elector of leaderElection.ts with its own client, loaded from the same
// credential source, and writes what it knows into shared memory: whether it leads, when its last successful attempt
// started, when its loop last completed an attempt. The main thread reads that memory at the instant it asks, so the
// executor's check before every eviction is as exact as in one thread (the renew deadline applied at that instant,
// on the process-wide monotonic clock both threads read). The callbacks (started / stopped leading) and the worker's
// log lines arrive as messages, when the main thread is free to take them: isLeader() answers false from the moment
// the worker stops leading, whether or not its message has been read.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { CredentialSource } from './kubeconfig.js';
import type { LeaderElector } from './leaderElection.js';

/** Slots of the shared state: 0/1 leading, then microseconds on the process's monotonic clock. */
export const SLOT = { leading: 0, renewedAt: 1, activityAt: 2 } as const;
export const SLOTS = 3;

/** The process-wide monotonic clock (both threads read the same one), in microseconds. */
export function monotonicMicros(): bigint {
  return process.hrtime.bigint() / 1000n;
}

/** The election itself: where the client comes from, the Lease, the identity and the timings (all plain data). */
export interface LeaseElection {
  readonly source: CredentialSource;
  readonly context?: string;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly userAgent: string;
  readonly qps: number;
  readonly burst: number;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
}

/** What the worker is started with (structured-cloned): the election and the memory it shares. */
export interface LeaseWorkerInput extends LeaseElection {
  readonly shared: SharedArrayBuffer;
}

/** Messages from the worker. */
export type LeaseWorkerMessage =
  | { readonly type: 'leading'; readonly value: boolean }
  | {
      readonly type: 'log';
      readonly level: 'info' | 'warn' | 'error';
      readonly fields: Record<string, unknown>;
      readonly msg: string;
    }
  | { readonly type: 'stopped' }
  | { readonly type: 'failed'; readonly error: string };

/** Messages to the worker. */
export type LeaseWorkerCommand = { readonly type: 'start' } | { readonly type: 'stop'; readonly release: boolean };

export interface ThreadedElectionOptions {
  readonly election: LeaseElection;
  /** The main thread's clock: lastActivity() is reported on it, as /healthz compares it with clock.now(). */
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onStartedLeading?: () => void;
  readonly onStoppedLeading?: () => void;
  /** The worker's script (default: leaseWorker.js beside this module, as built). */
  readonly workerUrl?: URL;
}

/** The built worker script beside this module (absent when the sources run under a test runner). */
export function leaseWorkerUrl(): URL {
  return new URL('./leaseWorker.js', import.meta.url);
}

export function createThreadedLeaderElector(opts: ThreadedElectionOptions): LeaderElector {
  const shared = new SharedArrayBuffer(SLOTS * BigInt64Array.BYTES_PER_ELEMENT);
  const state = new BigInt64Array(shared);
  const { namespace, name, renewDeadlineMs, retryPeriodMs } = opts.election;
  const log = opts.logger.child({ component: 'leader-election', lease: `${namespace}/${name}` });
  const renewDeadlineMicros = BigInt(renewDeadlineMs) * 1000n;
  /** Whether the callbacks have been told this replica leads: isLeader() never answers true before they were. */
  let leading = false;
  let worker: Worker | undefined;
  let stopped: Promise<void> | undefined;
  let resolveStopped: (() => void) | undefined;
  let deadline: NodeJS.Timeout | undefined;

  const sharedLeads = (): boolean =>
    Atomics.load(state, SLOT.leading) === 1n &&
    monotonicMicros() - Atomics.load(state, SLOT.renewedAt) < renewDeadlineMicros;

  function setLeading(value: boolean): void {
    if (leading === value) return;
    leading = value;
    if (value) opts.onStartedLeading?.();
    else opts.onStoppedLeading?.();
  }

  function isLeader(): boolean {
    if (leading && !sharedLeads()) setLeading(false);
    return leading;
  }

  /**
   * Re-checked every retry period as well, so the callbacks fire near the deadline even with no one asking; and
   * leadership is taken up again once the worker has renewed since. This thread applies the renew deadline at the
   * instant it asks, the worker by a timer of its own: a renewal that succeeds just past the deadline, before the
   * worker's timer fires, leaves the worker leading with no message to send, while this thread stepped down (a
   * 30,000-pod bench run sat 5 minutes idle that way, its Lease renewed throughout). A renewal newer than the deadline
   * is a Lease the API server wrote for this replica, which no other could have taken meanwhile. Taken up here, not
   * inside isLeader(): the callbacks start cycles, which a check made on an eviction's way out must not do.
   */
  function watchDeadline(): void {
    deadline = setInterval(
      () => {
        if (!leading && sharedLeads()) setLeading(true);
        else isLeader();
      },
      Math.max(100, Math.floor(retryPeriodMs / 2)),
    );
    deadline.unref();
  }

  function onMessage(m: LeaseWorkerMessage): void {
    switch (m.type) {
      case 'leading':
        // A message read late may describe a state already past: the shared memory is the truth.
        if (m.value && sharedLeads()) setLeading(true);
        if (!m.value) setLeading(false);
        return;
      case 'log':
        log[m.level](m.fields, m.msg);
        return;
      case 'stopped':
        resolveStopped?.();
        return;
      case 'failed':
        log.error({ err: m.error }, 'leader election thread failed; this replica does not lead');
        Atomics.store(state, SLOT.leading, 0n);
        setLeading(false);
        return;
    }
  }

  return {
    isLeader,
    start() {
      if (worker !== undefined) return;
      const input: LeaseWorkerInput = { ...opts.election, shared };
      Atomics.store(state, SLOT.activityAt, monotonicMicros());
      worker = new Worker(opts.workerUrl ?? leaseWorkerUrl(), { workerData: input });
      worker.on('message', onMessage);
      worker.on('error', (err) => onMessage({ type: 'failed', error: err.message }));
      worker.on('exit', (code) => {
        if (resolveStopped === undefined) onMessage({ type: 'failed', error: `the thread exited (code ${code})` });
        resolveStopped?.();
      });
      worker.postMessage({ type: 'start' } satisfies LeaseWorkerCommand);
      watchDeadline();
    },
    lastActivity() {
      if (worker === undefined) return undefined;
      const ageMs = Number(monotonicMicros() - Atomics.load(state, SLOT.activityAt)) / 1000;
      return opts.clock.now() - ageMs;
    },
    async stop(release) {
      clearInterval(deadline);
      const w = worker;
      if (w === undefined) return;
      stopped ??= new Promise<void>((resolve) => {
        resolveStopped = resolve;
        w.postMessage({ type: 'stop', release } satisfies LeaseWorkerCommand);
      });
      await stopped;
      setLeading(false);
      await w.terminate();
    },
  };
}
