// RBAC on the real API server: the operator runs with the shipped ClusterRole and leader-election Role, through a
// TokenRequest token of the shipped ServiceAccount, as in its pod. A whole DryRun → Evict scenario (with leader
// election, Events created and aggregated, status written) gets zero 403. And every rule is needed: with any one
// rule removed from the ClusterRole or the Role, the same DryRun scenario is refused (a 403 in the audit log on a
// resource of the removed rule), so the grant is exactly what the operator uses. The scenario includes the checks of a
// /metrics request (TokenReview, SubjectAccessReview), so their grants are held to the same rule, and a cycle of a
// `usage: Metrics` policy (a list of metrics.k8s.io nodes and pods: with no metrics-server here the allowed answer is
// 404, the refused one 403) and of a `usage: Prometheus` policy (a get of its token's Secret in the operator's
// namespace). Resources are told apart by API group (core nodes are not metrics.k8s.io nodes).
import type { IncomingMessage } from 'node:http';
import * as k8s from '@kubernetes/client-node';
import { createDelegatingAuth } from '../../src/serving/delegatingAuth.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlaneAvailable, type AuditEvent } from '../controlplane/index.js';
import { manifestObjects } from './cluster.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  createDeployment,
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  OPERATOR_USER,
  operatorKubeConfig,
  patchPolicy,
  skewOf,
  startCluster,
  waitFor,
  waitForBudget,
  waitForReady,
  zoneCounts,
  type Cluster,
} from './cluster.js';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}
interface RoleObject extends k8s.KubernetesObject {
  rules: Rule[];
}

interface BindingObject extends k8s.KubernetesObject {
  roleRef: { kind: string; name: string };
  subjects?: Array<{ kind: string; name: string; namespace?: string }>;
}

/** The roles the manifests bind to the operator's ServiceAccount (not the metrics-reader role it offers others). */
const bound = new Set(
  manifestObjects()
    .filter((o): o is BindingObject => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')
    .filter((b) => b.subjects?.some((s) => s.kind === 'ServiceAccount' && s.namespace === OPERATOR_NAMESPACE))
    .map((b) => `${b.roleRef.kind}/${b.roleRef.name}`),
);
const roles = manifestObjects().filter(
  (o): o is RoleObject => (o.kind === 'ClusterRole' || o.kind === 'Role') && bound.has(`${o.kind}/${o.metadata?.name}`),
);

/** `resource` or `resource/subresource` of an audit event, with its API group (`group/` unless core). */
const resourceOf = (e: AuditEvent): string =>
  `${groupPrefix(e.objectRef?.apiGroup ?? '')}${e.objectRef?.resource ?? ''}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
const groupPrefix = (group: string): string => (group === '' ? '' : `${group}/`);

describe.skipIf(!controlPlaneAvailable())('the shipped RBAC on a real API server', () => {
  let c: Cluster;
  let operatorKc: k8s.KubeConfig;

  beforeAll(async () => {
    c = await startCluster({ zones: ['zone-a', 'zone-b'], nodesPerZone: 1 });
    await installManifests(c);
    operatorKc = await operatorKubeConfig(c);
    // Two skewed workloads: one the Evict scenario balances, one that stays skewed for the DryRun variants.
    for (const namespace of ['rbac', 'rbac-evict']) {
      await createDeployment(c, { namespace, name: 'web', replicas: 4, pdb: { maxUnavailable: 1 } });
      await waitForReady(c, namespace, 'web', 4);
    }
    await addZone(c, 'zone-c', 1);
    for (const namespace of ['rbac', 'rbac-evict']) {
      await waitForBudget(c, namespace, 'web', 1);
      await createPolicy(c, namespace, { mode: 'DryRun', namespaces: { include: [namespace] } });
    }
    await createPolicy(c, 'rbac-metrics', {
      mode: 'DryRun',
      namespaces: { include: ['rbac'] },
      strategies: {
        topologySpread: { enabled: false },
        lowNodeUtilization: { enabled: true, usage: 'Metrics' },
      },
    });
    // usage: Prometheus: each cycle gets the token's Secret in the operator's namespace (the query then fails: no
    // Prometheus here, which only makes the policy Degraded).
    await c.core.createNamespacedSecret({
      namespace: OPERATOR_NAMESPACE,
      body: { metadata: { name: 'prometheus-token' }, stringData: { prometheusAuthToken: 'token' } },
    });
    await createPolicy(c, 'rbac-prometheus', {
      mode: 'DryRun',
      namespaces: { include: ['rbac'] },
      strategies: {
        topologySpread: { enabled: false },
        lowNodeUtilization: {
          enabled: true,
          usage: 'Prometheus',
          thresholds: { MetricResource: 30 },
          targetThresholds: { MetricResource: 60 },
          prometheus: {
            url: 'http://127.0.0.1:9',
            query: 'instance:node_cpu_utilisation:rate5m',
            authToken: { secretReference: { namespace: OPERATOR_NAMESPACE, name: 'prometheus-token' } },
          },
        },
      },
    });
  }, 180_000);

  afterAll(async () => {
    await c?.stop();
  });

  function startOperator(): OperatorHandle {
    return startOperatorWith(operatorKc, {
      namespace: OPERATOR_NAMESPACE,
      leaderElect: true,
      kubeApiQps: 50,
      kubeApiBurst: 100,
      leaderElection: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 200 },
      minReplanIntervalMs: 200,
    });
  }

  /**
   * Sync, lead (Lease create + renew), two DryRun cycles (so an Event repeats and is patched), a /metrics request
   * checked (TokenReview, then SubjectAccessReview: the operator's own token, which may not read /metrics), stop.
   */
  async function dryRunScenario(op: OperatorHandle, policy = 'rbac'): Promise<void> {
    await op.operator.waitForSync();
    await waitFor(() => op.operator.isLeader(), 15_000, 'leadership');
    await op.operator.tick(policy);
    await op.operator.tick(policy);
    await op.operator.tick('rbac-metrics');
    await op.operator.tick('rbac-prometheus');
    const auth = createDelegatingAuth({ api: op.operator.authReviews });
    const token = operatorKc.getCurrentUser()?.token ?? '';
    const scrape = { headers: { authorization: `Bearer ${token}` }, method: 'GET' } as unknown as IncomingMessage;
    await auth.check(scrape, '/metrics');
  }

  function refusedSince(mark: number): AuditEvent[] {
    return c.cp
      .audit()
      .slice(mark)
      .filter((e) => e.user.username === OPERATOR_USER && e.responseStatus?.code === 403);
  }

  it('a whole DryRun → Evict scenario gets zero 403, and uses every granted verb', async () => {
    const mark = c.cp.audit().length;
    const op = startOperator();
    try {
      await dryRunScenario(op, 'rbac-evict');
      await patchPolicy(c, 'rbac-evict', { spec: { mode: 'Evict' } });
      await waitFor(() => op.operator.cache.policy('rbac-evict')?.policy?.spec.mode === 'Evict', 10_000, 'the edit');
      for (let i = 0; i < 4 && skewOf(await zoneCounts(c, 'rbac-evict', 'web')) > 1; i++) {
        await op.operator.tick('rbac-evict');
      }
      expect(skewOf(await zoneCounts(c, 'rbac-evict', 'web'))).toBeLessThanOrEqual(1);
    } finally {
      await op.stop();
    }
    const requests = c.cp
      .audit()
      .slice(mark)
      .filter((e) => e.user.username === OPERATOR_USER);
    expect(refusedSince(mark)).toEqual([]);
    const evictions = evictionRequests(c.cp).filter((e) => e.objectRef?.namespace === 'rbac-evict');
    expect(evictions.some(isDryRun)).toBe(true);
    expect(evictions.some((e) => !isDryRun(e) && e.responseStatus?.code === 201)).toBe(true);
    // Every verb on every resource the roles grant was used: so removing any of them must show.
    const used = new Set(requests.map((e) => `${e.verb} ${resourceOf(e)}`));
    const granted = roles.flatMap((role) =>
      role.rules.flatMap((rule) =>
        rule.apiGroups.flatMap((g) =>
          rule.resources.flatMap((r) => rule.verbs.map((v) => `${v} ${groupPrefix(g)}${r}`)),
        ),
      ),
    );
    // Except metrics.k8s.io pods: the reader lists them only after nodes answered, and there is no metrics-server
    // here (test/integration/metricsApi.test.ts lists both from a stand-in, through the shipped ClusterRole).
    expect(granted.filter((g) => !used.has(g))).toEqual(['list metrics.k8s.io/pods']);
    expect(used.has('list metrics.k8s.io/nodes')).toBe(true);
  }, 180_000);

  const variants = roles.flatMap((role) =>
    role.rules.map((rule, index) => ({
      role,
      index,
      title: `${role.kind} ${role.metadata?.name} without rule ${index} (${rule.verbs.join(',')} ${rule.resources.join(',')})`,
    })),
  );

  it.each(variants)(
    '$title: the scenario is refused',
    async ({ role, index }) => {
      const path =
        role.kind === 'Role'
          ? `/apis/rbac.authorization.k8s.io/v1/namespaces/${role.metadata!.namespace}/roles/${role.metadata!.name}`
          : `/apis/rbac.authorization.k8s.io/v1/clusterroles/${role.metadata!.name}`;
      const removed = role.rules[index]!;
      const reduced = { ...role, rules: role.rules.filter((_, i) => i !== index) };
      expect((await c.cp.request('PUT', path, reduced)).status).toBe(200);
      // The authorizer reads roles from an informer: wait until it denies what the removed rule granted.
      const authz = c.kc.makeApiClient(k8s.AuthorizationV1Api);
      await waitFor(
        async () => {
          const review = await authz.createSubjectAccessReview({
            body: {
              spec: {
                user: OPERATOR_USER,
                groups: ['system:serviceaccounts', `system:serviceaccounts:${OPERATOR_NAMESPACE}`],
                resourceAttributes: {
                  group: removed.apiGroups[0],
                  resource: removed.resources[0]!.split('/')[0],
                  subresource: removed.resources[0]!.split('/')[1],
                  verb: removed.verbs[0],
                  namespace: role.kind === 'Role' ? role.metadata!.namespace : 'rbac',
                },
              },
            },
          });
          return review.status?.allowed === false;
        },
        10_000,
        'the reduced role to take effect',
      );
      const mark = c.cp.audit().length;
      const op = startOperator();
      try {
        // Either the scenario completes (and must have met a 403 on the way) or it stalls on one (a list refused
        // leaves the caches unsynced): wait for whichever comes first.
        await Promise.race([
          dryRunScenario(op).catch(() => undefined),
          waitFor(() => refusedSince(mark).length > 0, 30_000, 'a 403').catch(() => undefined),
        ]);
      } finally {
        await op.stop();
        expect((await c.cp.request('PUT', path, role)).status).toBe(200);
      }
      const refused = refusedSince(mark);
      expect(refused.length, 'no request was refused').toBeGreaterThan(0);
      const removedResources = removed.apiGroups.flatMap((g) => removed.resources.map((r) => `${groupPrefix(g)}${r}`));
      expect(refused.some((e) => removedResources.includes(resourceOf(e)))).toBe(true);
    },
    120_000,
  );
});
