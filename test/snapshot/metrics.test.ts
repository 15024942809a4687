// Saved metrics.k8s.io objects (`kubectl get nodes.metrics.k8s.io -o yaml`, `kubectl get pods.metrics.k8s.io -A -o
// yaml`) in a snapshot: the reading `usage: Metrics` plans with, bad fields reported with file, object and field, and
// `plan` from such a file (JSON and table).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { main } from '../../src/cli/program.js';
import { InputError } from '../../src/errors.js';
import { listOf, loadObjects, makeNode, makeNodeMetrics, makePod, makePodMetrics } from '../builders.js';

type Json = Record<string, unknown>;

const dir = mkdtempSync(join(tmpdir(), 'kr-metrics-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** As kubectl prints them: a List whose items carry apiVersion and kind. */
function metricsList(items: Json[]): Json {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}
const nodeMetrics = (name: string, cpu: string): Json => makeNodeMetrics(name, cpu, '2Gi', '2024-06-01T11:59:50Z');
const podMetrics = (name: string, cpu: string): Json =>
  makePodMetrics(name, 'shop', cpu, '100Mi', '2024-06-01T11:59:52Z');

const cluster = [
  makeNode('hot').allocatable({ cpu: '4', memory: '16Gi', pods: '110' }),
  makeNode('cold').allocatable({ cpu: '4', memory: '16Gi', pods: '110' }),
  ...[0, 1, 2, 3].map((i) =>
    makePod(`web-${i}`, 'shop').deployment('web').label('app', 'web').node('hot').requests({ cpu: '100m' }),
  ),
];

describe('NodeMetrics and PodMetrics in a snapshot', () => {
  it('make a reading: usage in millicores and bytes, each pod where the snapshot runs it, as old as its oldest sample', () => {
    const { snapshot } = loadObjects([
      ...cluster,
      nodeMetrics('hot', '3600m'),
      nodeMetrics('cold', '200m'),
      podMetrics('web-0', '900m'),
    ]);
    const m = snapshot.metrics;
    expect(m?.available).toBe(true);
    if (m?.available !== true) return;
    expect(m.nodes.get('hot')).toEqual({ cpu: 3600, memory: 2 * 2 ** 30 });
    expect(m.pods.get('shop/web-0')).toEqual({ usage: { cpu: 900, memory: 100 * 2 ** 20 }, node: 'hot' });
    expect(m.readAt).toBe(Date.parse('2024-06-01T11:59:50Z'));
  });

  it('no NodeMetrics: no reading (PodMetrics alone are reported and not used)', () => {
    const warnings: string[] = [];
    const { snapshot } = loadObjects([...cluster, podMetrics('web-0', '900m')], { warn: (l) => warnings.push(l) });
    expect(snapshot.metrics).toBeUndefined();
    expect(warnings.join('\n')).toContain('PodMetrics without NodeMetrics are not used');
  });

  it.each([
    ['a bad quantity', { ...nodeMetrics('hot', '3600m'), usage: { cpu: 'hot' } }, 'NodeMetrics hot', 'usage.cpu'],
    ['no usage', { ...nodeMetrics('hot', '3600m'), usage: undefined }, 'NodeMetrics hot', 'usage'],
    ['a bad timestamp', { ...nodeMetrics('hot', '1'), timestamp: 'yesterday' }, 'NodeMetrics hot', 'timestamp'],
    [
      'a container that is not an object',
      { ...podMetrics('web-0', '1'), containers: ['app'] },
      'PodMetrics shop/web-0',
      'containers[0]',
    ],
  ])('%s is bad input naming the file, object and field', (_name, bad, object, field) => {
    let error: unknown;
    try {
      loadObjects([...cluster, nodeMetrics('cold', '1'), bad]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ file: 'test-snapshot.yaml', object, field });
  });

  it('plan --snapshot with `usage: Metrics`: planned by usage, and without the metrics the plan says why', async () => {
    const file = join(dir, 'cluster.yaml');
    const withMetrics = join(dir, 'cluster-and-metrics.yaml');
    const policy = join(dir, 'policy.yaml');
    const clusterYaml = stringify(listOf(cluster));
    writeFileSync(file, clusterYaml);
    const metrics = [
      metricsList([nodeMetrics('hot', '3600m'), nodeMetrics('cold', '200m')]),
      metricsList([0, 1, 2, 3].map((i) => podMetrics(`web-${i}`, '900m'))),
    ];
    writeFileSync(withMetrics, [clusterYaml, ...metrics.map((m) => stringify(m))].join('---\n'));
    writeFileSync(
      policy,
      stringify({
        apiVersion: 'rebalancer.dev/v1alpha1',
        kind: 'RebalancePolicy',
        metadata: { name: 'by-usage' },
        spec: {
          strategies: {
            lowNodeUtilization: {
              enabled: true,
              thresholds: { cpu: 20 },
              targetThresholds: { cpu: 60 },
              usage: 'Metrics',
            },
          },
          eviction: { minPodAge: '0s', maxPerNode: 4, maxPerWorkload: 4 },
        },
      }),
    );
    const run = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
      let out = '';
      let err = '';
      const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
      return { code, out, err };
    };

    const planned = await run('plan', '--snapshot', withMetrics, '--policy', policy);
    expect(planned.code).toBe(0);
    const plan = JSON.parse(planned.out) as { evictions: unknown[]; nodesMeasuredBy?: string; degraded?: unknown };
    expect(plan.evictions).toHaveLength(2);
    expect(plan.nodesMeasuredBy).toBe('Metrics');
    expect(plan.degraded).toBeUndefined();
    const table = await run('plan', '--snapshot', withMetrics, '--policy', policy, '-o', 'table');
    expect(table.out).toContain('cpu and memory used per metrics.k8s.io');
    expect(table.out).toMatch(/hot\s+over\s+90% → 45%/);

    const without = await run('plan', '--snapshot', file, '--policy', policy, '-o', 'table');
    expect(without.code).toBe(0);
    expect(without.out).toContain('DEGRADED LowNodeUtilization (MetricsUnavailable): no metrics.k8s.io reading');
    expect(without.out).toContain('EVICTIONS (0)');
  });
});
