// The simulated controllers: ReplicaSet replacement, scheduling through a pluggable function, kubelet readiness,
// driven by real evictions over HTTP and, for timing, by a manual clock.
import { CoreV1Api, PolicyV1Api, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import type { RawPod, TestApiServer } from '../apiserver/index.js';
import { isPodReady, ManualClock, startTestApiServer } from '../apiserver/index.js';
import { node, pdb, waitFor } from './fixtures.js';

let server: TestApiServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx:1.27', resources: { requests: { cpu: '100m' } } }] },
};

function webPods(s: TestApiServer): RawPod[] {
  return s.store.list<RawPod>('pods', { namespace: 'default', labelSelector: 'app=web' });
}

describe('ReplicaSet + scheduler + kubelet', () => {
  it('replaces an evicted pod with a new Pending pod that gets bound and becomes Ready', async () => {
    const s = (server = await startTestApiServer());
    s.store.createAll([node('n1'), node('n2'), node('n3')]);
    const workload = s.controllers.replicaSets.createDeployment({
      namespace: 'default',
      name: 'web',
      replicas: 3,
      template,
      placement: ['n1', 'n1', 'n2'],
    });
    s.startControllers();
    const policy = s.kubeConfig().makeApiClient(PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: pdb('web', { maxUnavailable: 1, matchLabels: { app: 'web' } }) as V1PodDisruptionBudget,
    });
    await s.settle();
    const victim = webPods(s).find((p) => p.spec.nodeName === 'n1')!;
    expect(victim.metadata.name).toMatch(new RegExp(`^${workload.replicaSetName}-[bcdfghjklmnpqrstvwxz2456789]{5}$`));
    expect(victim.metadata.labels?.['pod-template-hash']).toBe(workload.podTemplateHash);
    expect(victim.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'ReplicaSet',
      name: workload.replicaSetName,
      controller: true,
    });

    const originals = new Set(webPods(s).map((p) => p.metadata.uid));
    const added: RawPod[] = [];
    s.store.onChange((change) => {
      if (change.type === 'ADDED' && change.resource === 'pods') added.push(change.object as RawPod);
    });
    const core = s.kubeConfig().makeApiClient(CoreV1Api);
    await core.createNamespacedPodEviction({
      name: victim.metadata.name!,
      namespace: 'default',
      body: { metadata: { name: victim.metadata.name!, namespace: 'default' } },
    });
    const replacement = await waitFor(() => webPods(s).find((p) => !originals.has(p.metadata.uid)));
    // It was created Pending and unscheduled, with a name generated from the ReplicaSet's.
    expect(added).toHaveLength(1);
    expect(added[0]?.spec.nodeName).toBeUndefined();
    expect(added[0]?.status?.phase).toBe('Pending');
    expect(added[0]?.metadata.generateName).toBe(`${workload.replicaSetName}-`);
    // The least-loaded node (n3) gets the replacement, which the kubelet starts.
    await waitFor(() => isPodReady(s.store.get<RawPod>('pods', replacement.metadata.name!)!));
    const placed = s.store.get<RawPod>('pods', replacement.metadata.name!)!;
    expect(placed.spec.nodeName).toBe('n3');
    expect(placed.status?.phase).toBe('Running');
    expect(s.controllers.scheduler.placements.map((p) => p.node)).toEqual(['n3']);
    await s.settle();
    expect(webPods(s)).toHaveLength(3);
    const rs = s.store.get('replicasets', workload.replicaSetName);
    expect(rs?.status).toMatchObject({ replicas: 3, readyReplicas: 3 });
    const budget = await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'default' });
    expect(budget.status).toMatchObject({
      expectedPods: 3,
      currentHealthy: 3,
      desiredHealthy: 2,
      disruptionsAllowed: 1,
    });
  });

  it('binds through a pluggable scheduling function and marks pods it cannot place Unschedulable', async () => {
    const s = (server = await startTestApiServer({
      scheduler: {
        schedule: (pod, state) =>
          state.nodes.find((n) => n.metadata.labels?.zone === pod.metadata.labels?.zone)?.metadata.name,
      },
    }));
    s.store.createAll([node('a1', { zone: 'a' }), node('b1', { zone: 'b' })]);
    s.startControllers();
    const core = s.kubeConfig().makeApiClient(CoreV1Api);
    for (const [name, zone] of [
      ['in-b', 'b'],
      ['in-c', 'c'],
    ]) {
      await core.createNamespacedPod({
        namespace: 'default',
        body: { metadata: { name, labels: { zone: zone! } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      });
    }
    await waitFor(() => isPodReady(s.store.get<RawPod>('pods', 'in-b')!));
    expect(s.store.get<RawPod>('pods', 'in-b')?.spec.nodeName).toBe('b1');
    await waitFor(() =>
      s.store.get<RawPod>('pods', 'in-c')?.status?.conditions?.some((c) => c.reason === 'Unschedulable'),
    );
    expect(s.controllers.scheduler.unschedulablePods()).toEqual(['default/in-c']);
    // A new node that fits makes the scheduler retry.
    s.store.create(node('c1', { zone: 'c' }));
    await waitFor(() => s.store.get<RawPod>('pods', 'in-c')?.spec.nodeName === 'c1');
  });

  it('keeps pods matching the stayPending predicate Pending after binding', async () => {
    const s = (server = await startTestApiServer({
      kubelet: { stayPending: (pod) => pod.metadata.labels?.broken === 'true' },
    }));
    s.store.create(node('n1'));
    s.controllers.replicaSets.createDeployment({
      namespace: 'default',
      name: 'broken',
      replicas: 2,
      template: { metadata: { labels: { app: 'broken', broken: 'true' } }, spec: template.spec },
    });
    s.startControllers();
    await waitFor(() => s.controllers.scheduler.placements.length === 2);
    await s.settle();
    const pods = s.store.list<RawPod>('pods', { labelSelector: 'app=broken' });
    expect(pods.map((p) => [p.spec.nodeName, p.status?.phase])).toEqual([
      ['n1', 'Pending'],
      ['n1', 'Pending'],
    ]);
  });

  it('follows scale changes of the Deployment', async () => {
    const s = (server = await startTestApiServer());
    s.store.create(node('n1'));
    s.controllers.replicaSets.createDeployment({
      namespace: 'default',
      name: 'web',
      replicas: 2,
      template,
      placement: ['n1', 'n1'],
    });
    s.startControllers();
    s.controllers.replicaSets.scale('default', 'web', 4);
    await waitFor(() => webPods(s).filter(isPodReady).length === 4);
    s.controllers.replicaSets.scale('default', 'web', 1);
    await waitFor(() => webPods(s).length === 1);
    expect(s.store.get('deployments', 'web')?.status).toMatchObject({ replicas: 1, readyReplicas: 1 });
  });

  it('uses the injected clock for kubelet readiness delays', async () => {
    const clock = new ManualClock();
    const s = (server = await startTestApiServer({ clock, kubelet: { readyDelayMs: 1000 } }));
    s.store.create(node('n1'));
    s.controllers.replicaSets.createDeployment({ namespace: 'default', name: 'web', replicas: 1, template });
    s.startControllers();
    clock.advance(0);
    const [created] = webPods(s);
    expect(created?.spec.nodeName).toBe('n1');
    expect(isPodReady(created!)).toBe(false);
    clock.advance(999);
    expect(isPodReady(webPods(s)[0]!)).toBe(false);
    clock.advance(1);
    expect(isPodReady(webPods(s)[0]!)).toBe(true);
    expect(s.controllers.kubelet.started).toHaveLength(1);
  });
});
