// End to end against the test API server: a skewed Deployment is reported by a DryRun policy without any pod
// being evicted, then balanced once the policy is switched to Evict; a budget at 0 blocks everything; the planner
// reads only the caches (no List during a cycle); the skew gauges are scraped from /metrics.
import { afterEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import {
  condition,
  createDeployment,
  createPolicy,
  evictionRequests,
  policyStatus,
  sample,
  skewOf,
  startCluster,
  startOperator,
  updatePolicySpec,
  waitFor,
  zoneCounts,
  type OperatorHandle,
} from './harness.js';

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  await server?.close();
  server = undefined;
});

/** 3 zones × 2 nodes; `web` has 6 replicas, 3 in zone-a and 3 in zone-b: skew 3, maxSkew 1. */
async function skewedCluster(pdb: { maxUnavailable: number } | { minAvailable: number } = { maxUnavailable: 1 }) {
  const s = (server = await startCluster());
  createDeployment(s, {
    namespace: 'shop',
    name: 'web',
    placement: ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1'],
    pdb,
  });
  await s.settle();
  return s;
}

describe('a DryRun → Evict policy balances a skewed Deployment', () => {
  it('reports without evicting in DryRun, then balances within 3 cycles in Evict mode', async () => {
    const s = await skewedCluster();
    createPolicy(s, 'balance', { mode: 'DryRun' });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    expect(zoneCounts(s, 'shop', 'web')).toEqual({ 'zone-a': 3, 'zone-b': 3, 'zone-c': 0 });

    const podsBefore = new Set(s.store.list('pods', { namespace: 'shop' }).map((p) => p.metadata.uid));
    const mark = s.stats.mark();
    await op.operator.tick('balance');
    // Dry run: the eviction went to the server (which checked the budget) and nothing was evicted.
    const dry = evictionRequests(s, mark);
    expect(dry.length).toBe(1);
    expect(dry.every((r) => r.url.includes('dryRun=All') && r.code === 201)).toBe(true);
    expect(new Set(s.store.list('pods', { namespace: 'shop' }).map((p) => p.metadata.uid))).toEqual(podsBefore);
    // No List during the cycle: the plan came from the watch caches.
    expect(s.stats.count({ verb: 'list' }, mark)).toBe(0);
    const dryStatus = policyStatus(s, 'balance');
    expect(dryStatus.lastPlan).toMatchObject({ evictions: 1, maxSkewObserved: 3 });
    expect(dryStatus.totals).toEqual({ evicted: 0, failed: 0 });
    expect(condition(s, 'balance', 'Ready')?.status).toBe('True');
    const metrics = await op.scrape();
    expect(sample(metrics, 'rebalancer_evictions_total', { policy: 'balance', result: 'dry_run' })).toBe(1);
    expect(
      sample(metrics, 'rebalancer_topology_skew', {
        namespace: 'shop',
        workload: 'Deployment/web',
        topology_key: 'topology.kubernetes.io/zone',
      }),
    ).toBe(3);

    updatePolicySpec(s, 'balance', (spec) => {
      spec['mode'] = 'Evict';
    });
    await waitFor(() => op.operator.cache.policy('balance')?.policy?.spec.mode === 'Evict', 5000, 'the edit to arrive');
    let cycles = 0;
    while (skewOf(zoneCounts(s, 'shop', 'web')) > 1 && cycles < 3) {
      await op.operator.tick('balance');
      cycles++;
    }
    const counts = zoneCounts(s, 'shop', 'web');
    expect(skewOf(counts)).toBeLessThanOrEqual(1);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(6);
    // The minimum: two pods had to move to zone-c.
    const evictions = evictionRequests(s, mark).filter((r) => !r.url.includes('dryRun'));
    expect(evictions).toHaveLength(2);
    expect(evictions.every((r) => r.code === 201)).toBe(true);
    const status = policyStatus(s, 'balance');
    expect(status.totals).toEqual({ evicted: 2, failed: 0 });
    expect(status.observedGeneration).toBe(2);
    const after = await op.scrape();
    expect(
      sample(after, 'rebalancer_topology_skew', {
        namespace: 'shop',
        workload: 'Deployment/web',
        topology_key: 'topology.kubernetes.io/zone',
      }),
    ).toBe(0);
    expect(
      sample(after, 'rebalancer_evictions_total', { policy: 'balance', strategy: 'TopologySpread', result: 'evicted' }),
    ).toBe(2);
  });
});

describe('PodDisruptionBudgets', () => {
  it('a budget at 0 blocks: nothing is evicted and the blocked pods are reported', async () => {
    const s = await skewedCluster({ minAvailable: 6 });
    createPolicy(s, 'balance', { mode: 'Evict', eviction: { maxPerWorkload: 3 } });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    await waitFor(() => s.store.get('poddisruptionbudgets', 'web', 'shop')?.['status'], 5000, 'the budget status');
    const mark = s.stats.mark();
    await op.operator.tick('balance');
    await op.operator.tick('balance');
    expect(evictionRequests(s, mark)).toHaveLength(0);
    expect(zoneCounts(s, 'shop', 'web')).toEqual({ 'zone-a': 3, 'zone-b': 3, 'zone-c': 0 });
    const status = policyStatus(s, 'balance');
    expect(status.totals).toEqual({ evicted: 0, failed: 0 });
    expect(status.lastPlan?.evictions).toBe(0);
    expect(status.lastPlan?.skipped).toBeGreaterThan(0);
    const metrics = await op.scrape();
    expect(sample(metrics, 'rebalancer_evictions_total', { policy: 'balance', result: 'evicted' })).toBeUndefined();
    expect(sample(metrics, 'rebalancer_plan_evictions', { policy: 'balance' })).toBe(0);
  });
});
