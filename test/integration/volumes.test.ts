// Volume topology on a real control plane: the operator, with the shipped RBAC through its ServiceAccount's token,
// watches PersistentVolumes, PersistentVolumeClaims and StorageClasses, and never evicts a pod away from the zone its
// bound volume lives in. Four pods run in zone-a under a zone spread constraint; three keep their data on volumes
// with zone-a node affinity, one on a volume every zone reaches. Only that one is (dry-run) evicted.
import type * as k8s from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  createPolicy,
  createRaw,
  ensureNamespace,
  evictionRequests,
  forbidden,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  startCluster,
  waitFor,
  ZONE,
  type Cluster,
} from './cluster.js';

const NS = 'volumes';

describe.skipIf(!controlPlaneAvailable())('volume topology on a real control plane', () => {
  let c: Cluster;
  let operatorKc: k8s.KubeConfig;
  const operators: OperatorHandle[] = [];

  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 1 });
    await installManifests(c);
    operatorKc = await operatorKubeConfig(c);
  }, 120_000);

  afterEach(async () => {
    for (const op of operators.splice(0)) await op.stop();
  });

  afterAll(async () => {
    await c?.stop();
  });

  /** A bare pod bound to zone-a's node, mounting `claim`, under a zone spread constraint on app=db. */
  function pod(name: string, claim: string): k8s.KubernetesObject {
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app: 'db' } },
      spec: {
        nodeName: 'zone-a-node-1',
        containers: [{ name: 'db', image: 'registry.example/db:1', resources: { requests: { cpu: '10m' } } }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: ZONE,
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'db' } },
          },
        ],
      },
    } as k8s.KubernetesObject;
  }

  /** A statically bound claim and its volume; `zone` gives the volume zonal node affinity. */
  async function volume(claim: string, zone: string | undefined): Promise<void> {
    const pv = `pv-${claim}`;
    await createRaw(c, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: pv },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'manual',
        hostPath: { path: `/data/${claim}` },
        claimRef: { namespace: NS, name: claim },
        ...(zone === undefined
          ? {}
          : {
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] }],
                },
              },
            }),
      },
    } as k8s.KubernetesObject);
    await createRaw(c, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: claim, namespace: NS },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'manual',
        volumeName: pv,
        resources: { requests: { storage: '1Gi' } },
      },
    } as k8s.KubernetesObject);
  }

  it('dry-run evicts only the pod whose volume every zone reaches, with no 403 on the volume kinds', async () => {
    await ensureNamespace(c, NS);
    await createRaw(c, {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'manual' },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    } as k8s.KubernetesObject);
    for (let i = 0; i < 4; i++) {
      await volume(`data-db-${i}`, i < 3 ? 'zone-a' : undefined);
      await createRaw(c, pod(`db-${i}`, `data-db-${i}`));
    }
    await waitFor(
      async () =>
        (await c.core.listNamespacedPod({ namespace: NS })).items.filter(
          (p) => p.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True') === true,
        ).length === 4,
      60_000,
      'the four pods to be Ready',
    );

    await createPolicy(c, 'volumes', {
      mode: 'DryRun',
      namespaces: { include: [NS] },
      eviction: { evictBarePods: true, maxPerWorkload: 10 },
    });
    const op = startOperatorWith(operatorKc, { namespace: OPERATOR_NAMESPACE, kubeApiQps: 50, kubeApiBurst: 100 });
    operators.push(op);
    onTestFailed(() =>
      console.log(
        op.logs
          .slice(-40)
          .map((l) => JSON.stringify(l))
          .join('\n'),
      ),
    );
    await op.operator.waitForSync();
    const mark = evictionRequests(c.cp).length;
    await op.operator.tick('volumes');

    const evicted = evictionRequests(c.cp)
      .slice(mark)
      .filter((e) => e.objectRef?.namespace === NS);
    expect(evicted.map((e) => e.objectRef?.name)).toEqual(['db-3']);
    expect(evicted.every(isDryRun)).toBe(true);
    const denied = forbidden(c.cp).map((e) => e.objectRef?.resource);
    expect(
      denied.filter((r) =>
        ['persistentvolumes', 'persistentvolumeclaims', 'storageclasses', 'csinodes'].includes(r ?? ''),
      ),
    ).toEqual([]);
  }, 120_000);
});
