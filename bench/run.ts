// `npm run bench`: analysis and planning speed on generated clusters, printed as JSON.
// Figures are medians of several runs in one process; compare ratios within one run (shared, noisy machines).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyze } from '../src/analysis/analyze.js';
import { planCycle } from '../src/planner/plan.js';
import { DEFAULT_POLICY } from '../src/policy/parse.js';
import type { Policy } from '../src/policy/types.js';
import { withLowNodeUtilization } from './policies.js';
import { snapshotFromObjects } from '../src/snapshot/load.js';
import { ENABLE_HINT, findAssets } from '../test/controlplane/assets.js';
import { generateCluster, MIXED_150K, SPREAD_10K, type ClusterShape } from './clusters.js';
import { operatorInstallFrom } from './operatorInstall.js';
import { snapshotLoad } from './load.js';

interface Case {
  readonly name: string;
  readonly shape: ClusterShape;
  /** The policy of the one-cycle and whole-job rows: the default, or the default with lowNodeUtilization on. */
  readonly policy?: 'lowNodeUtilization';
  /** Targets from the issues, in milliseconds: analysis alone, one cycle's plan (default policy), the whole job. */
  readonly targets?: { readonly analysisMs?: number; readonly cyclePlanMs?: number; readonly wholeJobPlanMs?: number };
}

const CASES: Case[] = [
  {
    name: '10k pods, 5/5/0 spread (1,000 Deployments x 10)',
    shape: SPREAD_10K,
    targets: { cyclePlanMs: 50 },
  },
  {
    name: '50k pods, mixed',
    shape: { nodes: 1700, zones: 3, workloads: 1000, replicas: 50, skewedFraction: 0.1, kind: 'mixed', namespaces: 50 },
  },
  {
    name: '150k pods, 5,000 nodes, 3,000 workloads, 10% skewed',
    shape: {
      nodes: 5000,
      zones: 3,
      workloads: 3000,
      replicas: 50,
      skewedFraction: 0.1,
      kind: 'spread',
      namespaces: 100,
    },
    targets: { analysisMs: 1000, cyclePlanMs: 1000, wholeJobPlanMs: 2000 },
  },
  {
    name: '150k pods, mixed (anti-affinity, node affinity, taints), 10% skewed',
    shape: MIXED_150K,
    targets: { wholeJobPlanMs: 2000 },
  },
  // Issue 20: one lowNodeUtilization cycle (deviation thresholds of 2 points: the nodes of the skewed workloads are
  // overutilized, the others underutilized), the other strategies off so that the row measures this one.
  {
    name: 'lowNodeUtilization alone, 10k pods (zone c empty, zones a/b at 45% pods)',
    shape: SPREAD_10K,
    policy: 'lowNodeUtilization',
    targets: { cyclePlanMs: 100 },
  },
  {
    name: 'lowNodeUtilization alone, 150k pods, 5,000 nodes, mixed, 10% skewed',
    shape: MIXED_150K,
    policy: 'lowNodeUtilization',
    targets: { cyclePlanMs: 2000 },
  },
];

/** A policy that may act on everything at once: measures planning the whole job, not one paced cycle. */
function unboundedPolicy(): Policy {
  const spec = DEFAULT_POLICY.spec;
  return {
    ...DEFAULT_POLICY,
    name: 'bench-unbounded',
    spec: {
      ...spec,
      eviction: {
        ...spec.eviction,
        maxPerCycle: 1_000_000,
        maxPerNode: 1_000_000,
        maxPerNamespace: 1_000_000,
        maxPerWorkload: 1_000_000,
        minPodAgeMs: 0,
      },
    },
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const start = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** Each target with the measured median and whether it was met. */
function verdicts(
  c: Case,
  measured: Record<'analysisMs' | 'cyclePlanMs' | 'wholeJobPlanMs', number>,
): Record<string, unknown> {
  if (c.targets === undefined) return {};
  const out: Record<string, unknown> = {};
  for (const [key, target] of Object.entries(c.targets) as Array<[keyof typeof measured, number]>) {
    out[`${key.replace(/Ms$/, '')}TargetMs`] = target;
    out[`${key.replace(/Ms$/, '')}WithinTarget`] = measured[key] <= target;
  }
  return out;
}

function runCase(c: Case, repeats: number): Record<string, unknown> {
  const raw = generateCluster(c.shape);
  const now = Date.parse('2026-11-22T00:00:00Z');
  const convert = time(() => snapshotFromObjects(raw.objects, { file: 'bench', now }));
  const snapshot = convert.value.snapshot;
  const analysisMs: number[] = [];
  const planDefaultMs: number[] = [];
  const planFullMs: number[] = [];
  let groups = 0;
  let violations = 0;
  let evictionsDefault = 0;
  let evictionsFull = 0;
  const base = c.policy === 'lowNodeUtilization' ? withLowNodeUtilization(DEFAULT_POLICY) : DEFAULT_POLICY;
  const full = c.policy === 'lowNodeUtilization' ? withLowNodeUtilization(unboundedPolicy()) : unboundedPolicy();
  for (let i = 0; i < repeats; i++) {
    const a = time(() => analyze(snapshot, DEFAULT_POLICY.spec));
    analysisMs.push(a.ms);
    groups = a.value.groups.length;
    violations = a.value.violations.length;
    const p = time(() => planCycle(snapshot, base));
    planDefaultMs.push(p.ms);
    evictionsDefault = p.value.plan.evictions.length;
    const f = time(() => planCycle(snapshot, full));
    planFullMs.push(f.ms);
    evictionsFull = f.value.plan.evictions.length;
  }
  global.gc?.();
  return {
    case: c.name,
    nodes: snapshot.nodes.length,
    pods: snapshot.pods.length,
    workloads: c.shape.workloads,
    constraintGroups: groups,
    violations,
    convertMs: round(convert.ms),
    analysisMs: round(median(analysisMs)),
    planDefaultPolicyMs: round(median(planDefaultMs)),
    evictionsDefaultPolicy: evictionsDefault,
    planWholeJobMs: round(median(planFullMs)),
    evictionsWholeJob: evictionsFull,
    ...verdicts(c, {
      analysisMs: median(analysisMs),
      cyclePlanMs: median(planDefaultMs),
      wholeJobPlanMs: median(planFullMs),
    }),
    heapUsedMb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
    rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
  };
}

/** Watch-cache footprint, each size in a fresh process (bench/memory.ts). */
function cacheMemory(pods: number, nodes: number, targetMb: number): Record<string, unknown> {
  const script = fileURLToPath(new URL('./memory.js', import.meta.url));
  const out = execFileSync(process.execPath, ['--expose-gc', script, String(pods), String(nodes)], {
    encoding: 'utf8',
  });
  const figures = JSON.parse(out) as { cacheRssMb: number };
  return { ...figures, rssTargetMb: targetMb, rssWithinTarget: figures.cacheRssMb <= targetMb };
}

/** The operator's first sync of 150k pods through paginated lists over HTTP, in a fresh process (bench/listSync.ts). */
function listSync(pods: number, nodes: number): Record<string, unknown> {
  const script = fileURLToPath(new URL('./listSync.js', import.meta.url));
  const out = execFileSync(process.execPath, ['--expose-gc', script, String(pods), String(nodes)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(out) as Record<string, unknown>;
}

/** Balancing the 10k case against the test API server, in a fresh process (bench/balance.ts). */
function endToEnd(): Record<string, unknown> {
  const script = fileURLToPath(new URL('./balance.js', import.meta.url));
  const out = execFileSync(process.execPath, [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return JSON.parse(out) as Record<string, unknown>;
}

/** Targets of the real-control-plane runs (issue "Footprint and throughput"), against the descheduler's figures. */
const REAL_TARGETS = {
  3_000: { seconds: 60, peakRssMiB: 120 },
  10_000: { seconds: 165, peakRssMiB: 220 },
} as const;

/**
 * The 5/5/0 case on the real control plane (bench/controlPlane.ts) at 3,000 and 10,000 pods, each in a fresh process
 * with a fresh control plane, where KUBEBUILDER_ASSETS leads to the binaries; skipped otherwise, or with
 * BENCH_SKIP_REAL=1 (about 4 and 8 minutes a run). Each size runs once per way users run the operator: the image's
 * stages replayed and an npm install of the package (bench/operatorInstall.ts). BENCH_REAL_PODS (e.g. `10000`) and
 * BENCH_REAL_INSTALLS (e.g. `npm`) narrow the runs. Each size also runs with the newest descheduler in the operator's
 * place (bench/controlPlane.ts, BENCH_BALANCER=descheduler), unless BENCH_DESCHEDULER=0.
 */
function realControlPlane(): Record<string, unknown> | { skipped: string } {
  if (process.env['BENCH_SKIP_REAL'] === '1') return { skipped: 'BENCH_SKIP_REAL=1' };
  const assets = findAssets();
  if (!assets.ok) return { skipped: `${assets.why}; ${ENABLE_HINT}` };
  const script = fileURLToPath(new URL('./controlPlane.js', import.meta.url));
  const listed = (name: string, all: readonly string[]): string[] => {
    const given = (process.env[name] ?? '').split(',').filter((w) => w !== '');
    return given.length > 0 ? given : [...all];
  };
  const installs = listed('BENCH_REAL_INSTALLS', ['image', 'npm']).map((i) => operatorInstallFrom(i));
  const runs: Record<string, unknown> = {};
  for (const [pods, target] of Object.entries(REAL_TARGETS)) {
    if (!listed('BENCH_REAL_PODS', Object.keys(REAL_TARGETS)).includes(pods)) continue;
    const deployments = Number(pods) / 10;
    for (const install of installs) {
      const out = execFileSync(process.execPath, [script, String(deployments), '100'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, BENCH_OPERATOR_INSTALL: install },
      });
      const run = JSON.parse(out) as {
        secondsToBalanced: number;
        evictions: number;
        evictionAnswers: Record<string, number>;
        operatorPeakRssMiB: number;
      };
      runs[`pods${pods}-${install}`] = {
        ...run,
        targets: {
          secondsToBalanced: `${run.secondsToBalanced} ≤ ${target.seconds}: ${run.secondsToBalanced <= target.seconds ? 'met' : 'NOT met'}`,
          operatorPeakRssMiB: `${run.operatorPeakRssMiB} ≤ ${target.peakRssMiB}: ${run.operatorPeakRssMiB <= target.peakRssMiB ? 'met' : 'NOT met'}`,
          evictions: `${run.evictions} = ${(deployments * 3).toString()}, all 201: ${
            run.evictions === deployments * 3 && run.evictionAnswers['201'] === run.evictions ? 'met' : 'NOT met'
          }`,
        },
      };
    }
    // The same scenario with the newest descheduler (hack/descheduler.sh builds it outside the repo), beside it.
    if (process.env['BENCH_DESCHEDULER'] !== '0') {
      const out = execFileSync(process.execPath, [script, String(deployments), '100'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        env: { ...process.env, BENCH_BALANCER: 'descheduler' },
      });
      runs[`pods${pods}-descheduler`] = JSON.parse(out) as unknown;
    }
  }
  return runs;
}

/** The perf rig's summary line (its README, "The figures"), as far as the targets read it. */
interface PerfRigSummary {
  readonly balanced: boolean;
  readonly secondsToBalanced: number;
  readonly evictions: Record<string, number>;
  readonly peakRssMiB: number;
  readonly loadAverageStart: string;
  readonly loadAverageEnd: string;
}

/**
 * The same 5/5/0 scenario on the second, independent harness `../shared/perf-rig/` (issue 24: its own control plane,
 * a Python stand-in kubelet, the operator run as `node <Dockerfile options> dist/src/cli/main.js run`), at 3,000 and
 * 10,000 pods with fast controllers, when BENCH_PERF_RIG=1 and the rig is there. Not part of CI (about 3 and 8
 * minutes). drive.sh runs the checkout's dist/, which `npm run bench` has just built.
 */
function perfRig(): Record<string, unknown> | { skipped: string } | undefined {
  if (process.env['BENCH_PERF_RIG'] !== '1') return undefined;
  const checkout = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
  const drive = resolve(checkout, '../shared/perf-rig/drive.sh');
  if (!existsSync(drive)) return { skipped: `${drive} not found` };
  const runs: Record<string, unknown> = {};
  for (const [pods, target] of Object.entries(REAL_TARGETS)) {
    const deployments = Number(pods) / 10;
    // The rig's README sizes: 100 nodes for 3,000 pods, 300 for 10,000.
    const nodes = String(Number(pods) <= 3_000 ? 100 : 300);
    const args = [
      drive,
      '--nodes',
      nodes,
      '--deployments',
      String(deployments),
      '--replicas',
      '10',
      '--fast-controllers',
    ];
    let out: string;
    try {
      out = execFileSync('bash', args, { cwd: checkout, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    } catch (err) {
      // Exit status 1: not balanced (its summary line says why); anything else has no summary.
      const stdout = (err as { stdout?: unknown }).stdout;
      out = typeof stdout === 'string' ? stdout : '';
    }
    const last = out.trim().split('\n').pop() ?? '';
    if (!last.startsWith('{')) {
      runs[`pods${pods}`] = { failed: `drive.sh printed no summary (command: bash ${args.join(' ')})` };
      continue;
    }
    const run = JSON.parse(last) as PerfRigSummary;
    const evicted = run.evictions['evicted'] ?? 0;
    runs[`pods${pods}`] = {
      ...run,
      targets: {
        secondsToBalanced: `${run.secondsToBalanced} ≤ ${target.seconds}: ${run.balanced && run.secondsToBalanced <= target.seconds ? 'met' : 'NOT met'}`,
        peakRssMiB: `${run.peakRssMiB} ≤ ${target.peakRssMiB}: ${run.peakRssMiB <= target.peakRssMiB ? 'met' : 'NOT met'}`,
        evictions: `${evicted} = ${(deployments * 3).toString()}: ${evicted === deployments * 3 ? 'met' : 'NOT met'}`,
      },
    };
  }
  return runs;
}

function main(): void {
  const only = process.argv[2];
  const repeats = Number(process.env['BENCH_REPEATS'] ?? 5);
  const results = CASES.filter((c) => only === undefined || c.name.includes(only)).map((c) => runCase(c, repeats));
  const memory = only === undefined ? [cacheMemory(10_000, 300, 220), cacheMemory(150_000, 5_000, 1024)] : [];
  const paginated = only === undefined ? listSync(150_000, 5_000) : undefined;
  // Loading a saved 10,000-pod cluster in `plan`, YAML against JSON, each in a fresh process (bench/load.ts).
  const load = only === undefined ? snapshotLoad() : undefined;
  const balance = only === undefined && process.env['BENCH_SKIP_E2E'] !== '1' ? endToEnd() : undefined;
  const real = only === undefined && process.env['BENCH_SKIP_E2E'] !== '1' ? realControlPlane() : undefined;
  const rig = only === undefined ? perfRig() : undefined;
  const out = {
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
    },
    repeats,
    results,
    cacheMemory: memory,
    ...(paginated !== undefined ? { listSync150k: paginated } : {}),
    ...(load !== undefined ? { snapshotLoad10k: load } : {}),
    ...(balance !== undefined ? { balance10k: balance } : {}),
    ...(real !== undefined ? { balanceRealControlPlane: real } : {}),
    ...(rig !== undefined ? { balancePerfRig: rig } : {}),
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main();
