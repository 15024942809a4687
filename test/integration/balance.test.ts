// End to end against the real control plane: the shipped manifests installed, the operator running in-process with
// the shipped ServiceAccount's token (TokenRequest), the real scheduler placing every replacement, the real
// ReplicaSet controller replacing every evicted pod, the real disruption controller keeping PDB status. Evictions
// and refusals are counted from the API server's audit log, PDB floors are checked from a watch.
// Each scenario has its own namespace and a policy that includes only it; a scenario that needs an empty zone adds
// a new one, so the scenarios do not depend on their order.
import type * as k8s from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { sample, startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  conditionOf,
  createDeployment,
  createPolicy,
  eventsWhen,
  evictionRequests,
  forbidden,
  installManifests,
  isDryRun,
  MERGE,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  patchPolicy,
  PdbFloorWatch,
  policyStatus,
  relabelScenario,
  skewOf,
  startCluster,
  taintScenario,
  waitFor,
  waitForBudget,
  waitForReady,
  zoneCounts,
  type Cluster,
} from './cluster.js';

const SKEW = 'rebalancer_topology_skew';

describe.skipIf(!controlPlaneAvailable())('balancing on a real control plane', () => {
  let c: Cluster;
  let operatorKc: k8s.KubeConfig;
  const operators: OperatorHandle[] = [];
  const watches: PdbFloorWatch[] = [];

  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 2 });
    await installManifests(c);
    operatorKc = await operatorKubeConfig(c);
  }, 120_000);

  afterEach(async () => {
    for (const w of watches.splice(0)) w.stop();
    for (const op of operators.splice(0)) await op.stop();
  });

  afterAll(async () => {
    await c?.stop();
  });

  function startOperator(): OperatorHandle {
    const op = startOperatorWith(operatorKc, {
      namespace: OPERATOR_NAMESPACE,
      kubeApiQps: 50,
      kubeApiBurst: 100,
      minReplanIntervalMs: 200,
    });
    operators.push(op);
    // On failure, the operator's own account of what it did is the first thing to read.
    onTestFailed(() => {
      console.log(
        op.logs
          .slice(-60)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      );
    });
    return op;
  }

  async function evictionsSince(mark: number, policyNamespace: string) {
    return evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === policyNamespace);
  }

  /** Ticks the policy until `done` holds (each tick is a whole cycle: plan, evict, wait for replacements). */
  async function tickUntil(op: OperatorHandle, policy: string, done: () => Promise<boolean>, maxCycles: number) {
    let cycles = 0;
    while (!(await done())) {
      if (cycles === maxCycles) throw new Error(`not done after ${maxCycles} cycles of ${policy}`);
      await op.operator.tick(policy);
      cycles++;
    }
    return cycles;
  }

  it('DryRun reports a 5/4/0 zone skew without evicting; Evict balances it with the fewest evictions', async () => {
    await createDeployment(c, { namespace: 'shop', name: 'web', replicas: 9, pdb: { maxUnavailable: 1 } });
    await waitForReady(c, 'shop', 'web', 9);
    expect(Object.values(await zoneCounts(c, 'shop', 'web')).sort()).toEqual([4, 5]);
    await addZone(c, 'zone-c', 2);
    await waitFor(
      async () =>
        (await c.policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'shop' })).status
          ?.disruptionsAllowed === 1,
      30_000,
      'the budget to allow 1',
    );
    const floor = new PdbFloorWatch(c, 'shop', 'web', 8);
    watches.push(floor);
    await floor.start();

    await createPolicy(c, 'balance', { mode: 'DryRun', namespaces: { include: ['shop'] } });
    const op = startOperator();
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('balance');
    const dry = await evictionsSince(mark, 'shop');
    expect(dry.length).toBeGreaterThan(0);
    expect(dry.every((e) => isDryRun(e) && e.responseStatus?.code === 201)).toBe(true);
    expect(await zoneCounts(c, 'shop', 'web')).toMatchObject({ 'zone-c': 0 });
    const dryStatus = await policyStatus(c, 'balance');
    expect(dryStatus.lastPlan).toMatchObject({ maxSkewObserved: 5 });
    expect(dryStatus.totals).toEqual({ evicted: 0, failed: 0 });
    expect(conditionOf(dryStatus, 'Ready')?.status).toBe('True');
    const zoneSkew = { namespace: 'shop', workload: 'Deployment/web', topology_key: 'topology.kubernetes.io/zone' };
    expect(sample(await op.scrape(), SKEW, zoneSkew)).toBe(5);
    expect(sample(await op.scrape(), 'rebalancer_evictions_total', { policy: 'balance', result: 'dry_run' })).toBe(
      dry.length,
    );

    await patchPolicy(c, 'balance', { spec: { mode: 'Evict' } });
    await waitFor(() => op.operator.cache.policy('balance')?.policy?.spec.mode === 'Evict', 10_000, 'the edit');
    const evictMark = evictionRequests(c.cp).length;
    await tickUntil(op, 'balance', async () => skewOf(await zoneCounts(c, 'shop', 'web')) <= 1, 6);
    await waitForReady(c, 'shop', 'web', 9);

    expect(await zoneCounts(c, 'shop', 'web')).toEqual({ 'zone-a': 3, 'zone-b': 3, 'zone-c': 3 });
    const real = (await evictionsSince(evictMark, 'shop')).filter((e) => !isDryRun(e));
    // 5/4/0 → 3/3/3: two pods leave the fullest zone, one the next: three is the minimum.
    expect(real).toHaveLength(3);
    expect(real.map((e) => e.responseStatus?.code)).toEqual([201, 201, 201]);
    expect(new Set(real.map((e) => e.objectRef?.name)).size).toBe(3);
    expect(floor.breaches).toEqual([]);
    expect(floor.lowest).toBe(8);
    expect(floor.events).toBeGreaterThan(0);

    const status = await policyStatus(c, 'balance');
    expect(status.totals).toEqual({ evicted: 3, failed: 0 });
    expect(status.observedGeneration).toBe(2);
    const metrics = await op.scrape();
    expect(sample(metrics, SKEW, zoneSkew)).toBe(0);
    expect(sample(metrics, 'rebalancer_evictions_total', { policy: 'balance', result: 'evicted' })).toBe(3);
    expect(sample(metrics, 'rebalancer_leader')).toBe(1);
    const podEvents = await eventsWhen(c, 'shop', 'Pod', 'RebalanceEviction', (e) => e.length >= real.length);
    expect(podEvents.map((e) => e.involvedObject.name).sort()).toEqual(real.map((e) => e.objectRef?.name).sort());
    expect(podEvents.every((e) => e.message?.includes('RebalancePolicy balance'))).toBe(true);
    const completed = await eventsWhen(c, 'default', 'RebalancePolicy', 'RebalanceCompleted', (e) => e.length > 0);
    expect(completed.length).toBeGreaterThan(0);
    expect(forbidden(c.cp)).toEqual([]);
  }, 240_000);

  it('a PodDisruptionBudget that allows nothing: zero eviction requests', async () => {
    await createDeployment(c, { namespace: 'frozen', name: 'ledger', replicas: 6, pdb: { minAvailable: 6 } });
    await waitForReady(c, 'frozen', 'ledger', 6);
    await addZone(c, 'zone-d', 1);
    expect(skewOf(await zoneCounts(c, 'frozen', 'ledger'))).toBe(2);
    await waitFor(
      async () =>
        (await c.policy.readNamespacedPodDisruptionBudget({ name: 'ledger', namespace: 'frozen' })).status
          ?.currentHealthy === 6,
      30_000,
      'the budget status',
    );
    await createPolicy(c, 'frozen', {
      mode: 'Evict',
      namespaces: { include: ['frozen'] },
      eviction: { maxPerWorkload: 3 },
    });
    const op = startOperator();
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('frozen');
    await op.operator.tick('frozen');
    expect(await evictionsSince(mark, 'frozen')).toEqual([]);
    const status = await policyStatus(c, 'frozen');
    expect(status.totals).toEqual({ evicted: 0, failed: 0 });
    expect(status.lastPlan?.skipped).toBeGreaterThan(0);
  }, 180_000);

  it('node affinity broken by a relabel: every pod on the node moves, none more, no eviction error', async () => {
    const scenario = await relabelScenario(c, 'affinity', ['zone-b-node-1', 'zone-b-node-2']);
    expect(new Set(scenario.pods.map((p) => p.spec?.nodeName))).toEqual(new Set(['zone-a-node-1']));
    await scenario.change();

    await createPolicy(c, 'affinity', {
      mode: 'Evict',
      namespaces: { include: ['affinity'] },
      // What a policy names is what runs: the rule this case exercises.
      strategies: { nodeAffinity: {} },
      eviction: { maxPerWorkload: 2, maxPerNode: 4 },
    });
    const op = startOperator();
    await op.operator.waitForSync();
    await waitFor(() => op.operator.cache.node('zone-a-node-1')?.labels['disk'] === 'hdd', 10_000, 'the relabel');
    const mark = evictionRequests(c.cp).length;
    const onOldNode = async () =>
      (await c.core.listNamespacedPod({ namespace: 'affinity' })).items.every(
        (p) => p.spec?.nodeName !== 'zone-a-node-1',
      );
    await tickUntil(op, 'affinity', onOldNode, 6);
    await waitForReady(c, 'affinity', 'db', 4);
    const evictions = await evictionsSince(mark, 'affinity');
    expect(evictions).toHaveLength(4);
    expect(evictions.every((e) => e.responseStatus?.code === 201)).toBe(true);
    const after = await waitForReady(c, 'affinity', 'db', 4);
    expect(after.every((p) => ['zone-b-node-1', 'zone-b-node-2'].includes(p.spec?.nodeName ?? ''))).toBe(true);
    await op.operator.tick('affinity');
    expect((await policyStatus(c, 'affinity')).lastPlan?.violations).toBe(0);
  }, 180_000);

  it('a NoSchedule taint its pods do not tolerate: they move, no eviction error', async () => {
    await (await taintScenario(c, 'taint')).change();
    await createPolicy(c, 'taint', {
      mode: 'Evict',
      namespaces: { include: ['taint'] },
      // What a policy names is what runs: the rule this case exercises.
      strategies: { nodeTaints: {} },
      eviction: { maxPerWorkload: 3, maxPerNode: 3 },
    });
    const op = startOperator();
    await op.operator.waitForSync();
    await waitFor(() => (op.operator.cache.node('zone-a-node-2')?.taints.length ?? 0) > 0, 10_000, 'the taint');
    const mark = evictionRequests(c.cp).length;
    const moved = async () =>
      (await c.core.listNamespacedPod({ namespace: 'taint' })).items.every((p) => p.spec?.nodeName === 'zone-b-node-2');
    await tickUntil(op, 'taint', moved, 4);
    await waitForReady(c, 'taint', 'cache', 3);
    const evictions = await evictionsSince(mark, 'taint');
    expect(evictions).toHaveLength(3);
    expect(evictions.every((e) => e.responseStatus?.code === 201)).toBe(true);
  }, 180_000);

  it('anti-affinity broken by a label change: one eviction clears it', async () => {
    await c.core.patchNode({ name: 'zone-a-node-1', body: { metadata: { labels: { pool: 'anti' } } } }, MERGE);
    await createDeployment(c, {
      namespace: 'anti',
      name: 'front',
      replicas: 1,
      zoneMaxSkew: null,
      nodeSelector: { pool: 'anti' },
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { tier: 'db' } } },
          ],
        },
      },
    });
    await createDeployment(c, {
      namespace: 'anti',
      name: 'store',
      replicas: 1,
      zoneMaxSkew: null,
      nodeSelector: { pool: 'anti' },
    });
    await waitForReady(c, 'anti', 'front', 1);
    const [store] = await waitForReady(c, 'anti', 'store', 1);
    await c.core.patchNode({ name: 'zone-b-node-1', body: { metadata: { labels: { pool: 'anti' } } } }, MERGE);
    // The label change: the store pod becomes a `tier=db` pod on the front pod's node.
    await c.core.patchNamespacedPod(
      { name: store!.metadata!.name!, namespace: 'anti', body: { metadata: { labels: { tier: 'db' } } } },
      MERGE,
    );
    // What a policy names is what runs: the rule this case exercises.
    await createPolicy(c, 'anti', {
      mode: 'Evict',
      namespaces: { include: ['anti'] },
      strategies: { podAntiAffinity: {} },
    });
    const op = startOperator();
    await op.operator.waitForSync();
    await waitFor(
      () => op.operator.cache.pod('anti', store!.metadata!.name!)?.labels['tier'] === 'db',
      10_000,
      'the label change',
    );
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('anti');
    await waitForReady(c, 'anti', 'front', 1);
    await waitForReady(c, 'anti', 'store', 1);
    const evictions = await evictionsSince(mark, 'anti');
    expect(evictions).toHaveLength(1);
    expect(evictions[0]!.responseStatus?.code).toBe(201);
    await op.operator.tick('anti');
    expect((await policyStatus(c, 'anti')).lastPlan?.violations).toBe(0);
    expect((await evictionsSince(mark, 'anti')).length).toBe(1);
  }, 180_000);

  it('a replacement that stays Pending: Degraded, an Event, and the policy pauses', async () => {
    await createDeployment(c, { namespace: 'stuck', name: 'api', replicas: 6, pdb: { maxUnavailable: 1 } });
    await waitForReady(c, 'stuck', 'api', 6);
    // From now on the kubelet never starts this namespace's pods: replacements stay Pending.
    c.kubelet.options.readiness = (pod) => (pod.metadata?.namespace === 'stuck' ? 'pending' : undefined);
    await addZone(c, 'zone-e', 1);
    await waitForBudget(c, 'stuck', 'api', 1);
    await createPolicy(c, 'stuck', {
      mode: 'Evict',
      namespaces: { include: ['stuck'] },
      eviction: { replacementTimeout: '3s' },
    });
    const op = startOperator();
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('stuck');
    const status = await waitFor(
      async () => {
        const s = await policyStatus(c, 'stuck');
        return conditionOf(s, 'Degraded')?.status === 'True' ? s : undefined;
      },
      20_000,
      'Degraded',
    );
    expect(conditionOf(status, 'Degraded')?.reason).toBe('ReplacementPending');
    expect((await evictionsSince(mark, 'stuck')).length).toBe(1);
    const pending = await eventsWhen(c, 'default', 'RebalancePolicy', 'ReplacementPending', (e) => e.length > 0);
    expect(pending.length).toBeGreaterThan(0);
    // Paused: the next cycles evict nothing while the replacement is Pending.
    await op.operator.tick('stuck');
    await op.operator.tick('stuck');
    expect((await evictionsSince(mark, 'stuck')).length).toBe(1);
    c.kubelet.options.readiness = undefined;
  }, 180_000);
});
