// The landing prediction against the real kube-scheduler v1.26 (real control plane: etcd, kube-apiserver and
// kube-scheduler at -v=10; no controller manager and no kubelet, since pods bound by nodeName count in the scheduler's
// cache whether or not anything runs them). Seeded random small clusters — nodes of varied capacity, zones, labels,
// PreferNoSchedule/NoSchedule taints and node.status.images; bound pods with requests, owners, preferred and required
// (anti-)affinity, host ports, some terminating — then a batch of probe pods (requests, node selectors, preferred node
// affinity, tolerations, soft and hard spread, preferred/required pod (anti-)affinity, images, ReplicaSet owners for
// the default spreading) is created at once and placed by the real scheduler. For each probe, in the order the
// scheduler attempted them (its log), the model predicts from the cluster as the scheduler saw it (the probes bound
// before it included): agreement means the scheduler's node is `target` or one of `ties` (or both find no node).
// The scheduler's -v=10 "Calculated node's final score" lines tell a real disagreement from a tie, and its per-plugin
// lines name the plugin whose score differs. One control plane for every cluster; nodes and pods are deleted and
// recreated between clusters. Probes and bound pods with host ports exercise the NodePorts filter; the figure counts
// them with the rest and also prints theirs apart.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { DEFAULT_POLICY } from '../../src/policy/parse.js';
import type { PolicySpec } from '../../src/policy/types.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { explainScores, placeReplacement } from '../../src/scheduling/placement.js';
import { modelledVersion, releaseFromServerVersion, type KubeVersion } from '../../src/model/kubeVersion.js';
import { snapshotFromObjects } from '../../src/snapshot/load.js';
import { controlPlaneAvailable, startControlPlane, type ControlPlane } from '../controlplane/index.js';
import {
  createReplicaSets,
  must,
  parseAttempts,
  random,
  undecidedProbes,
  type Attempt,
  type Random,
} from './parityTools.js';

const SEED = 0x19c0ffee;
const CLUSTERS = 50;
const PROBES_PER_CLUSTER = 12;
const NS = 'parity';
const ZONE = 'topology.kubernetes.io/zone';
const HOSTNAME = 'kubernetes.io/hostname';
const GiB = 2 ** 30;
const MiB = 2 ** 20;

type Json = Record<string, unknown>;

const IMAGES: ReadonlyArray<{ name: string; size: number }> = [
  { name: 'registry.example/web:1', size: 420 * MiB },
  { name: 'registry.example/api:2', size: 860 * MiB },
  { name: 'registry.example/db:3', size: 150 * MiB },
  { name: 'registry.example/tools:4', size: 30 * MiB },
];

/** Workloads: `rs` ones belong to a ReplicaSet object (the scheduler's default spreading finds them by selector). */
const APPS = [
  { app: 'web', rs: true },
  { app: 'api', rs: true },
  { app: 'db', rs: false },
  { app: 'batch', rs: false },
] as const;
const HASH = '5f8d7c6b9a';

interface Cluster {
  readonly nodes: Json[];
  readonly taints: Map<string, Json[]>;
  readonly statuses: Map<string, Json>;
  readonly pods: Json[];
  /** Names of bound pods to delete with a grace period (they stay terminating: no kubelet confirms). */
  readonly terminating: string[];
  readonly probes: Json[];
  /** Bound pods' status after an in-place resize (containerStatuses with allocated and actuated resources). */
  readonly resized: Map<string, Json>;
}

/**
 * The pod API of 1.35+ the probes exercise when the control plane has it (`Features`): sidecars, pod-level
 * resources, resized pods, matchLabelKeys/mismatchLabelKeys, scheduling gates and DRA claims. Decided by a random
 * stream of their own, so the clusters of a control plane without them are those of the original suite.
 */
interface Features {
  readonly r: Random;
}

const TRACKS = ['blue', 'green'] as const;

function labelsOf(app: (typeof APPS)[number]): Record<string, string> {
  return app.rs ? { app: app.app, 'pod-template-hash': HASH } : { app: app.app };
}

function ownerOf(app: (typeof APPS)[number]): Json[] | undefined {
  if (!app.rs) return undefined;
  return [
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      name: `${app.app}-${HASH}`,
      uid: `00000000-0000-4000-8000-0000000000${app.app === 'web' ? '01' : '02'}`,
      controller: true,
    },
  ];
}

function term(r: Random, key?: string, f?: Features): Json {
  const t: Json = {
    topologyKey: key ?? r.pick([ZONE, HOSTNAME]),
    labelSelector: { matchLabels: { app: r.pick(APPS).app } },
  };
  // The API server merges these into labelSelector at creation (the pod's own track value, In or NotIn).
  if (f !== undefined && f.r.chance(0.3)) t[f.r.chance(0.5) ? 'matchLabelKeys' : 'mismatchLabelKeys'] = ['track'];
  return t;
}

/** Random affinity of a pod: preferred and sometimes required pod (anti-)affinity, preferred node affinity. */
function affinityOf(r: Random, probe: boolean, f?: Features): Json | undefined {
  const affinity: Json = {};
  if (r.chance(0.35)) {
    affinity['podAffinity'] = {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: r.int(1, 100), podAffinityTerm: term(r, undefined, f) },
      ],
    };
  }
  if (r.chance(0.35)) {
    affinity['podAntiAffinity'] = {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: r.int(1, 100), podAffinityTerm: term(r, undefined, f) },
      ],
    };
  }
  if (r.chance(probe ? 0.1 : 0.15)) {
    const section = (affinity['podAffinity'] ??= {}) as Json;
    section['requiredDuringSchedulingIgnoredDuringExecution'] = [term(r, ZONE, f)];
  }
  if (r.chance(probe ? 0.1 : 0.1)) {
    const section = (affinity['podAntiAffinity'] ??= {}) as Json;
    section['requiredDuringSchedulingIgnoredDuringExecution'] = [term(r, HOSTNAME, f)];
  }
  if (probe && r.chance(0.3)) {
    affinity['nodeAffinity'] = {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: r.int(1, 100), preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
      ],
    };
  }
  return Object.keys(affinity).length === 0 ? undefined : affinity;
}

function containerOf(r: Random, name: string): Json {
  const requests: Json = {};
  const cpu = r.pick(['', '', '100m', '250m', '500m', '1']);
  const memory = r.pick(['', '', '128Mi', '512Mi', '1Gi']);
  if (cpu !== '') requests['cpu'] = cpu;
  if (memory !== '') requests['memory'] = memory;
  return { name, image: r.pick(IMAGES).name, resources: { requests } };
}

function podOf(r: Random, name: string, probe: boolean, f?: Features): Json {
  const app = r.pick(APPS);
  const containers = [containerOf(r, 'main')];
  if (r.chance(0.25)) containers.push(containerOf(r, 'side'));
  if (r.chance(0.08)) containers[0]!['ports'] = [{ containerPort: 8080, hostPort: r.pick([8080, 9090]) }];
  const spec: Json = { containers, terminationGracePeriodSeconds: 600 };
  const labels: Record<string, string> = labelsOf(app);
  if (f !== undefined) {
    // One ReplicaSet's pods share one template, so their track too (the scheduler's default spreading selects by the
    // ReplicaSet's selector, the model by the pods' shared labels); other pods pick theirs.
    const track = f.r.pick(TRACKS);
    labels['track'] = app.rs ? (app.app === 'web' ? 'blue' : 'green') : track;
    // Sidecars (restartable init containers) add to the pod; an ordinary init container after them runs beside them.
    if (f.r.chance(0.3)) {
      const init: Json[] = [{ ...containerOf(f.r, 'proxy'), restartPolicy: 'Always' }];
      if (f.r.chance(0.4)) init.push(containerOf(f.r, 'setup'));
      if (f.r.chance(0.3)) init.unshift(containerOf(f.r, 'migrate'));
      spec['initContainers'] = init;
    }
    // Pod-level requests: at least what the containers ask, as validation requires.
    if (f.r.chance(0.15)) {
      // Every container summed, init ones included: at least the aggregate validation compares with.
      const asked = requestsOf({
        spec: { containers: [...containers, ...((spec['initContainers'] as Json[]) ?? [])] },
      });
      spec['resources'] = {
        requests: {
          cpu: `${asked.cpu + f.r.pick([100, 250, 500, 1000])}m`,
          memory: `${Math.ceil(asked.memory / MiB) + f.r.pick([128, 512, 1024])}Mi`,
        },
      };
    }
    if (probe && f.r.chance(0.05)) spec['schedulingGates'] = [{ name: 'example.com/quota' }];
    if (probe && f.r.chance(0.04)) spec['resourceClaims'] = [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }];
  }
  const affinity = affinityOf(r, probe, f);
  if (affinity !== undefined) spec['affinity'] = affinity;
  if (probe) {
    if (r.chance(0.15)) spec['nodeSelector'] = { disk: 'ssd' };
    if (r.chance(0.3)) spec['tolerations'] = [{ key: 'soft', operator: 'Exists', effect: 'PreferNoSchedule' }];
    if (r.chance(0.1)) spec['tolerations'] = [{ key: 'dedicated', operator: 'Exists' }];
    if (r.chance(0.45)) {
      const hard = r.chance(0.4);
      spec['topologySpreadConstraints'] = [
        {
          maxSkew: r.int(1, 2),
          topologyKey: r.pick([ZONE, HOSTNAME]),
          whenUnsatisfiable: hard ? 'DoNotSchedule' : 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: app.app } },
          ...(f !== undefined && f.r.chance(0.3) ? { matchLabelKeys: ['track'] } : {}),
        },
      ];
      const first = (spec['topologySpreadConstraints'] as Json[])[0]!;
      if (r.chance(0.3) && !(first['topologyKey'] === HOSTNAME && !hard)) {
        (spec['topologySpreadConstraints'] as Json[]).push({
          maxSkew: 1,
          topologyKey: HOSTNAME,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: app.app } },
        });
      }
    }
  }
  const owner = ownerOf(app);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels, ...(owner ? { ownerReferences: owner } : {}) },
    spec,
  };
}

function generate(r: Random, index: number, f?: Features): Cluster {
  const nodes: Json[] = [];
  const taints = new Map<string, Json[]>();
  const statuses = new Map<string, Json>();
  const capacity = new Map<string, { cpu: number; memory: number }>();
  const nodeCount = r.int(3, 7);
  const zones = r.int(1, 3);
  for (let i = 0; i < nodeCount; i++) {
    const name = `c${index}-n${i}`;
    const cpu = r.pick([2, 4, 8]);
    const memory = r.pick([4, 8, 16]);
    nodes.push({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        labels: { [HOSTNAME]: name, [ZONE]: `zone-${i % zones}`, disk: r.pick(['ssd', 'hdd']) },
      },
    });
    const list: Json[] = [];
    if (r.chance(0.25)) list.push({ key: 'soft', value: 'x', effect: 'PreferNoSchedule' });
    if (r.chance(0.12)) list.push({ key: 'dedicated', value: 'infra', effect: 'NoSchedule' });
    taints.set(name, list);
    const images = IMAGES.filter(() => r.chance(0.4)).map((img) => ({ names: [img.name], sizeBytes: img.size }));
    const resources = { cpu: String(cpu), memory: `${memory}Gi`, pods: '110' };
    statuses.set(name, {
      capacity: resources,
      allocatable: resources,
      images,
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: null }],
    });
    capacity.set(name, { cpu: cpu * 1000, memory: memory * GiB });
  }
  const pods: Json[] = [];
  const podCount = r.int(4, 16);
  for (let i = 0; i < podCount; i++) {
    const pod = podOf(r, `c${index}-p${i}`, false, f);
    const node = (r.pick(nodes)['metadata'] as Json)['name'] as string;
    const need = requestsOf(pod);
    const room = capacity.get(node)!;
    if (need.cpu > room.cpu || need.memory > room.memory) continue;
    room.cpu -= need.cpu;
    room.memory -= need.memory;
    (pod['spec'] as Json)['nodeName'] = node;
    pods.push(pod);
  }
  const terminating = pods.filter(() => r.chance(0.1)).map((p) => (p['metadata'] as Json)['name'] as string);
  const probes = Array.from({ length: PROBES_PER_CLUSTER }, (_v, i) => podOf(r, `c${index}-probe${i}`, true, f));
  const resized = new Map<string, Json>();
  if (f !== undefined) for (const pod of pods) if (f.r.chance(0.25)) resized.set(nameOf(pod), resizedStatus(f.r, pod));
  return { nodes, taints, statuses, pods, terminating, probes, resized };
}

function nameOf(o: Json): string {
  return (o['metadata'] as Json)['name'] as string;
}

/**
 * The status a kubelet writes after resizing a pod in place: per container, allocatedResources and the actuated
 * resources.requests at a new amount (up or down), sometimes only allocated so far; sometimes the resize to the spec
 * is Infeasible, and the status keeps the old amount.
 */
function resizedStatus(r: Random, pod: Json): Json {
  const spec = pod['spec'] as Json;
  const entries = (key: 'containers' | 'initContainers'): Json[] =>
    ((spec[key] as Json[] | undefined) ?? []).map((c) => {
      const requests = ((c['resources'] as Json)['requests'] ?? {}) as Json;
      const cpu = quantity(requests['cpu']);
      const resizedCpu = `${Math.max(50, Math.round((cpu || 200) * r.pick([0.5, 1.5, 2, 3])))}m`;
      const allocated: Json = { ...requests, cpu: resizedCpu };
      const entry: Json = {
        name: c['name'],
        image: c['image'],
        imageID: '',
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: '2026-01-01T00:00:00Z' } },
        allocatedResources: allocated,
      };
      if (r.chance(0.7)) entry['resources'] = { requests: allocated };
      return entry;
    });
  const status: Json = { phase: 'Running', containerStatuses: entries('containers') };
  if (spec['initContainers'] !== undefined) status['initContainerStatuses'] = entries('initContainers');
  if (r.chance(0.2)) {
    status['conditions'] = [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible', message: 'parity' }];
  }
  return status;
}

function quantity(q: unknown): number {
  if (typeof q !== 'string' || q === '') return 0;
  if (q.endsWith('m')) return Number(q.slice(0, -1));
  if (q.endsWith('Mi')) return Number(q.slice(0, -2)) * MiB;
  if (q.endsWith('Gi')) return Number(q.slice(0, -2)) * GiB;
  return Number(q) * 1000;
}

/** What the pod asks by its containers (sidecars summed, other init containers ignored: a rough figure for sizing). */
function requestsOf(pod: Json): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  const spec = pod['spec'] as Json;
  const sidecars = ((spec['initContainers'] as Json[] | undefined) ?? []).filter(
    (c) => c['restartPolicy'] === 'Always',
  );
  for (const c of [...(spec['containers'] as Json[]), ...sidecars]) {
    const requests = ((c['resources'] as Json)['requests'] ?? {}) as Json;
    cpu += quantity(requests['cpu']);
    memory += quantity(requests['memory']);
  }
  return { cpu, memory };
}

function hasHostPort(pod: Json): boolean {
  return ((pod['spec'] as Json)['containers'] as Json[]).some((c) =>
    ((c['ports'] as Json[] | undefined) ?? []).some((p) => p['hostPort'] !== undefined),
  );
}

// ---- the suite ----------------------------------------------------------------------------------------------------

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Every namespace in scope, so each probe's spread groups exist in the analysis. */
const SPEC: PolicySpec = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

interface Outcome {
  readonly cluster: number;
  readonly probe: string;
  readonly actual: string | undefined;
  readonly predicted: readonly string[];
  readonly agree: boolean;
  readonly hostPort: boolean;
  /** The 1.35+ features the probe uses (sidecar, pod-level, gated, claim, label-keys) and whether resized pods were there. */
  readonly features: readonly string[];
  /** For a disagreement: what the scheduler's scores say. */
  readonly why?: string;
}

describe.skipIf(!controlPlaneAvailable())('landing prediction against the real kube-scheduler', () => {
  let cp: ControlPlane;
  /** The control plane's release, and the minor the model follows for it. */
  let release = '';
  let kubeVersion: KubeVersion;
  /** The pod API of 1.35+ is exercised only where the control plane has it. */
  let modern = false;

  beforeAll(async () => {
    cp = await startControlPlane({ controllerManager: false, schedulerVerbosity: 10 });
    const info = (await must(cp.request('GET', '/version'))) as Json;
    const parsed = releaseFromServerVersion(info)!;
    release = String(info['gitVersion']);
    kubeVersion = modelledVersion(parsed, 'the control plane').version;
    modern = parsed.major === 1 && parsed.minor >= 35;
    await must(cp.request('POST', '/api/v1/namespaces', { metadata: { name: NS } }));
    const withReplicaSet = APPS.filter((a) => a.rs);
    await createReplicaSets(
      (method, path, body) => cp.request(method, path, body),
      NS,
      withReplicaSet.map((app) => ({ name: `${app.app}-${HASH}`, labels: labelsOf(app) })),
    );
  }, 120_000);

  afterAll(async () => {
    await cp?.stop();
  });

  async function createCluster(c: Cluster): Promise<void> {
    await Promise.all(c.nodes.map((n) => must(cp.request('POST', '/api/v1/nodes', n))));
    await Promise.all(
      c.nodes.map(async (n) => {
        const name = (n['metadata'] as Json)['name'] as string;
        await must(cp.request('PATCH', `/api/v1/nodes/${name}/status`, { status: c.statuses.get(name) }, MERGE));
        // The API server's TaintNodesByCondition admission taints a new node not-ready; no controller lifts it here.
        await must(cp.request('PATCH', `/api/v1/nodes/${name}`, { spec: { taints: c.taints.get(name) } }, MERGE));
      }),
    );
    // kube-scheduler v1.26 records, per node, how many nodes have each of its images when that node's status last
    // changed, not now: refresh every status once all nodes exist, as kubelets' periodic status updates do.
    for (const n of c.nodes) {
      const name = (n['metadata'] as Json)['name'] as string;
      const status = c.statuses.get(name)!;
      const heartbeat = {
        ...status,
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString() },
        ],
      };
      await must(cp.request('PATCH', `/api/v1/nodes/${name}/status`, { status: heartbeat }, MERGE));
    }
    await Promise.all(c.pods.map((p) => must(cp.request('POST', `/api/v1/namespaces/${NS}/pods`, p))));
    for (const [name, status] of c.resized) {
      await must(cp.request('PATCH', `/api/v1/namespaces/${NS}/pods/${name}/status`, { status }, MERGE));
    }
    for (const name of c.terminating) {
      await must(cp.request('DELETE', `/api/v1/namespaces/${NS}/pods/${name}?gracePeriodSeconds=600`));
    }
  }

  async function listPods(): Promise<Json[]> {
    const body = (await must(cp.request('GET', `/api/v1/namespaces/${NS}/pods`))) as { items: Json[] };
    return body.items.map((p) => ({ ...p, apiVersion: 'v1', kind: 'Pod' }));
  }

  async function listNodes(): Promise<Json[]> {
    const body = (await must(cp.request('GET', '/api/v1/nodes'))) as { items: Json[] };
    return body.items.map((n) => ({ ...n, apiVersion: 'v1', kind: 'Node' }));
  }

  /** Waits until every probe is bound or marked unschedulable (gated and claim probes are never tried: see below). */
  async function settle(probes: readonly string[]): Promise<Json[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const pods = await listPods();
      const pending = undecidedProbes(pods, probes);
      if (pending.length === 0) return pods;
      if (Date.now() > deadline) throw new Error(`probes not placed in 30 s: ${pending.length}`);
      await sleep(100);
    }
  }

  async function clear(): Promise<void> {
    await must(cp.request('DELETE', `/api/v1/namespaces/${NS}/pods?gracePeriodSeconds=0`));
    await must(cp.request('DELETE', '/api/v1/nodes'));
  }

  function predict(
    nodes: readonly Json[],
    before: readonly Json[],
    probe: Json,
  ): { predicted: string[]; reason: string | undefined; explain: () => ReturnType<typeof explainScores> } {
    const pending = { ...probe, spec: { ...(probe['spec'] as Json), nodeName: undefined } };
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } };
    const { snapshot } = snapshotFromObjects([namespace, ...nodes, ...before, pending], {
      file: 'parity',
      now: Date.now(),
      kubeVersion,
    });
    const pod = snapshot.pods[snapshot.pods.length - 1]!;
    // The model never predicts a landing for a gated pod (the scheduler does not try it) nor for one with DRA claims
    // (the planner leaves it alone: device allocation is not modelled).
    if (pod.schedulingGated === true || pod.resourceClaims !== undefined) {
      return { predicted: [], reason: 'not placed by the model', explain: () => [] };
    }
    const state = new ClusterState(analyze(snapshot, SPEC));
    const placement = placeReplacement(state, pod, undefined);
    const predicted = placement.node === undefined ? [] : [placement.node.name, ...placement.ties.map((n) => n.name)];
    return { predicted, reason: placement.reason, explain: () => explainScores(state, pod, undefined) };
  }

  it(`agrees with the real scheduler on at least 99% of ${CLUSTERS * PROBES_PER_CLUSTER} probes`, async () => {
    const r = random(SEED);
    const features: Features | undefined = modern ? { r: random(SEED ^ 0x28) } : undefined;
    const logFile = join(cp.dir, 'kube-scheduler.log');
    const outcomes: Outcome[] = [];
    for (let index = 0; index < CLUSTERS; index++) {
      const cluster = generate(r, index, features);
      await createCluster(cluster);
      // The scheduler's informers see the nodes, their taints and the bound pods before the probes arrive.
      await sleep(250);
      const logStart = statSync(logFile).size;
      for (const p of cluster.probes) {
        const a = await cp.request('POST', `/api/v1/namespaces/${NS}/pods`, p);
        if (a.status >= 300)
          throw new Error(`probe refused ${a.status}: ${JSON.stringify(a.body)} ${JSON.stringify(p)}`);
      }
      const names = cluster.probes.map((p) => (p['metadata'] as Json)['name'] as string);
      // A gated probe, or one whose claim no controller creates, waits before the scheduler's queue: never tried.
      const untried = cluster.probes.filter(neverTried).map(nameOf);
      const pods = await settle(names.filter((n) => !untried.includes(n)));
      await sleep(100);
      const attempts = parseAttempts(readFileSync(logFile, 'utf8').slice(logStart));
      const nodes = (await listNodes()).filter((n) =>
        ((n['metadata'] as Json)['name'] as string).startsWith(`c${index}-`),
      );
      const byName = new Map(pods.map((p) => [(p['metadata'] as Json)['name'] as string, p]));
      const base = pods.filter((p) => !names.includes((p['metadata'] as Json)['name'] as string));
      // Probes in the order of their last attempt (the one that bound them, or the last that failed).
      const last = new Map<string, { at: number; attempt: Attempt }>();
      attempts.forEach((a, at) => last.set(a.pod.slice(NS.length + 1), { at, attempt: a }));
      const order = names.filter((n) => last.has(n)).sort((a, b) => last.get(a)!.at - last.get(b)!.at);
      for (const name of untried) {
        if (last.has(name)) throw new Error(`the scheduler tried ${name}, which it should not`);
        order.push(name);
      }
      const placed: Json[] = [];
      for (const name of order) {
        const probe = byName.get(name)!;
        const actual = (probe['spec'] as Json)['nodeName'] as string | undefined;
        const { predicted, reason, explain } = predict(nodes, [...base, ...placed], probe);
        const agree = actual === undefined ? predicted.length === 0 : predicted.includes(actual);
        let why: string | undefined;
        if (!agree) {
          why = explainDisagreement(last.get(name)!.attempt, actual, predicted, explain);
          if (reason !== undefined) why += `; model: ${reason}`;
        }
        if (!agree && process.env['PARITY_DEBUG'] === '1') {
          console.log(
            JSON.stringify({
              probe,
              nodes: nodes.map((n) => [
                (n['metadata'] as Json)['name'],
                (n['status'] as Json)['images'],
                (n['spec'] as Json)['taints'],
              ]),
              pods: [...base, ...placed].map((p) => [
                (p['metadata'] as Json)['name'],
                (p['metadata'] as Json)['deletionTimestamp'] ? 'TERMINATING' : '',
                (p['spec'] as Json)['nodeName'],
                (p['metadata'] as Json)['labels'],
                (p['spec'] as Json)['affinity'],
              ]),
            }),
          );
        }
        outcomes.push({
          cluster: index,
          probe: name,
          actual,
          predicted,
          agree,
          hostPort: hasHostPort(probe),
          features: featuresOf(probe, cluster.resized.size > 0),
          why,
        });
        if (actual !== undefined) placed.push(probe);
      }
      await clear();
    }
    const counted = outcomes;
    const agreed = counted.filter((o) => o.agree).length;
    const hostPorts = outcomes.filter((o) => o.hostPort);
    const rate = agreed / counted.length;
    const byFeature = ['sidecar', 'pod-level', 'label-keys', 'gated', 'claim', 'resized-neighbours'].map((f) => {
      const withIt = outcomes.filter((o) => o.features.includes(f));
      return `${f} ${withIt.filter((o) => o.agree).length}/${withIt.length}`;
    });
    const lines = [
      `scheduler parity ${release} (model ${kubeVersion}, seed ${SEED.toString(16)}): ${agreed}/${counted.length} ` +
        `probes agree (${(rate * 100).toFixed(2)}%) over ${CLUSTERS} clusters; ` +
        `of them with host ports: ${hostPorts.filter((o) => o.agree).length}/${hostPorts.length} agree` +
        (modern ? `; by feature: ${byFeature.join(', ')}` : ''),
      ...counted.filter((o) => !o.agree).map((o) => `  disagreement ${o.probe} [${o.features.join(',')}]: ${o.why}`),
    ];
    console.log(lines.join('\n'));
    expect(counted.length).toBeGreaterThanOrEqual(600);
    expect(new Set(counted.map((o) => o.cluster)).size).toBeGreaterThanOrEqual(50);
    expect(rate).toBeGreaterThanOrEqual(0.99);
  }, 600_000);
});

const MERGE = 'application/merge-patch+json';

function neverTried(probe: Json): boolean {
  const spec = probe['spec'] as Json;
  return spec['schedulingGates'] !== undefined || spec['resourceClaims'] !== undefined;
}

function featuresOf(probe: Json, resizedNeighbours: boolean): string[] {
  const spec = probe['spec'] as Json;
  const out: string[] = [];
  if (((spec['initContainers'] as Json[] | undefined) ?? []).some((c) => c['restartPolicy'] === 'Always')) {
    out.push('sidecar');
  }
  if (spec['resources'] !== undefined) out.push('pod-level');
  if (/"m(?:ism)?atchLabelKeys"/i.test(JSON.stringify(spec))) out.push('label-keys');
  if (spec['schedulingGates'] !== undefined) out.push('gated');
  if (spec['resourceClaims'] !== undefined) out.push('claim');
  if (resizedNeighbours) out.push('resized-neighbours');
  return out;
}

/** What the scheduler's scores say about a disagreement: a tie the model missed, or which plugin scored otherwise. */
function explainDisagreement(
  attempt: Attempt,
  actual: string | undefined,
  predicted: readonly string[],
  explain: () => Array<{ node: string; total: number; plugins: Record<string, number> }>,
): string {
  const head = `scheduler → ${actual ?? 'none'}, model → ${predicted.join('|') || 'none'}`;
  if (attempt.finals.size === 0) return `${head}; the scheduler did not score (one feasible node or none)`;
  const model = explain();
  const diffs: string[] = [];
  for (const m of model) {
    for (const [plugin, value] of Object.entries(m.plugins)) {
      const theirs = attempt.plugins.get(plugin)?.get(m.node);
      if (theirs !== undefined && theirs !== value) diffs.push(`${plugin}@${m.node} ${value} vs ${theirs}`);
    }
    if (!attempt.finals.has(m.node)) diffs.push(`${m.node} feasible only in the model`);
  }
  for (const node of attempt.finals.keys()) {
    if (!model.some((m) => m.node === node)) diffs.push(`${node} feasible only for the scheduler`);
  }
  const finals = [...attempt.finals].map(([n, s]) => `${n}=${s}`).join(' ');
  return `${head}; scheduler finals ${finals}; model vs scheduler: ${diffs.slice(0, 6).join(', ') || 'same scores'}`;
}
