// Benchmark-sized cluster: 10,000 pods (1,000 Deployments), 1,000 PDBs, 100 nodes. Checks that the server stays
// correct and fast at that size: PDB status for every budget, list/informer sync over HTTP, evictions with
// replacements scheduled and started, and no quadratic work per request.
import { CoreV1Api, makeInformer, PolicyV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RawPod, TestApiServer } from '../apiserver/index.js';
import { startTestApiServer } from '../apiserver/index.js';
import { node, pdb, waitFor } from './fixtures.js';

let server: TestApiServer;
const timings: Record<string, number> = {};

async function timed<T>(what: string, fn: () => T | Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await fn();
  timings[what] = Math.round(performance.now() - started);
  return result;
}

beforeAll(async () => {
  server = await startTestApiServer();
  await timed('seed', async () => {
    for (let i = 0; i < 100; i++)
      server.store.create(node(`n${i}`, { 'topology.kubernetes.io/zone': `zone-${i % 3}` }));
    for (let ns = 0; ns < 10; ns++)
      server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `ns${ns}` } });
    for (let w = 0; w < 1000; w++) {
      server.controllers.replicaSets.createDeployment({
        namespace: `ns${w % 10}`,
        name: `w${w}`,
        replicas: 10,
        template: { metadata: { labels: { app: `w${w}` } }, spec: { containers: [{ name: 'c', image: 'app:1' }] } },
        placement: Array.from({ length: 10 }, (_, i) => `n${(w + i) % 100}`),
      });
      server.store.create(pdb(`w${w}`, { namespace: `ns${w % 10}`, maxUnavailable: 1, matchLabels: { app: `w${w}` } }));
    }
    await server.settle();
  });
  server.startControllers();
  await server.settle();
}, 60_000);

afterAll(async () => {
  console.log('test API server at 10k pods / 1k PDBs (ms):', timings);
  await server.close();
});

describe('at 10,000 pods and 1,000 PDBs', () => {
  it('computes every PDB status', async () => {
    const policy = server.kubeConfig().makeApiClient(PolicyV1Api);
    const list = await timed('list 1k PDBs', () => policy.listPodDisruptionBudgetForAllNamespaces());
    expect(list.items).toHaveLength(1000);
    expect(list.items.every((p) => p.status?.disruptionsAllowed === 1 && p.status.expectedPods === 10)).toBe(true);
  });

  it('syncs an informer over HTTP and evicts 100 pods, each replaced, scheduled and started', async () => {
    const core = server.kubeConfig().makeApiClient(CoreV1Api);
    const informer = makeInformer(server.kubeConfig(), '/api/v1/pods', () => core.listPodForAllNamespaces());
    await timed('informer list+watch 10k pods', () => informer.start());
    expect(informer.list()).toHaveLength(10_000);
    // One pod of each of 100 workloads (maxUnavailable 1 allows one disruption per workload).
    const byApp = new Map<string, RawPod>();
    for (const p of server.store.list<RawPod>('pods')) byApp.set(p.metadata.labels!.app!, p);
    const victims = [...byApp.values()].slice(0, 100);
    const mark = server.stats.mark();
    await timed('100 evictions', async () => {
      for (const p of victims) {
        const name = p.metadata.name!;
        await core.createNamespacedPodEviction({
          name,
          namespace: p.metadata.namespace!,
          body: { metadata: { name } },
        });
      }
    });
    expect(server.stats.count({ verb: 'create', resource: 'pods/eviction', code: 201 }, mark)).toBe(100);
    await timed('replacements ready', () =>
      waitFor(() => server.controllers.kubelet.started.length === 100 && server.store.count('pods') === 10_000, 20_000),
    );
    await waitFor(
      () => informer.list().length === 10_000 && informer.list().every((p) => p.status?.phase === 'Running'),
      20_000,
    );
    expect(server.controllers.scheduler.placements).toHaveLength(100);
    await informer.stop();
  });
});
