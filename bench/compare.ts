// `node dist/bench/compare.js [ref] [row…]` (after `npx tsc -p tsconfig.bench.json`): the bench's one-cycle rows of
// this tree against another commit's, measured in the same run. On a shared machine the load moves by a factor of
// several within minutes (and within seconds), so two separate `npm run bench` runs cannot tell a 5% difference, and
// even alternating whole bench processes tree by tree left ratios between 0.7 and 1.8 at a load average of 17. So each
// row runs in one process (bench/compareChild.ts) that loads both trees' compiled code side by side and lets them plan
// the same row's cycle call by call in turns (A B, then B A); the figure is the median of the per-turn ratios.
// Rows: 10k, 50k-mixed, 150k, 150k-mixed, lnu-10k, lnu-150k (bench/run.ts's one-cycle rows); default: 10k, lnu-10k.
//
// The other tree is `git archive`d into a temporary folder (nothing in the repository changes), shares this tree's
// node_modules (refused when the lockfiles differ) and is compiled with its own tsconfig.bench.json; it must have the
// modules the child loads (bench/clusters.ts, src/snapshot/load.ts, src/planner/plan.ts, src/policy/parse.ts).
// BENCH_SAMPLES (default 21) sets the turns per row.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = resolve(fileURLToPath(new URL('../..', import.meta.url)));

interface Tree {
  readonly label: string;
  /** The folder whose dist/bench/run.js is run. */
  readonly root: string;
}

/** The other commit, unpacked and compiled beside this tree's dependencies. */
function prepare(ref: string): Tree {
  const root = mkdtempSync(join(os.tmpdir(), 'bench-compare-'));
  const archive = execFileSync('git', ['archive', '--format=tar', ref], { cwd: HERE, maxBuffer: 1 << 30 });
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  const lock = (dir: string): string => readFileSync(join(dir, 'package-lock.json'), 'utf8');
  if (lock(root) !== lock(HERE)) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(`${ref}: package-lock.json differs from this tree's; install it apart and compare by hand`);
  }
  symlinkSync(join(HERE, 'node_modules'), join(root, 'node_modules'), 'dir');
  execFileSync(process.execPath, [join(HERE, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.bench.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  return { label: ref, root };
}

/** One row in one process, both trees taking turns (bench/compareChild.ts). */
function compareRow(base: Tree, head: Tree, row: string, samples: number): Record<string, unknown> {
  const child = join(HERE, 'dist/bench/compareChild.js');
  const out = spawnSync(process.execPath, ['--expose-gc', child, base.root, head.root, row, String(samples)], {
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (out.status !== 0) throw new Error(`${row}: the comparison failed: ${out.stderr}`);
  return JSON.parse(out.stdout) as Record<string, unknown>;
}

function main(): void {
  const [ref = 'main', ...rowArgs] = process.argv.slice(2);
  const rows = rowArgs.length > 0 ? rowArgs : ['10k', 'lnu-10k'];
  const samples = Number(process.env['BENCH_SAMPLES'] ?? 21);
  const base = prepare(ref);
  const head: Tree = { label: 'this tree', root: HERE };
  const load = (): string =>
    os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  const report: Record<string, unknown>[] = [];
  try {
    for (const row of rows) {
      const loadBefore = load();
      const figures = compareRow(base, head, row, samples);
      report.push({ ...figures, loadAverage: { before: loadBefore, after: load() } });
      process.stderr.write(`${JSON.stringify(report[report.length - 1])}\n`);
    }
  } finally {
    rmSync(base.root, { recursive: true, force: true });
  }
  process.stdout.write(
    `${JSON.stringify({ ref, node: process.version, cpus: os.cpus().length, rows: report }, null, 2)}\n`,
  );
}

main();
