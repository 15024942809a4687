// The descheduler's evictor settings on the real control plane (v1.26), one policy and one cycle, where the API server
// holds the facts: which pods a PodDisruptionBudget selects (evictPodsWithoutPDB: false keeps the pod none selects)
// and what a bare pod is (evictFailedBarePods: failedPods removes the Failed bare pod; the Running bare pod, though
// past the restart threshold, stays; both have a budget, as evictPodsWithoutPDB: false keeps a pod of any phase
// without one, as the descheduler's PodsWithoutPDB protection does). The evictions are read from the API server's audit log.
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable, controlPlaneVersion } from '../controlplane/index.js';
import { convertDeschedulerPolicy } from '../../src/convert/descheduler.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  createDeployment,
  createPolicy,
  ensureNamespace,
  evictionRequests,
  installManifests,
  isDryRun,
  livePods,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  startCluster,
  waitFor,
  waitForReady,
  type Cluster,
} from './cluster.js';

const NS = 'evictor';

async function createBarePod(
  c: Cluster,
  name: string,
  more: { namespace?: string; spec?: Record<string, unknown> } = {},
): Promise<void> {
  await c.core.createNamespacedPod({
    namespace: more.namespace ?? NS,
    body: {
      metadata: { name, labels: { app: name, group: 'bare' } },
      spec: {
        ...more.spec,
        terminationGracePeriodSeconds: 0,
        containers: [{ name: 'app', image: 'registry.example/app:1.0', resources: { requests: { cpu: '100m' } } }],
      },
    },
  });
}

describe.skipIf(!controlPlaneAvailable())('evictor settings on the real control plane', () => {
  let c: Cluster;
  let operatorKc: k8s.KubeConfig;
  let op: OperatorHandle | undefined;

  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a'], nodesPerZone: 2 });
    await installManifests(c);
    operatorKc = await operatorKubeConfig(c);
  }, 120_000);

  afterAll(async () => {
    await op?.stop();
    await c?.stop();
  });

  it('keeps the pod no budget selects and the Running bare pod; removes the budgeted one and the Failed bare pod', async () => {
    await ensureNamespace(c, NS);
    await createDeployment(c, {
      namespace: NS,
      name: 'guarded',
      replicas: 2,
      zoneMaxSkew: null,
      pdb: { maxUnavailable: 1 },
    });
    await createDeployment(c, { namespace: NS, name: 'open', replicas: 2, zoneMaxSkew: null });
    // A budget over the bare pods: evictPodsWithoutPDB: false would keep them otherwise, whatever their phase.
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace: NS,
      body: { metadata: { name: 'bare' }, spec: { maxUnavailable: 1, selector: { matchLabels: { group: 'bare' } } } },
    });
    await createBarePod(c, 'bare-running');
    await createBarePod(c, 'bare-failed');
    await waitForReady(c, NS, 'guarded', 2);
    await waitForReady(c, NS, 'open', 2);
    await waitForReady(c, NS, 'bare-running', 1);
    await waitForReady(c, NS, 'bare-failed', 1);
    const [guarded] = await livePods(c, NS, 'guarded');
    const [open] = await livePods(c, NS, 'open');
    for (const pod of [guarded!, open!]) await c.kubelet.reportRestarts(NS, pod.metadata!.name!, 150);
    await c.kubelet.reportRestarts(NS, 'bare-running', 150);
    await c.kubelet.reportFailed(NS, 'bare-failed', { exitCode: 1, containerReason: 'Error' });
    await waitFor(
      async () => (await c.core.readNamespacedPod({ namespace: NS, name: 'bare-failed' })).status?.phase === 'Failed',
      30_000,
      'bare-failed to be Failed',
    );

    await createPolicy(c, 'evictor', {
      mode: 'Evict',
      namespaces: { include: [NS] },
      strategies: {
        topologySpread: { enabled: false },
        tooManyRestarts: { enabled: true, podRestartThreshold: 100 },
        failedPods: { enabled: true, minPodLifetime: '0s', excludeOwnerKinds: [] },
      },
      eviction: { minPodAge: '0s', evictPodsWithoutPDB: false, evictFailedBarePods: true, gracePeriodSeconds: 0 },
    });
    op = startOperatorWith(operatorKc, { namespace: OPERATOR_NAMESPACE });
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('evictor');
    await waitForReady(c, NS, 'guarded', 2);

    const evicted = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === NS && !isDryRun(e))
      .map((e) => [e.objectRef?.name, e.responseStatus?.code]);
    expect(evicted.sort()).toEqual(
      [
        [guarded!.metadata!.name, 201],
        ['bare-failed', 201],
      ].sort(),
    );
    expect((await livePods(c, NS, 'bare-running')).map((p) => p.metadata!.name)).toEqual(['bare-running']);
    expect((await livePods(c, NS, 'open')).map((p) => p.metadata!.name)).toContain(open!.metadata!.name);
    // The status says why the others were kept.
    const policy = (await c.custom.getClusterCustomObject({
      group: 'rebalancer.dev',
      version: 'v1alpha1',
      plural: 'rebalancepolicies',
      name: 'evictor',
    })) as { status?: { lastPlan?: { skippedReasons?: { reason: string }[] } } };
    const reasons = (policy.status?.lastPlan?.skippedReasons ?? []).map((r) => r.reason);
    expect(reasons).toEqual(
      expect.arrayContaining([
        // Grouped as the status groups them: the reason without its detail.
        'no PodDisruptionBudget selects the pod',
        'bare pod without a controller',
      ]),
    );
  }, 120_000);

  // The protection as a descheduler user writes it, through convert: the converted policy (its mode set to Evict)
  // keeps the Deployment's pods no budget selects, and replaces the budgeted Deployment's.
  it('a converted DeschedulerPolicy with podProtections.extraEnabled PodsWithoutPDB keeps the unbudgeted pods', async () => {
    const ns = 'converted';
    await ensureNamespace(c, ns);
    await createDeployment(c, {
      namespace: ns,
      name: 'budgeted',
      replicas: 2,
      zoneMaxSkew: null,
      pdb: { maxUnavailable: 1 },
    });
    await createDeployment(c, { namespace: ns, name: 'unbudgeted', replicas: 2, zoneMaxSkew: null });
    await waitForReady(c, ns, 'budgeted', 2);
    await waitForReady(c, ns, 'unbudgeted', 2);
    const [converted] = convertDeschedulerPolicy(
      {
        apiVersion: 'descheduler/v1alpha2',
        kind: 'DeschedulerPolicy',
        profiles: [
          {
            name: 'protect-unbudgeted',
            pluginConfig: [
              {
                name: 'DefaultEvictor',
                args: { minPodAge: '0s', podProtections: { extraEnabled: ['PodsWithoutPDB'] } },
              },
              { name: 'PodLifeTime', args: { maxPodLifeTimeSeconds: 1, namespaces: { include: [ns] } } },
            ],
            plugins: { deschedule: { enabled: ['PodLifeTime'] } },
          },
        ],
      },
      'policy.yaml',
    );
    expect(converted!.spec['eviction']).toMatchObject({ evictPodsWithoutPDB: false, maxPerWorkload: 1 });
    await createPolicy(c, converted!.name, { ...converted!.spec, mode: 'Evict' });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    op ??= startOperatorWith(operatorKc, { namespace: OPERATOR_NAMESPACE });
    await op.operator.waitForSync();
    const budgeted = (await livePods(c, ns, 'budgeted')).map((p) => p.metadata!.name!);
    const unbudgeted = (await livePods(c, ns, 'unbudgeted')).map((p) => p.metadata!.name!);
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick(converted!.name);
    await waitForReady(c, ns, 'budgeted', 2);
    const evicted = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === ns && !isDryRun(e))
      .map((e) => e.objectRef?.name);
    // One at a time (maxPerWorkload 1 waits for each replacement), every one the budgeted Deployment's: its pods at
    // the start, and possibly a replacement that has passed the 1 s lifetime by a later step of the run (how many
    // depends on how fast this machine brings replacements up, so the Deployment's pods are matched by name).
    expect(evicted.length, evicted.join(', ')).toBeGreaterThan(0);
    expect(
      evicted.filter((name) => !name!.startsWith('budgeted-')),
      evicted.join(', '),
    ).toEqual([]);
    expect(
      evicted.some((name) => budgeted.includes(name!)),
      evicted.join(', '),
    ).toBe(true);
    expect((await livePods(c, ns, 'unbudgeted')).map((p) => p.metadata!.name!).sort()).toEqual(unbudgeted.sort());
  }, 120_000);

  // The API server keeps spec.resourceClaims only where DRA is served (GA in 1.34; an older server with the gate off
  // drops the field, and the pod would be an ordinary one): what it stored decides the protection.
  it('keeps a running pod with DRA resourceClaims (the PodsWithResourceClaims protection); evicts its neighbour', async (ctx) => {
    if (controlPlaneVersion().minor < 34) ctx.skip();
    const ns = 'claims';
    await ensureNamespace(c, ns);
    const nodes = (await c.core.listNode()).items.map((n) => n.metadata!.name!);
    // Bound by name: no DRA driver publishes devices here, so the scheduler would leave the claim pod Pending.
    await createBarePod(c, 'with-claim', {
      namespace: ns,
      spec: { nodeName: nodes[0], resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }] },
    });
    await createBarePod(c, 'plain', { namespace: ns, spec: { nodeName: nodes[0] } });
    await waitForReady(c, ns, 'with-claim', 1);
    await waitForReady(c, ns, 'plain', 1);
    const stored = await c.core.readNamespacedPod({ namespace: ns, name: 'with-claim' });
    expect(stored.spec?.resourceClaims?.map((r) => r.name)).toEqual(['gpu']);

    await createPolicy(c, 'claims', {
      mode: 'Evict',
      namespaces: { include: [ns] },
      strategies: { topologySpread: { enabled: false }, podLifeTime: { enabled: true, maxPodLifeTime: '1s' } },
      // A bare pod has no replacement to wait for.
      eviction: { minPodAge: '0s', evictBarePods: true, gracePeriodSeconds: 0, waitForReplacement: false },
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    op ??= startOperatorWith(operatorKc, { namespace: OPERATOR_NAMESPACE });
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('claims');
    await waitFor(async () => (await livePods(c, ns, 'plain')).length === 0, 30_000, 'the plain pod to be evicted');
    const evicted = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === ns && !isDryRun(e))
      .map((e) => e.objectRef?.name);
    expect(evicted).toEqual(['plain']);
    expect((await livePods(c, ns, 'with-claim')).map((p) => p.metadata!.name)).toEqual(['with-claim']);
    const policy = (await c.custom.getClusterCustomObject({
      group: 'rebalancer.dev',
      version: 'v1alpha1',
      plural: 'rebalancepolicies',
      name: 'claims',
    })) as { status?: { lastPlan?: { skippedReasons?: { reason: string }[] } } };
    const reasons = (policy.status?.lastPlan?.skippedReasons ?? []).map((r) => r.reason);
    expect(
      reasons.some((r) => r.startsWith('pod uses DRA resourceClaims')),
      reasons.join('; '),
    ).toBe(true);
  }, 120_000);
});
