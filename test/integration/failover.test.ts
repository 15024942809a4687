// The record survives a lost-and-regained Lease (issue 31), on the real control plane: two replicas of
// `kube-rebalancer run --leader-elect`; the leader is SIGKILLed after its first eviction, the survivor takes the
// Lease and evicts, and then kube-apiserver is restarted under it, so it may lose the Lease before it could write
// its status and win it back afterwards. At the end the policy's status.totals.evicted must count every eviction
// the API server answered 201, less at most the one the SIGKILLed leader made before its write. Runs as many times
// as FAILOVER_RUNS says (default 1; the acceptance run uses 5).
import * as k8s from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import {
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  policyStatus,
  skewedByNewZone,
  skewOf,
  startCluster,
  waitFor,
  zoneCounts,
  type Cluster,
  type PdbFloorWatch,
} from './cluster.js';
import { QUICK_HANDOVER, startOperatorProcess, type OperatorProcess } from './operatorProcess.js';

const APPS = ['app-a', 'app-b', 'app-c', 'app-d'];
const RUNS = Math.max(1, Number(process.env['FAILOVER_RUNS'] ?? 1));

describe.skipIf(!controlPlaneAvailable())('leader killed, then kube-apiserver restarted under the survivor', () => {
  let c: Cluster;
  const replicas: OperatorProcess[] = [];
  const watches: PdbFloorWatch[] = [];

  beforeEach(async () => {
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 2, kubelet: { readyDelayMs: 1000 } });
    await installManifests(c);
  }, 120_000);

  afterEach(async () => {
    for (const w of watches.splice(0)) w.stop();
    for (const r of replicas.splice(0)) await r.proc.stop({ graceMs: 5_000 });
    await c?.stop();
  });

  it.each(Array.from({ length: RUNS }, (_, i) => i + 1))(
    'run %i: status.totals.evicted counts every eviction made, less at most the killed leader’s last',
    async () => {
      watches.push(
        ...(await skewedByNewZone(c, { namespace: 'fo', apps: APPS, replicas: 6, zone: 'zone-c', nodes: 2 })),
      );
      await createPolicy(c, 'fo', {
        mode: 'Evict',
        schedule: '*/2 * * * * *',
        namespaces: { include: ['fo'] },
        // One eviction a cycle, so the leader is killed after its first and not in a burst of four it sent
        // together (an eviction whose record the process never had time to write is lost with the process).
        eviction: { maxPerNamespace: 20, maxPerNode: 10, maxPerCycle: 1 },
      });
      const kubeconfig = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, 'kube-rebalancer');
      for (const identity of ['replica-1', 'replica-2']) {
        replicas.push(await startOperatorProcess({ dir: c.cp.dir, kubeconfig, identity, extraArgs: QUICK_HANDOVER }));
      }
      const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
      const holder = async () =>
        (await coordination.readNamespacedLease({ name: 'kube-rebalancer', namespace: OPERATOR_NAMESPACE })).spec
          ?.holderIdentity;
      const made = () =>
        evictionRequests(c.cp).filter(
          (e) => e.objectRef?.namespace === 'fo' && !isDryRun(e) && e.responseStatus?.code === 201,
        );

      const first = await waitFor(holder, 60_000, 'a leader');
      await waitFor(() => made().length >= 1, 90_000, 'the leader’s first eviction');
      const leader = replicas.find((r) => r.identity === first)!;
      const survivor = replicas.find((r) => r.identity !== first)!;
      leader.proc.signal('SIGKILL');
      await leader.proc.waitForExit();
      const byLeader = made().length;

      await waitFor(async () => (await holder()) === survivor.identity, 60_000, 'the survivor to take the Lease');
      await waitFor(() => made().length > byLeader, 60_000, 'the survivor’s first eviction');
      await c.cp.restartApiServer();

      await waitFor(
        async () => {
          for (const app of APPS) if (skewOf(await zoneCounts(c, 'fo', app)) > 1) return false;
          return true;
        },
        180_000,
        'every workload balanced',
      );
      // The survivor writes its status as soon as it leads (again); give it the time a write takes.
      await waitFor(
        async () => ((await policyStatus(c, 'fo')).totals?.evicted ?? 0) >= made().length - 1,
        60_000,
        'the status to count the evictions',
      ).catch(() => undefined);
      const evictions = made().length;
      const totals = (await policyStatus(c, 'fo')).totals;
      console.log(
        `failover: ${evictions} evictions made (${byLeader} by the killed leader), status.totals.evicted ${totals?.evicted}`,
      );
      expect(totals?.evicted ?? 0).toBeGreaterThanOrEqual(evictions - 1);
      const names = made().map((e) => `${e.objectRef?.name}`);
      expect(new Set(names).size).toBe(names.length);
      for (const w of watches) expect(w.breaches).toEqual([]);
    },
    480_000,
  );
});
