// The Eviction subresource with the API server's PDB rules, and the disruption controller keeping PDB status.
import { CoreV1Api, PolicyV1Api, type V1Eviction, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RawPdb, RawPod, StoreChange, TestApiServer } from '../apiserver/index.js';
import { ManualClock, startTestApiServer } from '../apiserver/index.js';
import { apiError, node, pdb, pod, waitFor } from './fixtures.js';

let server: TestApiServer;
let core: CoreV1Api;
let policy: PolicyV1Api;

async function boot(options: Parameters<typeof startTestApiServer>[0] = {}): Promise<void> {
  server = await startTestApiServer(options);
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  policy = server.kubeConfig().makeApiClient(PolicyV1Api);
  server.store.createAll([node('n1'), node('n2'), node('n3')]);
  server.store.createAll([
    pod('web-1', { labels: { app: 'web' }, nodeName: 'n1' }),
    pod('web-2', { labels: { app: 'web' }, nodeName: 'n2' }),
    pod('web-3', { labels: { app: 'web' }, nodeName: 'n3' }),
  ]);
}

beforeEach(async () => {
  await boot();
});

afterEach(async () => {
  await server.close();
});

function eviction(name: string, dryRun?: string[]): V1Eviction {
  return {
    apiVersion: 'policy/v1',
    kind: 'Eviction',
    metadata: { name, namespace: 'default' },
    ...(dryRun ? { deleteOptions: { dryRun } } : {}),
  };
}

function evict(name: string, options: { dryRunQuery?: boolean; dryRunBody?: boolean } = {}): Promise<V1Eviction> {
  return core.createNamespacedPodEviction({
    name,
    namespace: 'default',
    body: eviction(name, options.dryRunBody ? ['All'] : undefined),
    ...(options.dryRunQuery ? { dryRun: 'All' } : {}),
  });
}

async function createPdb(name: string, options: Parameters<typeof pdb>[1]): Promise<V1PodDisruptionBudget> {
  await policy.createNamespacedPodDisruptionBudget({
    namespace: 'default',
    body: pdb(name, options) as V1PodDisruptionBudget,
  });
  await server.settle();
  return policy.readNamespacedPodDisruptionBudget({ name, namespace: 'default' });
}

describe('disruption controller', () => {
  it.each([
    [{ minAvailable: 2 }, { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 }],
    [{ minAvailable: 3 }, { expectedPods: 3, desiredHealthy: 3, currentHealthy: 3, disruptionsAllowed: 0 }],
    [{ maxUnavailable: 1 }, { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 }],
    [{ minAvailable: '50%' }, { expectedPods: 3, desiredHealthy: 2, currentHealthy: 3, disruptionsAllowed: 1 }],
    [{ maxUnavailable: '34%' }, { expectedPods: 3, desiredHealthy: 1, currentHealthy: 3, disruptionsAllowed: 2 }],
  ])('computes status for %j on 3 ready ReplicaSet pods', async (spec, expected) => {
    // Percentages and maxUnavailable scale off the controller: give the pods a ReplicaSet of 3.
    const workload = server.controllers.replicaSets.createDeployment({
      namespace: 'default',
      name: 'api',
      replicas: 3,
      template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'api:1' }] } },
      placement: ['n1', 'n2', 'n3'],
    });
    const status = (await createPdb('api', { ...spec, matchLabels: { app: 'api' } })).status;
    expect(status).toMatchObject({ ...expected, observedGeneration: 1 });
    expect(status?.conditions?.[0]).toMatchObject({
      type: 'DisruptionAllowed',
      status: expected.disruptionsAllowed > 0 ? 'True' : 'False',
      reason: expected.disruptionsAllowed > 0 ? 'SufficientPods' : 'InsufficientPods',
    });
    expect(workload.replicaSetName).toMatch(/^api-[4-9bcdf]+$/);
  });

  it('fails safe (0 allowed, SyncFailed, observedGeneration not advanced) when a percentage covers pods without a known controller', async () => {
    server.store.create(
      pod('orphan', {
        labels: { app: 'orphan' },
        nodeName: 'n1',
        ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u1', controller: true }],
      }),
    );
    const status = (await createPdb('orphan', { minAvailable: '50%', matchLabels: { app: 'orphan' } })).status;
    expect(status?.disruptionsAllowed).toBe(0);
    expect(status?.observedGeneration).toBeUndefined();
    expect(status?.conditions?.[0]).toMatchObject({
      reason: 'SyncFailed',
      message: 'found no controllers for pod "orphan"',
    });
  });
});

describe('disruption controller timing (manual clock)', () => {
  it('keeps a pod recorded in disruptedPods out of currentHealthy for 2 minutes, then counts it again', async () => {
    await server.close();
    const clock = new ManualClock(Date.parse('2025-01-01T00:00:00Z'));
    server = await startTestApiServer({ clock });
    server.store.createAll([
      node('n1'),
      pod('web-1', { labels: { app: 'web' }, nodeName: 'n1' }),
      pod('web-2', { labels: { app: 'web' }, nodeName: 'n1' }),
    ]);
    server.store.create(pdb('web', { minAvailable: 1, matchLabels: { app: 'web' } }));
    clock.advance(0);
    const status = (): RawPdb['status'] => server.store.get<RawPdb>('poddisruptionbudgets', 'web')?.status;
    expect(status()).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1 });
    // What an eviction whose pod deletion never happened leaves behind.
    server.store.mutate<RawPdb>('poddisruptionbudgets', 'web', 'default', (p) => {
      p.status = { ...p.status!, disruptionsAllowed: 0, disruptedPods: { 'web-1': '2025-01-01T00:00:00Z' } };
    });
    clock.advance(0);
    expect(status()).toMatchObject({
      currentHealthy: 1,
      disruptionsAllowed: 0,
      disruptedPods: { 'web-1': '2025-01-01T00:00:00Z' },
    });
    clock.advance(119_000);
    expect(status()?.currentHealthy).toBe(1);
    clock.advance(2_000);
    expect(status()).toMatchObject({ currentHealthy: 2, disruptionsAllowed: 1 });
    expect(status()?.disruptedPods).toBeUndefined();
  });
});

describe('eviction', () => {
  it('succeeds with 201, records the pod in disruptedPods, decrements the budget and deletes the pod', async () => {
    await createPdb('web', { minAvailable: 2, matchLabels: { app: 'web' } });
    const changes: StoreChange[] = [];
    const unsubscribe = server.store.onChange((c) => changes.push(c));
    const result = await evict('web-1');
    unsubscribe();
    expect(result).toMatchObject({ kind: 'Status', apiVersion: 'v1' });
    expect(server.store.get('pods', 'web-1')).toBeUndefined();
    // The eviction's own writes, in order: PDB status, pod DisruptionTarget condition, pod deletion.
    const [budget, condition, deletion] = changes;
    expect(budget?.resource).toBe('poddisruptionbudgets');
    const budgetStatus = (budget?.object as RawPdb).status!;
    expect(budgetStatus.disruptionsAllowed).toBe(0);
    expect(Object.keys(budgetStatus.disruptedPods ?? {})).toEqual(['web-1']);
    expect(condition?.type).toBe('MODIFIED');
    expect((condition?.object as RawPod).status?.conditions).toContainEqual(
      expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI' }),
    );
    expect(deletion).toMatchObject({ type: 'DELETED', resource: 'pods' });
    // Then the disruption controller recomputes from the pods that remain.
    await server.settle();
    const after = await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'default' });
    expect(after.status).toMatchObject({
      currentHealthy: 2,
      desiredHealthy: 2,
      expectedPods: 2,
      disruptionsAllowed: 0,
    });
    expect(after.status?.disruptedPods).toBeUndefined();
  });

  it('answers 429 TooManyRequests with a DisruptionBudget cause when no disruption is allowed', async () => {
    await createPdb('web', { minAvailable: 3, matchLabels: { app: 'web' } });
    const err = await apiError(evict('web-1'));
    expect(err.code).toBe(429);
    expect(err.status).toMatchObject({
      reason: 'TooManyRequests',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          { reason: 'DisruptionBudget', message: 'The disruption budget web needs 3 healthy pods and has 3 currently' },
        ],
      },
    });
    expect(err.headers['retry-after']).toBeUndefined();
    expect(server.store.get('pods', 'web-1')).toBeDefined();
  });

  it('answers 500 when more than one PDB selects the pod', async () => {
    await createPdb('web', { minAvailable: 1, matchLabels: { app: 'web' } });
    await createPdb('everything', { maxUnavailable: 1, matchLabels: {} });
    const err = await apiError(evict('web-1'));
    expect(err.code).toBe(500);
    expect(err.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
      code: 500,
    });
  });

  it.each([
    ['query', { dryRunQuery: true }],
    ['deleteOptions', { dryRunBody: true }],
  ])('with dryRun in the %s answers as a real eviction but changes nothing', async (_where, options) => {
    await createPdb('web', { minAvailable: 2, matchLabels: { app: 'web' } });
    const rv = server.store.resourceVersion();
    await evict('web-1', options);
    expect(server.store.resourceVersion()).toBe(rv);
    expect(server.store.get('pods', 'web-1')).toBeDefined();
    expect(server.store.get<RawPdb>('poddisruptionbudgets', 'web')?.status?.disruptionsAllowed).toBe(1);
  });

  it('with dryRun still answers 429 when the budget is exhausted', async () => {
    await createPdb('web', { minAvailable: 3, matchLabels: { app: 'web' } });
    const err = await apiError(evict('web-1', { dryRunQuery: true }));
    expect(err.code).toBe(429);
  });

  it('answers 404 for a pod that does not exist', async () => {
    const err = await apiError(evict('nope'));
    expect(err.code).toBe(404);
    expect(err.status.message).toBe('pods "nope" not found');
  });

  it('answers 400 when the body names another pod', async () => {
    const err = await apiError(
      core.createNamespacedPodEviction({ name: 'web-1', namespace: 'default', body: eviction('web-2') }),
    );
    expect(err.code).toBe(400);
  });

  it('deletes Pending, finished and terminating pods without consulting the budget', async () => {
    server.store.createAll([
      pod('pending', { labels: { app: 'web' } }),
      pod('done', { labels: { app: 'web' }, nodeName: 'n1', phase: 'Succeeded' }),
    ]);
    await createPdb('web', { minAvailable: 5, matchLabels: { app: 'web' } });
    await evict('pending');
    await evict('done');
    expect(server.store.get('pods', 'pending')).toBeUndefined();
    expect(server.store.get('pods', 'done')).toBeUndefined();
    expect(server.store.get<RawPdb>('poddisruptionbudgets', 'web')?.status?.disruptedPods).toBeUndefined();
  });

  it('deletes an unready pod without decrementing when the healthy budget is met (IfHealthyBudget), else 429', async () => {
    server.store.create(pod('web-4', { labels: { app: 'web' }, nodeName: 'n1', ready: false }));
    await createPdb('web', { minAvailable: 3, matchLabels: { app: 'web' } });
    await evict('web-4');
    expect(server.store.get('pods', 'web-4')).toBeUndefined();
    server.store.mutate<RawPod>('pods', 'web-3', 'default', (p) => {
      p.status!.conditions = p.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c));
    });
    await server.settle();
    expect((await apiError(evict('web-3'))).code).toBe(429);
  });

  it('deletes an unready pod regardless of the budget with unhealthyPodEvictionPolicy AlwaysAllow', async () => {
    server.store.mutate<RawPod>('pods', 'web-3', 'default', (p) => {
      p.status!.conditions = p.status!.conditions!.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c));
    });
    await createPdb('web', { minAvailable: 3, matchLabels: { app: 'web' }, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    await evict('web-3');
    expect(server.store.get('pods', 'web-3')).toBeUndefined();
  });

  it('answers 429 with Retry-After 10 while the PDB status lags its generation', async () => {
    await createPdb('web', { minAvailable: 1, matchLabels: { app: 'web' } });
    server.controllers.disruption.stop();
    await policy.patchNamespacedPodDisruptionBudget({
      name: 'web',
      namespace: 'default',
      body: [{ op: 'replace', path: '/spec/minAvailable', value: 2 }],
    });
    const err = await apiError(evict('web-1'));
    expect(err.code).toBe(429);
    expect(err.headers['retry-after']).toBe('10');
    expect(err.status.details?.causes?.[0]?.message).toBe(
      'The disruption budget web is still being processed by the server.',
    );
  });

  it('leaves an evicted pod Terminating when a termination delay is configured, and a second eviction succeeds', async () => {
    await server.close();
    await boot({ podTerminationDelayMs: 200 });
    await createPdb('web', { minAvailable: 2, matchLabels: { app: 'web' } });
    await evict('web-1');
    const terminating = server.store.get<RawPod>('pods', 'web-1');
    expect(terminating?.metadata.deletionTimestamp).toBeDefined();
    await server.settle();
    // A terminating pod no longer counts as healthy.
    expect(server.store.get<RawPdb>('poddisruptionbudgets', 'web')?.status?.currentHealthy).toBe(2);
    await evict('web-1');
    await waitFor(() => server.store.get('pods', 'web-1') === undefined, 2000);
  });

  it('logs eviction requests with their time and answer code', async () => {
    await createPdb('web', { minAvailable: 2, matchLabels: { app: 'web' } });
    await evict('web-1');
    await apiError(evict('web-2'));
    const calls = server.stats.requests({ verb: 'create', resource: 'pods/eviction' });
    expect(calls.map((c) => [c.name, c.code])).toEqual([
      ['web-1', 201],
      ['web-2', 429],
    ]);
    expect(calls[1]!.time).toBeGreaterThanOrEqual(calls[0]!.time);
    expect(server.stats.counters()['create /pods/eviction']).toBe(2);
  });
});
