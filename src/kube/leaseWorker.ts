// The leader election thread (see leaseThread.ts): the elector of leaderElection.ts with a client of its own, loaded
// from the operator's credential source, writing its state into the memory it shares with the main thread.
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { systemClock, type Clock } from '../clock.js';
import { createKubeClients } from './kubeClient.js';
import { loadCredentials } from './kubeconfig.js';
import { createLeaderElector, type LeaderElector } from './leaderElection.js';
import {
  monotonicMicros,
  SLOT,
  type LeaseWorkerCommand,
  type LeaseWorkerInput,
  type LeaseWorkerMessage,
} from './leaseThread.js';
import { createRateLimiter } from './rateLimiter.js';

const input = workerData as LeaseWorkerInput;
const port = parentPort!;
const state = new BigInt64Array(input.shared);
const post = (m: LeaseWorkerMessage): void => port.postMessage(m);

/** Intervals on the process-wide monotonic clock the main thread reads too; sleeps as the system clock's. */
const clock: Clock = {
  now: () => Number(monotonicMicros()) / 1000,
  wall: () => Date.now(),
  sleep: (ms, signal) => systemClock.sleep(ms, signal),
};

const micros = (ms: number): bigint => BigInt(Math.round(ms * 1000));

/** The elector's log lines go to the main thread's logger (its level, format and destination). */
const logger = pino(
  { level: 'info', base: undefined, timestamp: false },
  {
    write(line: string) {
      const { level, msg, ...fields } = JSON.parse(line) as { level: number; msg: string } & Record<string, unknown>;
      // The main thread's logger names the component and the Lease itself.
      delete fields['component'];
      delete fields['lease'];
      post({ type: 'log', level: level >= 50 ? 'error' : level >= 40 ? 'warn' : 'info', fields, msg });
    },
  },
);

/** The elector, once the credentials are loaded; commands wait for it. */
async function elect(): Promise<{ elector: LeaderElector; close: () => void }> {
  const credentials = await loadCredentials(input.source, input.context, process.env);
  const clients = createKubeClients(credentials, {
    limiter: createRateLimiter({ qps: input.qps, burst: input.burst, clock }),
    clock,
    userAgent: input.userAgent,
    maxSockets: 2,
  });
  const elector = createLeaderElector({
    api: clients.coordination,
    namespace: input.namespace,
    name: input.name,
    identity: input.identity,
    clock,
    logger,
    leaseDurationMs: input.leaseDurationMs,
    renewDeadlineMs: input.renewDeadlineMs,
    retryPeriodMs: input.retryPeriodMs,
    // The renewal time first, then the flag: the main thread never sees "leading" with a stale renewal.
    onRenewed: (startedAt) => Atomics.store(state, SLOT.renewedAt, micros(startedAt)),
    onStartedLeading: () => {
      Atomics.store(state, SLOT.leading, 1n);
      post({ type: 'leading', value: true });
    },
    onStoppedLeading: () => {
      Atomics.store(state, SLOT.leading, 0n);
      post({ type: 'leading', value: false });
    },
  });
  return { elector, close: () => clients.close() };
}

const failed = (err: unknown): void => {
  Atomics.store(state, SLOT.leading, 0n);
  post({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
};

const ready = elect();
ready.catch(failed);
let activity: NodeJS.Timeout | undefined;

// Listening at once: a command that arrives while the credentials load waits for them.
port.on('message', (command: LeaseWorkerCommand) => {
  void ready
    .then(async ({ elector, close }) => {
      if (command.type === 'start') {
        elector.start();
        activity ??= setInterval(() => {
          const at = elector.lastActivity();
          if (at !== undefined) Atomics.store(state, SLOT.activityAt, micros(at));
        }, 250);
        return;
      }
      clearInterval(activity);
      try {
        await elector.stop(command.release);
      } finally {
        close();
        post({ type: 'stopped' });
      }
    })
    .catch((err: unknown) => {
      if (command.type === 'stop') post({ type: 'stopped' });
      else failed(err);
    });
});
