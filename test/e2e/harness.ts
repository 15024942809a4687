// End-to-end harness: the test API server (real HTTP) with its ReplicaSet controller, scheduler (the project's
// scheduler simulation, see scheduling.ts), kubelet and disruption controller, and operators built with
// createOperator() and real client-node clients pointed at it. Timings are shortened through the operator's options.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import type { RawPod, TestApiServer, TestApiServerOptions, Workload } from '../apiserver/index.js';
import { startTestApiServer } from '../apiserver/index.js';
import { createOperator, type Operator, type OperatorDeps } from '../../src/operator/operator.js';
import { captureLogger, ManualCron, type LogLine } from '../operator/fakes.js';
import { projectScheduler, type ProjectSchedulerOptions } from './scheduling.js';

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';

const CRD = parseAllDocuments(
  readFileSync(new URL('../../crds/rebalancer.dev_rebalancepolicies.yaml', import.meta.url), 'utf8'),
)
  .map((d) => d.toJS() as unknown)
  .filter((d) => d !== null);

export interface ClusterOptions {
  readonly zones?: readonly string[];
  readonly nodesPerZone?: number;
  /** Bind → Ready delay of the simulated kubelet (default 20 ms). */
  readonly readyDelayMs?: number;
  readonly scheduler?: ProjectSchedulerOptions;
  readonly server?: TestApiServerOptions;
  /** Node allocatable cpu (default '16'). */
  readonly nodeCpu?: string;
}

export async function startCluster(opts: ClusterOptions = {}): Promise<TestApiServer> {
  const server = await startTestApiServer({
    crds: CRD,
    scheduler: { schedule: projectScheduler(opts.scheduler) },
    kubelet: { readyDelayMs: opts.readyDelayMs ?? 20 },
    ...opts.server,
  });
  const zones = opts.zones ?? ['zone-a', 'zone-b', 'zone-c'];
  for (const zone of zones) {
    for (let i = 1; i <= (opts.nodesPerZone ?? 2); i++) {
      const name = `${zone}-node-${i}`;
      server.store.create({
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: { [HOSTNAME]: name, [ZONE]: zone, 'kubernetes.io/os': 'linux' } },
        spec: {},
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          allocatable: { cpu: opts.nodeCpu ?? '16', memory: '64Gi', pods: '110' },
        },
      });
    }
  }
  if (opts.scheduler?.scope === 'workload' && opts.scheduler.siblings === undefined) {
    // Siblings: the bound pods of the pending pod's own ReplicaSet, from the server's owner index.
    server.controllers.scheduler.setScheduleFunction(
      projectScheduler({
        ...opts.scheduler,
        siblings: (pending) => {
          const owner = pending.metadata.ownerReferences?.find((r) => r.controller === true);
          return owner === undefined
            ? []
            : server.controllers.replicaSets.podsOf(pending.metadata.namespace ?? '', owner.name);
        },
      }),
    );
  }
  server.startControllers();
  return server;
}

export function ensureNamespace(server: TestApiServer, name: string): void {
  if (server.store.get('namespaces', name) !== undefined) return;
  server.store.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  });
}

export interface DeploymentOptions {
  readonly namespace: string;
  readonly name: string;
  /** Node of each initial pod; replicas = placement.length unless given. */
  readonly placement: readonly string[];
  readonly replicas?: number;
  /** Zone spread constraint maxSkew (default 1); null for none. */
  readonly maxSkew?: number | null;
  /** A PDB selecting the pods: maxUnavailable or minAvailable; undefined for none. */
  readonly pdb?: { readonly maxUnavailable: number } | { readonly minAvailable: number };
  readonly cpu?: string;
}

export function createDeployment(server: TestApiServer, opts: DeploymentOptions): Workload {
  ensureNamespace(server, opts.namespace);
  const labels = { app: opts.name };
  const maxSkew = opts.maxSkew === undefined ? 1 : opts.maxSkew;
  const workload = server.controllers.replicaSets.createDeployment({
    namespace: opts.namespace,
    name: opts.name,
    replicas: opts.replicas ?? opts.placement.length,
    placement: [...opts.placement],
    template: {
      metadata: { labels },
      spec: {
        containers: [
          { name: 'app', image: 'registry.example/app:1.0', resources: { requests: { cpu: opts.cpu ?? '100m' } } },
        ],
        ...(maxSkew === null
          ? {}
          : {
              topologySpreadConstraints: [
                {
                  maxSkew,
                  topologyKey: ZONE,
                  whenUnsatisfiable: 'DoNotSchedule',
                  labelSelector: { matchLabels: labels },
                  matchLabelKeys: ['pod-template-hash'],
                },
              ],
            }),
      },
    },
  });
  if (opts.pdb !== undefined) {
    server.store.create({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: opts.name, namespace: opts.namespace },
      spec: { ...opts.pdb, selector: { matchLabels: labels } },
    });
  }
  return workload;
}

/** Pods of a workload (by app label) that are not terminating. */
export function livePods(server: TestApiServer, namespace: string, app: string): RawPod[] {
  return server.store
    .list<RawPod>('pods', { namespace, labelSelector: `app=${app}` })
    .filter((p) => p.metadata.deletionTimestamp === undefined);
}

/** Running pods per zone of a workload. */
export function zoneCounts(server: TestApiServer, namespace: string, app: string): Record<string, number> {
  const zoneOf = new Map(
    server.store.list('nodes').map((n) => [n.metadata.name ?? '', n.metadata.labels?.[ZONE] ?? ''] as const),
  );
  const counts: Record<string, number> = {};
  for (const zone of new Set(zoneOf.values())) counts[zone] = 0;
  for (const pod of livePods(server, namespace, app)) {
    const zone = zoneOf.get(pod.spec.nodeName ?? '');
    if (zone !== undefined) counts[zone] = (counts[zone] ?? 0) + 1;
  }
  return counts;
}

export function skewOf(counts: Record<string, number>): number {
  const values = Object.values(counts);
  return Math.max(...values) - Math.min(...values);
}

/** A RebalancePolicy with test-friendly defaults (runs only when ticked, no minimum pod age). */
export function createPolicy(server: TestApiServer, name: string, spec: Record<string, unknown> = {}): void {
  const eviction = (spec['eviction'] as Record<string, unknown> | undefined) ?? {};
  server.store.create({
    apiVersion: 'rebalancer.dev/v1alpha1',
    kind: 'RebalancePolicy',
    metadata: { name },
    spec: {
      schedule: '0 0 1 1 *',
      ...spec,
      eviction: { minPodAge: '0s', replacementTimeout: '10s', ...eviction },
    },
  });
}

export function updatePolicySpec(
  server: TestApiServer,
  name: string,
  edit: (spec: Record<string, unknown>) => void,
): void {
  server.store.mutate('rebalancepolicies', name, undefined, (obj) => {
    edit(obj['spec'] as Record<string, unknown>);
  });
}

export interface PolicyStatusView {
  observedGeneration?: number;
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  lastRunTime?: string;
  lastSuccessfulRunTime?: string;
  lastPlan?: { evictions: number; skipped: number; violations: number; maxSkewObserved: number };
  totals?: { evicted: number; failed: number };
  cooldowns?: Array<{ workload: string; until: string; reason: string }>;
  pause?: { pod: string; podUid: string; workload: string; since: string; reason: string; message: string };
  lastRunResult?: { result: string; reason: string };
}

export function policyStatus(server: TestApiServer, name: string): PolicyStatusView {
  return server.store.get('rebalancepolicies', name)?.['status'] ?? {};
}

export function condition(
  server: TestApiServer,
  name: string,
  type: string,
): { status: string; reason: string; message: string } | undefined {
  return policyStatus(server, name).conditions?.find((c) => c.type === type);
}

export interface OperatorHandle {
  readonly operator: Operator;
  readonly registry: Registry;
  readonly logs: LogLine[];
  readonly cron: ManualCron;
  readonly identity: string;
  /** Scrapes /metrics through a real HTTP listener on 127.0.0.1. */
  scrape(): Promise<string>;
  stop(opts?: { releaseLease?: boolean }): Promise<void>;
}

const openServers = new Set<Server>();

export type OperatorOptions = Partial<Omit<OperatorDeps, 'kubeConfig' | 'logger' | 'registry'>> & {
  logLevel?: string;
};

export function startOperator(server: TestApiServer, opts: OperatorOptions = {}): OperatorHandle {
  return startOperatorWith(server.kubeConfig(), opts);
}

/** An in-process operator (createOperator) with test timings and a manual cron, against any API server. */
export function startOperatorWith(kubeConfig: KubeConfig, opts: OperatorOptions = {}): OperatorHandle {
  const { logger, lines } = captureLogger(opts.logLevel ?? 'debug');
  const registry = new Registry();
  const cron = new ManualCron();
  const identity = opts.identity ?? 'operator-1';
  const operator = createOperator({
    kubeConfig,
    logger,
    registry,
    identity,
    namespace: 'kube-rebalancer',
    leaderElect: false,
    kubeApiQps: 1000,
    kubeApiBurst: 2000,
    cron: cron.factory,
    minReplanIntervalMs: 50,
    evictionRetry: { initialMs: 20, maxMs: 200, maxAttempts: 4, maxRetriesPerRun: 20 },
    informerBackoff: { initialMs: 20, maxMs: 200 },
    leaderElection: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 },
    // Tests drive every cycle with tick(), as with the manual cron; the cycle at start has its own tests.
    cycleAtStart: false,
    ...opts,
  });
  operator.start();
  let http: Server | undefined;
  return {
    operator,
    registry,
    logs: lines,
    cron,
    identity,
    async scrape() {
      if (http === undefined) {
        const listener = createServer(operator.httpHandler);
        http = listener;
        openServers.add(listener);
        await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      }
      const port = (http.address() as AddressInfo).port;
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      return response.text();
    },
    async stop(stopOpts = {}) {
      await operator.shutdown(stopOpts);
      if (http !== undefined) {
        const listener = http;
        openServers.delete(listener);
        await new Promise<void>((resolve) => listener.close(() => resolve()));
      }
    },
  };
}

/** Polls until `check` returns a truthy value. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The value of one sample of the exposition text, or undefined. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (.+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const m of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) found[m[1]!] = m[2]!;
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

/** Eviction requests the server answered (dry-run ones included), optionally only those after a mark. */
export function evictionRequests(server: TestApiServer, sinceSeq = 0) {
  return server.stats.requests({ verb: 'create', resource: 'pods/eviction' }, sinceSeq);
}

/**
 * The throughput scenario: `deployments` Deployments of 10 replicas, 5 in zone-a and 5 in zone-b (5/5/0), each with
 * a zone spread (maxSkew 1) and a PDB of maxUnavailable 1, over nodes that have room for all of them.
 */
export function seedSkewedDeployments(
  server: TestApiServer,
  opts: { readonly deployments: number; readonly nodesPerZone: number; readonly namespaces: number },
): void {
  for (const node of server.store.list('nodes')) {
    server.store.mutate('nodes', node.metadata.name ?? '', undefined, (n) => {
      (n['status'] as { allocatable: Record<string, string> }).allocatable['pods'] = '1000';
    });
  }
  for (let w = 0; w < opts.deployments; w++) {
    const placement: string[] = [];
    for (let i = 0; i < 5; i++) placement.push(`zone-a-node-${((w + i) % opts.nodesPerZone) + 1}`);
    for (let i = 0; i < 5; i++) placement.push(`zone-b-node-${((w + i) % opts.nodesPerZone) + 1}`);
    createDeployment(server, {
      namespace: `team-${w % opts.namespaces}`,
      name: `app-${w}`,
      placement,
      pdb: { maxUnavailable: 1 },
    });
  }
}

/** Zone skew of every app (`namespace/app` label) over zone-a/b/c, from the server's live pods. */
export function allZoneSkews(server: TestApiServer): number[] {
  const zoneOf = new Map(
    server.store.list('nodes').map((n) => [n.metadata.name ?? '', n.metadata.labels?.[ZONE] ?? '']),
  );
  const counts = new Map<string, Record<string, number>>();
  for (const pod of server.store.list<RawPod>('pods')) {
    if (pod.metadata.deletionTimestamp !== undefined) continue;
    const app = `${pod.metadata.namespace ?? ''}/${pod.metadata.labels?.['app'] ?? ''}`;
    let c = counts.get(app);
    if (c === undefined) counts.set(app, (c = { 'zone-a': 0, 'zone-b': 0, 'zone-c': 0 }));
    const zone = zoneOf.get(pod.spec.nodeName ?? '');
    if (zone !== undefined) c[zone] = (c[zone] ?? 0) + 1;
  }
  return [...counts.values()].map(skewOf);
}
