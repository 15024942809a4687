// charts/kube-rebalancer on a real API server: `helm template` output, applied as `kubectl apply --dry-run=server`
// applies it (every object POSTed with ?dryRun=All after the chart's CRDs are installed, as helm installs crds/ first),
// with the default values and with every optional part on. A dry run the server refuses fails, so an invalid initial
// policy is refused here too. $HELM names the helm binary: test/chart/check.sh (run by .ci/run) builds it with
// hack/helm.sh and runs this suite with it; without $HELM or without a control plane the suite is skipped.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { controlPlaneAvailable } from '../controlplane/index.js';
import {
  collectionPath,
  createRaw,
  ensureNamespace,
  monitoringCrd,
  repoRoot,
  startCluster,
  waitFor,
  waitForCrd,
  type Cluster,
} from './cluster.js';

const HELM = process.env['HELM'] ?? '';
const NAMESPACE = 'kube-rebalancer';

function template(args: readonly string[]): k8s.KubernetesObject[] {
  const out = execFileSync(
    HELM,
    [
      'template',
      'kr',
      join(repoRoot(), 'charts/kube-rebalancer'),
      '--namespace',
      NAMESPACE,
      '--kube-version',
      '1.37.0',
      '--include-crds',
      ...args,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return parseAllDocuments(out)
    .map((d) => d.toJS() as k8s.KubernetesObject | null)
    .filter((o): o is k8s.KubernetesObject => o !== null);
}

const EVERYTHING = [
  '--set',
  'metrics.serviceMonitor.enabled=true',
  '--set',
  'initialPolicy.enabled=true',
  '--set-json',
  'initialPolicy.spec={"mode":"DryRun","strategies":{"lowNodeUtilization":{"enabled":true}},"eviction":{"minReplicas":2,"gracePeriodSeconds":30}}',
  '--set-json',
  'schedulerConfig={"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration","profiles":[{"schedulerName":"default-scheduler"}]}',
  '--set',
  'replicas=3',
];

describe.skipIf(!controlPlaneAvailable() || HELM === '' || !existsSync(HELM))(
  'helm template charts/kube-rebalancer | server-side dry run',
  () => {
    let c: Cluster;

    beforeAll(async () => {
      c = await startCluster({ zones: [] });
      await ensureNamespace(c, NAMESPACE);
      await createRaw(c, monitoringCrd('ServiceMonitor', 'servicemonitors'));
      await waitForCrd(c, 'servicemonitors.monitoring.coreos.com');
      // helm installs the chart's crds/ before anything else, for real; the rest is then dry-run.
      for (const crd of template([]).filter((o) => o.kind === 'CustomResourceDefinition')) {
        await createRaw(c, crd);
        await waitForCrd(c, crd.metadata!.name!);
      }
    }, 120_000);

    afterAll(async () => {
      await c?.stop();
    });

    async function dryRun(obj: k8s.KubernetesObject): Promise<{ status: number; message?: string }> {
      const path = await waitFor(() => collectionPath(c, obj), 30_000, `discovery of ${obj.apiVersion} ${obj.kind}`);
      const answer = await c.cp.request('POST', `${path}?dryRun=All&fieldValidation=Strict`, obj);
      return { status: answer.status, message: (answer.body as { message?: string }).message };
    }

    it.each([
      [
        'the default values',
        [] as string[],
        ['ServiceAccount', 'ClusterRole', 'Role', 'Deployment', 'Service', 'PodDisruptionBudget'],
      ],
      ['every optional part on', EVERYTHING, ['ConfigMap', 'ServiceMonitor', 'RebalancePolicy']],
    ])('%s: every object is accepted', async (_name, args, kinds) => {
      const objects = template(args).filter((o) => o.kind !== 'CustomResourceDefinition');
      expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(kinds));
      for (const obj of objects) {
        const answer = await dryRun(obj);
        expect(answer.status, `${obj.kind} ${obj.metadata?.name}: ${answer.message}`).toBeLessThan(300);
      }
    });

    it('schedulerConfig as a file (--set-file) is the ConfigMap the Deployment mounts', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chart-'));
      const file = join(dir, 'scheduler.yaml');
      const text = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';
      writeFileSync(file, text);
      const objects = template(['--set-file', `schedulerConfig=${file}`]);
      const map = objects.find((o) => o.kind === 'ConfigMap') as k8s.V1ConfigMap;
      expect(map.data?.['config.yaml']).toBe(text);
      const deployment = objects.find((o) => o.kind === 'Deployment') as k8s.V1Deployment;
      expect(deployment.spec?.template.spec?.containers[0]?.args).toContain(
        '--scheduler-config=/etc/kube-rebalancer/scheduler/config.yaml',
      );
      for (const obj of [map, deployment]) expect((await dryRun(obj)).status).toBeLessThan(300);
    });

    it('the dry run is the server deciding: an invalid initial policy is refused, naming the field', async () => {
      const [policy] = template([
        '--set',
        'initialPolicy.enabled=true',
        '--set',
        'initialPolicy.spec.mode=Sometimes',
      ]).filter((o) => o.kind === 'RebalancePolicy');
      const answer = await dryRun(policy!);
      expect(answer.status).toBe(422);
      expect(answer.message).toContain('spec.mode');
    });

    it('helm refuses several replicas without leader election', () => {
      expect(() => template(['--set', 'leaderElection.enabled=false'])).toThrow(/needs leaderElection\.enabled/);
    });
  },
);
