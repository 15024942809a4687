// The operator checking its predictions on a real control plane: kube-scheduler runs with a configuration the
// operator was not given (NodeResourcesFit MostAllocated, bin packing, where the operator predicts with the default
// LeastAllocated), so replacements land on the fuller node of the new zone while the plan names the empty one. Each
// landing is counted elsewhere (metric, Event on the replacement), and after the third the policy turns Degraded with
// reason PredictionsUnreliable, says so in status.landing and an Event, and evicts nothing more by prediction.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { sample, startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  conditionOf,
  createDeployment,
  createPolicy,
  eventsWhen,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  startCluster,
  waitFor,
  waitForReady,
  zoneCounts,
  type Cluster,
} from './cluster.js';

const MOST_ALLOCATED = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
`;

interface LandingView {
  recent?: string[];
  share?: string;
  lastMiss?: { pod: string; predicted: string[]; actual: string; time: string };
  unreliable?: { generation: number; message: string };
}

describe.skipIf(!controlPlaneAvailable())('predictions checked against a scheduler configured otherwise', () => {
  let c: Cluster;
  let op: OperatorHandle | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'kr-landing-'));

  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 2 });
    await installManifests(c);
  }, 180_000);

  afterAll(async () => {
    await op?.stop();
    await c?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('replacements land elsewhere; after the third miss the policy is Degraded (PredictionsUnreliable)', async () => {
    // 9 pods over zones a and b (5/4), placed by the default scheduler.
    await createDeployment(c, { namespace: 'shop', name: 'web', replicas: 9 });
    await waitForReady(c, 'shop', 'web', 9, 90_000);
    // The cluster's scheduler now bin-packs; the operator is not told.
    const file = join(dir, 'most-allocated.yaml');
    writeFileSync(file, MOST_ALLOCATED);
    await c.cp.restartScheduler(file);
    // A new zone: node 1 half full (bound by nodeName, cpu and memory alike so BalancedAllocation cannot tell the
    // two nodes apart), node 2 empty. LeastAllocated predicts node 2; MostAllocated chooses node 1.
    const [full, empty] = await addZone(c, 'zone-c', 2);
    await c.core.createNamespacedPod({
      namespace: 'shop',
      body: {
        metadata: { name: 'filler' },
        spec: {
          nodeName: full,
          terminationGracePeriodSeconds: 0,
          containers: [
            { name: 'app', image: 'registry.example/app:1.0', resources: { requests: { cpu: '4', memory: '16Gi' } } },
          ],
        },
      },
    });
    await waitFor(
      async () => (await c.core.readNamespacedPod({ name: 'filler', namespace: 'shop' })).status?.phase === 'Running',
      60_000,
      'the filler Running',
    );

    await createPolicy(c, 'pack', { mode: 'Evict', namespaces: { include: ['shop'] } });
    op = startOperatorWith(await operatorKubeConfig(c), {
      namespace: OPERATOR_NAMESPACE,
      kubeApiQps: 50,
      kubeApiBurst: 100,
      minReplanIntervalMs: 200,
    });
    const handle = op;
    onTestFailed(() => {
      console.log(
        handle.logs
          .slice(-80)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      );
    });
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('pack');

    const status = await waitFor(
      async () => {
        const obj = (await c.custom.getClusterCustomObject({
          group: 'rebalancer.dev',
          version: 'v1alpha1',
          plural: 'rebalancepolicies',
          name: 'pack',
        })) as {
          status?: {
            landing?: LandingView;
            conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
          };
        };
        const s = obj.status;
        return s?.landing?.unreliable !== undefined && conditionOf(s, 'Degraded')?.status === 'True' ? s : undefined;
      },
      30_000,
      'the policy Degraded by its predictions',
    );
    expect(conditionOf(status, 'Degraded')).toMatchObject({ reason: 'PredictionsUnreliable' });
    expect(status.landing).toMatchObject({
      recent: ['elsewhere', 'elsewhere', 'elsewhere'],
      share: '0/3',
      lastMiss: { predicted: [empty], actual: full },
      unreliable: { generation: 1 },
    });

    // Three evictions, each replacement on the full node; none after the verdict.
    const real = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => !isDryRun(e) && e.objectRef?.namespace === 'shop');
    expect(real).toHaveLength(3);
    const metrics = await op.scrape();
    expect(sample(metrics, 'rebalancer_landings_total', { policy: 'pack', outcome: 'elsewhere' })).toBe(3);
    expect(sample(metrics, 'rebalancer_landings_total', { policy: 'pack', outcome: 'target' })).toBe(0);
    const pods = await c.core.listNamespacedPod({ namespace: 'shop', labelSelector: 'app=web' });
    const onFull = pods.items.filter(
      (p: k8s.V1Pod) => p.spec?.nodeName === full && p.metadata?.deletionTimestamp === undefined,
    );
    expect(onFull).toHaveLength(3);
    expect((await zoneCounts(c, 'shop', 'web'))['zone-c']).toBe(3);

    const misses = await eventsWhen(c, 'shop', 'Pod', 'LandedElsewhere', (e) => e.length >= 3);
    expect(misses).toHaveLength(3);
    expect(
      misses.every(
        (e) => e.type === 'Warning' && e.message?.includes(`landed on ${full}, not where predicted: ${empty}`),
      ),
    ).toBe(true);
    const verdict = await eventsWhen(c, 'default', 'RebalancePolicy', 'PredictionsUnreliable', (e) => e.length > 0);
    expect(verdict).toHaveLength(1);

    // The next cycle evicts nothing by prediction.
    const before = evictionRequests(c.cp).length;
    await op.operator.tick('pack');
    expect(
      evictionRequests(c.cp)
        .slice(before)
        .filter((e) => e.objectRef?.namespace === 'shop'),
    ).toEqual([]);
  }, 300_000);
});
