// A test Kubernetes API server: in-process, real HTTP on 127.0.0.1 (ephemeral port), spoken to by the real
// @kubernetes/client-node 1.x (typed APIs, CustomObjectsApi, Watch, makeInformer/ListWatch) through a KubeConfig made
// in code. It reproduces the API server's observable semantics for what kube-rebalancer uses, and simulates the
// controllers around it (disruption controller, ReplicaSet/Deployment, scheduler, kubelet) so end-to-end tests and
// benchmarks (10,000 pods, 1,000 PDBs) run without a cluster.
//
// THIS SERVER OR THE REAL CONTROL PLANE (test/controlplane, suites in test/integration)
// Where API-server or scheduler behaviour is what a test is about, the real v1.26 control plane tests it: CRD schema,
// CEL and defaults (integration/install), RBAC of the shipped roles (integration/rbac), the real scheduler placing
// replacements and the disruption controller's PDB status (integration/balance), a leader killed with SIGKILL
// (integration/leader). This server stays for what a real one cannot do on demand, or not fast enough:
//   - faults: 500 bursts, dropped or reset watch connections, 410 after compaction, 429 storms with Retry-After, delays
//     (e2e/informers, e2e/ratelimit, apiserver-tests/faults);
//   - an injected clock and request statistics per verb (e2e/ratelimit QPS, e2e/throughput with 10,000 pods in seconds);
//   - operator behaviour that needs controllable timing: the eviction in flight at shutdown (e2e/leader), cron edits,
//     cooldowns and resume after a Pending replacement (e2e/policy), the runOperator entry point (e2e/run);
//   - the static half of the RBAC check (e2e/rbac: every client call in src/operator granted, nothing more), which
//     runs on any machine.
//
// USAGE
//   const server = await startTestApiServer({ podTerminationDelayMs: 0, kubelet: { readyDelayMs: 0 } });
//   server.store.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { zone: 'a' } } });
//   const web = server.controllers.replicaSets.createDeployment({
//     namespace: 'default', name: 'web', replicas: 3, placement: ['n1', 'n1', 'n1'],
//     template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } } });
//   server.controllers.scheduler.setScheduleFunction((pod, { nodes, pods }) => mySimulation(pod, nodes, pods));
//   server.startControllers();                      // ReplicaSet + scheduler + kubelet (disruption runs already)
//   const core = server.kubeConfig().makeApiClient(CoreV1Api);   // http://127.0.0.1:<port>, bearer token
//   await core.createNamespacedPodEviction({ name, namespace: 'default', body: { metadata: { name } } });
//   await server.settle();                          // let the controllers catch up
//   expect(server.stats.count({ verb: 'list', resource: 'pods' }, mark)).toBe(0);
//   server.faults.failNext({ verb: 'create', resource: 'pods/eviction', status: 429, retryAfterSeconds: 2 });
//   await server.close();                           // stops loops, watches, timers and sockets
//
// API (see the types below)
//   startTestApiServer(options?) => Promise<TestApiServer>
//   TestApiServer.url / port / kubeConfig({ namespace?, token? })
//     .store        TestStore: create/createAll/get/require/list/count/update/patch(merge)/mutate/delete,
//                   resourceVersion(), compact(resource?), onChange(listener). Direct storage writes (etcd-like):
//                   no admission, defaults, status/spec split or validation; they still take a resourceVersion, emit
//                   watch events and wake the controllers. Use it to seed Running pods and PDB/Node state.
//     .api          KubeApi: the HTTP semantics in-process (create/update/patch/delete/list/get/bind, + evictPod).
//     .faults       failNext({verb?, group?, resource?, namespace?, name?, status, count?, retryAfterSeconds?,
//                   message?}), delay({..., ms, count?}), expireNextWatch({resource?, count?}),
//                   dropWatches(match?, 'end' | 'destroy'), clear(). Each returns a handle (remaining(), cancel()).
//     .stats        requests(filter?, sinceMark?), count(filter?, sinceMark?), counters(sinceMark?) keyed
//                   `verb group/resource` (`create /pods/eviction`), mark(), reset(). Each record has verb, group,
//                   resource (with subresource), namespace, name, code, time (clock ms), durationMs, injected.
//     .controllers  disruption | replicaSets | scheduler | kubelet: start(), stop(), syncNow(), pending(), plus
//                   replicaSets.createDeployment(spec)/scale()/podsOf(), scheduler.setScheduleFunction()/placements/
//                   unschedulablePods(), kubelet.setReadyDelay()/setStayPending()/started.
//     .openWatches(match?), .startControllers(), .settle(), .close()
//   Resource names accepted by store/api: plural (`pods`), `plural.group`, kind or short name (`pdb`, `rbp`).
//
// SERVED: core/v1 nodes(+status), pods(+status, eviction, binding), namespaces(+status), events, bindings;
// events.k8s.io/v1 events (same storage as core/v1 events, converted both ways); policy/v1 poddisruptionbudgets
// (+status); scheduling.k8s.io/v1 priorityclasses; coordination.k8s.io/v1 leases; apps/v1 deployments and
// replicasets (+status; written by the ReplicaSet controller, read by the disruption controller); custom resource
// rebalancer.dev/v1alpha1 rebalancepolicies (cluster-scoped, /status) or the CRDs given in `crds` (readCrdFile);
// with `customResources: [...METRICS_API]`, a stand-in metrics.k8s.io/v1beta1 (NodeMetrics, PodMetrics).
// Discovery: /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>, /version, /healthz, /readyz, /livez.
//
// FAITHFUL (same codes, reasons, messages and Status shapes as kube-apiserver 1.31):
//  - one global revision counter as resourceVersion (lists report the current one); uid, creationTimestamp
//    (second precision), generation (PDBs, apps: spec changes; custom resources: any change outside metadata and
//    status); no-op updates are not written (no new resourceVersion, no event).
//  - create: AlreadyExists 409, generateName, Invalid 422 with causes, resourceVersion set on create 500,
//    namespace mismatch 400, NamespaceLifecycle (404 missing / 403 terminating namespace), pod defaulting, Priority
//    admission (403 for an unknown class, globalDefault), DefaultTolerationSeconds, pod status reset to Pending
//    with qosClass, PDB/apps status reset, custom resource status dropped (status subresource).
//  - update: 409 Conflict on a stale resourceVersion; PUT without resourceVersion allowed except for custom
//    resources (422); create-on-update for leases, events, PDBs; main-resource writes keep status, /status writes
//    keep everything but status; pod spec immutability (422); PriorityClass value immutable.
//  - patch: application/json-patch+json (client-node's default), application/merge-patch+json,
//    application/strategic-merge-patch+json (built-ins only: custom resources answer 415, as the real server).
//  - delete: preconditions (uid, resourceVersion) 409; dryRun=All; finalizers hold objects (deletionTimestamp) until
//    removed; pods and namespaces answer with the object, others with a Status; deletecollection with selectors.
//  - list: labelSelector (=, ==, !=, in, notin, exists, !key, >, <), fieldSelector (=, ==, != on metadata.name,
//    metadata.namespace, spec.nodeName, status.phase and the other fields each resource supports; else 400), limit/
//    continue over a consistent snapshot with remainingItemCount (unfiltered lists), 410 Expired for a continue
//    token older than a compaction; typed list items omit kind/apiVersion (custom resources keep them).
//  - watch (?watch=true|1, also GET .../{name}?watch=true): newline-delimited JSON chunked; no resourceVersion or "0"
//    starts with ADDED for the current state; N resumes after N; N older than the retained window (historyLimit
//    events per resource, or compact()) gives one ERROR event with a 410 Expired Status and the stream ends;
//    selector filtering with DELETED/ADDED for objects leaving/entering the selection; BOOKMARKs every
//    bookmarkIntervalMs with allowWatchBookmarks=true (and sendInitialEvents' initial-events-end bookmark);
//    timeoutSeconds; DELETED carries the deletion's resourceVersion; fan-out per resource.
//  - pods/eviction: the EvictionREST rules (see eviction.ts), including the DisruptionTarget condition, dryRun from
//    the query and/or deleteOptions, 429 with cause DisruptionBudget, Retry-After 10 while a PDB status lags its
//    generation, 500 for two PDBs, unhealthyPodEvictionPolicy. pods/binding (and namespaces/{ns}/bindings): 409
//    when already bound or terminating, PodScheduled=True.
//  - errors are metav1.Status JSON (NotFound 404, AlreadyExists/Conflict 409, Invalid 422, TooManyRequests 429 with
//    Retry-After, Expired 410, InternalError 500, BadRequest 400, Unauthorized 401, Forbidden 403, 405, 415).
//
// SIMPLIFIED (where this server differs from a real one):
//  - Storage is single-threaded and atomic: no request interleaves with another, so the real server's conflict
//    retries inside eviction never happen and two racing PUTs resolve strictly in arrival order.
//  - Lists and watches are always served from the current state: resourceVersion on a list is ignored except
//    resourceVersionMatch=Exact with an old value (410); limit is honoured even with resourceVersion=0; a watch from a
//    resourceVersion newer than the current one simply waits for later events (no 504 "too large resource version").
//  - Strategic merge patch is a merge patch plus merge-by-key for a few known lists (status.conditions,
//    metadata.ownerReferences, spec.containers, spec.taints, ...) and `$patch: delete|replace`; no other directives.
//    Server-side apply (application/apply-patch+yaml) answers 415. No managedFields.
//  - Validation covers names, required pod fields, pod spec immutability, PDB min/max, PriorityClass value and
//    events.k8s.io required fields only. Custom resources get structural defaults from the CRD schema when a CRD is
//    given, but no schema/CEL validation and no pruning of unknown fields.
//  - /status writes of built-in kinds keep the stored metadata (the real server lets some metadata through).
//  - Graceful deletion: only pods, only when podTerminationDelayMs > 0 (bound, non-terminal pods stay Terminating
//    for that long, whatever the grace period; deletionTimestamp = now + grace). With the default 0 every delete and
//    eviction is immediate. Namespace deletion removes the namespace's objects at once (no namespace controller
//    phases). No garbage collector (ownerReferences are not followed), no event TTL, no ResourceQuota/LimitRange,
//    no ServiceAccount admission, no protobuf, no authorization (one bearer token, `token: null` disables it).
//  - Watches never send events for objects deleted before the watch started beyond the retained history; slow
//    watchers are cut after maxWatchBufferBytes. Bookmarks are periodic plus one before a timeout.
//  - Controllers: the disruption controller computes PDB status exactly as pkg/controller/disruption (expectedPods
//    from ReplicaSet/Deployment scale, failSafe on unknown controllers, disruptedPods expiry after 2 minutes) but
//    knows only ReplicaSet/Deployment controllers; the ReplicaSet controller does no rollouts; the scheduler uses the
//    pluggable function (default: least-loaded node honouring nodeSelector only); the kubelet starts bound pods on
//    existing nodes (Running + Ready after readyDelayMs) and never restarts or fails them.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
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
import { isObject } from './types.js';

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
  /** Reported by /version (default 1.37, the newest supported release). */
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
    kubernetesVersion: options.kubernetesVersion ?? { major: '1', minor: '37' },
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

/** Reads the CustomResourceDefinitions of a (multi-document) YAML file, for the `crds` option. */
export function readCrdFile(path: string): unknown[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((doc) => doc.toJS() as unknown)
    .filter((doc) => isObject(doc) && doc.kind === 'CustomResourceDefinition');
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
export { METRICS_API, REBALANCE_POLICY, customResourcesFromCrd } from './resources.js';
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
