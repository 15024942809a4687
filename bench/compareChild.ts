// One row of bench/compare.ts, in one process: two trees' compiled code loaded side by side, each planning one cycle
// on the cluster its own bench generator and loader build, taking turns call by call (A B, then B A), so that the
// load of a shared machine, which moves within seconds, falls on both alike. Each tree's modules are its own (separate
// files, separately compiled by V8); they share the heap, and the turns spread its collections over both.
//
// Arguments: baseRoot headRoot row samples. Rows mirror the one-cycle rows of bench/run.ts (the same shapes, the
// default policy, or the default with lowNodeUtilization alone and deviation thresholds of 2 points).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { MIXED_150K, SPREAD_10K, type ClusterShape } from './clusters.js';
import type { Policy } from '../src/policy/types.js';
import { withLowNodeUtilization } from './policies.js';
import type { ClusterSnapshot } from '../src/model/types.js';

/** bench/run.ts's one-cycle rows, by the names this script takes. */
const ROWS: Record<string, { readonly shape: ClusterShape; readonly lowNodeUtilization?: true }> = {
  '10k': { shape: SPREAD_10K },
  '50k-mixed': {
    shape: { nodes: 1700, zones: 3, workloads: 1000, replicas: 50, skewedFraction: 0.1, kind: 'mixed', namespaces: 50 },
  },
  '150k': { shape: { ...MIXED_150K, kind: 'spread' } },
  '150k-mixed': { shape: MIXED_150K },
  'lnu-10k': { shape: SPREAD_10K, lowNodeUtilization: true },
  'lnu-150k': { shape: MIXED_150K, lowNodeUtilization: true },
};

interface TreeModules {
  generateCluster(shape: ClusterShape): { objects: unknown[] };
  snapshotFromObjects(objects: readonly unknown[], opts: { file: string; now: number }): { snapshot: ClusterSnapshot };
  planCycle(snapshot: ClusterSnapshot, policy: Policy): unknown;
  DEFAULT_POLICY: Policy;
}

async function load(root: string): Promise<TreeModules> {
  const url = (path: string): string => pathToFileURL(join(root, 'dist', path)).href;
  const clusters = (await import(url('bench/clusters.js'))) as Pick<TreeModules, 'generateCluster'>;
  const loader = (await import(url('src/snapshot/load.js'))) as Pick<TreeModules, 'snapshotFromObjects'>;
  const plan = (await import(url('src/planner/plan.js'))) as Pick<TreeModules, 'planCycle'>;
  const parse = (await import(url('src/policy/parse.js'))) as Pick<TreeModules, 'DEFAULT_POLICY'>;
  return { ...clusters, ...loader, ...plan, ...parse };
}

/** A call's time, from a collected heap: the garbage of the other tree's turn is not charged to this one. */
function timed(fn: () => unknown): number {
  global.gc?.();
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const [baseRoot, headRoot, rowName, samplesArg] = process.argv.slice(2);
  const row = ROWS[rowName ?? ''];
  if (baseRoot === undefined || headRoot === undefined || row === undefined) {
    throw new Error(`usage: compareChild baseRoot headRoot (${Object.keys(ROWS).join('|')}) samples`);
  }
  const samples = Number(samplesArg ?? 20);
  const now = Date.parse('2026-11-22T00:00:00Z');
  const trees = await Promise.all([load(baseRoot), load(headRoot)]);
  const cycles = trees.map((t) => {
    const { snapshot } = t.snapshotFromObjects(t.generateCluster(row.shape).objects, { file: 'bench', now });
    const policy = row.lowNodeUtilization === true ? withLowNodeUtilization(t.DEFAULT_POLICY) : t.DEFAULT_POLICY;
    return () => t.planCycle(snapshot, policy);
  });
  const [base, head] = cycles as [() => unknown, () => unknown];
  // Warm both up (JIT, caches) before anything counts.
  for (let i = 0; i < 3; i++) {
    base();
    head();
  }
  const baseMs: number[] = [];
  const headMs: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < samples; i++) {
    let b: number, h: number;
    if (i % 2 === 0) {
      b = timed(base);
      h = timed(head);
    } else {
      h = timed(head);
      b = timed(base);
    }
    baseMs.push(b);
    headMs.push(h);
    ratios.push(h / b);
  }
  process.stdout.write(
    JSON.stringify({
      row: rowName,
      samples,
      baseMedianMs: Math.round(median(baseMs) * 10) / 10,
      headMedianMs: Math.round(median(headMs) * 10) / 10,
      medianRatio: Math.round(median(ratios) * 1000) / 1000,
      ratioOfMedians: Math.round((median(headMs) / median(baseMs)) * 1000) / 1000,
    }) + '\n',
  );
}

await main();
