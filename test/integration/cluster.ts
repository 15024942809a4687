// What the real-control-plane suites share: a control plane with stand-in kubelet nodes in zones, Deployments and
// PDBs created through the API (the real ReplicaSet controller makes the pods, the real scheduler places them), the
// product's manifests installed as `kubectl apply -k manifests/` would, the operator running as the shipped
// ServiceAccount, requests counted from the API server's audit log, and PDB floors checked from a watch.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import {
  startControlPlane,
  StandInKubelet,
  ZONE,
  type AuditEvent,
  type ControlPlane,
  type KubeletOptions,
} from '../controlplane/index.js';

export { ZONE };

/** The checkout's root: the nearest folder up with a package.json (these helpers also run compiled, from dist/). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

export const OPERATOR_NAMESPACE = 'kube-rebalancer';
export const OPERATOR_SA = 'kube-rebalancer';
export const OPERATOR_USER = `system:serviceaccount:${OPERATOR_NAMESPACE}:${OPERATOR_SA}`;
export const MERGE = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

export interface Cluster {
  readonly cp: ControlPlane;
  readonly kubelet: StandInKubelet;
  readonly kc: k8s.KubeConfig;
  readonly core: k8s.CoreV1Api;
  readonly apps: k8s.AppsV1Api;
  readonly policy: k8s.PolicyV1Api;
  readonly custom: k8s.CustomObjectsApi;
  readonly objects: k8s.KubernetesObjectApi;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  readonly zones?: readonly string[];
  readonly nodesPerZone?: number;
  readonly kubelet?: KubeletOptions;
  readonly nodeCpu?: string;
  /** Extra kube-apiserver flags (e.g. --enable-aggregator-routing=true for an aggregated API served by the test). */
  readonly apiServerArgs?: readonly string[];
}

export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const cp = await startControlPlane(opts.apiServerArgs !== undefined ? { apiServerArgs: opts.apiServerArgs } : {});
  const kc = cp.kubeConfig();
  const kubelet = new StandInKubelet(kc, { readyDelayMs: 50, ...opts.kubelet });
  const cluster: Cluster = {
    cp,
    kubelet,
    kc,
    core: kc.makeApiClient(k8s.CoreV1Api),
    apps: kc.makeApiClient(k8s.AppsV1Api),
    policy: kc.makeApiClient(k8s.PolicyV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    objects: k8s.KubernetesObjectApi.makeApiClient(kc),
    async stop() {
      kubelet.stop();
      await cp.stop();
    },
  };
  try {
    for (const zone of opts.zones ?? ['zone-a', 'zone-b', 'zone-c']) {
      await addZone(cluster, zone, opts.nodesPerZone ?? 2, opts.nodeCpu);
    }
    kubelet.start();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

export async function addZone(c: Cluster, zone: string, nodes: number, cpu?: string): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= nodes; i++) {
    const name = `${zone}-node-${i}`;
    await c.kubelet.addNode({ name, zone, ...(cpu !== undefined ? { cpu } : {}) });
    names.push(name);
  }
  for (const name of names) await c.kubelet.waitUntilSchedulable(name);
  return names;
}

export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const why = lastError === undefined ? '' : ` (last error: ${(lastError as Error).message})`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function ensureNamespace(c: Cluster, name: string): Promise<void> {
  try {
    await c.core.createNamespace({ body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
}

export interface DeploymentOptions {
  readonly namespace: string;
  readonly name: string;
  readonly replicas: number;
  /** Zone spread maxSkew (default 1), or null for no spread constraint. */
  readonly zoneMaxSkew?: number | null;
  readonly affinity?: k8s.V1Affinity;
  readonly nodeSelector?: Record<string, string>;
  readonly tolerations?: k8s.V1Toleration[];
  /** Extra pod labels besides app=<name>. */
  readonly labels?: Record<string, string>;
  readonly pdb?: { readonly maxUnavailable: number } | { readonly minAvailable: number };
  readonly cpu?: string;
}

/** Required node affinity: only nodes labelled `key=value` (IgnoredDuringExecution, so a relabel breaks it). */
export function requireNodeLabel(key: string, value: string): k8s.V1Affinity {
  return {
    nodeAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [value] }] }],
      },
    },
  };
}

export async function createDeployment(c: Cluster, opts: DeploymentOptions): Promise<void> {
  await ensureNamespace(c, opts.namespace);
  const selector = { app: opts.name };
  const maxSkew = opts.zoneMaxSkew === undefined ? 1 : opts.zoneMaxSkew;
  await c.apps.createNamespacedDeployment({
    namespace: opts.namespace,
    body: {
      metadata: { name: opts.name },
      spec: {
        replicas: opts.replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: { ...selector, ...opts.labels } },
          spec: {
            terminationGracePeriodSeconds: 0,
            containers: [
              { name: 'app', image: 'registry.example/app:1.0', resources: { requests: { cpu: opts.cpu ?? '100m' } } },
            ],
            affinity: opts.affinity,
            nodeSelector: opts.nodeSelector,
            tolerations: opts.tolerations,
            topologySpreadConstraints:
              maxSkew === null
                ? undefined
                : [
                    {
                      maxSkew,
                      topologyKey: ZONE,
                      whenUnsatisfiable: 'DoNotSchedule',
                      labelSelector: { matchLabels: selector },
                      // Counts this ReplicaSet's pods only, as after a rollout (matchLabelKeys is alpha in 1.26).
                    },
                  ],
          },
        },
      },
    },
  });
  if (opts.pdb !== undefined) {
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: opts.namespace,
      body: { metadata: { name: opts.name }, spec: { ...opts.pdb, selector: { matchLabels: selector } } },
    });
  }
}

const isReady = (p: k8s.V1Pod): boolean =>
  p.metadata?.deletionTimestamp === undefined &&
  (p.status?.conditions ?? []).some((cond) => cond.type === 'Ready' && cond.status === 'True');

/** The app's pods that are not terminating. */
export async function livePods(c: Cluster, namespace: string, app: string): Promise<k8s.V1Pod[]> {
  const list = await c.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
  return list.items.filter((p) => p.metadata?.deletionTimestamp === undefined);
}

/** Waits until the app has exactly `n` pods, all Ready, and none terminating. */
export async function waitForReady(c: Cluster, namespace: string, app: string, n: number, timeoutMs = 60_000) {
  return waitFor(
    async () => {
      const all = (await c.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
      return all.length === n && all.every(isReady) ? all : undefined;
    },
    timeoutMs,
    `${n} Ready pods of ${namespace}/${app}`,
  );
}

/** Waits until the disruption controller says the budget allows exactly `allowed` disruptions. */
export async function waitForBudget(c: Cluster, namespace: string, name: string, allowed: number): Promise<void> {
  await waitFor(
    async () =>
      (await c.policy.readNamespacedPodDisruptionBudget({ name, namespace })).status?.disruptionsAllowed === allowed,
    30_000,
    `PodDisruptionBudget ${namespace}/${name} to allow ${allowed}`,
  );
}

export async function nodeZones(c: Cluster): Promise<Map<string, string>> {
  const nodes = await c.core.listNode();
  return new Map(nodes.items.map((n) => [n.metadata!.name!, n.metadata?.labels?.[ZONE] ?? '']));
}

/** Live pods of an app per zone, every zone of the cluster present. */
export async function zoneCounts(c: Cluster, namespace: string, app: string): Promise<Record<string, number>> {
  const zones = await nodeZones(c);
  const counts: Record<string, number> = {};
  for (const zone of zones.values()) counts[zone] = 0;
  for (const pod of await livePods(c, namespace, app)) {
    const zone = zones.get(pod.spec?.nodeName ?? '');
    if (zone !== undefined) counts[zone] = (counts[zone] ?? 0) + 1;
  }
  return counts;
}

export function skewOf(counts: Record<string, number>): number {
  const values = Object.values(counts);
  return Math.max(...values) - Math.min(...values);
}

/** The manifests `kubectl apply -k manifests/` applies, in the kustomization's order. */
export function manifestObjects(): k8s.KubernetesObject[] {
  const dir = join(repoRoot(), 'manifests');
  const kustomization = parseAllDocuments(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0]!.toJS() as {
    resources: string[];
  };
  return kustomization.resources.flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((d) => d.toJS() as k8s.KubernetesObject | null)
      .filter((o): o is k8s.KubernetesObject => o !== null),
  );
}

/**
 * The Prometheus Operator's CRDs, reduced to what makes its kinds known (any content accepted): the cluster has no
 * Prometheus Operator, and the test is about our manifests, not theirs.
 */
export function monitoringCrd(kind: string, plural: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.monitoring.coreos.com` },
    spec: {
      group: 'monitoring.coreos.com',
      names: { kind, plural, listKind: `${kind}List`, singular: kind.toLowerCase() },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

export async function waitForCrd(c: Cluster, name: string): Promise<void> {
  await waitFor(
    async () => {
      const crd = (await c.cp.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`))
        .body as k8s.V1CustomResourceDefinition;
      return crd.status?.conditions?.some((cond) => cond.type === 'Established' && cond.status === 'True');
    },
    30_000,
    `CRD ${name} established`,
  );
}

interface DiscoveredResource {
  readonly name: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/** The REST path of an object's collection, from the API server's discovery (as kubectl's RESTMapper finds it). */
export async function collectionPath(c: Cluster, obj: k8s.KubernetesObject): Promise<string> {
  const apiVersion = obj.apiVersion ?? '';
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const answer = await c.cp.request('GET', base);
  const resources = (answer.body as { resources?: DiscoveredResource[] }).resources ?? [];
  const resource = resources.find((r) => r.kind === obj.kind && !r.name.includes('/'));
  if (resource === undefined) throw new Error(`no resource for ${apiVersion} ${obj.kind} (HTTP ${answer.status})`);
  const namespace = obj.metadata?.namespace;
  if (resource.namespaced && namespace === undefined)
    throw new Error(`${obj.kind} ${obj.metadata?.name}: no namespace`);
  return resource.namespaced ? `${base}/namespaces/${namespace}/${resource.name}` : `${base}/${resource.name}`;
}

/** Creates an object exactly as written (raw JSON); throws with the server's Status on refusal. */
export async function createRaw(c: Cluster, obj: k8s.KubernetesObject): Promise<k8s.KubernetesObject> {
  const answer = await c.cp.request('POST', await collectionPath(c, obj), obj);
  if (answer.status >= 300) {
    const status = answer.body as { message?: string };
    throw Object.assign(new Error(status.message ?? `HTTP ${answer.status}`), {
      code: answer.status,
      status: answer.body,
    });
  }
  return answer.body as k8s.KubernetesObject;
}

/**
 * Installs manifests/ as `kubectl apply -k manifests/` does (kubectl applies the CRDs first, and sends each object as
 * written). Returns the objects created. The API server's discovery learns a new CRD's kind a moment after it is
 * Established, so a create of a new kind is retried until discovery has it.
 */
export async function installManifests(c: Cluster): Promise<k8s.KubernetesObject[]> {
  for (const [kind, plural] of [
    ['ServiceMonitor', 'servicemonitors'],
    ['PrometheusRule', 'prometheusrules'],
  ] as const) {
    await createRaw(c, monitoringCrd(kind, plural));
    await waitForCrd(c, `${plural}.monitoring.coreos.com`);
  }
  const objects = manifestObjects();
  const ordered = [
    ...objects.filter((o) => o.kind === 'CustomResourceDefinition' || o.kind === 'Namespace'),
    ...objects.filter((o) => o.kind !== 'CustomResourceDefinition' && o.kind !== 'Namespace'),
  ];
  for (const obj of ordered) {
    await waitFor(() => collectionPath(c, obj), 30_000, `discovery of ${obj.apiVersion} ${obj.kind}`);
    await createRaw(c, obj);
    if (obj.kind === 'CustomResourceDefinition') await waitForCrd(c, obj.metadata!.name!);
  }
  return ordered;
}

/** Credentials of the shipped ServiceAccount, as the operator's pod would get them (TokenRequest). */
export async function operatorKubeConfig(c: Cluster): Promise<k8s.KubeConfig> {
  const path = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, OPERATOR_SA);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(path);
  return kc;
}

export async function createPolicy(c: Cluster, name: string, spec: Record<string, unknown>): Promise<void> {
  const eviction = (spec['eviction'] as Record<string, unknown> | undefined) ?? {};
  await c.custom.createClusterCustomObject({
    group: 'rebalancer.dev',
    version: 'v1alpha1',
    plural: 'rebalancepolicies',
    body: {
      apiVersion: 'rebalancer.dev/v1alpha1',
      kind: 'RebalancePolicy',
      metadata: { name },
      spec: { schedule: '0 0 1 1 *', ...spec, eviction: { minPodAge: '0s', ...eviction } },
    },
  });
}

export async function patchPolicy(c: Cluster, name: string, patch: Record<string, unknown>): Promise<void> {
  await c.custom.patchClusterCustomObject(
    { group: 'rebalancer.dev', version: 'v1alpha1', plural: 'rebalancepolicies', name, body: patch },
    MERGE,
  );
}

export interface PolicyStatusView {
  observedGeneration?: number;
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  lastPlan?: { evictions: number; skipped: number; violations: number; maxSkewObserved: number };
  totals?: { evicted: number; failed: number };
}

export async function policyStatus(c: Cluster, name: string): Promise<PolicyStatusView> {
  const obj = (await c.custom.getClusterCustomObject({
    group: 'rebalancer.dev',
    version: 'v1alpha1',
    plural: 'rebalancepolicies',
    name,
  })) as { status?: PolicyStatusView };
  return obj.status ?? {};
}

export function conditionOf(status: PolicyStatusView, type: string) {
  return status.conditions?.find((cond) => cond.type === type);
}

/** Eviction requests a user sent, as the API server's audit log recorded them. */
export function evictionRequests(cp: ControlPlane, user = OPERATOR_USER): AuditEvent[] {
  return cp
    .audit()
    .filter((e) => e.user.username === user && e.objectRef?.subresource === 'eviction' && e.verb === 'create');
}

export const isDryRun = (e: AuditEvent): boolean => e.requestURI.includes('dryRun=All');

/** Requests of a user that the API server refused with 403. */
export function forbidden(cp: ControlPlane, user = OPERATOR_USER): AuditEvent[] {
  return cp.audit().filter((e) => e.user.username === user && e.responseStatus?.code === 403);
}

/**
 * Watches an app's pods and checks, at every event, that its healthy pods (Ready, not terminating — what the
 * disruption controller counts) stay at or above a floor. Armed once the workload is up. A watch that ends (the
 * server's timeout, an API server restart) is resumed from the last resourceVersion seen, or relisted after a 410;
 * `resumes` counts those, since a state between two events that were never delivered cannot be checked.
 */
export class PdbFloorWatch {
  private readonly pods = new Map<string, boolean>();
  private request: AbortController | undefined;
  private stopped = false;
  private resourceVersion: string | undefined;
  lowest = Number.POSITIVE_INFINITY;
  readonly breaches: string[] = [];
  events = 0;
  resumes = 0;

  constructor(
    private readonly c: Cluster,
    private readonly namespace: string,
    private readonly app: string,
    private readonly floor: number,
  ) {}

  async start(): Promise<void> {
    await this.list();
    if (this.healthy() < this.floor) {
      throw new Error(`${this.app}: ${this.healthy()} healthy pods, below the floor ${this.floor}`);
    }
    this.lowest = this.healthy();
    await this.watch();
  }

  private async list(): Promise<void> {
    const list = await this.c.core.listNamespacedPod({ namespace: this.namespace, labelSelector: `app=${this.app}` });
    this.pods.clear();
    for (const pod of list.items) this.pods.set(pod.metadata!.uid!, isReady(pod));
    this.resourceVersion = list.metadata?.resourceVersion;
  }

  private async watch(): Promise<void> {
    this.request = await new k8s.Watch(this.c.kc).watch(
      `/api/v1/namespaces/${this.namespace}/pods`,
      { labelSelector: `app=${this.app}`, resourceVersion: this.resourceVersion, allowWatchBookmarks: true },
      (phase: string, obj: k8s.V1Pod | { code?: number }) => {
        if (phase === 'ERROR') {
          // 410 Gone: the resourceVersion is compacted; relist on resume.
          this.resourceVersion = undefined;
          return;
        }
        const pod = obj as k8s.V1Pod;
        this.resourceVersion = pod.metadata?.resourceVersion ?? this.resourceVersion;
        if (phase !== 'BOOKMARK') this.onEvent(phase, pod);
      },
      () => void this.resume(),
    );
  }

  private async resume(): Promise<void> {
    while (!this.stopped) {
      this.resumes++;
      try {
        if (this.resourceVersion === undefined) await this.list();
        await this.watch();
        return;
      } catch {
        await sleep(200);
      }
    }
  }

  private healthy(): number {
    let n = 0;
    for (const ready of this.pods.values()) if (ready) n++;
    return n;
  }

  private onEvent(phase: string, pod: k8s.V1Pod): void {
    this.events++;
    const uid = pod.metadata!.uid!;
    if (phase === 'DELETED') this.pods.delete(uid);
    else this.pods.set(uid, isReady(pod));
    const healthy = this.healthy();
    this.lowest = Math.min(this.lowest, healthy);
    if (healthy < this.floor) {
      this.breaches.push(`${phase} ${pod.metadata?.name}: ${healthy} healthy, floor ${this.floor}`);
    }
  }

  stop(): void {
    this.stopped = true;
    this.request?.abort();
  }
}

/** Adds (or overwrites) labels on nodes. */
export async function labelNodes(c: Cluster, nodes: readonly string[], labels: Record<string, string>): Promise<void> {
  for (const name of nodes) await c.core.patchNode({ name, body: { metadata: { labels } } }, MERGE);
}

/**
 * A node taint scenario: `cache` (3 replicas, nodeSelector pool=cache) runs on zone-a-node-2, the only pool node;
 * then zone-b-node-2 joins the pool. `change()` taints zone-a-node-2 NoSchedule, which the pods do not tolerate.
 */
export async function taintScenario(c: Cluster, namespace: string): Promise<{ change(): Promise<void> }> {
  await labelNodes(c, ['zone-a-node-2'], { pool: 'cache' });
  await createDeployment(c, {
    namespace,
    name: 'cache',
    replicas: 3,
    zoneMaxSkew: null,
    nodeSelector: { pool: 'cache' },
  });
  await waitForReady(c, namespace, 'cache', 3);
  await labelNodes(c, ['zone-b-node-2'], { pool: 'cache' });
  return {
    async change() {
      const taints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }];
      await c.core.patchNode({ name: 'zone-a-node-2', body: { spec: { taints } } }, MERGE);
    },
  };
}

/**
 * A relabel scenario: `db` (4 replicas, required node affinity disk=ssd) runs on zone-a-node-1, the only ssd node;
 * then `ssdNodes` get disk=ssd. `change()` relabels zone-a-node-1 disk=hdd, breaking the pods' affinity.
 */
export async function relabelScenario(
  c: Cluster,
  namespace: string,
  ssdNodes: readonly string[],
): Promise<{ pods: k8s.V1Pod[]; change(): Promise<void> }> {
  await labelNodes(c, ['zone-a-node-1'], { disk: 'ssd' });
  await createDeployment(c, {
    namespace,
    name: 'db',
    replicas: 4,
    zoneMaxSkew: null,
    affinity: requireNodeLabel('disk', 'ssd'),
  });
  const pods = await waitForReady(c, namespace, 'db', 4);
  await labelNodes(c, ssdNodes, { disk: 'ssd' });
  return { pods, change: () => labelNodes(c, ['zone-a-node-1'], { disk: 'hdd' }) };
}

/**
 * The "new zone" skew: Deployments of `replicas` pods (zone spread maxSkew 1, a PDB of maxUnavailable 1) placed by
 * the scheduler over the zones that exist, then an empty zone added. Returns a floor watch per Deployment
 * (replicas − 1 healthy), started once every budget allows one disruption again.
 */
export async function skewedByNewZone(
  c: Cluster,
  opts: { namespace: string; apps: readonly string[]; replicas: number; zone: string; nodes: number },
): Promise<PdbFloorWatch[]> {
  const { namespace, apps, replicas } = opts;
  for (const app of apps) await createDeployment(c, { namespace, name: app, replicas, pdb: { maxUnavailable: 1 } });
  for (const app of apps) await waitForReady(c, namespace, app, replicas, 90_000);
  await addZone(c, opts.zone, opts.nodes);
  const watches: PdbFloorWatch[] = [];
  for (const app of apps) {
    await waitForBudget(c, namespace, app, 1);
    const watch = new PdbFloorWatch(c, namespace, app, replicas - 1);
    watches.push(watch);
    await watch.start();
  }
  return watches;
}

/** Events about an object kind with a reason, in a namespace. */
export async function eventsFor(c: Cluster, namespace: string, kind: string, reason?: string) {
  const list = await c.core.listNamespacedEvent({ namespace });
  return list.items.filter((e) => e.involvedObject.kind === kind && (reason === undefined || e.reason === reason));
}

/**
 * The Events as soon as `done` holds for them, or as they are after `timeoutMs` (the caller's assertion then says
 * what is missing). The operator sends Events in the background, at low priority: only from a full API token bucket.
 */
export async function eventsWhen(
  c: Cluster,
  namespace: string,
  kind: string,
  reason: string,
  done: (events: k8s.CoreV1Event[]) => boolean,
  timeoutMs = 15_000,
): Promise<k8s.CoreV1Event[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await eventsFor(c, namespace, kind, reason);
    if (done(events) || Date.now() > deadline) return events;
    await sleep(200);
  }
}
