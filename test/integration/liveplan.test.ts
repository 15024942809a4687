// `plan --kubeconfig` against a real v1.26 control plane: a cluster without the RebalancePolicy CRD reads without
// error; with it, the policy in the cluster applies; and the plan equals the one `plan --snapshot` makes from the
// same cluster saved the way `kubectl get … -o json` saves it (one unpaged GET per kind, items given their kind).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/program.js';
import { controlPlaneAvailable, startControlPlane, StandInKubelet, type ControlPlane } from '../controlplane/index.js';

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  return { code, out, err };
}

async function waitFor<T>(check: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One unpaged GET, as a plain client would send it (independent of the reader's paging). */
async function getJson(kc: k8s.KubeConfig, path: string): Promise<{ items: Record<string, unknown>[] }> {
  const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const url = new URL(`${kc.getCurrentCluster()!.server}${path}`);
  return new Promise((resolve, reject) => {
    https
      .request(url, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(JSON.parse(body) as { items: Record<string, unknown>[] }));
      })
      .on('error', reject)
      .end();
  });
}

const SAVED_KINDS: ReadonlyArray<readonly [string, string, string]> = [
  ['v1', 'Namespace', '/api/v1/namespaces'],
  ['v1', 'Node', '/api/v1/nodes'],
  ['scheduling.k8s.io/v1', 'PriorityClass', '/apis/scheduling.k8s.io/v1/priorityclasses'],
  ['v1', 'Pod', '/api/v1/pods'],
  ['policy/v1', 'PodDisruptionBudget', '/apis/policy/v1/poddisruptionbudgets'],
  ['v1', 'PersistentVolume', '/api/v1/persistentvolumes'],
  ['v1', 'PersistentVolumeClaim', '/api/v1/persistentvolumeclaims'],
  ['storage.k8s.io/v1', 'StorageClass', '/apis/storage.k8s.io/v1/storageclasses'],
  ['storage.k8s.io/v1', 'CSINode', '/apis/storage.k8s.io/v1/csinodes'],
  ['rebalancer.dev/v1alpha1', 'RebalancePolicy', '/apis/rebalancer.dev/v1alpha1/rebalancepolicies'],
];

describe.skipIf(!controlPlaneAvailable())('plan --kubeconfig against a real control plane', () => {
  let cp: ControlPlane;
  let kubelet: StandInKubelet;
  const dir = mkdtempSync(join(tmpdir(), 'kr-liveplan-'));
  const policyFile = join(dir, 'policy.yaml');

  beforeAll(async () => {
    cp = await startControlPlane();
    kubelet = new StandInKubelet(cp.kubeConfig(), { readyDelayMs: 50 });
    // zone-b and zone-c start cordoned, so the scheduler piles the soft-spread pods into zone-a.
    for (const zone of ['zone-a', 'zone-b', 'zone-c']) {
      for (const i of [1, 2]) await kubelet.addNode({ name: `${zone}-${i}`, zone, unschedulable: zone !== 'zone-a' });
    }
    kubelet.start();
    const kc = cp.kubeConfig();
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const apps = kc.makeApiClient(k8s.AppsV1Api);
    const policy = kc.makeApiClient(k8s.PolicyV1Api);
    await core.createNamespace({ body: { metadata: { name: 'shop' } } });
    const labels = { app: 'web' };
    await apps.createNamespacedDeployment({
      namespace: 'shop',
      body: {
        metadata: { name: 'web' },
        spec: {
          replicas: 6,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests: { cpu: '100m' } } }],
              topologySpreadConstraints: [
                {
                  maxSkew: 1,
                  topologyKey: 'topology.kubernetes.io/zone',
                  whenUnsatisfiable: 'ScheduleAnyway',
                  labelSelector: { matchLabels: labels },
                },
              ],
            },
          },
        },
      },
    });
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'shop',
      body: { metadata: { name: 'web' }, spec: { maxUnavailable: 1, selector: { matchLabels: labels } } },
    });
    await waitFor(
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: 'shop' })).items;
        return (
          pods.length === 6 &&
          pods.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        );
      },
      60_000,
      'six Ready pods',
    );
    await waitFor(
      async () =>
        (await policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: 'shop' })).status
          ?.disruptionsAllowed === 1,
      30_000,
      'the PDB status',
    );
    for (const node of ['zone-b-1', 'zone-b-2', 'zone-c-1', 'zone-c-2']) {
      await core.patchNode(
        { name: node, body: { spec: { unschedulable: false } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
    }
    // Pod ages would differ between two reads of the same cluster; minPodAge 0s keeps the plans comparable.
    writeFileSync(
      policyFile,
      'apiVersion: rebalancer.dev/v1alpha1\nkind: RebalancePolicy\nmetadata: {name: soft}\n' +
        'spec: {strategies: {topologySpread: {includeSoftConstraints: true}}, eviction: {minPodAge: 0s}}\n',
    );
  }, 180_000);

  afterAll(async () => {
    kubelet?.stop();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a cluster without the RebalancePolicy CRD (the default policy applies) with list requests only', async () => {
    const before = cp.audit().length;
    const r = await run('plan', '--kubeconfig', cp.kubeconfigPath);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.out) as { policy: string; topology: { domains: Record<string, number> }[] };
    expect(plan.policy).toBe('default');
    expect(plan.topology.map((t) => t.domains)).toEqual([{ 'zone-a': 6, 'zone-b': 0, 'zone-c': 0 }]);
    const mine = cp
      .audit()
      .slice(before)
      .filter((e) => e.user.username === 'test-admin');
    expect(new Set(mine.map((e) => e.verb))).toEqual(new Set(['list']));
    // Every list was paged (limit), as kubectl pages.
    for (const e of mine) expect(e.requestURI).toMatch(/[?&]limit=\d+/);
  });

  it('gives the plan --snapshot gives for the same cluster saved as kubectl saves it', async () => {
    const kc = cp.kubeConfig();
    const items: unknown[] = [];
    for (const [apiVersion, kind, path] of SAVED_KINDS) {
      if (kind === 'RebalancePolicy') continue; // no CRD yet
      for (const item of (await getJson(kc, path)).items) items.push({ apiVersion, kind, ...item });
    }
    const saved = join(dir, 'cluster.json');
    writeFileSync(saved, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 4));
    const live = await run('plan', '--kubeconfig', cp.kubeconfigPath, '--policy', policyFile);
    const offline = await run('plan', '--snapshot', saved, '--policy', policyFile);
    expect(live.code).toBe(0);
    expect(offline.code).toBe(0);
    const plan = JSON.parse(live.out) as { evictions: unknown[] };
    expect(plan.evictions.length).toBeGreaterThan(0);
    expect(JSON.parse(live.out)).toEqual(JSON.parse(offline.out));
  });

  it('with the CRD installed, reads the policy in the cluster and --context picks the context', async () => {
    const kc = cp.kubeConfig();
    const crd = parseAllDocuments(readFileSync('crds/rebalancer.dev_rebalancepolicies.yaml', 'utf8'))
      .map((d) => d.toJS() as k8s.V1CustomResourceDefinition)
      .find((d) => d?.kind === 'CustomResourceDefinition')!;
    const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({ body: crd });
    await waitFor(
      async () =>
        (await ext.readCustomResourceDefinition({ name: crd.metadata!.name! })).status?.conditions?.some(
          (c) => c.type === 'Established' && c.status === 'True',
        ),
      30_000,
      'the CRD to be established',
    );
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await waitFor(
      async () =>
        custom.createClusterCustomObject({
          group: 'rebalancer.dev',
          version: 'v1alpha1',
          plural: 'rebalancepolicies',
          body: {
            apiVersion: 'rebalancer.dev/v1alpha1',
            kind: 'RebalancePolicy',
            metadata: { name: 'in-cluster' },
            spec: { eviction: { minPodAge: '0s' } },
          },
        }),
      30_000,
      'the RebalancePolicy to be created',
    );
    const config = new k8s.KubeConfig();
    config.loadFromFile(cp.kubeconfigPath);
    const context = config.getCurrentContext();
    const r = await run('plan', '--kubeconfig', cp.kubeconfigPath, '--context', context, '-o', 'table');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Policy in-cluster \(DryRun\): 6 nodes, 6 pods/);
  });
});
