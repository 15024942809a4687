// The operator keeps its promises under faults, against the fault-injecting test API server: fenced evictions when
// the Lease cannot be renewed (counted at the server), state carried across a leader change, one workload selected
// by two policies, and metric series tied to policy lifetime and leadership.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject, RawPod, TestApiServer } from '../apiserver/index.js';
import {
  condition,
  createDeployment,
  createPolicy,
  evictionRequests,
  policyStatus,
  sample,
  startCluster,
  startOperator,
  updatePolicySpec,
  waitFor,
  type OperatorHandle,
} from './harness.js';
import { projectScheduler } from './scheduling.js';

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
      // What a policy names is what runs: the taint rule alone.
      strategies: { nodeTaints: {} },
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

function replica(s: TestApiServer, identity: string): OperatorHandle {
  const op = startOperator(s, {
    identity,
    leaderElect: true,
    leaderElection: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 100 },
  });
  operators.push(op);
  return op;
}

const SKEWED = ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1'];

describe('a leader change', () => {
  it('keeps a Degraded pause, a cooldown and the totals, 3 handovers in a row, with no eviction they forbid', async () => {
    const s = (server = await startCluster());
    operatorNamespace(s);
    // shop/web: replacements never schedule (the pause); ops/api: replacements land back out of zone-c (the loop).
    createDeployment(s, { namespace: 'shop', name: 'web', placement: SKEWED, pdb: { maxUnavailable: 1 } });
    createDeployment(s, { namespace: 'ops', name: 'api', placement: SKEWED, pdb: { maxUnavailable: 1 } });
    await s.settle();
    const place = projectScheduler();
    s.controllers.scheduler.setScheduleFunction((pod, state) =>
      pod.metadata.namespace === 'shop'
        ? undefined
        : place(pod, {
            ...state,
            nodes: state.nodes.filter((n) => n.metadata.labels?.['topology.kubernetes.io/zone'] !== 'zone-c'),
          }),
    );
    createPolicy(s, 'paused', {
      mode: 'Evict',
      namespaces: { include: ['shop'] },
      eviction: { maxPerWorkload: 3, replacementTimeout: '1s' },
    });
    createPolicy(s, 'cool', {
      mode: 'Evict',
      namespaces: { include: ['ops'] },
      eviction: { maxPerWorkload: 3, cooldown: '1h' },
    });

    let leader = replica(s, 'replica-0');
    await leader.operator.waitForSync();
    await waitFor(() => leader.operator.isLeader(), 5000, 'replica-0 to lead');
    // A follower from the start: its watch cache saw these policies before they had any state.
    let follower = replica(s, 'replica-1');
    await follower.operator.waitForSync();

    await leader.operator.tick('paused');
    await leader.operator.tick('cool');
    expect(
      evictionRequests(s)
        .map((r) => r.namespace)
        .sort(),
    ).toEqual(['ops', 'shop']);
    await waitFor(() => policyStatus(s, 'cool').cooldowns?.length === 1, 5000, 'the cooldown in the status');
    const before = {
      paused: structuredClone(policyStatus(s, 'paused')),
      cool: structuredClone(policyStatus(s, 'cool')),
    };
    expect(before.paused.pause).toMatchObject({ reason: 'ReplacementPending', workload: 'shop/Deployment/web' });
    expect(before.paused.totals).toEqual({ evicted: 1, failed: 0 });
    expect(before.cool.cooldowns?.[0]).toMatchObject({ workload: 'ops/Deployment/api' });
    expect(before.cool.totals).toEqual({ evicted: 1, failed: 0 });

    for (let handover = 2; handover <= 4; handover++) {
      // kill -9: no release, no status write on the way out.
      await leader.stop({ releaseLease: false });
      operators.splice(operators.indexOf(leader), 1);
      await waitFor(() => follower.operator.isLeader(), 8000, `handover ${handover - 1}`);
      leader = follower;
      follower = replica(s, `replica-${handover}`);
      await follower.operator.waitForSync();
      // The new leader rewrites the statuses after rebuilding its state from them: nothing is lost.
      await waitFor(
        () => leader.logs.some((l) => String(l.msg).startsWith('leader state rebuilt')),
        5000,
        'the rebuild',
      );
      await leader.operator.tick('paused');
      await leader.operator.tick('cool');
      expect(evictionRequests(s)).toHaveLength(2);
      expect(condition(s, 'paused', 'Degraded')).toMatchObject({ status: 'True', reason: 'ReplacementPending' });
      expect(policyStatus(s, 'paused').pause).toEqual(before.paused.pause);
      expect(policyStatus(s, 'cool').cooldowns).toEqual(before.cool.cooldowns);
      expect(policyStatus(s, 'paused').totals).toEqual({ evicted: 1, failed: 0 });
      expect(policyStatus(s, 'cool').totals).toEqual({ evicted: 1, failed: 0 });
      expect(leader.logs.some((l) => String(l.msg).includes('policy paused (Degraded); cycle skipped'))).toBe(true);
    }
  }, 60_000);
});

describe('two policies selecting one Deployment', () => {
  it('never have two of its pods in flight with maxPerWorkload 1 and no PDB', async () => {
    // Slow readiness keeps each eviction in flight (evicted, replacement not Ready) for a while.
    const s = (server = await startCluster({ readyDelayMs: 300 }));
    createDeployment(s, {
      namespace: 'shop',
      name: 'web',
      placement: ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1'],
    });
    await s.settle();
    // Two policies that want different pods of web: one restores the zone spread (a pod in zone-a), the other
    // moves the pod off zone-b-node-1, which has just been tainted NoSchedule.
    s.store.mutate('nodes', 'zone-b-node-1', undefined, (n) => {
      (n['spec'] as Record<string, unknown>)['taints'] = [{ key: 'maintenance', value: 'true', effect: 'NoSchedule' }];
    });
    const only = (strategy: string) => ({
      topologySpread: { enabled: strategy === 'topologySpread' },
      podAntiAffinity: { enabled: false },
      nodeAffinity: { enabled: false },
      nodeTaints: { enabled: strategy === 'nodeTaints' },
    });
    createPolicy(s, 'first', { mode: 'Evict', strategies: only('topologySpread'), eviction: { maxPerWorkload: 1 } });
    createPolicy(s, 'second', { mode: 'Evict', strategies: only('nodeTaints'), eviction: { maxPerWorkload: 1 } });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    // In flight = evicted and its replacement not yet Ready, sampled from the server's pods on every change.
    let maxInFlight = 0;
    const readyPods = (): number =>
      s.store
        .list<RawPod>('pods', { namespace: 'shop' })
        .filter(
          (p) =>
            p.metadata.deletionTimestamp === undefined &&
            p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true,
        ).length;
    const unsubscribe = s.store.onChange(() => {
      maxInFlight = Math.max(maxInFlight, 6 - readyPods());
    });
    // Each run evicts at most one of its pods (maxPerWorkload 1); both policies run at once, three times.
    for (let round = 0; round < 3; round++) await Promise.all([op.operator.tick('first'), op.operator.tick('second')]);
    unsubscribe();
    const evicted = evictionRequests(s).filter((r) => r.code === 201);
    expect(evicted.length).toBeGreaterThanOrEqual(2);
    expect(maxInFlight).toBe(1);
  });
});

describe('metric series', () => {
  it('a policy deleted mid-run leaves no series on any replica, and a replica that stops leading drops its skew', async () => {
    // Slow readiness keeps the run pacing when the policy is deleted.
    const s = (server = await startCluster({ readyDelayMs: 400 }));
    operatorNamespace(s);
    createDeployment(s, { namespace: 'shop', name: 'web', placement: SKEWED, pdb: { maxUnavailable: 1 } });
    createDeployment(s, { namespace: 'ops', name: 'api', placement: SKEWED, pdb: { maxUnavailable: 1 } });
    await s.settle();
    createPolicy(s, 'doomed', { mode: 'Evict', namespaces: { include: ['shop'] }, eviction: { maxPerWorkload: 3 } });
    createPolicy(s, 'kept', { mode: 'DryRun', namespaces: { include: ['ops'] } });
    const a = replica(s, 'replica-a');
    await a.operator.waitForSync();
    await waitFor(() => a.operator.isLeader(), 5000, 'replica-a to lead');
    const b = replica(s, 'replica-b');
    await b.operator.waitForSync();

    await a.operator.tick('kept');
    const run = a.operator.tick('doomed');
    await waitFor(() => evictionRequests(s).length >= 1, 5000, 'the first eviction');
    s.store.delete('rebalancepolicies', 'doomed');
    await run;
    await waitFor(() => a.operator.scheduleOf('doomed') === undefined, 5000, 'the deletion to be seen');
    for (const op of [a, b]) expect(await op.scrape()).not.toMatch(/policy="doomed"|workload="Deployment\/web"/);
    expect(a.logs.some((l) => /cycle aborted \(the policy was deleted\)/.test(String(l.msg)))).toBe(true);
    expect(await a.scrape()).toMatch(/rebalancer_topology_skew\{[^}]*workload="Deployment\/api"/);

    // a cannot renew its Lease any more: it steps down, b takes over and runs.
    s.faults.failNext({ verb: 'update', resource: 'leases', userAgent: '(replica-a)', status: 500, count: Infinity });
    await waitFor(() => !a.operator.isLeader(), 5000, 'replica-a to step down');
    await waitFor(() => b.operator.isLeader(), 8000, 'replica-b to lead');
    await b.operator.tick('kept');
    const follower = await a.scrape();
    expect(follower).not.toMatch(/^rebalancer_topology_(max_)?skew\{/m);
    expect(follower).not.toMatch(/^rebalancer_violations\{/m);
    expect(follower).toMatch(/^rebalancer_leader 0$/m);
    const leader = await b.scrape();
    expect(leader).toMatch(/rebalancer_topology_skew\{[^}]*workload="Deployment\/api"/);
    expect(leader).not.toMatch(/policy="doomed"/);
  }, 30_000);
});

describe('aborted cycles', () => {
  it('a spec edit aborts the running cycle as spec_changed: not a failure, in the log, the metrics and the status', async () => {
    // Slow readiness keeps the run pacing when the spec changes.
    const s = (server = await startCluster({ readyDelayMs: 1500 }));
    createDeployment(s, { namespace: 'shop', name: 'web', placement: SKEWED, pdb: { maxUnavailable: 1 } });
    await s.settle();
    createPolicy(s, 'edited', { mode: 'Evict', eviction: { maxPerWorkload: 3 } });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    const run = op.operator.tick('edited');
    await waitFor(() => evictionRequests(s).length >= 1, 5000, 'the first eviction');
    updatePolicySpec(s, 'edited', (spec) => {
      (spec['eviction'] as Record<string, unknown>)['maxPerNode'] = 5;
    });
    await run;
    expect(op.logs.some((l) => /^cycle aborted \(the spec changed\)/.test(String(l.msg)))).toBe(true);
    const text = await op.scrape();
    expect(sample(text, 'rebalancer_cycle_aborts_total', { policy: 'edited', reason: 'spec_changed' })).toBe(1);
    expect(sample(text, 'rebalancer_cycles_total', { policy: 'edited', result: 'aborted' })).toBe(1);
    expect(sample(text, 'rebalancer_cycles_total', { policy: 'edited', result: 'failed' })).toBeUndefined();
    await waitFor(
      () => policyStatus(s, 'edited').lastRunResult?.reason === 'SpecChanged',
      5000,
      'the abort in the status',
    );
    expect(policyStatus(s, 'edited').lastRunResult).toEqual({ result: 'Aborted', reason: 'SpecChanged' });
    expect(condition(s, 'edited', 'Degraded')).toMatchObject({ status: 'False' });
    // The eviction it made counts.
    expect(policyStatus(s, 'edited').totals).toEqual({ evicted: 1, failed: 0 });
  });

  it('readiness turns false as soon as shutdown begins, while the running cycle still finishes', async () => {
    const s = (server = await startCluster({ readyDelayMs: 500 }));
    createDeployment(s, { namespace: 'shop', name: 'web', placement: SKEWED, pdb: { maxUnavailable: 1 } });
    await s.settle();
    createPolicy(s, 'p', { mode: 'Evict', eviction: { maxPerWorkload: 3 } });
    const op = startOperator(s);
    await op.operator.waitForSync();
    expect(op.operator.ready()).toBe(true);
    const run = op.operator.tick('p');
    await waitFor(() => evictionRequests(s).length >= 1, 5000, 'the first eviction');
    const stopping = op.stop();
    expect(op.operator.ready()).toBe(false);
    await Promise.all([stopping, run]);
    expect(op.logs.some((l) => /^cycle aborted \(the operator is shutting down\)/.test(String(l.msg)))).toBe(true);
  });
});
