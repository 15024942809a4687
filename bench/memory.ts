// The operator's watch-cache footprint: raw objects arrive one at a time (as an informer delivers them), are
// converted to the compact model on arrival and stored in the ClusterCache; the raw objects are dropped.
// Run in a fresh process per size so RSS is not polluted by other cases:
//   node --expose-gc dist/bench/memory.js <pods> <nodes>
import { ClusterCache } from '../src/operator/clusterCache.js';
import { systemClock } from '../src/clock.js';
import { convertNamespace, convertNode } from '../src/snapshot/convert.js';
import { clusterObjects, type ClusterShape } from './clusters.js';

interface Meta {
  readonly name: string;
  readonly namespace?: string;
}

function gcAndMeasure(): { rssMb: number; heapUsedMb: number } {
  for (let i = 0; i < 3; i++) global.gc?.();
  const m = process.memoryUsage();
  return { rssMb: Math.round(m.rss / 2 ** 20), heapUsedMb: Math.round(m.heapUsed / 2 ** 20) };
}

function main(): void {
  const pods = Number(process.argv[2] ?? 150_000);
  const nodes = Number(process.argv[3] ?? 5_000);
  const replicas = 50;
  const shape: ClusterShape = {
    nodes,
    zones: 3,
    workloads: Math.ceil(pods / replicas),
    replicas,
    skewedFraction: 0.1,
    kind: 'mixed',
    namespaces: 100,
  };
  const baseline = gcAndMeasure();
  const cache = new ClusterCache(systemClock);
  const start = process.hrtime.bigint();
  let count = 0;
  for (const raw of clusterObjects(shape)) {
    const o = raw as { kind: string; metadata: Meta };
    const metadata = { name: o.metadata.name, namespace: o.metadata.namespace };
    switch (o.kind) {
      case 'Node':
        cache.nodeHandlers.upsert({ metadata, value: convertNode(raw) });
        break;
      case 'Pod':
        cache.podHandlers.upsert({ metadata, value: cache.convertPod(raw) });
        count++;
        break;
      case 'PodDisruptionBudget':
        cache.pdbHandlers.upsert({ metadata, value: cache.convertPdb(raw) });
        break;
      case 'Namespace':
        cache.namespaceHandlers.upsert({ metadata, value: convertNamespace(raw) });
        break;
    }
  }
  const convertMs = Number(process.hrtime.bigint() - start) / 1e6;
  const held = gcAndMeasure();
  const snapshotStart = process.hrtime.bigint();
  const snapshot = cache.snapshot();
  const snapshotMs = Number(process.hrtime.bigint() - snapshotStart) / 1e6;
  const withSnapshot = gcAndMeasure();
  process.stdout.write(
    `${JSON.stringify({
      pods: count,
      nodes: snapshot.nodes.length,
      baselineRssMb: baseline.rssMb,
      cacheRssMb: held.rssMb,
      cacheHeapUsedMb: held.heapUsedMb,
      rssWithSnapshotMb: withSnapshot.rssMb,
      convertAndStoreMs: Math.round(convertMs),
      snapshotFromCacheMs: Math.round(snapshotMs * 10) / 10,
    })}\n`,
  );
}

main();
