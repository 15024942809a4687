// Two replicas of `kube-rebalancer run --leader-elect` as processes, with the shipped ServiceAccount's token, on the
// real control plane. The leader is killed with SIGKILL in the middle of a run (no Lease release, evictions in
// flight): the other replica takes the Lease once it expires and finishes the job. At the server: every eviction
// answered 201, no pod evicted twice, the fewest evictions in total, and no Deployment below its PDB floor at any
// moment (watched).
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { sample } from '../e2e/harness.js';
import {
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  skewedByNewZone,
  skewOf,
  sleep,
  startCluster,
  waitFor,
  waitForReady,
  zoneCounts,
  type Cluster,
  type PdbFloorWatch,
} from './cluster.js';
import { QUICK_HANDOVER, startOperatorProcess, type OperatorProcess } from './operatorProcess.js';

const APPS = ['a', 'b', 'c', 'd', 'e', 'f'].map((x) => `app-${x}`);

describe.skipIf(!controlPlaneAvailable())('leader election with two operator processes', () => {
  let c: Cluster;
  const replicas: OperatorProcess[] = [];
  const watches: PdbFloorWatch[] = [];

  beforeAll(async () => {
    // Replacements take a second to become Ready, so a run lasts long enough to be interrupted.
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 2, kubelet: { readyDelayMs: 1000 } });
    await installManifests(c);
  }, 120_000);

  afterAll(async () => {
    for (const w of watches) w.stop();
    for (const r of replicas) await r.proc.stop({ graceMs: 5_000 });
    await c?.stop();
  });

  it('SIGKILL of the leader mid-run: the other replica takes over and finishes, nothing evicted twice', async () => {
    watches.push(...(await skewedByNewZone(c, { namespace: 'ha', apps: APPS, replicas: 6, zone: 'zone-c', nodes: 2 })));
    // Every 2 s, so the new leader starts a cycle soon after it takes over.
    await createPolicy(c, 'ha', {
      mode: 'Evict',
      schedule: '*/2 * * * * *',
      namespaces: { include: ['ha'] },
      eviction: { maxPerNamespace: 20, maxPerNode: 10, maxPerCycle: 20 },
    });
    const kubeconfig = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, 'kube-rebalancer');
    for (const identity of ['replica-1', 'replica-2']) {
      replicas.push(await startOperatorProcess({ dir: c.cp.dir, kubeconfig, identity, extraArgs: QUICK_HANDOVER }));
    }
    const coordination = c.kc.makeApiClient(k8s.CoordinationV1Api);
    const holder = async () =>
      (await coordination.readNamespacedLease({ name: 'kube-rebalancer', namespace: OPERATOR_NAMESPACE })).spec
        ?.holderIdentity;
    const real = () => evictionRequests(c.cp).filter((e) => e.objectRef?.namespace === 'ha' && !isDryRun(e));

    const first = await waitFor(holder, 60_000, 'a leader');
    // Mid-run: some evictions done, most still to do (6 workloads × 2 moves).
    await waitFor(() => real().length >= 3, 90_000, 'the first evictions');
    const leader = replicas.find((r) => r.identity === first)!;
    const survivor = replicas.find((r) => r.identity !== first)!;
    // Until then only the leader evicted; the follower says it does not lead.
    expect(real().every((e) => e.userAgent?.includes(`(${leader.identity})`))).toBe(true);
    expect(sample(await survivor.scrape(), 'rebalancer_leader')).toBe(0);
    // Frozen first, then killed, so it dies between two requests: an eviction cut off on the wire can be half done
    // at the API server (the Pod's disruption recorded in its PDB's status, the Pod not deleted), and that budget
    // then allows nothing until the disruption controller drops the entry 2 minutes later: a wait of Kubernetes',
    // not of the takeover this suite is about. The run is still mid-way and the Lease is not released.
    leader.proc.signal('SIGSTOP');
    await sleep(1_000);
    leader.proc.signal('SIGKILL');
    await leader.proc.waitForExit();
    const beforeTakeover = real().length;

    await waitFor(async () => (await holder()) === survivor.identity, 60_000, 'the survivor to take the Lease');
    await waitFor(
      async () => {
        for (const app of APPS) if (skewOf(await zoneCounts(c, 'ha', app)) > 1) return false;
        return true;
      },
      120_000,
      'every workload balanced',
    );
    for (const app of APPS) await waitForReady(c, 'ha', app, 6, 60_000);

    const evictions = real();
    const agents = new Set(evictions.map((e) => e.userAgent ?? ''));
    expect([...agents].some((a) => a.includes(survivor.identity))).toBe(true);
    expect(beforeTakeover).toBeLessThan(evictions.length);
    // Every eviction answered 201, but for one the SIGKILLed leader may still have had on the wire (a request it had
    // not finished writing when frozen): with its client gone, the API server ends that request as a timeout (504),
    // an answer no operator acted on. The survivor's are all 201.
    const abandoned = (e: (typeof evictions)[number]): boolean =>
      e.responseStatus?.code === 504 && (e.userAgent?.includes(`(${leader.identity})`) ?? false);
    expect(evictions.filter(abandoned).length).toBeLessThanOrEqual(1);
    expect(
      evictions
        .filter((e) => !abandoned(e))
        .map((e) => e.responseStatus?.code)
        .filter((code) => code !== 201),
    ).toEqual([]);
    const made = evictions.filter((e) => e.responseStatus?.code === 201);
    const names = made.map((e) => `${e.objectRef?.name}`);
    expect(new Set(names).size).toBe(names.length);
    // 3/3/0 → 2/2/2 for each of the six workloads: 12 evictions, the fewest.
    expect(made).toHaveLength(12);
    for (const w of watches) expect(w.breaches).toEqual([]);
    expect(sample(await survivor.scrape(), 'rebalancer_leader')).toBe(1);
  }, 300_000);
});
