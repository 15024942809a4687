// Status subresource semantics on the RebalancePolicy custom resource, generation tracking, and Lease
// optimistic concurrency (what leader election relies on).
import {
  CoordinationV1Api,
  CustomObjectsApi,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Lease,
} from '@kubernetes/client-node';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KubeObject, TestApiServer } from '../apiserver/index.js';
import { readCrdFile, startTestApiServer } from '../apiserver/index.js';
import { apiError, pdb } from './fixtures.js';

let server: TestApiServer;
let custom: CustomObjectsApi;

const GROUP = { group: 'rebalancer.dev', version: 'v1alpha1', plural: 'rebalancepolicies' };
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeEach(async () => {
  server = await startTestApiServer();
  custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
});

afterEach(async () => {
  await server.close();
});

type Policy = KubeObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

async function createPolicy(): Promise<Policy> {
  return (await custom.createClusterCustomObject({
    ...GROUP,
    body: {
      apiVersion: 'rebalancer.dev/v1alpha1',
      kind: 'RebalancePolicy',
      metadata: { name: 'default' },
      spec: { mode: 'DryRun' },
      status: { observedGeneration: 99 },
    },
  })) as Policy;
}

describe('RebalancePolicy (cluster-scoped custom resource with /status)', () => {
  it('starts at generation 1 and drops status on create', async () => {
    const created = await createPolicy();
    expect(created.metadata.generation).toBe(1);
    expect(created.metadata.namespace).toBeUndefined();
    expect(created.status).toBeUndefined();
  });

  it('bumps generation on spec changes only, and ignores status on the main resource', async () => {
    const created = await createPolicy();
    const specChanged = (await custom.patchClusterCustomObject(
      { ...GROUP, name: 'default', body: { spec: { mode: 'Evict' }, status: { lastRunTime: 'x' } } },
      mergePatch,
    )) as Policy;
    expect(specChanged.metadata.generation).toBe(2);
    expect(specChanged.status).toBeUndefined();
    const labelled = (await custom.patchClusterCustomObject(
      { ...GROUP, name: 'default', body: { metadata: { labels: { team: 'platform' } } } },
      mergePatch,
    )) as Policy;
    expect(labelled.metadata.generation).toBe(2);
    expect(Number(labelled.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));
  });

  it('writes status through /status without bumping generation and ignores spec there', async () => {
    const created = await createPolicy();
    const withStatus = (await custom.replaceClusterCustomObjectStatus({
      ...GROUP,
      name: 'default',
      body: { ...created, spec: { mode: 'Evict' }, status: { observedGeneration: 1, lastPlan: { evictions: 2 } } },
    })) as Policy;
    expect(withStatus.metadata.generation).toBe(1);
    expect(withStatus.spec).toEqual({ mode: 'DryRun' });
    expect(withStatus.status).toEqual({ observedGeneration: 1, lastPlan: { evictions: 2 } });
    const patched = (await custom.patchClusterCustomObjectStatus(
      { ...GROUP, name: 'default', body: { status: { totals: { evicted: 1 } } } },
      mergePatch,
    )) as Policy;
    expect(patched.status).toEqual({ observedGeneration: 1, lastPlan: { evictions: 2 }, totals: { evicted: 1 } });
  });

  it('rejects a status write with a stale resourceVersion (409) and a PUT without resourceVersion (422)', async () => {
    const created = await createPolicy();
    await custom.patchClusterCustomObjectStatus({ ...GROUP, name: 'default', body: { status: { a: 1 } } }, mergePatch);
    const stale = await apiError(
      custom.replaceClusterCustomObjectStatus({ ...GROUP, name: 'default', body: { ...created, status: { a: 2 } } }),
    );
    expect(stale.code).toBe(409);
    const { resourceVersion: _rv, ...metadata } = created.metadata;
    const unconditional = await apiError(
      custom.replaceClusterCustomObject({ ...GROUP, name: 'default', body: { ...created, metadata } }),
    );
    expect(unconditional.code).toBe(422);
    expect(unconditional.status.message).toContain(
      'metadata.resourceVersion: Invalid value: 0: must be specified for an update',
    );
  });

  it('answers 415 to a strategic merge patch, as for every custom resource', async () => {
    await createPolicy();
    const err = await apiError(
      custom.patchClusterCustomObject(
        { ...GROUP, name: 'default', body: { spec: { mode: 'Evict' } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(err.code).toBe(415);
  });

  it('applies structural defaults from a CRD schema when one is given', async () => {
    await server.close();
    server = await startTestApiServer({
      crds: [
        {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'CustomResourceDefinition',
          metadata: { name: 'rebalancepolicies.rebalancer.dev' },
          spec: {
            group: 'rebalancer.dev',
            scope: 'Cluster',
            names: {
              plural: 'rebalancepolicies',
              singular: 'rebalancepolicy',
              kind: 'RebalancePolicy',
              shortNames: ['rbp'],
            },
            versions: [
              {
                name: 'v1alpha1',
                served: true,
                storage: true,
                subresources: { status: {} },
                schema: {
                  openAPIV3Schema: {
                    type: 'object',
                    properties: {
                      spec: {
                        type: 'object',
                        default: {},
                        properties: {
                          mode: { type: 'string', default: 'DryRun' },
                          eviction: {
                            type: 'object',
                            default: {},
                            properties: { maxPerCycle: { type: 'integer', default: 10 } },
                          },
                        },
                      },
                    },
                  },
                },
              },
            ],
          },
        },
      ],
    });
    custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const created = (await custom.createClusterCustomObject({
      ...GROUP,
      body: { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: { name: 'p' } },
    })) as Policy;
    expect(created.spec).toEqual({ mode: 'DryRun', eviction: { maxPerCycle: 10 } });
  });
});

describe("the project's CRD (crds/rebalancer.dev_rebalancepolicies.yaml)", () => {
  it('serves RebalancePolicy with the schema defaults of the DESIGN contract', async () => {
    await server.close();
    server = await startTestApiServer({
      crds: readCrdFile(fileURLToPath(new URL('../../crds/rebalancer.dev_rebalancepolicies.yaml', import.meta.url))),
    });
    custom = server.kubeConfig().makeApiClient(CustomObjectsApi);
    const created = (await custom.createClusterCustomObject({
      ...GROUP,
      body: { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: { name: 'default' }, spec: {} },
    })) as Policy;
    expect(created.spec).toMatchObject({ mode: 'DryRun', eviction: { maxPerCycle: 10, maxPerNode: 2 } });
  });
});

describe('generation on built-in resources', () => {
  it('bumps a PDB generation on spec changes and keeps status out of main-resource writes', async () => {
    const policy = server.kubeConfig().makeApiClient(PolicyV1Api);
    await policy.createNamespacedPodDisruptionBudget({
      namespace: 'default',
      body: pdb('web', { minAvailable: 1, matchLabels: { app: 'web' } }) as never,
    });
    const patched = await policy.patchNamespacedPodDisruptionBudget(
      { name: 'web', namespace: 'default', body: { spec: { minAvailable: 2 }, status: { disruptionsAllowed: 7 } } },
      mergePatch,
    );
    expect(patched.metadata?.generation).toBe(2);
    expect(patched.status?.disruptionsAllowed).toBe(0);
  });
});

describe('Lease', () => {
  function lease(holder: string): V1Lease {
    return {
      metadata: { name: 'kube-rebalancer', namespace: 'kube-system' },
      spec: { holderIdentity: holder, leaseDurationSeconds: 15, acquireTime: new Date(), renewTime: new Date() },
    };
  }

  it('lets exactly one of two candidates win a race on the same resourceVersion', async () => {
    const a = server.kubeConfig().makeApiClient(CoordinationV1Api);
    const b = server.kubeConfig().makeApiClient(CoordinationV1Api);
    const created = await a.createNamespacedLease({ namespace: 'kube-system', body: lease('a') });
    const duplicate = await apiError(b.createNamespacedLease({ namespace: 'kube-system', body: lease('b') }));
    expect(duplicate.code).toBe(409);
    expect(duplicate.status.reason).toBe('AlreadyExists');
    const seenByB = await b.readNamespacedLease({ name: 'kube-rebalancer', namespace: 'kube-system' });
    const renewA = {
      ...lease('a'),
      metadata: { ...lease('a').metadata, resourceVersion: created.metadata!.resourceVersion! },
    };
    const takeB = {
      ...lease('b'),
      metadata: { ...lease('b').metadata, resourceVersion: seenByB.metadata!.resourceVersion! },
    };
    const results = await Promise.allSettled([
      a.replaceNamespacedLease({ name: 'kube-rebalancer', namespace: 'kube-system', body: renewA }),
      b.replaceNamespacedLease({ name: 'kube-rebalancer', namespace: 'kube-system', body: takeB }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected');
    expect(rejected?.reason).toMatchObject({ code: 409 });
  });
});
