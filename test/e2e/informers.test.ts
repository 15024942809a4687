// The watch caches against the test API server: objects are converted on arrival (the cache holds the compact
// model, no managedFields or raw spec), a 410 relists, a non-410 watch error or a reset connection (which stop
// client-node 1.4's ListWatch) is survived by the supervisor, a failing list delays readiness until it succeeds.
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject, TestApiServer } from '../apiserver/index.js';
import { COMPACT_POD_FIELDS } from '../builders.js';
import { createDeployment, startCluster, startOperator, waitFor, type OperatorHandle } from './harness.js';

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  await server?.close();
  server = undefined;
});

function barePod(name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      labels: { app: 'bare' },
      managedFields: [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(2000) },
    },
    spec: {
      nodeName: 'zone-a-node-1',
      containers: [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: 'b' }] }],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

async function cluster(): Promise<TestApiServer> {
  const s = (server = await startCluster());
  createDeployment(s, { namespace: 'shop', name: 'web', placement: ['zone-a-node-1', 'zone-b-node-1'] });
  await s.settle();
  return s;
}

function restarts(op: OperatorHandle): number {
  return op.logs.filter((l) => l.msg === 'watch or list failed; restarting the informer').length;
}

describe('watch caches', () => {
  it('hold the compact model, converted on arrival', async () => {
    const s = await cluster();
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    s.store.create(barePod('bare-1'));
    const pod = await waitFor(() => op.operator.cache.pod('shop', 'bare-1'), 5000, 'the pod in the cache');
    expect(Object.keys(pod).sort()).toEqual([...COMPACT_POD_FIELDS].sort());
    expect(JSON.stringify(pod)).not.toContain('managedFields');
    expect(JSON.stringify(pod)).not.toContain('last-applied');
    expect(pod).toMatchObject({ nodeName: 'zone-a-node-1', phase: 'Running', ready: true, workload: { kind: 'Pod' } });
    // Listed objects (client-node model objects with Date timestamps) convert the same way.
    const listed = op.operator.cache.workloadPods('shop/Deployment/web');
    expect(listed).toHaveLength(2);
    expect(listed.every((p) => p.createdAt > 0 && p.ready)).toBe(true);
    expect(op.operator.cache.counts()).toMatchObject({ nodes: 6, pods: 3, namespaces: 5, priorityClasses: 2 });
  });

  it('relist after 410 Gone, noticing what changed while the watch was down', async () => {
    const s = await cluster();
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    s.store.create(barePod('bare-1'));
    await waitFor(() => op.operator.cache.pod('shop', 'bare-1'), 5000, 'bare-1');
    const mark = s.stats.mark();
    // The next pods watch is answered with an ERROR 410 event; the current one is closed now.
    s.faults.expireNextWatch({ resource: 'pods' });
    s.faults.dropWatches({ resource: 'pods' }, 'end');
    s.store.delete('pods', 'bare-1', 'shop');
    s.store.create(barePod('bare-2'));
    await waitFor(() => op.operator.cache.pod('shop', 'bare-2'), 5000, 'bare-2 after the relist');
    expect(op.operator.cache.pod('shop', 'bare-1')).toBeUndefined();
    expect(s.stats.count({ verb: 'list', resource: 'pods' }, mark)).toBe(1);
    expect(restarts(op)).toBe(0);
  });

  it('survive a watch that fails with 500 or a reset connection: the supervisor restarts the informer', async () => {
    const s = await cluster();
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    s.faults.failNext({ verb: 'watch', resource: 'pods', status: 500, count: 2 });
    s.faults.dropWatches({ resource: 'pods' }, 'end');
    s.store.create(barePod('after-500'));
    await waitFor(() => op.operator.cache.pod('shop', 'after-500'), 5000, 'a pod created after the failures');
    expect(restarts(op)).toBeGreaterThanOrEqual(1);

    const before = restarts(op);
    s.faults.dropWatches({ resource: 'nodes' }, 'destroy');
    s.store.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'late-node', labels: { 'topology.kubernetes.io/zone': 'zone-c' } },
      status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '4', memory: '8Gi', pods: '10' } },
    });
    await waitFor(() => op.operator.cache.node('late-node'), 5000, 'a node created after the reset');
    expect(restarts(op)).toBeGreaterThan(before);
    await waitFor(
      () => s.openWatches({ resource: 'nodes' }) === 1 && s.openWatches({ resource: 'pods' }) === 1,
      5000,
      'one watch each',
    );
  });

  it('keep readiness false until every cache has synced, even when the first list fails', async () => {
    const s = await cluster();
    s.faults.failNext({ verb: 'list', resource: 'poddisruptionbudgets', status: 503, count: 3 });
    const op = startOperator(s, { informerBackoff: { initialMs: 150, maxMs: 300 } });
    operators.push(op);
    const readyz = async (): Promise<number> => {
      const { createServer } = await import('node:http');
      const listener = createServer(op.operator.httpHandler);
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const port = (listener.address() as { port: number }).port;
      const response = await fetch(`http://127.0.0.1:${port}/readyz`);
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      return response.status;
    };
    await waitFor(
      () => s.stats.count({ verb: 'list', resource: 'poddisruptionbudgets', code: 503 }) >= 1,
      5000,
      'a failed list',
    );
    expect(await readyz()).toBe(503);
    expect(op.operator.ready()).toBe(false);
    await op.operator.waitForSync();
    expect(await readyz()).toBe(200);
    expect(s.stats.count({ verb: 'list', resource: 'poddisruptionbudgets', code: 503 })).toBe(3);
  });

  it('list in pages of 500, converted page by page, and start over when a continue token expired', async () => {
    const s = await cluster();
    for (let i = 0; i < 1200; i++) s.store.create(barePod(`bare-${String(i).padStart(4, '0')}`));
    // The first continued page of pods is answered 410 Expired, as after an etcd compaction.
    s.faults.failNext({ verb: 'list', resource: 'pods', continued: true, status: 410, message: 'continue expired' });
    const mark = s.stats.mark();
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    const lists = s.stats.requests({ verb: 'list', resource: 'pods' }, mark);
    // page 1, page 2 (410), then page 1, 2, 3 again.
    expect(lists.map((r) => [r.code, /[?&]limit=500(&|$)/.test(r.url), /[?&]continue=/.test(r.url)])).toEqual([
      [200, true, false],
      [410, true, true],
      [200, true, false],
      [200, true, true],
      [200, true, true],
    ]);
    expect(op.operator.cache.counts().pods).toBe(1202);
    expect(op.logs.some((l) => l.msg === 'list continue token expired; listing again from the start')).toBe(true);
  });
});
