// lowNodeUtilization and highNodeUtilization against the real control plane (issue 20's acceptance): the real
// kube-scheduler places every pod and replacement, the real ReplicaSet controller replaces every evicted pod, the real
// disruption controller keeps PDB status; evictions are counted from the API server's audit log, PDB floors from a
// watch. Each scenario has its own control plane, since utilization is measured over every node.
//
// The MostAllocated scenario restarts kube-scheduler with a KubeSchedulerConfiguration (`restartScheduler(config)`)
// and gives the operator the same file (`schedulerProfile`, read as `--scheduler-config` reads it).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, onTestFailed } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { main } from '../../src/cli/program.js';
import { loadSchedulerConfig } from '../../src/scheduling/schedulerConfigFile.js';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  conditionOf,
  createDeployment,
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  labelNodes,
  livePods,
  MERGE,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  PdbFloorWatch,
  policyStatus,
  startCluster,
  waitFor,
  waitForBudget,
  waitForReady,
  type Cluster,
} from './cluster.js';

const NS = 'load';
const LIMITS = { maxPerCycle: 20, maxPerNode: 10, maxPerNamespace: 20, maxPerWorkload: 1, minPodAge: '0s' };

/** CPU requested per node (millicores), from the live pods. */
async function cpuByNode(c: Cluster): Promise<Map<string, number>> {
  const pods = (await c.core.listNamespacedPod({ namespace: NS })).items;
  const out = new Map<string, number>();
  for (const p of pods) {
    if (p.metadata?.deletionTimestamp !== undefined || p.spec?.nodeName === undefined) continue;
    const cpu = p.spec.containers.reduce((s, ct) => s + milli(ct.resources?.requests?.['cpu']), 0);
    out.set(p.spec.nodeName, (out.get(p.spec.nodeName) ?? 0) + cpu);
  }
  return out;
}

function milli(q: string | undefined): number {
  if (q === undefined) return 0;
  return q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000;
}

function evictedPods(c: Cluster, mark: number): string[] {
  return evictionRequests(c.cp)
    .slice(mark)
    .filter((e) => !isDryRun(e) && e.objectRef?.namespace === NS && e.responseStatus?.code === 201)
    .map((e) => e.objectRef!.name!);
}

async function nodesOf(c: Cluster, app: string): Promise<string[]> {
  return (await livePods(c, NS, app)).map((p) => p.spec!.nodeName!).sort();
}

describe.skipIf(!controlPlaneAvailable())('utilization strategies on a real control plane', () => {
  const operators: OperatorHandle[] = [];
  const watches: PdbFloorWatch[] = [];
  const clusters: Cluster[] = [];

  afterEach(async () => {
    for (const w of watches.splice(0)) w.stop();
    for (const op of operators.splice(0)) await op.stop();
    for (const c of clusters.splice(0)) await c.stop();
  });

  async function cluster(zone: string, nodes: number): Promise<Cluster> {
    const c = await startCluster({ zones: [zone], nodesPerZone: nodes, nodeCpu: '4' });
    clusters.push(c);
    await installManifests(c);
    return c;
  }

  async function operator(c: Cluster, extra: Record<string, unknown> = {}): Promise<OperatorHandle> {
    const op = startOperatorWith(await operatorKubeConfig(c), {
      namespace: OPERATOR_NAMESPACE,
      minReplanIntervalMs: 200,
      ...extra,
    });
    operators.push(op);
    onTestFailed(() =>
      console.log(
        op.logs
          .slice(-60)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ),
    );
    await op.operator.waitForSync();
    return op;
  }

  it('LowNodeUtilization: on-demand nodes at 80%, two empty spot nodes join: 6 evictions, none pinned, none back on on-demand', async () => {
    const c = await cluster('od', 3);
    const onDemand = ['od-node-1', 'od-node-2', 'od-node-3'];
    await labelNodes(c, onDemand, { 'capacity-type': 'on-demand' });
    const pinned = { 'capacity-type': 'on-demand' };
    await createDeployment(c, {
      namespace: NS,
      name: 'free',
      replicas: 12,
      zoneMaxSkew: null,
      cpu: '400m',
      pdb: { maxUnavailable: 1 },
    });
    await createDeployment(c, {
      namespace: NS,
      name: 'pinned',
      replicas: 12,
      zoneMaxSkew: null,
      cpu: '400m',
      nodeSelector: pinned,
      pdb: { maxUnavailable: 1 },
    });
    await waitForReady(c, NS, 'free', 12);
    await waitForReady(c, NS, 'pinned', 12);
    // The scheduler spreads them 8/8/8: 3.2 of 4 CPU requested on each on-demand node.
    expect([...(await cpuByNode(c)).values()]).toEqual([3200, 3200, 3200]);
    await waitForBudget(c, NS, 'free', 1);
    for (const app of ['free', 'pinned']) {
      const floor = new PdbFloorWatch(c, NS, app, 11);
      watches.push(floor);
      await floor.start();
    }
    const spot = await addZone(c, 'spot', 2, '4');
    await labelNodes(c, spot, { 'capacity-type': 'spot' });

    const mark = evictionRequests(c.cp).length;
    await createPolicy(c, 'lnu', {
      mode: 'Evict',
      namespaces: { include: [NS] },
      eviction: LIMITS,
      strategies: {
        lowNodeUtilization: {
          enabled: true,
          thresholds: { cpu: 20, memory: 20, pods: 20 },
          targetThresholds: { cpu: 60, memory: 60, pods: 60 },
        },
      },
    });
    const op = await operator(c);
    const atTarget = async (): Promise<boolean> =>
      [...(await cpuByNode(c)).values()].every((m) => m <= 2400) && (await livePods(c, NS, 'free')).length === 12;
    for (let i = 0; i < 10 && !(await atTarget()); i++) await op.operator.tick('lnu');
    await waitFor(atTarget, 30_000, 'every node at or below 60% cpu');
    await waitForReady(c, NS, 'free', 12);
    // One more cycle finds nothing left to do.
    await op.operator.tick('lnu');

    const evicted = evictedPods(c, mark);
    expect(evicted).toHaveLength(6);
    expect(evicted.every((name) => name.startsWith('free-'))).toBe(true);
    const cpu = await cpuByNode(c);
    for (const node of [...onDemand, ...spot]) expect(cpu.get(node) ?? 0).toBeLessThanOrEqual(2400);
    // Every replacement is on a spot node: six free pods there, and the on-demand nodes kept the rest.
    expect((await nodesOf(c, 'free')).filter((n) => spot.includes(n))).toHaveLength(6);
    expect((await nodesOf(c, 'pinned')).every((n) => onDemand.includes(n))).toBe(true);
    for (const w of watches) expect(w.breaches, 'PDB floors').toEqual([]);
  }, 240_000);

  /** 5 nodes of 4 CPU: low-1 and low-2 with 2 pods of 400m (20%), high-1..3 with 6 (60%). */
  async function packingCluster(): Promise<Cluster> {
    const c = await cluster('high', 3);
    await createDeployment(c, { namespace: NS, name: 'fill', replicas: 18, zoneMaxSkew: null, cpu: '400m' });
    await waitForReady(c, NS, 'fill', 18);
    const low = await addZone(c, 'low', 2, '4');
    // The high nodes are cordoned while `light` is placed, so its pods go to the new nodes only (two each).
    const high = ['high-node-1', 'high-node-2', 'high-node-3'];
    const cordon = async (unschedulable: boolean): Promise<void> => {
      for (const name of high) await c.core.patchNode({ name, body: { spec: { unschedulable } } }, MERGE);
    };
    await cordon(true);
    await createDeployment(c, { namespace: NS, name: 'light', replicas: 4, zoneMaxSkew: null, cpu: '400m' });
    await waitForReady(c, NS, 'light', 4);
    await cordon(false);
    expect(await nodesOf(c, 'light')).toEqual([low[0], low[0], low[1], low[1]]);
    return c;
  }

  // Emptying a node is one set of evictions planned together (a half-emptied node saves nothing), so the set's pods
  // of one workload must fit maxPerWorkload: each low node holds two pods of `light`.
  const HNU = {
    mode: 'Evict',
    namespaces: { include: [NS] },
    eviction: { ...LIMITS, maxPerWorkload: 2 },
    strategies: { highNodeUtilization: { enabled: true, thresholds: { cpu: 30 } } },
  };

  it('HighNodeUtilization, default (LeastAllocated) scheduler: nothing is evicted, and the plan says why', async () => {
    // From 1.36 NodeResourcesBalancedAllocation scores the change a pod makes, the same 72 on every node here, so the
    // second replacement of low-node-1 is a close call: 629 there against 632 on high-node-1 while its evicted pod
    // terminates, 634 there once it is gone. These pods have terminationGracePeriodSeconds 0, so the API server
    // deletes each within its eviction and kube-scheduler may score the replacement in either view (issue 28): the
    // plan counts both, and low-node-1 is being emptied. On 1.35 (the balance with the pod) low-node-1 wins in both.
    const c = await packingCluster();
    const dir = mkdtempSync(join(tmpdir(), 'hnu-'));
    try {
      const policyFile = join(dir, 'policy.yaml');
      writeFileSync(
        policyFile,
        JSON.stringify({
          apiVersion: 'rebalancer.dev/v1alpha1',
          kind: 'RebalancePolicy',
          metadata: { name: 'hnu' },
          spec: HNU,
        }),
      );
      let out = '';
      const code = await main(['plan', '--kubeconfig', c.cp.kubeconfigPath, '--policy', policyFile, '-o', 'json'], {
        stdout: (s) => (out += s),
        stderr: () => {},
      });
      expect(code).toBe(0);
      const plan = parseYaml(out) as { evictions: unknown[]; skipped: Array<{ reason: string }> };
      expect(plan.evictions).toEqual([]);
      expect(plan.skipped.map((s) => s.reason).join('\n')).toMatch(
        /would land on low-node-[12], an underutilized node being emptied/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const mark = evictionRequests(c.cp).length;
    await createPolicy(c, 'hnu', HNU);
    // usage: Metrics on a cluster without metrics-server: the real API server answers 404 for metrics.k8s.io (the
    // shipped ClusterRole lets the operator ask; without it the answer would be 403).
    await createPolicy(c, 'hnu-usage', {
      ...HNU,
      strategies: { highNodeUtilization: { enabled: true, thresholds: { cpu: 30 }, usage: 'Metrics' } },
    });
    const op = await operator(c);
    await op.operator.tick('hnu');
    expect(evictedPods(c, mark)).toEqual([]);
    await op.operator.tick('hnu-usage');
    expect(evictedPods(c, mark)).toEqual([]);
    const degraded = conditionOf(await policyStatus(c, 'hnu-usage'), 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'MetricsUnavailable' });
    expect(degraded?.message).toContain('metrics.k8s.io/v1beta1 nodes: HTTP 404');
  }, 180_000);

  it('HighNodeUtilization, MostAllocated scheduler: both 20% nodes end empty after 4 evictions, all onto 60% nodes', async () => {
    const c = await packingCluster();
    const dir = mkdtempSync(join(tmpdir(), 'most-'));
    const config = join(dir, 'scheduler.yaml');
    writeFileSync(
      config,
      JSON.stringify({
        apiVersion: 'kubescheduler.config.k8s.io/v1',
        kind: 'KubeSchedulerConfiguration',
        profiles: [
          {
            schedulerName: 'default-scheduler',
            pluginConfig: [
              {
                name: 'NodeResourcesFit',
                args: {
                  scoringStrategy: {
                    type: 'MostAllocated',
                    resources: [
                      { name: 'cpu', weight: 1 },
                      { name: 'memory', weight: 1 },
                    ],
                  },
                },
              },
              // A bin-packing cluster turns the System default spreading off: it would steer the second node's
              // replacements onto the emptied node (hostname skew), against the packing the profile asks for.
              { name: 'PodTopologySpread', args: { defaultingType: 'List', defaultConstraints: [] } },
            ],
          },
        ],
      }),
    );
    try {
      await c.cp.restartScheduler(config);
      const mark = evictionRequests(c.cp).length;
      await createPolicy(c, 'hnu', HNU);
      const op = await operator(c, { schedulerProfile: loadSchedulerConfig(config) });
      const emptied = async (): Promise<boolean> => {
        const nodes = await nodesOf(c, 'light');
        return nodes.every((n) => n.startsWith('high-')) && nodes.length === 4;
      };
      for (let i = 0; i < 8 && !(await emptied()); i++) await op.operator.tick('hnu');
      await waitFor(emptied, 30_000, 'both low nodes empty');
      expect(evictedPods(c, mark)).toHaveLength(4);
      const cpu = await cpuByNode(c);
      expect([cpu.get('low-node-1') ?? 0, cpu.get('low-node-2') ?? 0]).toEqual([0, 0]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
