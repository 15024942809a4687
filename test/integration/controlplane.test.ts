// The harness itself against the real control plane: the scheduler binds, the stand-in kubelet reports Ready, the
// ReplicaSet controller replaces an evicted pod, the disruption controller keeps PDB status, a node marked Unknown is
// reported Ready again, stop() leaves no process and no folder behind, and feature gates reach each component as its
// release accepts them.
import { existsSync } from 'node:fs';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable, startControlPlane, StandInKubelet, type ControlPlane } from '../controlplane/index.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.skipIf(!controlPlaneAvailable())('real control plane harness', () => {
  let cp: ControlPlane;
  let kubelet: StandInKubelet;

  beforeAll(async () => {
    cp = await startControlPlane();
    kubelet = new StandInKubelet(cp.kubeConfig(), { readyDelayMs: 100 });
    for (const zone of ['zone-a', 'zone-b', 'zone-c']) await kubelet.addNode({ name: `${zone}-1`, zone });
    kubelet.start();
  }, 120_000);

  afterAll(async () => {
    kubelet?.stop();
    await cp?.stop();
  });

  it('schedules, reports Ready, replaces an evicted pod and keeps PDB status', async () => {
    const kc = cp.kubeConfig();
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const policy = kc.makeApiClient(k8s.PolicyV1Api);
    await core.createNamespace({ body: { metadata: { name: 'smoke' } } });
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: 'smoke',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '100m' } } }],
              topologySpreadConstraints: [
                {
                  maxSkew: 1,
                  topologyKey: 'topology.kubernetes.io/zone',
                  whenUnsatisfiable: 'DoNotSchedule',
                  labelSelector: { matchLabels: labels },
                },
              ],
            },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'smoke',
      body: { metadata: { name: 'web' }, spec: { maxUnavailable: 1, selector: { matchLabels: labels } } },
    });
    const ready = async (): Promise<k8s.V1Pod[] | undefined> => {
      const pods = (await core.listNamespacedPod({ namespace: 'smoke' })).items.filter(
        (p) =>
          p.metadata?.deletionTimestamp === undefined &&
          p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      return pods.length === 3 ? pods : undefined;
    };
    const pods = await waitFor(ready, 60_000, 'three Ready pods');
    // The real scheduler honoured the zone spread: one pod per zone.
    expect(new Set(pods.map((p) => p.spec?.nodeName)).size).toBe(3);
    await waitFor(
      async () =>
        (await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'smoke' })).status
          ?.disruptionsAllowed === 1,
      30_000,
      'the disruption controller to allow 1 disruption',
    );
    const victim = pods[0]!;
    await core.createNamespacedPodEviction({
      name: victim.metadata!.name!,
      namespace: 'smoke',
      body: { metadata: { name: victim.metadata!.name!, namespace: 'smoke' } },
    });
    const after = await waitFor(
      async () => {
        const now = await ready();
        return now?.every((p) => p.metadata?.uid !== victim.metadata?.uid) ? now : undefined;
      },
      60_000,
      'a Ready replacement',
    );
    // Where the replacement lands is the scheduler's business: with 1/1/1 it may still count the terminating pod
    // (its informer can lag the ReplicaSet controller's) and place the replacement in any zone.
    expect(after.every((p) => p.spec?.nodeName !== undefined)).toBe(true);
    // The eviction is in the audit log as the admin's, answered 201.
    const evictions = cp.audit().filter((e) => e.objectRef?.subresource === 'eviction');
    expect(evictions.map((e) => [e.user.username, e.responseStatus?.code])).toEqual([['test-admin', 201]]);
    expect(kubelet.errors).toEqual([]);
  });

  it('per-pod readiness: never Ready stays Running with Ready=False, stays Pending is never reported', async () => {
    const core = cp.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'readiness' } } });
    kubelet.options.readiness = (pod) =>
      pod.metadata?.name === 'never-ready' ? 'never-ready' : pod.metadata?.name === 'pending' ? 'pending' : undefined;
    for (const name of ['never-ready', 'pending', 'ready']) {
      await core.createNamespacedPod({
        namespace: 'readiness',
        body: { metadata: { name }, spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] } },
      });
    }
    const pod = (name: string) => core.readNamespacedPod({ name, namespace: 'readiness' });
    const readyOf = (p: k8s.V1Pod) => p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    await waitFor(async () => readyOf(await pod('ready')) === 'True', 30_000, 'the ordinary pod Ready');
    const neverReady = await waitFor(
      async () => ((await pod('never-ready')).status?.phase === 'Running' ? pod('never-ready') : undefined),
      30_000,
      'never-ready Running',
    );
    expect(readyOf(neverReady)).toBe('False');
    const pending = await pod('pending');
    expect(pending.spec?.nodeName).toBeDefined();
    expect(pending.status?.phase).toBe('Pending');
    kubelet.options.readiness = undefined;
  });

  it('a node the lifecycle controller marked Unknown is reported Ready again, as a kubelet status loop does', async () => {
    const core = cp.kubeConfig().makeApiClient(k8s.CoreV1Api);
    const now = new Date();
    // What the node lifecycle controller writes when a node's Lease was not renewed within its grace period.
    await core.patchNodeStatus(
      {
        name: 'zone-b-1',
        body: {
          status: {
            conditions: [
              {
                type: 'Ready',
                status: 'Unknown',
                reason: 'NodeStatusUnknown',
                message: 'Kubelet stopped posting node status.',
                lastHeartbeatTime: now,
                lastTransitionTime: now,
              },
            ],
          },
        },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const ready = await waitFor(
      async () => {
        const node = await core.readNode({ name: 'zone-b-1' });
        const condition = node.status?.conditions?.find((c) => c.type === 'Ready');
        return condition?.status === 'True' ? condition : undefined;
      },
      20_000,
      'zone-b-1 Ready again',
    );
    expect(ready.reason).toBe('KubeletReady');
  });

  it('stop() ends every process by pid and removes the folder', async () => {
    const other = await startControlPlane({ controllerManager: false, scheduler: false });
    const pids = other.pids();
    expect(pids).toHaveLength(2);
    await other.stop();
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(other.dir)).toBe(false);
  });

  it('reports its release, and starts with gates that went GA in it (each component gets only those it offers)', async () => {
    expect((await cp.request('GET', '/version')).body).toMatchObject({ gitVersion: cp.version.gitVersion });
    // GA in 1.30 (MinDomains), 1.33 (NodeInclusionPolicy), 1.34 (MatchLabelKeys) and removed later: named as they
    // are here, a newer kube-apiserver or kube-scheduler would refuse to start.
    const gated = await startControlPlane({
      controllerManager: false,
      featureGates: {
        MinDomainsInPodTopologySpread: true,
        NodeInclusionPolicyInPodTopologySpread: true,
        MatchLabelKeysInPodTopologySpread: true,
      },
    });
    try {
      // The scheduler is up with its gates when it binds a pod (tolerating the not-ready taint: no node controller).
      const core = gated.kubeConfig().makeApiClient(k8s.CoreV1Api);
      await new StandInKubelet(gated.kubeConfig()).addNode({ name: 'gated-1', zone: 'zone-a' });
      await core.createNamespacedPod({
        namespace: 'default',
        body: {
          metadata: { name: 'probe' },
          spec: {
            containers: [{ name: 'c', image: 'registry.example/app:1' }],
            tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }],
          },
        },
      });
      const node = await waitFor(
        async () => (await core.readNamespacedPod({ namespace: 'default', name: 'probe' })).spec?.nodeName,
        60_000,
        'the gated scheduler to bind a pod',
      );
      expect(node).toBe('gated-1');
    } finally {
      await gated.stop();
    }
  });
});
