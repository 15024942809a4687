// usage: Metrics against the real control plane: the real kube-apiserver's aggregation layer serves metrics.k8s.io
// from a stand-in metrics-server (an HTTPS server in this test, registered by an APIService, reached through a
// Service and its Endpoints with --enable-aggregator-routing), and the operator reads it with the shipped RBAC.
// Before the APIService exists the API server answers 404 and the policy is Degraded (MetricsUnavailable); once it is
// Available the next cycle plans by usage and the policy is Ready.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { selfSignedCert } from '../../src/serving/selfSignedCert.js';
import { controlPlaneAvailable } from '../controlplane/index.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import {
  addZone,
  conditionOf,
  createDeployment,
  createPolicy,
  evictionRequests,
  installManifests,
  isDryRun,
  livePods,
  OPERATOR_NAMESPACE,
  operatorKubeConfig,
  policyStatus,
  startCluster,
  waitFor,
  waitForReady,
  type Cluster,
} from './cluster.js';

const NS = 'usage';
const GV = 'metrics.k8s.io/v1beta1';

/** An address the API server may route to: Endpoints refuse loopback ones. */
function routableAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return undefined;
}

/** The stand-in metrics-server: discovery and the two lists, from `usage` (node name → cpu, pod name → cpu). */
function metricsServer(usage: { nodes: Record<string, string>; pods: Record<string, string> }): Server {
  const { cert, key } = selfSignedCert({ commonName: 'metrics-server', altNames: ['metrics-server.kube-system.svc'] });
  const stamp = new Date().toISOString();
  return createServer({ cert, key }, (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const send = (body: unknown): void => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === `/apis/${GV}`) {
      return send({
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: GV,
        resources: [
          { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
          { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
        ],
      });
    }
    if (path === `/apis/${GV}/nodes`) {
      return send({
        kind: 'NodeMetricsList',
        apiVersion: GV,
        metadata: {},
        items: Object.entries(usage.nodes).map(([name, cpu]) => ({
          metadata: { name },
          timestamp: stamp,
          window: '20s',
          usage: { cpu, memory: '1Gi' },
        })),
      });
    }
    if (path === `/apis/${GV}/pods`) {
      return send({
        kind: 'PodMetricsList',
        apiVersion: GV,
        metadata: {},
        items: Object.entries(usage.pods).map(([name, cpu]) => ({
          metadata: { name, namespace: NS },
          timestamp: stamp,
          window: '20s',
          containers: [{ name: 'app', usage: { cpu, memory: '64Mi' } }],
        })),
      });
    }
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
  });
}

describe.skipIf(!controlPlaneAvailable() || routableAddress() === undefined)(
  'usage: Metrics through an aggregated metrics.k8s.io on a real control plane',
  () => {
    let cluster: Cluster | undefined;
    let backend: Server | undefined;
    let op: OperatorHandle | undefined;

    afterAll(async () => {
      await op?.stop();
      await cluster?.stop();
      await new Promise((resolve) => (backend === undefined ? resolve(undefined) : backend.close(resolve)));
    });

    it('404 without the APIService: Degraded (MetricsUnavailable); Available: plans by usage and is Ready', async () => {
      const c = (cluster = await startCluster({
        zones: ['zone-a'],
        nodesPerZone: 1,
        nodeCpu: '4',
        apiServerArgs: ['--enable-aggregator-routing=true'],
      }));
      await installManifests(c);
      // 4 pods of 100m on the one node (10% requested) that use 900m each; then two empty nodes join.
      await createDeployment(c, { namespace: NS, name: 'web', replicas: 4, cpu: '100m', zoneMaxSkew: null });
      await waitForReady(c, NS, 'web', 4);
      await addZone(c, 'zone-b', 2, '4');
      await createPolicy(c, 'by-usage', {
        mode: 'DryRun',
        namespaces: { include: [NS] },
        strategies: {
          topologySpread: { enabled: false },
          lowNodeUtilization: {
            enabled: true,
            thresholds: { cpu: 20 },
            targetThresholds: { cpu: 60 },
            usage: 'Metrics',
          },
        },
        eviction: { minPodAge: '0s', maxPerNode: 4, maxPerWorkload: 4, maxPerCycle: 10, maxPerNamespace: 10 },
      });
      op = startOperatorWith(await operatorKubeConfig(c), { namespace: OPERATOR_NAMESPACE, minReplanIntervalMs: 200 });
      const logs = op.logs;
      onTestFailed(() =>
        console.log(
          logs
            .slice(-40)
            .map((l) => JSON.stringify(l))
            .join('\n'),
        ),
      );
      await op.operator.waitForSync();

      await op.operator.tick('by-usage');
      const absent = conditionOf(await policyStatus(c, 'by-usage'), 'Degraded');
      expect(absent).toMatchObject({ status: 'True', reason: 'MetricsUnavailable' });
      expect(absent?.message).toContain('metrics.k8s.io/v1beta1 nodes: HTTP 404');

      // metrics-server comes up: a Service and its Endpoints for the backend, and the APIService.
      const pods = await livePods(c, NS, 'web');
      const server = (backend = metricsServer({
        nodes: { 'zone-a-node-1': '3600m', 'zone-b-node-1': '200m', 'zone-b-node-2': '200m' },
        pods: Object.fromEntries(pods.map((p) => [p.metadata!.name!, '900m'])),
      }));
      await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
      const port = (server.address() as AddressInfo).port;
      await c.core.createNamespacedService({
        namespace: 'kube-system',
        body: { metadata: { name: 'metrics-server' }, spec: { ports: [{ port: 443, targetPort: port }] } },
      });
      await c.core.createNamespacedEndpoints({
        namespace: 'kube-system',
        body: {
          metadata: { name: 'metrics-server' },
          subsets: [{ addresses: [{ ip: routableAddress()! }], ports: [{ port }] }],
        },
      });
      await c.objects.create({
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1beta1.metrics.k8s.io' },
        spec: {
          group: 'metrics.k8s.io',
          version: 'v1beta1',
          service: { namespace: 'kube-system', name: 'metrics-server', port: 443 },
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      } as never);
      await waitFor(
        async () => {
          const list = (await c.custom.listClusterCustomObject({
            group: 'metrics.k8s.io',
            version: 'v1beta1',
            plural: 'nodes',
          })) as { items?: unknown[] };
          return (list.items?.length ?? 0) === 3;
        },
        30_000,
        'the aggregated metrics API to answer',
      );

      const mark = evictionRequests(c.cp).length;
      await op.operator.tick('by-usage');
      const status = await policyStatus(c, 'by-usage');
      expect(conditionOf(status, 'Degraded')).toMatchObject({ status: 'False' });
      expect(conditionOf(status, 'Ready')).toMatchObject({ status: 'True' });
      // 90% used → at most 60%: two pods of 900m, dry run.
      const dry = evictionRequests(c.cp)
        .slice(mark)
        .filter((e) => isDryRun(e) && e.objectRef?.namespace === NS);
      expect(dry).toHaveLength(2);
    }, 120_000);
  },
);
