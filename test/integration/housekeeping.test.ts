// The housekeeping strategies on the real control plane (kube-apiserver, kube-controller-manager, kube-scheduler
// v1.26; the stand-in kubelet reports restarts and failures), one policy with all three and one cycle:
//  - a Deployment pod whose containers restarted 150 times is evicted once (tooManyRestarts) and replaced by a Ready
//    pod, which is not evicted again;
//  - a Failed pod of a ReplicaSet is removed (failedPods), although its PodDisruptionBudget allows 0 disruptions:
//    the API server deletes a Failed pod without consulting budgets (canIgnorePDB), and the operator neither waits
//    for the budget nor for a replacement (the ReplicaSet made one when the pod failed);
//  - pods younger than maxPodLifeTime are not touched (podLifeTime).
// And, on the same API server before the operator starts: every policy `convert` makes of the descheduler chart's
// default policy and of the README's examples, read as kubectl reads YAML (1.1), is accepted by the CRD's schema and
// CEL rules and reads back as sent (a value like `off` stays a string).
import type * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { convertDeschedulerPolicy, renderConverted } from '../../src/convert/descheduler.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import { CHART_DEFAULT, README_EXAMPLES } from '../fixtures/descheduler/examples.js';
import {
  createDeployment,
  createPolicy,
  eventsWhen,
  evictionRequests,
  installManifests,
  isDryRun,
  livePods,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  startCluster,
  waitFor,
  waitForBudget,
  waitForReady,
  type Cluster,
} from './cluster.js';

const NS = 'housekeeping';

describe.skipIf(!controlPlaneAvailable())('housekeeping strategies on the real control plane', () => {
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

  it('every converted example is accepted by the real API server and reads back as sent', async () => {
    const quoting = {
      apiVersion: 'descheduler/v1alpha2',
      kind: 'DeschedulerPolicy',
      profiles: [
        {
          name: 'quoting',
          pluginConfig: [
            {
              name: 'RemovePodsViolatingNodeTaints',
              args: {
                labelSelector: {
                  matchExpressions: [
                    { key: 'rebalance', operator: 'NotIn', values: ['off', 'no', 'y', 'null', '0755', '1e3', 'true'] },
                  ],
                },
              },
            },
          ],
          plugins: { deschedule: { enabled: ['RemovePodsViolatingNodeTaints'] } },
        },
      ],
    };
    const sources = [CHART_DEFAULT, quoting, ...README_EXAMPLES.map((e) => e.policy)];
    let created = 0;
    for (const [i, source] of sources.entries()) {
      const text = renderConverted(convertDeschedulerPolicy(source, `example-${i}.yaml`, `example-${i}`), 'x');
      for (const doc of parseAllDocuments(text, { version: '1.1' })) {
        const body = doc.toJS() as k8s.KubernetesObject & { spec: Record<string, unknown> };
        const back = (await c.custom
          .createClusterCustomObject({
            group: 'rebalancer.dev',
            version: 'v1alpha1',
            plural: 'rebalancepolicies',
            body,
          })
          .catch((err: { body?: unknown }) => {
            throw new Error(`${body.metadata!.name}: ${String(err.body)}\n${text}`);
          })) as { spec: Record<string, unknown> };
        expect(back.spec, body.metadata!.name).toMatchObject(body.spec);
        parsePolicy(back, { file: body.metadata!.name! });
        created++;
      }
    }
    // Each source gives one policy per scope, at least one.
    expect(created).toBeGreaterThanOrEqual(sources.length);
    await c.custom.deleteCollectionClusterCustomObject({
      group: 'rebalancer.dev',
      version: 'v1alpha1',
      plural: 'rebalancepolicies',
    });
  }, 60_000);

  it('evicts the crash-looping pod once, removes the Failed one past its budget, leaves young pods', async () => {
    await createDeployment(c, { namespace: NS, name: 'web', replicas: 2, zoneMaxSkew: null });
    await createDeployment(c, {
      namespace: NS,
      name: 'worker',
      replicas: 1,
      zoneMaxSkew: null,
      pdb: { minAvailable: 1 },
    });
    await waitForReady(c, NS, 'web', 2);
    await waitForReady(c, NS, 'worker', 1);
    const [crashing] = await livePods(c, NS, 'web');
    const [failing] = await livePods(c, NS, 'worker');
    await c.kubelet.reportRestarts(NS, crashing!.metadata!.name!, 150);
    await c.kubelet.reportFailed(NS, failing!.metadata!.name!, { exitCode: 137, containerReason: 'OOMKilled' });
    // The ReplicaSet replaces the Failed pod; the budget counts the replacement, and allows no disruption.
    await waitFor(
      async () => (await livePods(c, NS, 'worker')).filter((p) => p.status?.phase === 'Running').length === 1,
      30_000,
      'the worker ReplicaSet to replace its Failed pod',
    );
    await waitForBudget(c, NS, 'worker', 0);

    await createPolicy(c, 'housekeeping', {
      mode: 'Evict',
      namespaces: { include: [NS] },
      strategies: {
        topologySpread: { enabled: false },
        podLifeTime: { enabled: true, maxPodLifeTime: '1h' },
        tooManyRestarts: { enabled: true, podRestartThreshold: 100 },
        failedPods: { enabled: true, minPodLifetime: '0s' },
      },
    });
    op = startOperatorWith(operatorKc, { namespace: OPERATOR_NAMESPACE });
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('housekeeping');
    await waitForReady(c, NS, 'web', 2);
    // A second cycle finds nothing: the replacement starts with no restarts, and every pod is younger than 1h.
    await op.operator.tick('housekeeping');

    const evictions = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === NS && !isDryRun(e))
      .map((e) => [e.objectRef?.name, e.responseStatus?.code]);
    expect(evictions.sort()).toEqual(
      [
        [crashing!.metadata!.name, 201],
        [failing!.metadata!.name, 201],
      ].sort(),
    );
    const web = await livePods(c, NS, 'web');
    expect(web.map((p) => p.metadata!.name)).not.toContain(crashing!.metadata!.name);
    expect(web).toHaveLength(2);
    const workers = await livePods(c, NS, 'worker');
    expect(workers.map((p) => p.status?.phase)).toEqual(['Running']);

    // The Events name the strategy and the figure behind each eviction.
    const events = await eventsWhen(c, NS, 'Pod', 'RebalanceEviction', (e) => e.length >= evictions.length);
    const messages = events.map((e) => `${e.involvedObject.name}: ${e.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(`^${crashing!.metadata!.name}: .*TooManyRestarts: 150 restarts of its containers`),
        ),
        expect.stringMatching(
          new RegExp(`^${failing!.metadata!.name}: .*FailedPods: pod Failed \\(reason OOMKilled; exit code 137\\)`),
        ),
      ]),
    );
  }, 120_000);
});
