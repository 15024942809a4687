// Table-driven scenarios of lowNodeUtilization with `usage: Prometheus`: nodes classified by one query value per
// node (MetricResource, in percent), each pod's part of its node's value estimated from its requests, the fewest
// evictions that bring the hot nodes to their target onto nodes that stay under it; a node the query does not name
// is not classified; no reading, an unavailable one, or one naming no node of the cluster means no moves and the
// reason (MetricsUnavailable), never a plan on requests. And the policy's fields, as the parser checks them.
import { describe, expect, it } from 'vitest';
import type { ClusterSnapshot, NodeUsageQuery } from '../../src/model/types.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { simulate } from '../../src/planner/simulate.js';
import { checkPolicy, parsePolicy } from '../../src/policy/parse.js';
import { buildSnapshot, makeNode, makePod, makePolicy, NOW, type PodBuilder } from '../builders.js';

type Json = Record<string, unknown>;

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
const PROM = { url: 'http://prometheus.monitoring:9090', query: 'instance:node_cpu_utilisation:rate5m' };
const LNU = {
  lowNodeUtilization: {
    enabled: true,
    usage: 'Prometheus',
    thresholds: { MetricResource: 30 },
    targetThresholds: { MetricResource: 60 },
    prometheus: PROM,
  },
};

function policy(strategies: Json = LNU) {
  return parsePolicy(makePolicy('test', { strategies, eviction: LARGE }), { file: 'test-policy.yaml' });
}

const node = (name: string) => makeNode(name).allocatable({ cpu: '4', memory: '16Gi', pods: '110' });

/** `n` pods of one Deployment on a node, each requesting `cpu`. */
function pods(prefix: string, nodeName: string, n: number, cpu = '400m'): PodBuilder[] {
  return Array.from({ length: n }, (_, i) =>
    makePod(`${prefix}-${nodeName}-${i}`, 'shop')
      .deployment(prefix)
      .label('app', prefix)
      .node(nodeName)
      .requests({ cpu }),
  );
}

const reading = (values: Record<string, number>): NodeUsageQuery => ({
  available: true,
  values: new Map(Object.entries(values)),
  readAt: NOW,
  source: `Prometheus ${PROM.url} query "${PROM.query}"`,
});

/** hot-1 and hot-2 run 6 pods of 400m each (60% requested) and use 90%; cool-1 and cool-2 are empty and use 5%. */
function cluster(usage: NodeUsageQuery | undefined, extra: PodBuilder[] = []): ClusterSnapshot {
  const snapshot = buildSnapshot([
    node('hot-1'),
    node('hot-2'),
    node('cool-1'),
    node('cool-2'),
    ...pods('web', 'hot-1', 6),
    ...pods('api', 'hot-2', 6),
    ...extra,
  ]);
  return usage === undefined ? snapshot : { ...snapshot, nodeUsage: usage };
}

const HOT = { 'hot-1': 0.9, 'hot-2': 0.9, 'cool-1': 0.05, 'cool-2': 0.05 };
const classes = (r: PlanOutcome): Record<string, string> =>
  Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.class]));

describe('usage: Prometheus, lowNodeUtilization', () => {
  it('relieves each hot node with the fewest evictions (its 6 pods share 90 points: 2 leave for 60), onto cool nodes', () => {
    const r = planCycle(cluster(reading(HOT)), policy());
    expect(r.plan.degraded).toBeUndefined();
    expect(r.plan.nodesMeasuredBy).toBe('Prometheus');
    expect(classes(r)).toEqual({ 'hot-1': 'over', 'hot-2': 'over', 'cool-1': 'under', 'cool-2': 'under' });
    const evictions = r.plan.evictions;
    expect(evictions).toHaveLength(4);
    expect(evictions.filter((e) => e.node === 'hot-1')).toHaveLength(2);
    expect(evictions.filter((e) => e.node === 'hot-2')).toHaveLength(2);
    expect(evictions.every((e) => e.target === 'cool-1' || e.target === 'cool-2')).toBe(true);
    const report = Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n]));
    expect(report['hot-1']!.utilization['MetricResource']).toBe(0.9);
    expect(report['hot-1']!.utilizationAfter!['MetricResource']).toBe(0.6);
    // Two parts of 15 points land on each cool node: 5 + 30.
    expect(report['cool-1']!.utilizationAfter!['MetricResource']).toBe(0.35);
  });

  it('weighs parts by requests: one large pod carries most of the value, and moving it alone is enough', () => {
    // hot-3 uses 80%: a 2-cpu pod (weight 0.5) and four 250m pods (0.0625 each) share it as 53.3 and 6.7 points.
    const snapshot = cluster(reading({ ...HOT, 'hot-1': 0.2, 'hot-2': 0.2, 'hot-3': 0.8 }), [
      ...pods('big', 'hot-3', 1, '2'),
      ...pods('small', 'hot-3', 4, '250m'),
    ]);
    const withNode = { ...snapshot, nodes: [...snapshot.nodes, buildSnapshot([node('hot-3')]).nodes[0]!] };
    const r = planCycle(withNode, policy());
    expect(r.plan.evictions.map((e) => e.name)).toEqual(['big-hot-3-0']);
  });

  it('does not classify a node the query does not name: never relieved, never a landing place', () => {
    const { 'hot-2': _, ...withoutHot2 } = HOT;
    const r = planCycle(cluster(reading(withoutHot2)), policy());
    expect(r.plan.degraded).toBeUndefined();
    expect(classes(r)['hot-2']).toBe('appropriate');
    expect(r.plan.evictions.map((e) => e.node)).toEqual(['hot-1', 'hot-1']);
    const { 'cool-2': __, ...withoutCool2 } = HOT;
    const r2 = planCycle(cluster(reading(withoutCool2)), policy());
    // The scheduler would pick cool-1 or cool-2 (both empty): a landing that may be on an unmeasured node is refused.
    expect(r2.plan.evictions).toEqual([]);
    expect(r2.plan.skipped.length).toBeGreaterThan(0);
    expect(r2.plan.skipped.every((s) => s.strategy === 'LowNodeUtilization' && /cool-2/.test(s.reason))).toBe(true);
  });

  it.each([
    ['no reading (offline without --usage-file)', undefined, 'no Prometheus reading'],
    [
      'Prometheus unreachable',
      {
        available: false as const,
        message: `Prometheus ${PROM.url} query "${PROM.query}": unreachable (ECONNREFUSED)`,
      },
      'unreachable (ECONNREFUSED)',
    ],
    [
      'a reading that names no node of the cluster',
      reading({ '10.0.0.1:9100': 0.9 }),
      'no sample is labelled instance',
    ],
  ])('plans nothing and says why with %s, never falling back to requests', (_, usage, message) => {
    const r = planCycle(cluster(usage), policy());
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.degraded).toEqual([
      { strategy: 'LowNodeUtilization', reason: 'MetricsUnavailable', message: expect.stringContaining(message) },
    ]);
    expect(r.plan.degraded![0]!.message).toContain('nothing is planned on requests instead');
  });

  it('simulate: the parts move with the pods, so the next cycle finds the hot nodes at their target', () => {
    const result = simulate(cluster(reading(HOT)), policy(), { cycles: 4 });
    expect(result.cycles[0]!.evictions).toHaveLength(4);
    expect(result.cycles.slice(1).every((c) => c.evictions.length === 0)).toBe(true);
  });
});

describe('usage: Prometheus, the policy fields', () => {
  const problems = (section: Json): string[] =>
    checkPolicy(makePolicy('p', { strategies: { lowNodeUtilization: section } })).problems.map(
      (p) => `${p.field}: ${p.problem}`,
    );

  it('accepts the query, the server and a token Secret', () => {
    const ok = {
      ...LNU.lowNodeUtilization,
      prometheus: { ...PROM, authToken: { secretReference: { namespace: 'kube-rebalancer', name: 'prom' } } },
    };
    expect(problems(ok)).toEqual([]);
  });

  it.each([
    [
      'no query',
      { ...LNU.lowNodeUtilization, prometheus: { url: PROM.url } },
      'spec.strategies.lowNodeUtilization.prometheus.query: is required with usage: Prometheus',
    ],
    [
      'no prometheus at all',
      { usage: 'Prometheus', thresholds: { MetricResource: 30 }, targetThresholds: { MetricResource: 60 } },
      'spec.strategies.lowNodeUtilization.prometheus.url: is required with usage: Prometheus',
    ],
    [
      'cpu thresholds (the descheduler requires MetricResource alone)',
      { ...LNU.lowNodeUtilization, thresholds: { cpu: 20 }, targetThresholds: { cpu: 50 } },
      'spec.strategies.lowNodeUtilization.thresholds: must name only MetricResource with usage: Prometheus',
    ],
    [
      'the default thresholds (cpu, memory, pods)',
      { usage: 'Prometheus', prometheus: PROM },
      'spec.strategies.lowNodeUtilization.targetThresholds: must name only MetricResource',
    ],
    [
      'MetricResource without usage: Prometheus',
      { thresholds: { MetricResource: 20 }, targetThresholds: { MetricResource: 50 } },
      'spec.strategies.lowNodeUtilization.thresholds.MetricResource: is measured only with usage: Prometheus',
    ],
    [
      'a url that is not http(s)',
      { ...LNU.lowNodeUtilization, prometheus: { ...PROM, url: 'prometheus:9090' } },
      'spec.strategies.lowNodeUtilization.prometheus.url: must be an http:// or https:// URL',
    ],
    [
      'a Secret reference without its name',
      { ...LNU.lowNodeUtilization, prometheus: { ...PROM, authToken: { secretReference: { namespace: 'x' } } } },
      'spec.strategies.lowNodeUtilization.prometheus.authToken.secretReference.name: is required',
    ],
  ])('refuses %s, naming the field', (_, section, problem) => {
    expect(problems(section).join('\n')).toContain(problem);
  });
});
