// Pacing by readiness on the real control plane (DESIGN.md: maxPerWorkload counts evictions in flight, and a cycle
// goes on as replacements become Ready until its plan is done): a 5/4/0 zone skew with a PDB of maxUnavailable 1 and
// the default limits (minPodAge 0s) is balanced by one cycle, one pod at a time — at no moment are two of the
// workload's pods in flight (evicted and not yet replaced by a Ready pod), checked from a watch.
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  createDeployment,
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  PdbFloorWatch,
  startCluster,
  waitForBudget,
  waitForReady,
  zoneCounts,
  type Cluster,
} from './cluster.js';

describe.skipIf(!controlPlaneAvailable())('pacing by readiness', () => {
  let c: Cluster;
  let operatorKc: k8s.KubeConfig;
  let op: OperatorHandle | undefined;
  let watch: PdbFloorWatch | undefined;

  beforeAll(async () => {
    // Replacements take 300 ms to become Ready, so a second eviction sent too early would show in the watch.
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 2, kubelet: { readyDelayMs: 300 } });
    await installManifests(c);
    operatorKc = await operatorKubeConfig(c);
  }, 120_000);

  afterAll(async () => {
    watch?.stop();
    await op?.stop();
    await c?.stop();
  });

  it('one cycle balances 5/4/0 with the default limits, never two pods in flight', async () => {
    await createDeployment(c, { namespace: 'paced', name: 'web', replicas: 9, pdb: { maxUnavailable: 1 } });
    await waitForReady(c, 'paced', 'web', 9);
    await addZone(c, 'zone-c', 2);
    await waitForBudget(c, 'paced', 'web', 1);
    // In flight = 9 − healthy pods: never more than one.
    watch = new PdbFloorWatch(c, 'paced', 'web', 8);
    await watch.start();
    await createPolicy(c, 'paced', { mode: 'Evict', namespaces: { include: ['paced'] } });
    op = startOperatorWith(operatorKc, { namespace: OPERATOR_NAMESPACE, kubeApiQps: 50, kubeApiBurst: 100 });
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('paced');
    await waitForReady(c, 'paced', 'web', 9);
    expect(await zoneCounts(c, 'paced', 'web')).toEqual({ 'zone-a': 3, 'zone-b': 3, 'zone-c': 3 });
    const evictions = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === 'paced' && !isDryRun(e));
    expect(evictions.map((e) => e.responseStatus?.code)).toEqual([201, 201, 201]);
    expect(watch.breaches).toEqual([]);
    expect(watch.lowest).toBe(8);
  }, 120_000);
});
