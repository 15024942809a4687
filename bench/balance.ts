// Balancing the 10k case end to end: 1,000 Deployments of 10 replicas skewed 5/5/0 over three zones, one PDB
// (maxUnavailable 1) each, against the test API server (real HTTP, its ReplicaSet controller, the scheduler
// simulation as scheduler, and a kubelet that makes each replacement Ready 1 s after binding). One policy run.
// Prints the time to balance and the API calls made, by verb, with the 429 count.
//   node dist/bench/balance.js [qps] [burst]      (defaults: the operator's, 20 / 40)
import {
  allZoneSkews,
  createPolicy,
  evictionRequests,
  seedSkewedDeployments,
  startCluster,
  startOperator,
} from '../test/e2e/harness.js';

const DEPLOYMENTS = 1000;
const NODES_PER_ZONE = 10;

async function main(): Promise<void> {
  const qps = Number(process.argv[2] ?? 20);
  const burst = Number(process.argv[3] ?? 40);
  const server = await startCluster({
    nodesPerZone: NODES_PER_ZONE,
    readyDelayMs: 1000,
    nodeCpu: '400',
    scheduler: { scope: 'workload' },
    server: { requestLogLimit: 1_000_000 },
  });
  seedSkewedDeployments(server, { deployments: DEPLOYMENTS, nodesPerZone: NODES_PER_ZONE, namespaces: 10 });
  await server.settle();
  createPolicy(server, 'bench', {
    mode: 'Evict',
    eviction: {
      maxPerCycle: 10_000,
      maxPerNode: 10_000,
      maxPerNamespace: 10_000,
      maxPerWorkload: 10,
      replacementTimeout: '120s',
    },
  });
  const op = startOperator(server, { kubeApiQps: qps, kubeApiBurst: burst, logLevel: 'warn' });
  const syncStart = performance.now();
  await op.operator.waitForSync();
  const syncMs = performance.now() - syncStart;
  const mark = server.stats.mark();
  const start = performance.now();
  await op.operator.tick('bench');
  const runMs = performance.now() - start;

  const skews = allZoneSkews(server);
  const byVerb = server.stats.counters(mark);
  process.stdout.write(
    `${JSON.stringify({
      case: '1,000 Deployments x 10 skewed 5/5/0, PDB maxUnavailable 1, replacements Ready 1 s after binding',
      kubeApiQps: qps,
      kubeApiBurst: burst,
      cacheSyncMs: Math.round(syncMs),
      runSeconds: Math.round(runMs / 100) / 10,
      deploymentsBalanced: skews.filter((s) => s <= 1).length,
      deployments: skews.length,
      evictions: evictionRequests(server, mark).length,
      apiCalls: server.stats.count({}, mark),
      apiCallsByVerb: byVerb,
      answers429: server.stats.count({ code: 429 }, mark),
      listCallsDuringRun: server.stats.count({ verb: 'list' }, mark),
      // The test API server (with its request log) and the operator share this process: not the operator's footprint.
      processRssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
    })}\n`,
  );
  await op.stop();
  await server.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exitCode = 1;
});
