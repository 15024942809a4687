// What must outlive a process lives in the policy's status: on the real control plane, two operator processes with
// leader election; one policy is Degraded (its replacement stays Pending on its node), the other has a cooldown in
// force (written to its status as a previous leader would have). The leader is SIGKILLed three times in a row; each
// new leader keeps the pause, the cooldown and the totals, and no eviction they forbid reaches the API server
// (counted from the audit log).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { sample } from '../e2e/harness.js';
import {
  addZone,
  conditionOf,
  createDeployment,
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  MERGE,
  OPERATOR_NAMESPACE,
  startCluster,
  waitFor,
  waitForBudget,
  waitForReady,
  type Cluster,
} from './cluster.js';
import { QUICK_HANDOVER, startOperatorProcess, type OperatorProcess } from './operatorProcess.js';

interface PersistedView {
  conditions?: Array<{ type: string; status: string; reason: string; message: string }>;
  totals?: { evicted: number; failed: number };
  cooldowns?: Array<{ workload: string; until: string; reason: string }>;
  pause?: { pod: string; podUid: string; workload: string; since: string; reason: string };
}

async function status(c: Cluster, name: string): Promise<PersistedView> {
  const obj = (await c.custom.getClusterCustomObject({
    group: 'rebalancer.dev',
    version: 'v1alpha1',
    plural: 'rebalancepolicies',
    name,
  })) as { status?: PersistedView };
  return obj.status ?? {};
}

describe.skipIf(!controlPlaneAvailable())('state that outlives the leader', () => {
  let c: Cluster;
  const replicas: OperatorProcess[] = [];

  beforeAll(async () => {
    c = await startCluster({
      zones: ['zone-a', 'zone-b'],
      nodesPerZone: 2,
      // shop's pods never start on zone-c: a replacement placed there stays Pending on its node.
      kubelet: {
        readyDelayMs: 200,
        readiness: (pod) =>
          pod.metadata?.namespace === 'shop' && pod.spec?.nodeName?.startsWith('zone-c') === true
            ? 'pending'
            : undefined,
      },
    });
    await installManifests(c);
  }, 120_000);

  afterAll(async () => {
    for (const r of replicas) await r.proc.stop({ graceMs: 5_000 });
    await c?.stop();
  });

  it('3 × SIGKILL of the leader: the pause, the cooldown and the totals hold, and nothing they forbid is evicted', async () => {
    for (const namespace of ['shop', 'ops']) {
      await createDeployment(c, { namespace, name: 'web', replicas: 6, pdb: { maxUnavailable: 1 } });
    }
    for (const namespace of ['shop', 'ops']) await waitForReady(c, namespace, 'web', 6, 90_000);
    await addZone(c, 'zone-c', 2);
    for (const namespace of ['shop', 'ops']) await waitForBudget(c, namespace, 'web', 1);

    const every2s = '*/2 * * * * *';
    await createPolicy(c, 'paused', {
      mode: 'Evict',
      schedule: every2s,
      namespaces: { include: ['shop'] },
      eviction: { replacementTimeout: '5s' },
    });
    await createPolicy(c, 'cool', { mode: 'Evict', schedule: every2s, namespaces: { include: ['ops'] } });
    // A cooldown a previous leader recorded (a replacement of ops/web landed back), with its totals.
    const until = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await c.custom.patchClusterCustomObjectStatus(
      {
        group: 'rebalancer.dev',
        version: 'v1alpha1',
        plural: 'rebalancepolicies',
        name: 'cool',
        body: {
          status: {
            totals: { evicted: 7, failed: 1 },
            cooldowns: [{ workload: 'ops/Deployment/web', until, reason: 'a replacement landed back on zone-a' }],
          },
        },
      },
      MERGE,
    );

    const kubeconfig = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, 'kube-rebalancer');
    let next = 1;
    const start = async (): Promise<OperatorProcess> => {
      const r = await startOperatorProcess({
        dir: c.cp.dir,
        kubeconfig,
        identity: `replica-${next++}`,
        extraArgs: QUICK_HANDOVER,
      });
      replicas.push(r);
      return r;
    };
    await start();
    await start();
    const real = (namespace: string) =>
      evictionRequests(c.cp).filter((e) => e.objectRef?.namespace === namespace && !isDryRun(e));
    const killed = new Set<OperatorProcess>();
    const leaderOf = async (): Promise<OperatorProcess | undefined> => {
      for (const r of replicas) {
        if (killed.has(r)) continue;
        const text = await r.scrape().catch(() => '');
        if (sample(text, 'rebalancer_leader') === 1) return r;
      }
      return undefined;
    };

    // paused: one eviction, its replacement stays Pending → Degraded with the pause in the status.
    await waitFor(
      async () => conditionOf(await status(c, 'paused'), 'Degraded')?.reason === 'ReplacementPending',
      60_000,
      'the paused policy to be Degraded',
    );
    const before = { paused: await status(c, 'paused'), cool: await status(c, 'cool') };
    expect(before.paused.pause).toMatchObject({ workload: 'shop/Deployment/web', reason: 'ReplacementPending' });
    expect(before.cool.cooldowns).toEqual([
      { workload: 'ops/Deployment/web', until, reason: 'a replacement landed back on zone-a' },
    ]);
    expect(before.cool.totals).toEqual({ evicted: 7, failed: 1 });
    expect(real('shop')).toHaveLength(1);
    expect(real('ops')).toEqual([]);

    for (let kill = 1; kill <= 3; kill++) {
      const leader = await waitFor(leaderOf, 60_000, `a leader before kill ${kill}`);
      killed.add(leader);
      leader.proc.signal('SIGKILL');
      await leader.proc.waitForExit();
      await start();
      const successor = await waitFor(
        async () => {
          const l = await leaderOf();
          return l !== undefined && l !== leader ? l : undefined;
        },
        60_000,
        `a new leader after kill ${kill}`,
      );
      // Several ticks of both policies under the new leader.
      await waitFor(
        () => successor.logs().filter((l) => String(l['msg']).startsWith('leader state rebuilt')).length > 0,
        30_000,
        'the rebuild',
      );
      // Three cycles of each (its first as leader, then every 2 s), each one a chance to evict what is forbidden.
      const cycles = (policy: string, msg: string): number =>
        successor.logs().filter((l) => l['policy'] === policy && String(l['msg']).startsWith(msg)).length;
      await waitFor(
        () => cycles('paused', 'policy paused (Degraded); cycle skipped') >= 3 && cycles('cool', 'cycle finished') >= 3,
        30_000,
        `three cycles of each policy under the leader after kill ${kill}`,
      );
      expect(real('shop')).toHaveLength(1);
      expect(real('ops')).toEqual([]);
      const now = { paused: await status(c, 'paused'), cool: await status(c, 'cool') };
      expect(now.paused.pause).toEqual(before.paused.pause);
      expect(conditionOf(now.paused, 'Degraded')).toMatchObject({ status: 'True', reason: 'ReplacementPending' });
      expect(now.paused.totals).toEqual(before.paused.totals);
      expect(now.cool.cooldowns).toEqual(before.cool.cooldowns);
      expect(now.cool.totals).toEqual({ evicted: 7, failed: 1 });
      expect(successor.logs().some((l) => String(l['msg']).includes('policy paused (Degraded); cycle skipped'))).toBe(
        true,
      );
    }
  }, 400_000);
});
