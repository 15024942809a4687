// The control plane fails under a running operator: kube-apiserver is restarted (SIGTERM, then started again on the
// same etcd), or etcd is, while a run is evicting and pacing. The operator process is never restarted: its
// informers recover on their own, the fault is reported, and the job is finished by the run or the next cycles. At
// the server: no pod evicted twice, every eviction that reached it answered 201, and no Deployment below its PDB
// floor at any moment (watched).
import { afterEach, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import {
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  skewedByNewZone,
  skewOf,
  startCluster,
  waitFor,
  waitForReady,
  zoneCounts,
  type Cluster,
  type PdbFloorWatch,
} from './cluster.js';
import { startOperatorProcess, type OperatorProcess } from './operatorProcess.js';

const APPS = ['app-a', 'app-b', 'app-c', 'app-d'];

describe.skipIf(!controlPlaneAvailable())('a control plane restart mid-run', () => {
  let c: Cluster;
  let op: OperatorProcess | undefined;
  const watches: PdbFloorWatch[] = [];

  beforeEach(async () => {
    // Replacements take a second to become Ready, so the run is still going when the fault comes.
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 2, kubelet: { readyDelayMs: 1000 } });
    await installManifests(c);
  }, 120_000);

  afterEach(async () => {
    for (const w of watches.splice(0)) w.stop();
    await op?.proc.stop({ graceMs: 5_000 });
    op = undefined;
    await c?.stop();
  });

  it.each([
    // Every watch stream breaks: the informers must be restarted by their supervisor.
    ['kube-apiserver', (cluster: Cluster) => cluster.cp.restartApiServer(), true],
    // The API server keeps the streams open and resumes them itself; requests fail meanwhile.
    ['etcd', (cluster: Cluster) => cluster.cp.restartEtcd(), false],
  ] as const)(
    '%s restarted: informers recover in the same process, nothing evicted twice, no PDB floor broken',
    async (_, restart, streamsBreak) => {
      watches.push(
        ...(await skewedByNewZone(c, { namespace: 'ha', apps: APPS, replicas: 6, zone: 'zone-c', nodes: 2 })),
      );
      await createPolicy(c, 'ha', {
        mode: 'Evict',
        schedule: '*/2 * * * * *',
        namespaces: { include: ['ha'] },
        eviction: { maxPerNamespace: 20, maxPerNode: 10, maxPerCycle: 20 },
      });
      const kubeconfig = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, 'kube-rebalancer');
      const proc = (op = await startOperatorProcess({ dir: c.cp.dir, kubeconfig, identity: 'replica-1' }));
      // A failure under a loaded CI machine is only explainable from what the operator saw.
      onTestFailed(() => {
        const lines = proc.logs();
        console.log(
          `operator log (last 80 of ${lines.length}):\n${lines
            .slice(-80)
            .map((l) => JSON.stringify(l))
            .join('\n')}`,
        );
      });
      const real = () => evictionRequests(c.cp).filter((e) => e.objectRef?.namespace === 'ha' && !isDryRun(e));

      await waitFor(() => real().length >= 2, 90_000, 'the first evictions');
      const beforeFault = real().length;
      await restart(c);
      await waitFor(
        async () => {
          for (const app of APPS) if (skewOf(await zoneCounts(c, 'ha', app)) > 1) return false;
          return true;
        },
        180_000,
        'every workload balanced',
      ).catch(async (err: unknown) => {
        // What the cluster looked like when it did not balance: nodes, pods and the policy's status.
        console.log(await clusterState(c));
        throw err;
      });
      for (const app of APPS) await waitForReady(c, 'ha', app, 6, 60_000);

      // The same process all along; its informers were restarted by their supervisor.
      expect(proc.proc.running).toBe(true);
      const logs = proc.logs();
      // The fault is reported where the operator saw one: every broken stream is logged and restarted. (An etcd
      // restart is absorbed by the API server, which keeps the streams and retries; nothing fails to report.)
      if (streamsBreak) {
        expect(logs.some((l) => l['msg'] === 'watch or list failed; restarting the informer')).toBe(true);
      }
      const evictions = real();
      expect(evictions.length).toBeGreaterThan(beforeFault);
      // Requests the fault hit were answered 5xx (a retry then finds the pod gone if the first one took effect:
      // 404), never anything else; no pod was evicted twice, and the pods targeted are the fewest: 3/3/0 → 2/2/2 is
      // 2 moves per workload.
      const codes = evictions.map((e) => e.responseStatus?.code ?? 0);
      expect(codes.filter((code) => ![201, 404, 500, 503, 504].includes(code))).toEqual([]);
      const evicted = evictions.filter((e) => e.responseStatus?.code === 201).map((e) => `${e.objectRef?.name}`);
      expect(new Set(evicted).size).toBe(evicted.length);
      expect(new Set(evictions.map((e) => `${e.objectRef?.name}`)).size).toBe(2 * APPS.length);
      // An eviction the fault answered with 5xx is reported and retried.
      if (codes.some((code) => code >= 500)) {
        expect(logs.some((l) => l['msg'] === 'eviction failed, retrying')).toBe(true);
      }
      for (const w of watches) expect(w.breaches).toEqual([]);
    },
    400_000,
  );
});

async function clusterState(c: Cluster): Promise<string> {
  const lines: string[] = [];
  for (const n of (await c.core.listNode()).items) {
    const ready = n.status?.conditions?.find((x) => x.type === 'Ready');
    const taints = (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).join(',');
    lines.push(
      `node ${n.metadata?.name}: Ready=${ready?.status} (${ready?.reason}) unschedulable=${n.spec?.unschedulable ?? false} taints=${taints}`,
    );
  }
  for (const p of (await c.core.listNamespacedPod({ namespace: 'ha' })).items) {
    const ready = p.status?.conditions?.find((x) => x.type === 'Ready')?.status;
    const deleting = p.metadata?.deletionTimestamp === undefined ? '' : ' deleting';
    lines.push(`pod ${p.metadata?.name}: ${p.status?.phase} on ${p.spec?.nodeName ?? '-'} Ready=${ready}${deleting}`);
  }
  const policy: unknown = await c.custom
    .getClusterCustomObject({ group: 'rebalancer.dev', version: 'v1alpha1', plural: 'rebalancepolicies', name: 'ha' })
    .catch((err: unknown) => String(err));
  lines.push(`policy: ${JSON.stringify((policy as { status?: unknown }).status ?? policy)}`);
  return lines.join('\n');
}
