// `--scheduler-config` against the real kube-scheduler v1.26 (real control plane; no test API server): the predicted
// landing of an eviction's replacement follows the scheduler configuration the way the real scheduler, started with
// the same file, follows it.
//
// Two nodes alike but for what runs on them (node-a half full, node-b empty) and a third, tainted, whose pod the
// NodeTaints strategy evicts. `plan --kubeconfig` (the CLI's own path: a live read, then planCycle) predicts where
// the replacement lands; a probe pod with the evicted pod's spec is then placed by kube-scheduler. With the default
// configuration (NodeResourcesFit LeastAllocated) both say node-b; with the same kube-scheduler restarted with a
// MostAllocated file, and the plan given that file, both say node-a. Every other score is equal on the two nodes
// (no images, no affinities, no spread, balanced usage), so NodeResourcesFit alone decides and nothing ties.
// Issue 29: with an addedAffinity preferring node-a (the default profile otherwise) both say node-a, where the
// default said node-b; a file with an extender is refused, naming the field. Several profiles (issue 29): with a
// default-scheduler profile (LeastAllocated) and a bin-packer one (MostAllocated), a pod of each on the tainted node is
// predicted to node-b and node-a respectively, where kube-scheduler, run with that file, puts a probe of each.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const NS = 'probe';
const REQUESTS = { cpu: '500m', memory: '1Gi' };
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

/** Two profiles: default-scheduler as v1.26 has it, and bin-packer packing (MostAllocated). */
const TWO_PROFILES = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: bin-packer
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
`;

/** The default profile with an addedAffinity that prefers node-a strongly (NodeAffinity ×2 outweighs the load). */
const ADDED_AFFINITY = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
    pluginConfig:
      - name: NodeAffinity
        args:
          addedAffinity:
            preferredDuringSchedulingIgnoredDuringExecution:
              - weight: 100
                preference:
                  matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-a]}]
`;

function pod(name: string, requests: Record<string, string>, nodeName?: string, schedulerName?: string): k8s.V1Pod {
  return {
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      ...(nodeName !== undefined ? { nodeName } : {}),
      ...(schedulerName !== undefined ? { schedulerName } : {}),
      containers: [{ name: 'app', image: 'registry.example/app:1', resources: { requests } }],
    },
  };
}

describe.skipIf(!controlPlaneAvailable())('--scheduler-config follows the real kube-scheduler', () => {
  let cp: ControlPlane;
  let kubelet: StandInKubelet;
  let core: k8s.CoreV1Api;
  const dir = mkdtempSync(join(tmpdir(), 'kr-scheduler-config-'));
  const policyFile = join(dir, 'policy.yaml');
  const mostAllocatedFile = join(dir, 'most-allocated.yaml');
  const addedAffinityFile = join(dir, 'added-affinity.yaml');
  const extenderFile = join(dir, 'extender.yaml');
  const twoProfilesFile = join(dir, 'two-profiles.yaml');

  beforeAll(async () => {
    cp = await startControlPlane();
    kubelet = new StandInKubelet(cp.kubeConfig(), { readyDelayMs: 0 });
    await kubelet.addNode({ name: 'node-a', zone: 'zone-a', cpu: '4', memory: '8Gi' });
    await kubelet.addNode({ name: 'node-b', zone: 'zone-a', cpu: '4', memory: '8Gi' });
    await kubelet.addNode({
      name: 'node-t',
      zone: 'zone-a',
      cpu: '4',
      memory: '8Gi',
      taints: [{ key: 'dedicated', value: 'infra', effect: 'NoSchedule' }],
    });
    kubelet.start();
    core = cp.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: NS } } });
    // Bound by nodeName (no scheduler): node-a half used; `moved` on the tainted node, which NodeTaints evicts.
    await core.createNamespacedPod({ namespace: NS, body: pod('filler', { cpu: '2', memory: '4Gi' }, 'node-a') });
    await core.createNamespacedPod({ namespace: NS, body: pod('moved', REQUESTS, 'node-t') });
    await waitFor(
      async () => {
        const pods = (await core.listNamespacedPod({ namespace: NS })).items;
        return pods.length === 2 && pods.every((p) => p.status?.phase === 'Running');
      },
      60_000,
      'the two bound pods Running',
    );
    // The node lifecycle controller lifts the new nodes' not-ready taint once it sees them Ready.
    await waitFor(
      async () =>
        (await core.listNode()).items.every((n) =>
          (n.spec?.taints ?? []).every((t) => !t.key.startsWith('node.kubernetes.io/')),
        ),
      60_000,
      'the not-ready taints lifted',
    );
    writeFileSync(
      policyFile,
      'apiVersion: rebalancer.dev/v1alpha1\nkind: RebalancePolicy\nmetadata: {name: probe}\n' +
        // What a policy names is what runs: the taint rule that evicts `moved`.
        'spec: {strategies: {nodeTaints: {}}, eviction: {minPodAge: 0s, evictBarePods: true}}\n',
    );
    writeFileSync(mostAllocatedFile, MOST_ALLOCATED);
    writeFileSync(addedAffinityFile, ADDED_AFFINITY);
    writeFileSync(twoProfilesFile, TWO_PROFILES);
    writeFileSync(
      extenderFile,
      'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n' +
        'extenders: [{urlPrefix: "http://127.0.0.1:1/ext", filterVerb: filter}]\n',
    );
  }, 120_000);

  afterAll(async () => {
    kubelet?.stop();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The plan's predicted landing for `moved`, through `plan --kubeconfig`. */
  async function predicted(...flags: string[]): Promise<string | undefined> {
    const r = await run('plan', '--kubeconfig', cp.kubeconfigPath, '--policy', policyFile, ...flags);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.out) as { evictions: Array<{ name: string; strategy: string; target?: string }> };
    const eviction = plan.evictions.find((e) => e.name === 'moved');
    expect(eviction?.strategy).toBe('NodeTaints');
    return eviction?.target;
  }

  /** Where kube-scheduler puts a pod with `moved`'s spec; the probe is deleted again afterwards. */
  async function placedByScheduler(name: string, schedulerName?: string): Promise<string> {
    await core.createNamespacedPod({ namespace: NS, body: pod(name, REQUESTS, undefined, schedulerName) });
    const node = await waitFor(
      async () => (await core.readNamespacedPod({ name, namespace: NS })).spec?.nodeName,
      30_000,
      `${name} scheduled`,
    );
    await core.deleteNamespacedPod({ name, namespace: NS, gracePeriodSeconds: 0 });
    await waitFor(
      async () => !(await core.listNamespacedPod({ namespace: NS })).items.some((p) => p.metadata?.name === name),
      30_000,
      `${name} deleted`,
    );
    return node;
  }

  it('default configuration vs MostAllocated: the prediction changes as the real scheduler does', async () => {
    const defaultTarget = await predicted();
    const defaultChoice = await placedByScheduler('probe-default');

    await cp.restartScheduler(mostAllocatedFile);
    const mostTarget = await predicted('--scheduler-config', mostAllocatedFile);
    const mostChoice = await placedByScheduler('probe-most-allocated');

    expect({ defaultTarget, mostTarget }).toEqual({ defaultTarget: defaultChoice, mostTarget: mostChoice });
    expect([defaultChoice, mostChoice]).toEqual(['node-b', 'node-a']);
  }, 120_000);

  it('addedAffinity (issue 29): the prediction changes as the real scheduler does', async () => {
    await cp.restartScheduler(addedAffinityFile);
    const target = await predicted('--scheduler-config', addedAffinityFile);
    const choice = await placedByScheduler('probe-added-affinity');
    expect(target).toBe(choice);
    expect(choice).toBe('node-a');
  }, 120_000);

  it('a configuration with an extender is refused, naming the field', async () => {
    const r = await run(
      'plan',
      '--kubeconfig',
      cp.kubeconfigPath,
      '--policy',
      policyFile,
      '--scheduler-config',
      extenderFile,
    );
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/KubeSchedulerConfiguration: extenders: are not modelled/);
  });

  it('several profiles (issue 29): each pod is predicted by its own scheduler’s profile, as kube-scheduler places it', async () => {
    // A second pod on the tainted node, of bin-packer; gone again at the end so the other cases see the cluster as is.
    await core.createNamespacedPod({ namespace: NS, body: pod('packed', REQUESTS, 'node-t', 'bin-packer') });
    try {
      await waitFor(
        async () => (await core.readNamespacedPod({ name: 'packed', namespace: NS })).status?.phase === 'Running',
        60_000,
        'packed Running',
      );
      await cp.restartScheduler(twoProfilesFile);
      const r = await run(
        'plan',
        '--kubeconfig',
        cp.kubeconfigPath,
        '--policy',
        policyFile,
        '--scheduler-config',
        twoProfilesFile,
      );
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const plan = JSON.parse(r.out) as { evictions: Array<{ name: string; target?: string }> };
      const targets = Object.fromEntries(plan.evictions.map((e) => [e.name, e.target]));
      const choices = {
        moved: await placedByScheduler('probe-default-profile'),
        packed: await placedByScheduler('probe-bin-packer', 'bin-packer'),
      };
      expect(targets).toEqual(choices);
      expect(choices).toEqual({ moved: 'node-b', packed: 'node-a' });
    } finally {
      await core.deleteNamespacedPod({ name: 'packed', namespace: NS, gracePeriodSeconds: 0 });
    }
  }, 120_000);
});
