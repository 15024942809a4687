// The operator keeps its promises under faults, against the fault-injecting test API server: fenced evictions when
// the Lease cannot be renewed (counted at the server), state carried across a leader change, one workload selected
// by two policies, and metric series tied to policy lifetime and leadership.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject, TestApiServer } from '../apiserver/index.js';
import {
  createDeployment,
  createPolicy,
  evictionRequests,
  startCluster,
  startOperator,
  waitFor,
  type OperatorHandle,
} from './harness.js';

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop({ releaseLease: false });
  await server?.close();
  server = undefined;
});

function operatorNamespace(s: TestApiServer): void {
  s.store.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'kube-rebalancer', labels: { 'kubernetes.io/metadata.name': 'kube-rebalancer' } },
  });
}

function barePod(name: string, node: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'batch', labels: { app: 'bare' }, creationTimestamp: '2025-01-01T00:00:00Z' },
    spec: { nodeName: node, containers: [{ name: 'app', image: 'app:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

describe('lease starvation', () => {
  it('sends no eviction after the renew deadline: 1,000 queued at 20 QPS, renewals blocked (counted at the server)', async () => {
    const s = (server = await startCluster({ nodesPerZone: 1 }));
    operatorNamespace(s);
    s.store.create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'batch', labels: { 'kubernetes.io/metadata.name': 'batch' } },
    });
    // 1,000 bare pods on a node tainted NoSchedule: every one violates the taint, each is its own workload.
    s.store.mutate('nodes', 'zone-a-node-1', undefined, (n) => {
      (n['spec'] as Record<string, unknown>)['taints'] = [{ key: 'maintenance', value: 'true', effect: 'NoSchedule' }];
    });
    for (let i = 0; i < 1000; i++) s.store.create(barePod(`job-${String(i).padStart(4, '0')}`, 'zone-a-node-1'));
    createPolicy(s, 'drain', {
      mode: 'Evict',
      strategies: { topologySpread: { enabled: false }, podAntiAffinity: { enabled: false } },
      eviction: {
        evictBarePods: true,
        nodeFit: false,
        waitForReplacement: false,
        maxPerCycle: 1000,
        maxPerNode: 1000,
        maxPerNamespace: 1000,
      },
    });
    const renewDeadlineMs = 10_000;
    const op = startOperator(s, {
      identity: 'leader',
      leaderElect: true,
      kubeApiQps: 20,
      kubeApiBurst: 20,
      leaderElection: { leaseDurationMs: 15_000, renewDeadlineMs, retryPeriodMs: 2_000 },
    });
    operators.push(op);
    await op.operator.waitForSync();
    await waitFor(() => op.operator.isLeader(), 10_000, 'the replica to lead');
    const run = op.operator.tick('drain');
    await waitFor(() => evictionRequests(s).length >= 20, 10_000, 'evictions to flow');
    // Block every Lease write from now on; the last renewal the server accepted starts the deadline.
    s.faults.failNext({ verb: 'update', resource: 'leases', status: 500, count: Infinity });
    const renewals = s.stats.requests({ verb: ['create', 'update'], resource: 'leases' }).filter((r) => r.code < 300);
    const lastRenewal = renewals.at(-1)!.time;
    // Let the deadline pass and the Lease expire (15 s after the last renewal), with evictions still queued.
    await waitFor(() => Date.now() > lastRenewal + 16_000, 20_000, 'the Lease to expire');
    await run;
    const sent = evictionRequests(s);
    const late = sent.filter((r) => r.time > lastRenewal + renewDeadlineMs);
    expect(late).toEqual([]);
    // The queue was far from drained when the deadline came: the fence, not an empty queue, stopped it.
    expect(sent.length).toBeGreaterThan(100);
    expect(sent.length).toBeLessThan(400);
    expect(op.operator.isLeader()).toBe(false);
    expect(op.logs.some((l) => /cycle aborted \(this replica lost the leader lease\)/.test(l.msg))).toBe(true);
    expect(await op.scrape()).toMatch(/rebalancer_cycle_aborts_total\{policy="drain",reason="leadership_lost"\} 1/);
  }, 60_000);
});
