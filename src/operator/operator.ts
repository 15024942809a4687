// createOperator(deps): the operator assembled from its parts, with every dependency passed in (credentials,
// logger, metrics registry, clock, cron, timings). It opens no listening socket and reads no environment variable;
// run.ts does both. Tests build it against the test API server with short timings.
//
//   informers (supervised ListWatch, objects converted on arrival) ──► ClusterCache ──► snapshot (no API call)
//   RebalancePolicy informer ──► PolicyScheduler (cron per policy, overlap guard) ──► PolicyController.runCycle
//   node and policy changes ──► Triggers (debounced per policy) ──► PolicyScheduler.trigger
//   runCycle ──► PolicyRun (plan → evict → pace → re-plan) ──► status, Events, metrics
//   LeaderElector (Lease) gates ticks, status writes and every eviction call
//   one RateLimiter shared by every request (typed clients and watches), except the Lease's: leader election has its
//   own client and limiter, and every eviction is fenced on the renew deadline at the moment it is sent
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Credentials } from '../kube/credentials.js';
import type { Registry } from 'prom-client';
import { createMetrics } from '../metrics/metrics.js';
import type { SchedulerSetting } from '../scheduling/profile.js';
import type { BackoffOptions } from '../kube/backoff.js';
import { systemClock, type Clock } from '../clock.js';
import { ClusterCache } from './clusterCache.js';
import { clusterInformers } from './clusterInformers.js';
import { PolicyController } from './cycle.js';
import { createEventRecorder, type EventRecorder } from './events.js';
import { createFirstCycles } from './firstCycles.js';
import { DEFAULT_RETRY, type RetryOptions } from './eviction/evictionRetry.js';
import { createApiEvictor, type Evictor } from './eviction/evictor.js';
import { PdbLedger } from './eviction/pdbLedger.js';
import { createHttpHandler, type HttpHandlerDeps } from './httpServer.js';
import { createAuthReviewClients } from '../kube/authReviews.js';
import { CrdPresence } from './crdPresence.js';
import { Manager } from './manager.js';
import type { OnceResult, Operator } from './operatorApi.js';
import { readClusterKubeVersion } from './clusterVersion.js';
import { createKubeClients, type ThrottleListener } from '../kube/kubeClient.js';
import { MetricsReader } from '../kube/metricsReader.js';
import { PrometheusReader } from '../kube/prometheusReader.js';
import {
  alwaysLeader,
  createLeaderElector,
  type LeaderElectionOptions,
  type LeaderElector,
  type LeaseApi,
} from '../kube/leaderElection.js';
import { createThreadedLeaderElector } from '../kube/leaseThread.js';
import type { CredentialSource } from '../kube/kubeconfig.js';
import { nodeCronFactory, PolicyScheduler, type CronFactory } from './policyScheduler.js';
import { createRateLimiter } from '../kube/rateLimiter.js';
import { Triggers } from './triggers.js';
import { readPolicy, writePolicyStatus } from './status.js';
import { InFlightEvictions } from './eviction/inFlight.js';

// The operator's contract moved to operatorApi.ts (docs/adr/0016); its users still import it from here.
export type { OnceResult, Operator } from './operatorApi.js';

export const COMPONENT = 'kube-rebalancer';

export interface LeaderElectionTimings {
  readonly leaseName?: string;
  readonly leaseDurationMs?: number;
  readonly renewDeadlineMs?: number;
  readonly retryPeriodMs?: number;
}

export interface OperatorDeps {
  /** Where the API server is and how to authenticate (kube/credentials.ts; client-node's KubeConfig fits too). */
  readonly kubeConfig: Credentials;
  readonly logger: Logger;
  readonly registry: Registry;
  /** This replica's name (Lease holder, Event reportingInstance). */
  readonly identity: string;
  /** The operator's namespace (its Lease). */
  readonly namespace: string;
  readonly leaderElect: boolean;
  /**
   * Elect from a thread of its own (kube/leaseThread.ts), with a client loaded from this credential source: `run`
   * gives it, so renewals go on while a plan holds the main thread. Without it the elector shares the main thread.
   */
  readonly leaseThread?: { readonly source: CredentialSource; readonly context?: string };
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  readonly clock?: Clock;
  readonly cron?: CronFactory;
  readonly leaderElection?: LeaderElectionTimings;
  readonly informerBackoff?: BackoffOptions;
  /** Shortest server-side timeout asked for a watch; each asks for a random one up to twice it (default 300 s). */
  readonly watchTimeoutSeconds?: number;
  /** A watch silent this long is replaced (default 150 s; bookmarks come about once a minute). */
  readonly watchIdleTimeoutMs?: number;
  readonly evictionRetry?: RetryOptions;
  /** Least time between re-plans of one run (default 1000 ms). */
  readonly minReplanIntervalMs?: number;
  /**
   * False turns off checking landings against predictions (the closed loop, rebalancer_landings_total,
   * PredictionsUnreliable): only for test clusters whose stand-in scheduler is knowingly unlike kube-scheduler.
   */
  readonly landingChecks?: boolean;
  readonly eventAggregationWindowMs?: number;
  /** Replaces the Eviction API caller (tests wrap it to observe calls). */
  readonly wrapEvictor?: (evictor: Evictor) => Evictor;
  readonly onThrottle?: ThrottleListener;
  readonly userAgent?: string;
  /** `run --once`: no cron ticks and no triggers; runAllOnce() drives the cycles. */
  readonly once?: boolean;
  /**
   * A cycle of every policy once the caches sync and whenever this replica becomes leader (default true, as DESIGN.md
   * asks); tests that drive every cycle by hand turn it off.
   */
  readonly cycleAtStart?: boolean;
  /** `run --scheduler-config`: the scheduler configuration replacements are predicted by (v1.26 defaults if absent). */
  readonly schedulerProfile?: SchedulerSetting;
}

/** The leader election's own bucket: a renewal every retryPeriod, a few retries; never shared with evictions. */
const LEASE_QPS = 5;
// client-go's and kube-controller-manager's defaults, as leaderElection.ts has them.
const DEFAULT_LEASE_DURATION_MS = 15_000;
const DEFAULT_RENEW_DEADLINE_MS = 10_000;
const DEFAULT_RETRY_PERIOD_MS = 2_000;
const LEASE_BURST = 10;
/** The recorder hands at most 4 Events to its client at a time (events.ts), so 4 connections serve them. */
const EVENT_SOCKETS = 4;

/** The replica's User-Agent, with what a client of its own is for (`events`, `leader-election`...). */
function userAgentOf(deps: OperatorDeps, purpose?: string): string {
  const base = deps.userAgent ?? `${COMPONENT} (${deps.identity})`;
  return purpose === undefined ? base : `${base} ${purpose}`;
}

/** A fencing controller: every queued eviction listens on its signal at once (a thousand in a large run). */
function fence(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** The timings that were given (the elector has its own defaults for the rest). */
function electionTimings(
  t: LeaderElectionTimings | undefined,
): Pick<LeaderElectionOptions, 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'> {
  return {
    ...(t?.leaseDurationMs !== undefined ? { leaseDurationMs: t.leaseDurationMs } : {}),
    ...(t?.renewDeadlineMs !== undefined ? { renewDeadlineMs: t.renewDeadlineMs } : {}),
    ...(t?.retryPeriodMs !== undefined ? { retryPeriodMs: t.retryPeriodMs } : {}),
  };
}

/** The replica's elector: none (always leader), on a thread of its own (`run`), or on the main thread. */
function electorFor(
  deps: OperatorDeps,
  clock: Clock,
  logger: Logger,
  api: LeaseApi,
  leadership: { readonly onStartedLeading: () => void; readonly onStoppedLeading: () => void },
): LeaderElector {
  if (!deps.leaderElect) return alwaysLeader();
  const name = deps.leaderElection?.leaseName ?? COMPONENT;
  if (deps.leaseThread === undefined) {
    return createLeaderElector({
      api,
      namespace: deps.namespace,
      name,
      identity: deps.identity,
      clock,
      logger,
      ...electionTimings(deps.leaderElection),
      ...leadership,
    });
  }
  return createThreadedLeaderElector({
    election: {
      source: deps.leaseThread.source,
      ...(deps.leaseThread.context !== undefined ? { context: deps.leaseThread.context } : {}),
      namespace: deps.namespace,
      name,
      identity: deps.identity,
      userAgent: userAgentOf(deps, 'leader-election'),
      qps: LEASE_QPS,
      burst: LEASE_BURST,
      leaseDurationMs: deps.leaderElection?.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS,
      renewDeadlineMs: deps.leaderElection?.renewDeadlineMs ?? DEFAULT_RENEW_DEADLINE_MS,
      retryPeriodMs: deps.leaderElection?.retryPeriodMs ?? DEFAULT_RETRY_PERIOD_MS,
    },
    clock,
    logger,
    ...leadership,
  });
}

export function createOperator(deps: OperatorDeps): Operator {
  const clock = deps.clock ?? systemClock;
  const logger = deps.logger;
  /** Aborted whenever this replica stops leading (a fresh one when it leads again). */
  let fencing = fence();
  const limiter = createRateLimiter({ qps: deps.kubeApiQps, burst: deps.kubeApiBurst, clock });
  const clients = createKubeClients(deps.kubeConfig, {
    limiter,
    clock,
    userAgent: userAgentOf(deps),
    onThrottle:
      deps.onThrottle ??
      ((info) =>
        logger.warn(
          { url: info.url, status: info.status, retryAfterMs: info.retryAfterMs },
          'API server throttled a request',
        )),
    watchTimeoutSeconds: deps.watchTimeoutSeconds ?? 300,
    ...(deps.watchIdleTimeoutMs !== undefined ? { watchIdleTimeoutMs: deps.watchIdleTimeoutMs } : {}),
    fence: () => elector.isLeader(),
    fenceSignal: () => fencing.signal,
  });
  // Events have a bucket of their own at the same QPS and burst, as the descheduler's event client and
  // controller-runtime's recorder do (ADR 0019): the record of a run never takes a token from its evictions, and is
  // not held back until they leave a gap.
  const ownClients = (purpose: string, qps: number, burst: number, maxSockets: number) =>
    createKubeClients(deps.kubeConfig, {
      limiter: createRateLimiter({ qps, burst, clock }),
      clock,
      userAgent: userAgentOf(deps, purpose),
      maxSockets,
    });
  const eventClients = ownClients('events', deps.kubeApiQps, deps.kubeApiBurst, EVENT_SOCKETS);
  const leaseClients = ownClients('leader-election', LEASE_QPS, LEASE_BURST, 2);
  const metrics = createMetrics(deps.registry);
  const cache = new ClusterCache(clock);
  const crd = new CrdPresence(logger);
  const stopping = new AbortController();
  // Each running cycle listens on it (one per policy).
  setMaxListeners(0, stopping.signal);
  let shuttingDown = false;
  /** Set as soon as shutdown begins: readiness turns false at once, while cycles still finish. */
  let draining = false;

  const events: EventRecorder = createEventRecorder({
    api: eventClients.core,
    clock,
    logger,
    component: COMPONENT,
    instance: deps.identity,
    onDropped: () => metrics.recordEventDropped(),
    ...(deps.eventAggregationWindowMs !== undefined ? { aggregationWindowMs: deps.eventAggregationWindowMs } : {}),
  });

  const leadership = {
    onStartedLeading: () => {
      if (fencing.signal.aborted) fencing = fence();
      metrics.setLeader(true);
      void controller.startedLeading();
      if (atStart) void firstCycles.startedLeading();
    },
    onStoppedLeading: () => {
      fencing.abort();
      metrics.setLeader(false);
      controller.stoppedLeading();
    },
  };
  const elector = electorFor(deps, clock, logger, leaseClients.coordination, leadership);
  if (!deps.leaderElect) metrics.setLeader(true);
  const isLeader = (): boolean => !shuttingDown && elector.isLeader();

  const baseEvictor = createApiEvictor(clients.core);
  const metricsReader = new MetricsReader(clients, {
    clock,
    onProblem: (message, reused) => logger.warn({ reused }, `metrics.k8s.io: ${message}`),
    onRecovered: () => logger.info('metrics.k8s.io: answering again'),
  });
  const prometheusReader = new PrometheusReader(clients, {
    clock,
    onProblem: (message) => logger.warn(message),
    onRecovered: () => logger.info('Prometheus: the query answers again'),
  });
  const controller = new PolicyController({
    cache,
    clock,
    logger,
    metrics,
    events,
    isLeader,
    stopSignal: stopping.signal,
    writeStatus: (name, status, resourceVersion) => writePolicyStatus(clients.custom, name, status, resourceVersion),
    readMetrics: () => metricsReader.read((namespace, name) => cache.pod(namespace, name)?.nodeName),
    readNodeUsage: (source) => prometheusReader.read(source),
    readPolicy: async (name) => {
      const raw = await readPolicy(clients.custom, name);
      if (raw === undefined) return undefined;
      const entry = cache.convertPolicy(raw);
      return entry.name === '' ? { ...entry, name } : entry;
    },
    run: {
      cache,
      evictor: deps.wrapEvictor ? deps.wrapEvictor(baseEvictor) : baseEvictor,
      clock,
      metrics,
      events,
      ledger: new PdbLedger(),
      inFlight: new InFlightEvictions(),
      isLeader,
      retry: deps.evictionRetry ?? DEFAULT_RETRY,
      minReplanIntervalMs: deps.minReplanIntervalMs ?? 1000,
      schedulerProfile: deps.schedulerProfile,
      ...(deps.landingChecks === false ? { landingChecks: false } : {}),
    },
  });

  const scheduler = new PolicyScheduler({
    cron: deps.once === true ? () => ({ stop: () => undefined }) : (deps.cron ?? nodeCronFactory(logger)),
    logger,
    metrics,
    isLeader,
    runCycle: async (name, trigger, changes) => {
      await controller.runCycle(name, trigger, changes);
    },
    specChanged: (entry, previous) => {
      controller.specChanged(entry, previous);
      if (policyInformer.synced() && deps.once !== true) triggers.onPolicy(entry, previous);
    },
    removed: (name) => {
      triggers.forget(name);
      controller.removed(name);
    },
  });
  cache.onPolicy(scheduler.onPolicy);
  const triggers = new Triggers({
    clock,
    logger,
    policies: () => cache.policyList(),
    policy: (name) => cache.policy(name),
    start: (name, trigger, changes) => void scheduler.trigger(name, trigger, changes),
  });

  const atStart = deps.once !== true && deps.cycleAtStart !== false;
  const firstCycles = createFirstCycles({
    waitForSync: () => Promise.all(informers.map((i) => i.waitForSync())).then(() => undefined),
    isLeader,
    policies: () => cache.policyList().map((p) => p.name),
    start: (name) => void scheduler.trigger(name, 'start', ['operator started or became leader']),
    logger,
  });

  const { policyInformer, informers } = clusterInformers({
    clients,
    cache,
    crd,
    clock,
    logger,
    backoff: deps.informerBackoff,
    onNodeChange: (previous, next) => {
      if (deps.once !== true) triggers.onNode(previous, next);
    },
  });
  // The model's Kubernetes minor is set before the first cycle can plan: synced() waits for it too.
  let versionRead: Promise<void> | undefined;
  let versionKnown = false;
  const readVersion = (): Promise<void> =>
    (versionRead ??= readClusterKubeVersion(clients.getCode, logger).then((version) => {
      cache.kubeVersion = version;
      versionKnown = true;
    }));
  const synced = (): boolean => versionKnown && informers.every((i) => i.synced());

  // An attempt takes at most a few bounded requests; a loop silent for a whole Lease duration (and a margin) is stuck.
  const wedgedAfterMs =
    (deps.leaderElection?.leaseDurationMs ?? 15_000) + 2 * (deps.leaderElection?.retryPeriodMs ?? 2_000);
  function electionWedged(): string | undefined {
    const last = elector.lastActivity();
    if (last === undefined || stopped !== undefined) return undefined;
    const silent = clock.now() - last;
    return silent > wedgedAfterMs
      ? `leader election loop wedged: no attempt for ${Math.round(silent / 1000)}s (limit ${Math.round(wedgedAfterMs / 1000)}s)`
      : undefined;
  }

  const endpoints: HttpHandlerDeps = {
    registry: deps.registry,
    health: () => {
      const wedged = electionWedged();
      return {
        ok: wedged === undefined,
        detail: [`leader: ${isLeader()}`, ...(wedged !== undefined ? [wedged] : [])].join('\n'),
      };
    },
    readiness: () => ({
      ok: synced() && !draining && crd.problem() === undefined,
      detail: [
        ...informers.map((i) => `${i.resource}: ${i.synced() ? 'synced' : 'syncing'} (restarts ${i.restarts()})`),
        ...(crd.problem() !== undefined ? [crd.problem()!] : []),
        ...(draining ? ['shutting down'] : []),
      ].join('\n'),
    }),
  };
  const authReviews = createAuthReviewClients(deps.kubeConfig, {
    clock,
    userAgent: userAgentOf(deps, 'metrics-auth'),
  });

  // What shutdown() asks of the parts that stop last: release the Lease (false simulates a crash) and flush Events.
  let releaseLease = true;
  let flushGraceMs = 5_000;
  const manager = new Manager();
  manager.add({ name: 'kubernetes version', cache: true, start: () => void readVersion(), stop: () => undefined });
  for (const informer of informers) {
    manager.add({
      name: `informer ${informer.resource}`,
      cache: true,
      start: () => informer.start(),
      stop: () => informer.stop(),
    });
  }
  manager.add({
    name: 'leader election',
    elector: true,
    start: () => elector.start(),
    stop: async () => {
      await elector.stop(releaseLease);
      metrics.setLeader(false);
    },
  });
  // Added before the cycles so that it stops after them: the Events their last steps record are flushed too.
  manager.add({
    name: 'events',
    needLeaderElection: true,
    start: () => undefined,
    stop: async () => {
      if (releaseLease) await events.flush(flushGraceMs);
    },
  });
  manager.add({
    name: 'cycles',
    needLeaderElection: true,
    start: () => {
      if (atStart) void firstCycles.started();
    },
    stop: async () => {
      stopping.abort();
      triggers.stop();
      await scheduler.stop();
      shuttingDown = true;
    },
  });

  let started = false;
  let stopped: Promise<void> | undefined;

  return {
    cache,
    metrics,
    limiter,
    httpHandler: createHttpHandler(endpoints),
    probeHandler: createHttpHandler({ ...endpoints, serve: 'probes' }),
    metricsHandler: createHttpHandler({ ...endpoints, serve: 'metrics' }),
    authReviews,
    start() {
      if (started) return;
      started = true;
      logger.info(
        { identity: deps.identity, leaderElect: deps.leaderElect, qps: deps.kubeApiQps, burst: deps.kubeApiBurst },
        'starting',
      );
      manager.start();
    },
    async waitForSync() {
      await Promise.all([readVersion(), ...informers.map((i) => i.waitForSync())]);
    },
    ready: () => synced() && !draining && crd.problem() === undefined,
    crdMissing: () => crd.whenMissing(),
    isLeader,
    tick: (name) => scheduler.tick(name),
    scheduleOf: (name) => scheduler.scheduleOf(name),
    async runAllOnce() {
      const results: OnceResult[] = [];
      const entries = cache.policyList().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (entry.policy === undefined) {
          const problems = entry.problems.map((p) => (p.field === '' ? p.problem : `${p.field}: ${p.problem}`));
          results.push({ policy: entry.name, failure: `invalid spec: ${problems.join('; ')}` });
        } else if (entry.policy.spec.suspend) {
          results.push({ policy: entry.name, failure: undefined, skipped: 'suspended' });
        } else {
          results.push({ policy: entry.name, failure: await controller.runCycle(entry.name, 'schedule') });
        }
      }
      return results;
    },
    shutdown(opts = {}) {
      stopped ??= (async () => {
        const release = opts.releaseLease ?? true;
        logger.info({ releaseLease: release }, 'shutting down');
        draining = true;
        releaseLease = release;
        flushGraceMs = opts.graceMs ?? 5_000;
        // The reverse of the start: cycles end (the eviction in flight completes, no other starts) and write their
        // status while this replica still holds the Lease; Events are flushed; the Lease goes; the caches stop.
        await manager.stop();
        clients.close();
        eventClients.close();
        leaseClients.close();
        authReviews.close();
        logger.info('stopped');
      })();
      return stopped;
    },
  };
}
