// `plan`/`simulate` with a `usage: Prometheus` policy: the query's answer is taken from --usage-file (as Prometheus's
// /api/v1/query writes it); without it the policy's field is bad input (exit 2) saying how to save the answer; a bad
// answer is exit 2 naming the file and the part that is wrong.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { main } from '../../src/cli/program.js';
import { listOf, makeNode, makePod } from '../builders.js';

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'kr-usage-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const node = (name: string) => makeNode(name).allocatable({ cpu: '4', memory: '16Gi', pods: '110' });
const pods = (nodeName: string) =>
  Array.from({ length: 4 }, (_, i) =>
    makePod(`web-${nodeName}-${i}`, 'shop')
      .deployment('web')
      .label('app', 'web')
      .node(nodeName)
      .requests({ cpu: '400m' }),
  );
const cluster = file('cluster.json', JSON.stringify(listOf([node('hot'), node('cool'), ...pods('hot')])));
const policy = file(
  'policy.yaml',
  stringify({
    apiVersion: 'rebalancer.dev/v1alpha1',
    kind: 'RebalancePolicy',
    metadata: { name: 'by-query' },
    spec: {
      strategies: {
        topologySpread: { enabled: false },
        lowNodeUtilization: {
          usage: 'Prometheus',
          thresholds: { MetricResource: 30 },
          targetThresholds: { MetricResource: 60 },
          prometheus: { url: 'http://prometheus.monitoring:9090', query: 'instance:node_cpu_utilisation:rate5m' },
        },
      },
      eviction: { minPodAge: '0s', maxPerNode: 4, maxPerWorkload: 4 },
    },
  }),
);
const answer = (values: Record<string, string>): string =>
  JSON.stringify({
    status: 'success',
    data: {
      resultType: 'vector',
      result: Object.entries(values).map(([instance, v]) => ({ metric: { instance }, value: [1700000000, v] })),
    },
  });

describe('plan --usage-file (usage: Prometheus offline)', () => {
  it('plans with the saved answer: the hot node (4 pods share 90 points) sheds 2 onto the cool one', async () => {
    const usage = file('usage.json', answer({ hot: '0.9', cool: '0.05' }));
    const r = await run('plan', '--snapshot', cluster, '--policy', policy, '--usage-file', usage);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.out) as { evictions: Array<{ node: string; target: string }>; nodesMeasuredBy: string };
    expect(plan.nodesMeasuredBy).toBe('Prometheus');
    expect(plan.evictions.map((e) => `${e.node}→${e.target}`)).toEqual(['hot→cool', 'hot→cool']);
  });

  it('without --usage-file: exit 2 naming the policy field and how to save the answer', async () => {
    const r = await run('plan', '--snapshot', cluster, '--policy', policy);
    expect(r.code).toBe(2);
    expect(r.err).toContain(
      'RebalancePolicy by-query: spec.strategies.lowNodeUtilization.usage: Prometheus is queried',
    );
    expect(r.err).toContain("/api/v1/query --data-urlencode 'query=instance:node_cpu_utilisation:rate5m'");
    expect(r.out).toBe('');
  });

  it('an answer that is a percentage, not a fraction: exit 2 naming the file and the sample', async () => {
    const usage = file('percent.json', answer({ hot: '90', cool: '5' }));
    const r = await run('simulate', '--snapshot', cluster, '--policy', policy, '--usage-file', usage);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`${usage}: Prometheus query answer: data.result[0].value: node hot: 90 is outside 0–1`);
  });
});
