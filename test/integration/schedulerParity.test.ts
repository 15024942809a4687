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
import { snapshotFromObjects } from '../../src/snapshot/load.js';
import { controlPlaneAvailable, startControlPlane, type ControlPlane } from '../controlplane/index.js';

const SEED = 0x19c0ffee;
const CLUSTERS = 50;
const PROBES_PER_CLUSTER = 12;
const NS = 'parity';
const ZONE = 'topology.kubernetes.io/zone';
const HOSTNAME = 'kubernetes.io/hostname';
const GiB = 2 ** 30;
const MiB = 2 ** 20;

type Json = Record<string, unknown>;

/** mulberry32: a small seeded generator, so CI sees the same clusters every run. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Random {
  (): number;
  pick<T>(items: readonly T[]): T;
  int(lo: number, hi: number): number;
  chance(p: number): boolean;
}

function random(seed: number): Random {
  const next = rng(seed);
  const r = (() => next()) as Random;
  r.pick = (items) => items[Math.floor(next() * items.length)]!;
  r.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  r.chance = (p) => next() < p;
  return r;
}

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
}

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

function term(r: Random, key?: string): Json {
  return {
    topologyKey: key ?? r.pick([ZONE, HOSTNAME]),
    labelSelector: { matchLabels: { app: r.pick(APPS).app } },
  };
}

/** Random affinity of a pod: preferred and sometimes required pod (anti-)affinity, preferred node affinity. */
function affinityOf(r: Random, probe: boolean): Json | undefined {
  const affinity: Json = {};
  if (r.chance(0.35)) {
    affinity['podAffinity'] = {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: r.int(1, 100), podAffinityTerm: term(r) }],
    };
  }
  if (r.chance(0.35)) {
    affinity['podAntiAffinity'] = {
      preferredDuringSchedulingIgnoredDuringExecution: [{ weight: r.int(1, 100), podAffinityTerm: term(r) }],
    };
  }
  if (r.chance(probe ? 0.1 : 0.15)) {
    const section = (affinity['podAffinity'] ??= {}) as Json;
    section['requiredDuringSchedulingIgnoredDuringExecution'] = [term(r, ZONE)];
  }
  if (r.chance(probe ? 0.1 : 0.1)) {
    const section = (affinity['podAntiAffinity'] ??= {}) as Json;
    section['requiredDuringSchedulingIgnoredDuringExecution'] = [term(r, HOSTNAME)];
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

function podOf(r: Random, name: string, probe: boolean): Json {
  const app = r.pick(APPS);
  const containers = [containerOf(r, 'main')];
  if (r.chance(0.25)) containers.push(containerOf(r, 'side'));
  if (r.chance(0.08)) containers[0]!['ports'] = [{ containerPort: 8080, hostPort: r.pick([8080, 9090]) }];
  const spec: Json = { containers, terminationGracePeriodSeconds: 600 };
  const affinity = affinityOf(r, probe);
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
    metadata: { name, namespace: NS, labels: labelsOf(app), ...(owner ? { ownerReferences: owner } : {}) },
    spec,
  };
}

function generate(r: Random, index: number): Cluster {
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
    const pod = podOf(r, `c${index}-p${i}`, false);
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
  const probes = Array.from({ length: PROBES_PER_CLUSTER }, (_v, i) => podOf(r, `c${index}-probe${i}`, true));
  return { nodes, taints, statuses, pods, terminating, probes };
}

function quantity(q: unknown): number {
  if (typeof q !== 'string' || q === '') return 0;
  if (q.endsWith('m')) return Number(q.slice(0, -1));
  if (q.endsWith('Mi')) return Number(q.slice(0, -2)) * MiB;
  if (q.endsWith('Gi')) return Number(q.slice(0, -2)) * GiB;
  return Number(q) * 1000;
}

function requestsOf(pod: Json): { cpu: number; memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const c of (pod['spec'] as Json)['containers'] as Json[]) {
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

// ---- the scheduler's log ------------------------------------------------------------------------------------------

interface Attempt {
  readonly pod: string;
  /** Final score per node, when the scheduler scored (more than one feasible node). */
  readonly finals: Map<string, number>;
  /** plugin → node → weighted score. */
  readonly plugins: Map<string, Map<string, number>>;
}

const ATTEMPT = /"Attempting to schedule pod" pod="([^"]+)"/;
const FINAL = /"Calculated node's final score for pod" pod="([^"]+)" node="([^"]+)" score=(-?\d+)/;
const PLUGIN = /"Plugin scored node for pod" pod="([^"]+)" plugin="([^"]+)" node="([^"]+)" score=(-?\d+)/;

function parseAttempts(text: string): Attempt[] {
  const attempts: Attempt[] = [];
  const current = new Map<string, Attempt>();
  for (const line of text.split('\n')) {
    let m = ATTEMPT.exec(line);
    if (m) {
      const a: Attempt = { pod: m[1]!, finals: new Map(), plugins: new Map() };
      attempts.push(a);
      current.set(a.pod, a);
      continue;
    }
    m = FINAL.exec(line);
    if (m) {
      current.get(m[1]!)?.finals.set(m[2]!, Number(m[3]));
      continue;
    }
    m = PLUGIN.exec(line);
    if (m) {
      const a = current.get(m[1]!);
      if (a === undefined) continue;
      let perNode = a.plugins.get(m[2]!);
      if (perNode === undefined) a.plugins.set(m[2]!, (perNode = new Map()));
      perNode.set(m[3]!, Number(m[4]));
    }
  }
  return attempts;
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
  /** For a disagreement: what the scheduler's scores say. */
  readonly why?: string;
}

describe.skipIf(!controlPlaneAvailable())('landing prediction against the real kube-scheduler v1.26', () => {
  let cp: ControlPlane;

  beforeAll(async () => {
    cp = await startControlPlane({ controllerManager: false, schedulerVerbosity: 10 });
    await must(cp.request('POST', '/api/v1/namespaces', { metadata: { name: NS } }));
    for (const app of APPS.filter((a) => a.rs)) {
      const labels = labelsOf(app);
      await must(
        cp.request('POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
          metadata: { name: `${app.app}-${HASH}`, labels },
          spec: {
            replicas: 0,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: { containers: [{ name: 'main', image: 'registry.example/x:1' }] } },
          },
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    await cp?.stop();
  });

  async function must(answer: Promise<{ status: number; body: unknown }>): Promise<unknown> {
    const a = await answer;
    if (a.status >= 300) throw new Error(`API answered ${a.status}: ${JSON.stringify(a.body)}`);
    return a.body;
  }

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

  /** Waits until every probe is bound or marked unschedulable. */
  async function settle(probes: readonly string[]): Promise<Json[]> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const pods = await listPods();
      const pending = pods.filter((p) => {
        const name = (p['metadata'] as Json)['name'] as string;
        if (!probes.includes(name)) return false;
        if ((p['spec'] as Json)['nodeName']) return false;
        const conditions = ((p['status'] as Json | undefined)?.['conditions'] as Json[] | undefined) ?? [];
        return !conditions.some((k) => k['type'] === 'PodScheduled' && k['status'] === 'False');
      });
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
    });
    const pod = snapshot.pods[snapshot.pods.length - 1]!;
    const state = new ClusterState(analyze(snapshot, SPEC));
    const placement = placeReplacement(state, pod, undefined);
    const predicted = placement.node === undefined ? [] : [placement.node.name, ...placement.ties.map((n) => n.name)];
    return { predicted, reason: placement.reason, explain: () => explainScores(state, pod, undefined) };
  }

  it(`agrees with the real scheduler on at least 99% of ${CLUSTERS * PROBES_PER_CLUSTER} probes`, async () => {
    const r = random(SEED);
    const logFile = join(cp.dir, 'kube-scheduler.log');
    const outcomes: Outcome[] = [];
    for (let index = 0; index < CLUSTERS; index++) {
      const cluster = generate(r, index);
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
      const pods = await settle(names);
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
        outcomes.push({ cluster: index, probe: name, actual, predicted, agree, hostPort: hasHostPort(probe), why });
        if (actual !== undefined) placed.push(probe);
      }
      await clear();
    }
    const counted = outcomes;
    const agreed = counted.filter((o) => o.agree).length;
    const hostPorts = outcomes.filter((o) => o.hostPort);
    const rate = agreed / counted.length;
    const lines = [
      `scheduler parity (seed ${SEED.toString(16)}): ${agreed}/${counted.length} probes agree ` +
        `(${(rate * 100).toFixed(2)}%) over ${CLUSTERS} clusters; ` +
        `of them with host ports: ${hostPorts.filter((o) => o.agree).length}/${hostPorts.length} agree`,
      ...counted.filter((o) => !o.agree).map((o) => `  disagreement ${o.probe}: ${o.why}`),
    ];
    console.log(lines.join('\n'));
    expect(counted.length).toBeGreaterThanOrEqual(500);
    expect(new Set(counted.map((o) => o.cluster)).size).toBeGreaterThanOrEqual(50);
    expect(rate).toBeGreaterThanOrEqual(0.99);
  }, 600_000);
});

const MERGE = 'application/merge-patch+json';

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
