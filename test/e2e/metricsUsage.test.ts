// `usage: Metrics` end to end, on the in-process test API server (test/apiserver) with its stand-in metrics.k8s.io
// (METRICS_API): an absent metrics API (404 on every request, as when no APIService is registered) makes the policy
// Degraded with reason MetricsUnavailable and nothing planned; once the API answers, the next cycle plans by usage and
// the policy is Ready again. The real control plane has no metrics-server; the stand-in gives the 404 and the usage
// figures on demand.
import { afterEach, describe, expect, it } from 'vitest';
import { METRICS_API, type TestApiServer } from '../apiserver/index.js';
import { makeNodeMetrics, makePodMetrics } from '../builders.js';
import {
  condition,
  createDeployment,
  createPolicy,
  evictionRequests,
  livePods,
  policyStatus,
  startCluster,
  startOperator,
  waitFor,
  type OperatorHandle,
} from './harness.js';

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  await server?.close();
  server = undefined;
});

function policyEvents(s: TestApiServer, reason: string): Array<Record<string, unknown>> {
  return s.store
    .list('events', { namespace: 'default' })
    .filter((e) => (e['involvedObject'] as { kind?: string }).kind === 'RebalancePolicy' && e['reason'] === reason);
}

const STAMP = new Date().toISOString();

describe('usage: Metrics in the operator', () => {
  it('Degraded (MetricsUnavailable) while metrics.k8s.io is absent, Ready and planning by usage once it answers', async () => {
    const s = (server = await startCluster({ server: { customResources: [...METRICS_API] }, nodeCpu: '4' }));
    const absent = s.faults.failNext({ group: 'metrics.k8s.io', status: 404, count: Infinity });
    // 4 pods of 100m on one node: 10% requested, but they use 900m each (90% of the node).
    createDeployment(s, {
      namespace: 'shop',
      name: 'web',
      placement: ['zone-a-node-1', 'zone-a-node-1', 'zone-a-node-1', 'zone-a-node-1'],
      maxSkew: null,
      cpu: '100m',
    });
    await s.settle();
    createPolicy(s, 'by-usage', {
      mode: 'DryRun',
      strategies: {
        topologySpread: { enabled: false },
        lowNodeUtilization: { enabled: true, thresholds: { cpu: 20 }, targetThresholds: { cpu: 60 }, usage: 'Metrics' },
      },
      eviction: { maxPerWorkload: 4, maxPerNode: 4 },
    });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();

    await op.operator.tick('by-usage');
    const degraded = condition(s, 'by-usage', 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'MetricsUnavailable' });
    expect(degraded?.message).toContain('metrics.k8s.io/v1beta1 nodes: HTTP 404');
    expect(degraded?.message).toContain('nothing is planned on requests instead');
    expect(condition(s, 'by-usage', 'Ready')).toMatchObject({ status: 'False', reason: 'Degraded' });
    expect(evictionRequests(s)).toEqual([]);
    await waitFor(() => policyEvents(s, 'MetricsUnavailable').length === 1, 5000, 'the MetricsUnavailable Event');
    // Still absent: still Degraded, no second Event.
    await op.operator.tick('by-usage');
    expect(condition(s, 'by-usage', 'Degraded')).toMatchObject({ status: 'True', reason: 'MetricsUnavailable' });
    // A restart (or a new leader) keeps it from the status: still Degraded, still no second Event.
    await op.stop();
    operators.splice(0);
    const next = startOperator(s, { identity: 'operator-2' });
    operators.push(next);
    await next.operator.waitForSync();
    await next.operator.tick('by-usage');
    expect(condition(s, 'by-usage', 'Degraded')).toMatchObject({ status: 'True', reason: 'MetricsUnavailable' });

    // metrics-server comes up.
    absent.cancel();
    for (const node of s.store.list<{ metadata: { name: string } }>('nodes')) {
      const name = node.metadata.name;
      s.store.create(makeNodeMetrics(name, name === 'zone-a-node-1' ? '3600m' : '200m', '1Gi', STAMP) as never);
    }
    for (const pod of livePods(s, 'shop', 'web')) {
      s.store.create(makePodMetrics(pod.metadata.name ?? '', 'shop', '900m', '64Mi', STAMP) as never);
    }
    await next.operator.tick('by-usage');
    expect(condition(s, 'by-usage', 'Degraded')).toMatchObject({ status: 'False' });
    expect(condition(s, 'by-usage', 'Ready')).toMatchObject({ status: 'True' });
    // 90% used → at most 60%: two pods of 900m leave (dry run), each to an underutilized node.
    const dryRuns = evictionRequests(s);
    expect(dryRuns).toHaveLength(2);
    expect(policyStatus(s, 'by-usage').lastRunResult).toMatchObject({ result: 'Succeeded', reason: 'Completed' });
    await waitFor(() => policyEvents(s, 'Recovered').length === 1, 5000, 'the Recovered Event');
    // Events go out in order: by now any second MetricsUnavailable would be there (the restarted operator kept the
    // condition from the status, so it sent none).
    expect(policyEvents(s, 'MetricsUnavailable').map((e) => e['count'] ?? 1)).toEqual([1]);
  });
});
