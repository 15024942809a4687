// PLACEHOLDER HEADER
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeApi } from './api.js';
import type { Clock } from './clock.js';
import { realClock, TimerSet } from './clock.js';
import type { DisruptionControllerOptions } from './controllers/disruption.js';
import { DisruptionController } from './controllers/disruption.js';
import type { KubeletOptions } from './controllers/kubelet.js';
import { Kubelet } from './controllers/kubelet.js';
import type { ReplicaSetControllerOptions } from './controllers/replicasets.js';
import { ReplicaSetController } from './controllers/replicasets.js';
import type { SchedulerOptions } from './controllers/scheduler.js';
import { Scheduler } from './controllers/scheduler.js';
import { TestStore } from './direct.js';
import { Faults, Stats } from './faults.js';
import { createRequestHandler } from './http.js';
import type { CustomResourceOptions } from './resources.js';
import {
  builtinResources,
  customResource,
  customResourcesFromCrd,
  REBALANCE_POLICY,
  ResourceRegistry,
} from './resources.js';
import { ObjectStore } from './store.js';
import type { RequestMatch } from './faults.js';
import { WatchHub } from './watch.js';

export interface TestApiServerOptions {
  /** Port to listen on (default 0: an ephemeral port on 127.0.0.1). */
  port?: number;
  /** Bearer token every request must carry (default `test-token`); `null` disables authentication. */
  token?: string | null;
  /** Time source for every server-side delay (default: the real clock). */
  clock?: Clock;
  /** Randomness for uids and generated names (default Math.random; pass a seeded PRNG for reproducible runs). */
  random?: () => number;
  /** Watch events retained per resource for watches resuming from a resourceVersion (default 100000). */
  historyLimit?: number;
  /** Period of BOOKMARK events on watches with allowWatchBookmarks=true (default 60000, as the real server). */
  bookmarkIntervalMs?: number;
  /** Timeout of watches without timeoutSeconds (default: none). */
  watchTimeoutSeconds?: number;
  /** Unwritten bytes after which a slow watch is closed (default 64 MiB). */
  maxWatchBufferBytes?: number;
  /** How long a gracefully deleted (or evicted) bound pod stays Terminating; 0 (default) deletes at once. */
  podTerminationDelayMs?: number;
  /** Reject namespaced creates into missing/terminating namespaces (default true). */
  namespaceLifecycle?: boolean;
  /** Create namespaces default, kube-system, kube-public, kube-node-lease (default true). */
  seedNamespaces?: boolean;
  /** Create PriorityClasses system-cluster-critical and system-node-critical (default true). */
  seedPriorityClasses?: boolean;
  /** Custom resources to serve (default: RebalancePolicy rebalancer.dev/v1alpha1, cluster-scoped, /status). */
  customResources?: CustomResourceOptions[];
  /** CustomResourceDefinition objects (parsed YAML); their served versions are added to `customResources`. */
  crds?: unknown[];
  /** The disruption controller starts with the server unless `enabled: false`. */
  disruption?: DisruptionControllerOptions & { enabled?: boolean };
  replicaSets?: ReplicaSetControllerOptions;
  scheduler?: SchedulerOptions;
  kubelet?: KubeletOptions;
  /** Requests kept in `stats` (default 200000). */
  requestLogLimit?: number;
  /** Reported by /version (default 1.31). */
  kubernetesVersion?: { major: string; minor: string };
}

export interface Controllers {
  disruption: DisruptionController;
  replicaSets: ReplicaSetController;
  scheduler: Scheduler;
  kubelet: Kubelet;
}

export interface TestApiServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** A KubeConfig for client-node pointing at this server (new instance per call). */
  kubeConfig(options?: { namespace?: string; token?: string }): KubeConfig;
  /** Direct storage access (seeding, assertions) without HTTP, admission or strategies. */
  readonly store: TestStore;
  /** The server's API semantics in-process (what an HTTP request would do, without the network). */
  readonly api: KubeApi;
  readonly faults: Faults;
  readonly stats: Stats;
  readonly controllers: Controllers;
  /** Open watch streams matching `match`. */
  openWatches(match?: RequestMatch): number;
  /** Starts the ReplicaSet controller, the scheduler and the kubelet (the disruption controller already runs). */
  startControllers(): void;
  /** Runs pending controller work until nothing is left (delayed work that is not due yet excepted). */
  settle(): Promise<void>;
  /** Stops every controller, watch, timer and socket. */
  close(): Promise<void>;
}

function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export async function startTestApiServer(options: TestApiServerOptions = {}): Promise<TestApiServer> {
  const clock = options.clock ?? realClock();
  const timers = new TimerSet(clock);
  const custom = [...(options.customResources ?? [REBALANCE_POLICY])];
  for (const crd of options.crds ?? []) {
    for (const version of customResourcesFromCrd(crd)) {
      const index = custom.findIndex(
        (c) => c.group === version.group && c.version === version.version && c.plural === version.plural,
      );
      if (index >= 0) custom.splice(index, 1, version);
      else custom.push(version);
    }
  }
  const registry = new ResourceRegistry([...builtinResources(), ...custom.map(customResource)]);
  const store = new ObjectStore({ historyLimit: options.historyLimit ?? 100_000, initialResourceVersion: 1000 });
  const api = new KubeApi({
    store,
    registry,
    clock,
    timers,
    podTerminationDelayMs: options.podTerminationDelayMs ?? 0,
    namespaceLifecycle: options.namespaceLifecycle ?? true,
    random: options.random ?? Math.random,
  });
  const direct = new TestStore(api);
  seed(direct, options);

  const hub = new WatchHub(api, timers, {
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    defaultTimeoutSeconds: options.watchTimeoutSeconds,
    maxBufferBytes: options.maxWatchBufferBytes ?? 64 * 1024 * 1024,
  });
  const faults = new Faults(hub);
  const stats = new Stats(clock, options.requestLogLimit ?? 200_000);
  const token = options.token === undefined ? 'test-token' : options.token;
  let address = '127.0.0.1:0';
  const handler = createRequestHandler({
    api,
    registry,
    hub,
    faults,
    stats,
    clock,
    timers,
    token,
    serverAddress: () => address,
    kubernetesVersion: options.kubernetesVersion ?? { major: '1', minor: '31' },
  });
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  address = `127.0.0.1:${port}`;
  const url = `http://127.0.0.1:${port}`;

  const controllers: Controllers = {
    disruption: new DisruptionController(api, timers, options.disruption),
    replicaSets: new ReplicaSetController(api, timers, options.replicaSets),
    scheduler: new Scheduler(api, timers, options.scheduler),
    kubelet: new Kubelet(api, timers, options.kubelet),
  };
  if (options.disruption?.enabled !== false) controllers.disruption.start();

  let closed = false;
  return {
    url,
    port,
    store: direct,
    api,
    faults,
    stats,
    controllers,
    kubeConfig(kcOptions = {}) {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'test-apiserver', server: url, skipTLSVerify: true }],
        users: [{ name: 'test-user', token: kcOptions.token ?? token ?? 'anonymous' }],
        contexts: [
          {
            name: 'test',
            cluster: 'test-apiserver',
            user: 'test-user',
            ...(kcOptions.namespace ? { namespace: kcOptions.namespace } : {}),
          },
        ],
        currentContext: 'test',
      });
      return kc;
    },
    openWatches: (match) => hub.count(match),
    startControllers() {
      controllers.replicaSets.start();
      controllers.scheduler.start();
      controllers.kubelet.start();
    },
    async settle() {
      for (let round = 0; round < 100; round++) {
        const busy =
          controllers.disruption.pending() +
          controllers.replicaSets.pending() +
          controllers.scheduler.pending() +
          controllers.kubelet.due();
        if (busy === 0) return;
        if (controllers.replicaSets.running) controllers.replicaSets.syncNow();
        if (controllers.scheduler.running) controllers.scheduler.syncNow();
        if (controllers.kubelet.running) controllers.kubelet.syncNow();
        if (controllers.disruption.running) controllers.disruption.syncNow();
        await tick();
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      controllers.disruption.stop();
      controllers.replicaSets.stop();
      controllers.scheduler.stop();
      controllers.kubelet.stop();
      hub.closeAll();
      timers.clearAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}

function seed(store: TestStore, options: TestApiServerOptions): void {
  if (options.seedNamespaces !== false) {
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      store.create({
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
        spec: { finalizers: ['kubernetes'] },
        status: { phase: 'Active' },
      });
    }
  }
  if (options.seedPriorityClasses !== false) {
    const classes: [string, number, string][] = [
      [
        'system-cluster-critical',
        2_000_000_000,
        'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
      ],
      [
        'system-node-critical',
        2_000_001_000,
        'Used for system critical pods that must not be moved from their current node.',
      ],
    ];
    for (const [name, value, description] of classes) {
      store.create({
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name },
        value,
        description,
        preemptionPolicy: 'PreemptLowerPriority',
      });
    }
  }
}

export { ManualClock, realClock } from './clock.js';
export type { Clock, TimerHandle } from './clock.js';
export { ApiError, errors } from './errors.js';
export type { Status, StatusCause, StatusDetails } from './errors.js';
export type { CountFilter, FailureSpec, FaultHandle, LatencySpec, RequestMatch, RequestRecord } from './faults.js';
export { Faults, Stats } from './faults.js';
export type { StoreChange, StoreListOptions } from './direct.js';
export { TestStore } from './direct.js';
export { KubeApi } from './api.js';
export type { CustomResourceOptions } from './resources.js';
export { REBALANCE_POLICY, customResourcesFromCrd } from './resources.js';
export { DisruptionController } from './controllers/disruption.js';
export type { DisruptionControllerOptions } from './controllers/disruption.js';
export { ReplicaSetController, podTemplateHash } from './controllers/replicasets.js';
export type { ReplicaSetControllerOptions, Workload, WorkloadSpec } from './controllers/replicasets.js';
export { Scheduler, leastLoadedNodeSelectorOnly } from './controllers/scheduler.js';
export type { ClusterState, Placement, ScheduleFunction, SchedulerOptions } from './controllers/scheduler.js';
export { Kubelet } from './controllers/kubelet.js';
export type { KubeletOptions } from './controllers/kubelet.js';
export { isPodReady, runningStatus } from './pods.js';
export type { KubeObject, ObjectMeta, RawNode, RawPdb, RawPod } from './types.js';
