// Leader election against the test API server: two operator replicas share a Lease and only the leader evicts; a
// graceful shutdown releases the Lease so the other replica takes over at once, and the eviction in flight completes.
// A leader killed with SIGKILL mid-run is tested on the real control plane (test/integration/leader.test.ts).
import { afterEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import type { Evictor, EvictionTarget } from '../../src/operator/eviction/evictor.js';
import {
  createDeployment,
  createPolicy,
  evictionRequests,
  skewOf,
  startCluster,
  startOperator,
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

interface Call {
  readonly identity: string;
  readonly pod: string;
  readonly at: number;
}

/** Wraps the real evictor to record which replica sent each eviction. */
function recording(identity: string, calls: Call[]) {
  return (inner: Evictor): Evictor => ({
    evict: async (target: EvictionTarget, dryRun: boolean) => {
      calls.push({ identity, pod: `${target.namespace}/${target.name}`, at: Date.now() });
      await inner.evict(target, dryRun);
    },
  });
}

function replica(s: TestApiServer, identity: string, calls: Call[]): OperatorHandle {
  const op = startOperator(s, {
    identity,
    leaderElect: true,
    wrapEvictor: recording(identity, calls),
    leaderElection: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 100 },
  });
  operators.push(op);
  return op;
}

function lease(s: TestApiServer): { holderIdentity?: string; leaseTransitions?: number } {
  return s.store.get('leases', 'kube-rebalancer', 'kube-rebalancer')?.['spec'] ?? {};
}

/** web: 9 replicas, 5 in zone-a and 4 in zone-b (3 moves to balance); api: 6 replicas, 3/3/0 (2 moves). */
async function cluster(readyDelayMs: number): Promise<TestApiServer> {
  const s = (server = await startCluster({ readyDelayMs }));
  createDeployment(s, {
    namespace: 'shop',
    name: 'web',
    placement: [
      ...['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1'],
      ...['zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1', 'zone-b-node-2'],
    ],
    pdb: { maxUnavailable: 1 },
  });
  createDeployment(s, {
    namespace: 'shop',
    name: 'api',
    placement: ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1'],
    pdb: { maxUnavailable: 1 },
  });
  await s.settle();
  s.store.create({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: 'kube-rebalancer', labels: { 'kubernetes.io/metadata.name': 'kube-rebalancer' } },
  });
  return s;
}

describe('leader election', () => {
  it('two replicas run and only the leader evicts', async () => {
    const s = await cluster(20);
    createPolicy(s, 'balance', { mode: 'Evict', eviction: { maxPerWorkload: 5, maxPerNode: 10 } });
    const calls: Call[] = [];
    const a = replica(s, 'replica-a', calls);
    const b = replica(s, 'replica-b', calls);
    await Promise.all([a.operator.waitForSync(), b.operator.waitForSync()]);
    await waitFor(() => a.operator.isLeader() || b.operator.isLeader(), 5000, 'a leader');
    const [leader, follower] = a.operator.isLeader() ? [a, b] : [b, a];
    expect(follower.operator.isLeader()).toBe(false);
    expect(lease(s).holderIdentity).toBe(leader.identity);

    // Both replicas get the tick; only the leader runs the cycle.
    await Promise.all([a.operator.tick('balance'), b.operator.tick('balance')]);
    expect(skewOf(zoneCounts(s, 'shop', 'web'))).toBeLessThanOrEqual(1);
    expect(skewOf(zoneCounts(s, 'shop', 'api'))).toBeLessThanOrEqual(1);
    expect(calls.length).toBe(5);
    expect(calls.every((c) => c.identity === leader.identity)).toBe(true);
    expect(evictionRequests(s)).toHaveLength(5);
    const leaderMetrics = await leader.scrape();
    const followerMetrics = await follower.scrape();
    expect(leaderMetrics).toMatch(/^rebalancer_leader 1$/m);
    expect(followerMetrics).toMatch(/^rebalancer_leader 0$/m);
    expect(followerMetrics).not.toMatch(/rebalancer_evictions_total\{/);
  });

  it('a graceful shutdown finishes the eviction in flight and releases the lease for a fast handover', async () => {
    const s = await cluster(20);
    createPolicy(s, 'balance', { mode: 'Evict', eviction: { maxPerWorkload: 5, maxPerNode: 10 } });
    const calls: Call[] = [];
    const a = replica(s, 'replica-a', calls);
    await a.operator.waitForSync();
    await waitFor(() => a.operator.isLeader(), 5000, 'replica-a to lead');
    const b = replica(s, 'replica-b', calls);
    await b.operator.waitForSync();
    // Every eviction takes 300 ms on the server: the shutdown arrives while one is in flight.
    s.faults.delay({ verb: 'create', resource: 'pods/eviction', ms: 300 });
    const run = a.operator.tick('balance');
    await waitFor(() => calls.length >= 1, 5000, 'an eviction in flight');
    const stoppedAt = Date.now();
    await a.stop({ releaseLease: true });
    await run;
    // The eviction in flight completed (201) and none started after the signal.
    const answered = evictionRequests(s);
    expect(answered.length).toBe(calls.length);
    expect(answered.every((r) => r.code === 201)).toBe(true);
    expect(calls.every((c) => c.at <= stoppedAt)).toBe(true);
    expect(lease(s).holderIdentity ?? '').toBe('');
    // Released: the other replica leads within a few retry periods, long before the 2 s lease would expire.
    await waitFor(() => b.operator.isLeader(), 1500, 'replica-b to take over');
  });
});
