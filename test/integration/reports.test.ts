// Defaults and reports a descheduler user can trust (issue 30), on a real control plane:
// - `run --once` without the CRD exits 1 with one line naming rebalancepolicies.rebalancer.dev (well within 30 s;
//   a generous bound only);
// - a policy created before the operator starts gets its first cycle at start, without any tick;
// - a cordon and an uncordon of a node evict nothing under any shipped sample (in Evict mode), the README's policy,
//   and a lowNodeUtilization-only policy on a cluster whose pods break a taint (it never evicts for taints);
// - the README's zone-balance scenario: a DryRun cycle's dry_run count equals the next Evict cycle's evicted count.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { ManagedProcess } from '../controlplane/processes.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  createDeployment,
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  MERGE,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  patchPolicy,
  policyStatus,
  repoRoot,
  sleep,
  startCluster,
  waitFor,
  waitForBudget,
  waitForReady,
  type Cluster,
} from './cluster.js';

const SAMPLES = join(repoRoot(), 'manifests/samples');

describe.skipIf(!controlPlaneAvailable())('run --once without the CRD', () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a'], nodesPerZone: 1 });
  }, 120_000);
  afterAll(async () => c?.stop());

  it('exits 1 with one line naming rebalancepolicies.rebalancer.dev', async () => {
    const proc = new ManagedProcess({
      name: 'once-no-crd',
      command: process.execPath,
      args: [join(repoRoot(), 'dist/src/cli/main.js'), 'run', '--once', `--kubeconfig=${c.cp.kubeconfigPath}`],
      dir: c.cp.dir,
      env: { ...process.env, POD_NAME: 'once-no-crd', KUBERNETES_SERVICE_HOST: '' },
    });
    const code = await Promise.race([proc.waitForExit(), sleep(60_000).then(() => 'timeout' as const)]);
    if (code === 'timeout') await proc.stop();
    const log = readFileSync(proc.logFile, 'utf8');
    expect(code, log).toBe(1);
    const errors = log.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('rebalancepolicies.rebalancer.dev');
  }, 90_000);
});

describe.skipIf(!controlPlaneAvailable())('defaults and reports on a real control plane', () => {
  let c: Cluster;
  let operatorKc: k8s.KubeConfig;
  const operators: OperatorHandle[] = [];

  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a', 'zone-b', 'zone-c'], nodesPerZone: 2, kubelet: { readyDelayMs: 0 } });
    await installManifests(c);
    operatorKc = await operatorKubeConfig(c);
  }, 180_000);

  afterEach(async () => {
    for (const op of operators.splice(0)) await op.stop();
  });
  afterAll(async () => c?.stop());

  function start(cycleAtStart = false): OperatorHandle {
    const op = startOperatorWith(operatorKc, {
      namespace: OPERATOR_NAMESPACE,
      kubeApiQps: 50,
      kubeApiBurst: 100,
      minReplanIntervalMs: 200,
      logLevel: 'info',
      cycleAtStart,
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
    return op;
  }

  /** The status fields these tests read besides PolicyStatusView's. */
  async function lastStatus(
    name: string,
  ): Promise<{ lastRunTime?: string; lastPlan?: { evictions?: number; dryRunEvictions?: number } }> {
    return await policyStatus(c, name);
  }

  async function deletePolicy(name: string): Promise<void> {
    await c.custom.deleteClusterCustomObject({
      group: 'rebalancer.dev',
      version: 'v1alpha1',
      plural: 'rebalancepolicies',
      name,
    });
  }

  it('a policy created before the operator starts has a first cycle without any tick', async () => {
    await createPolicy(c, 'early', { namespaces: { include: ['default'] } });
    const op = start(true);
    await op.operator.waitForSync();
    // Nothing ticks the manual cron, and a policy that existed before the start is no policy change: only the cycle
    // at start can write lastRunTime.
    const lastRunTime = await waitFor(async () => (await lastStatus('early')).lastRunTime, 60_000, 'lastRunTime');
    expect(Date.parse(lastRunTime)).toBeGreaterThan(Date.now() - 60_000);
    await deletePolicy('early');
  }, 120_000);

  it('cordon and uncordon evict nothing under every shipped sample, the README policy and lowNodeUtilization alone', async () => {
    await createDeployment(c, {
      namespace: 'shop',
      name: 'web',
      replicas: 6,
      labels: { 'app.kubernetes.io/part-of': 'storefront', tier: 'web' },
      pdb: { maxUnavailable: 1 },
    });
    await createDeployment(c, { namespace: 'batch', name: 'work', replicas: 6, zoneMaxSkew: null });
    await waitForReady(c, 'shop', 'web', 6);
    await waitForReady(c, 'batch', 'work', 6);
    const samples = readdirSync(SAMPLES)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => parseYaml(readFileSync(join(SAMPLES, f), 'utf8')) as { spec: Record<string, unknown> });
    const policies: Array<[string, Record<string, unknown>]> = [
      ...samples.map((s, i) => [`sample-${i}`, s.spec] as [string, Record<string, unknown>]),
      // The README's step 2 policy.
      [
        'readme',
        {
          schedule: '*/10 * * * *',
          namespaces: { include: ['shop', 'payments'] },
          strategies: { topologySpread: {} },
          eviction: { maxPerCycle: 5, maxPerWorkload: 1, minPodAge: '15m' },
        },
      ],
      ['utilization-only', { strategies: { lowNodeUtilization: {} } }],
    ];
    const node = 'zone-a-node-1';
    for (const [name, spec] of policies) {
      // In Evict mode, at once, with no window: the strictest reading of each.
      const { windows: _w, ...rest } = spec;
      await createPolicy(c, name, {
        ...rest,
        mode: 'Evict',
        eviction: { ...(rest['eviction'] as object), minPodAge: '0s' },
      });
    }
    const op = start();
    await op.operator.waitForSync();
    for (const [name] of policies) await op.operator.tick(name);
    const mark = evictionRequests(c.cp).filter((e) => !isDryRun(e)).length;
    // kubectl cordon, and the taint the node lifecycle controller adds for it (set here too, so the test does not
    // depend on how fast the controller is).
    const before = (await c.core.readNode({ name: node })).spec?.taints ?? [];
    const cordon = { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' };
    await c.core.patchNode({ name: node, body: { spec: { unschedulable: true, taints: [...before, cordon] } } }, MERGE);
    const tainted = await c.core.readNode({ name: node });
    expect(tainted.spec?.taints?.some((t) => t.key === cordon.key)).toBe(true);
    for (const [name] of policies) await op.operator.tick(name);
    await c.core.patchNode({ name: node, body: { spec: { unschedulable: false, taints: before } } }, MERGE);
    await sleep(1_000);
    for (const [name] of policies) await op.operator.tick(name);
    const real = evictionRequests(c.cp).filter((e) => !isDryRun(e));
    expect(real.slice(mark).map((e) => e.requestURI)).toEqual([]);
    for (const [name] of policies) await deletePolicy(name);
  }, 240_000);

  it("the README's zone-balance scenario: the DryRun cycle's dry_run equals the next Evict cycle's evicted", async () => {
    // 9/0/0: nine replicas land in zone-a before zones b and c have schedulable nodes of their own.
    for (const zone of ['zone-b', 'zone-c']) {
      for (const i of [1, 2])
        await c.core.patchNode({ name: `${zone}-node-${i}`, body: { spec: { unschedulable: true } } }, MERGE);
    }
    await createDeployment(c, {
      namespace: 'payments',
      name: 'api',
      replicas: 9,
      zoneMaxSkew: null,
      labels: { 'app.kubernetes.io/part-of': 'storefront', tier: 'api' },
      pdb: { maxUnavailable: 1 },
    });
    await waitForReady(c, 'payments', 'api', 9);
    for (const zone of ['zone-b', 'zone-c']) {
      for (const i of [1, 2])
        await c.core.patchNode({ name: `${zone}-node-${i}`, body: { spec: { unschedulable: false } } }, MERGE);
    }
    await addZone(c, 'zone-d', 0);
    await waitForBudget(c, 'payments', 'api', 1);
    const spec = parseYaml(readFileSync(join(SAMPLES, 'zone-balance-evict.yaml'), 'utf8')) as {
      spec: Record<string, unknown>;
    };
    const { windows: _w, timeZone: _t, ...rest } = spec.spec;
    await createPolicy(c, 'zone-balance', {
      ...rest,
      mode: 'DryRun',
      namespaces: { include: ['payments'] },
      eviction: { ...(rest['eviction'] as object), minPodAge: '0s' },
    });
    const op = start();
    await op.operator.waitForSync();
    await op.operator.tick('zone-balance');
    const dry = (await lastStatus('zone-balance')).lastPlan;
    await patchPolicy(c, 'zone-balance', { spec: { mode: 'Evict' } });
    await sleep(500);
    await op.operator.tick('zone-balance');
    const evict = (await lastStatus('zone-balance')).lastPlan;
    expect(dry?.dryRunEvictions ?? 0).toBeGreaterThan(1);
    expect(evict?.evictions).toBe(dry?.dryRunEvictions);
    await deletePolicy('zone-balance');
  }, 240_000);
});
