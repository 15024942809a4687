// Snapshot loading in `plan`: one generated 10,000-pod cluster written the way kubectl writes it, as YAML and as
// JSON, each planned by the real command (`plan --snapshot F`) in a fresh process, so peak RSS is the command's own.
// Targets (issue 13): YAML within 2× the JSON time, JSON ≤ 3 s, YAML ≤ 600 MiB peak RSS.
//   node dist/bench/load.js            → JSON on stdout
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { generateCluster, SPREAD_10K, type ClusterShape } from './clusters.js';

const SHAPE: ClusterShape = SPREAD_10K;

interface ChildFigures {
  readonly planMs: number;
  readonly maxRssMiB: number;
}

/** One `plan --snapshot` in a fresh process: wall time of the whole process, and the child's own figures. */
function planOnce(file: string): ChildFigures & { readonly processMs: number } {
  const script = fileURLToPath(new URL('./loadChild.js', import.meta.url));
  const start = process.hrtime.bigint();
  const out = execFileSync(process.execPath, [script, file], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const processMs = Number(process.hrtime.bigint() - start) / 1e6;
  return { ...(JSON.parse(out) as ChildFigures), processMs };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export function snapshotLoad(repeats = 3): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'kr-bench-load-'));
  try {
    const raw = generateCluster(SHAPE);
    const list = { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: raw.objects };
    const files = {
      // kubectl -o json indents by 4; -o yaml does not indent sequences under their key.
      json: join(dir, 'cluster.json'),
      yaml: join(dir, 'cluster.yaml'),
    };
    writeFileSync(files.json, JSON.stringify(list, null, 4));
    writeFileSync(files.yaml, stringify(list, { indentSeq: false, lineWidth: 0 }));
    const figures: Record<string, Record<string, number>> = {};
    for (const [format, file] of Object.entries(files)) {
      const runs = Array.from({ length: repeats }, () => planOnce(file));
      figures[format] = {
        sizeMiB: Math.round((statSync(file).size / 2 ** 20) * 10) / 10,
        planMs: Math.round(median(runs.map((r) => r.planMs))),
        processMs: Math.round(median(runs.map((r) => r.processMs))),
        maxRssMiB: Math.max(...runs.map((r) => r.maxRssMiB)),
      };
    }
    const json = figures['json']!;
    const yaml = figures['yaml']!;
    const ratio = Math.round((yaml['planMs']! / json['planMs']!) * 100) / 100;
    const processRatio = Math.round((yaml['processMs']! / json['processMs']!) * 100) / 100;
    return {
      pods: raw.podCount,
      repeats,
      ...figures,
      yamlToJsonTime: ratio,
      yamlToJsonProcessTime: processRatio,
      yamlToJsonRss: Math.round((yaml['maxRssMiB']! / json['maxRssMiB']!) * 100) / 100,
      targets: {
        yamlWithin2xJson: ratio <= 2,
        jsonWithin3s: json['processMs']! <= 3000,
        yamlRssWithin600MiB: yaml['maxRssMiB']! <= 600,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  process.stdout.write(`${JSON.stringify(snapshotLoad(Number(process.env['BENCH_REPEATS'] ?? 3)), null, 2)}\n`);
}
