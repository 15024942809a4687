// usage: Prometheus against a real Prometheus (Debian's 2.42, as test/integration/monitoring.test.ts runs it) and the
// real control plane: a recording of node usage (an OpenMetrics file written here, turned into a TSDB block by
// `promtool tsdb create-blocks-from openmetrics`) is served by Prometheus from its data directory, and the operator,
// with the shipped RBAC and the token's Secret in its namespace, runs a lowNodeUtilization policy that queries it.
// The two nodes the recording has at 90% each shed the fewest pods that bring them to the 60% target (their 4 pods
// share the 90 points: 2 leave each), onto the two nodes it has at 5%, as the audit log and the pods show. Then
// Prometheus is stopped (by its pid): the next cycle is Degraded (MetricsUnavailable, naming the server) and no
// eviction request, dry run or not, reaches the API server.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { controlPlaneAvailable } from '../controlplane/index.js';
import type { ManagedProcess } from '../controlplane/processes.js';
import { startOperatorWith, type OperatorHandle } from '../e2e/harness.js';
import { findOnPath, PROMTOOL_HINT } from '../manifests/promtool.js';
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
  waitForReady,
  type Cluster,
} from './cluster.js';
import { startPrometheus } from './prometheusProcess.js';

const NS = 'usage';
const METRIC = 'instance:node_cpu_utilisation:rate5m';
/** The recording: what each node used over the last ten minutes (hot: the first zone's nodes). */
const USAGE: Readonly<Record<string, number>> = {
  'zone-a-node-1': 0.9,
  'zone-a-node-2': 0.9,
  'zone-b-node-1': 0.05,
  'zone-b-node-2': 0.05,
};

/** OpenMetrics text of the recording: one gauge series per node, a sample every 15 s up to `now` (seconds). */
function recording(now: number): string {
  const lines = [`# TYPE ${METRIC} gauge`];
  for (const [node, value] of Object.entries(USAGE)) {
    // Some noise around the value, as a real rate would have; the last sample is the value itself.
    for (let i = 40; i >= 0; i--) {
      const v = i === 0 ? value : Math.min(1, Math.max(0, value + (((i * 7) % 5) - 2) / 100));
      lines.push(`${METRIC}{instance="${node}"} ${v} ${now - i * 15}`);
    }
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}

const promtool = findOnPath('promtool');
const prometheusBin = findOnPath('prometheus');

describe.skipIf(!controlPlaneAvailable())(
  'usage: Prometheus with a real Prometheus serving a recording of node usage',
  () => {
    let cluster: Cluster | undefined;
    let prometheus: ManagedProcess | undefined;
    let op: OperatorHandle | undefined;

    afterAll(async () => {
      await op?.stop();
      await prometheus?.stop();
      await cluster?.stop();
    });

    it('balances by the query with the fewest evictions; with Prometheus stopped, Degraded and no eviction', async () => {
      // Missing tools fail the suite, as the monitoring suite does: CI must not pass by skipping it.
      if (promtool === undefined) throw new Error(PROMTOOL_HINT);
      if (prometheusBin === undefined) throw new Error(PROMTOOL_HINT.replace('promtool not', 'prometheus not'));
      const c = (cluster = await startCluster({ zones: ['zone-a'], nodesPerZone: 2, nodeCpu: '4' }));
      await installManifests(c);
      // 8 pods of 400m over the two zone-a nodes (4 each, 40% requested), then two empty nodes join.
      await createDeployment(c, { namespace: NS, name: 'web', replicas: 8, cpu: '400m', zoneMaxSkew: null });
      await waitForReady(c, NS, 'web', 8);
      await addZone(c, 'zone-b', 2, '4');
      const before = await livePods(c, NS, 'web');
      const nodeOf = new Map(before.map((p) => [p.metadata!.name!, p.spec!.nodeName!]));
      const perNode = (names: Iterable<string>, node: string): number =>
        [...names].filter((n) => nodeOf.get(n) === node).length;
      expect(perNode(nodeOf.keys(), 'zone-a-node-1')).toBe(4);
      expect(perNode(nodeOf.keys(), 'zone-a-node-2')).toBe(4);

      // The recording, as a TSDB block in Prometheus's data directory; Prometheus looks back an hour for a sample.
      const dir = join(c.cp.dir, 'prometheus-usage');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'usage.om'), recording(Math.floor(Date.now() / 1000)));
      execFileSync(promtool, ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'usage.om'), join(dir, 'data')], {
        stdio: 'pipe',
      });
      writeFileSync(join(dir, 'prometheus.yml'), 'global: {scrape_interval: 1m}\n');
      const started = await startPrometheus({
        bin: prometheusBin,
        name: 'prometheus-usage',
        dir: c.cp.dir,
        args: [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          '--query.lookback-delta=1h',
        ],
      });
      prometheus = started.proc;
      const server = prometheus;
      const url = started.url;
      onTestFailed(() => console.log(`prometheus log:\n${server.tail(20)}`));

      await c.core.createNamespacedSecret({
        namespace: OPERATOR_NAMESPACE,
        body: { metadata: { name: 'prometheus-token' }, stringData: { prometheusAuthToken: 'a-token' } },
      });
      await createPolicy(c, 'by-query', {
        mode: 'Evict',
        namespaces: { include: [NS] },
        strategies: {
          topologySpread: { enabled: false },
          lowNodeUtilization: {
            enabled: true,
            usage: 'Prometheus',
            thresholds: { MetricResource: 30 },
            targetThresholds: { MetricResource: 60 },
            prometheus: {
              url,
              query: METRIC,
              authToken: { secretReference: { namespace: OPERATOR_NAMESPACE, name: 'prometheus-token' } },
            },
          },
        },
        eviction: { minPodAge: '0s', maxPerNode: 8, maxPerWorkload: 8, maxPerCycle: 20, maxPerNamespace: 20 },
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

      const mark = evictionRequests(c.cp).length;
      await op.operator.tick('by-query');
      const status = await policyStatus(c, 'by-query');
      expect(conditionOf(status, 'Degraded')).toMatchObject({ status: 'False' });
      const sent = evictionRequests(c.cp).slice(mark);
      expect(sent.filter(isDryRun)).toEqual([]);
      const evicted = sent.filter((e) => e.responseStatus?.code === 201).map((e) => e.objectRef!.name!);
      expect(sent).toHaveLength(evicted.length);
      // The fewest: two from each hot node (90 → 45 points), none from the cool ones.
      expect(new Set(evicted).size).toBe(4);
      expect(perNode(evicted, 'zone-a-node-1')).toBe(2);
      expect(perNode(evicted, 'zone-a-node-2')).toBe(2);
      // The replacements run on the cool nodes (two each: 5 + 45 points, under the 60% target).
      await waitForReady(c, NS, 'web', 8);
      const after = await livePods(c, NS, 'web');
      const count = (node: string): number => after.filter((p) => p.spec?.nodeName === node).length;
      expect([count('zone-a-node-1'), count('zone-a-node-2'), count('zone-b-node-1'), count('zone-b-node-2')]).toEqual([
        2, 2, 2, 2,
      ]);

      // Prometheus goes away: the next cycle cannot read the query, says so, and evicts nothing.
      await prometheus.stop();
      expect(prometheus.running).toBe(false);
      const stopped = evictionRequests(c.cp).length;
      await op.operator.tick('by-query');
      const degraded = conditionOf(await policyStatus(c, 'by-query'), 'Degraded');
      expect(degraded).toMatchObject({ status: 'True', reason: 'MetricsUnavailable' });
      expect(degraded?.message).toContain(`Prometheus ${url} query "${METRIC}": unreachable`);
      expect(conditionOf(await policyStatus(c, 'by-query'), 'Ready')).toMatchObject({ status: 'False' });
      expect(evictionRequests(c.cp).slice(stopped)).toEqual([]);
    }, 240_000);
  },
);
