// Table-driven scenarios of `usage: Metrics` (lowNodeUtilization, highNodeUtilization): nodes classified by what
// metrics.k8s.io says they use, not by requests; a moved pod's usage (its PodMetrics, or its requests while it has
// none) leaves its node and arrives where its replacement lands; no metrics means no moves and a reason, never a
// silent plan on requests. Built from raw objects (Nodes, Pods, NodeMetrics, PodMetrics as `kubectl get
// nodes.metrics.k8s.io -o yaml` prints them) through the real loader.
import { describe, expect, it } from 'vitest';
import { planTable } from '../../src/cli/table.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { simulate } from '../../src/planner/simulate.js';
import { parsePolicy } from '../../src/policy/parse.js';
import {
  buildSnapshot,
  makeNode,
  makeNodeMetrics,
  makePod,
  makePodMetrics,
  makePolicy,
  NOW,
  type PodBuilder,
} from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
/** The builders' NOW: the pods were created before the reading. */
const STAMP = '2024-06-01T12:00:00Z';

function plan(objects: readonly Buildable[], strategies: Json): PlanOutcome {
  const policy = parsePolicy(makePolicy('test', { strategies, eviction: LARGE }), { file: 'test-policy.yaml' });
  return planCycle(buildSnapshot(objects), policy);
}

const node = (name: string): Buildable => makeNode(name).allocatable({ cpu: '4', memory: '16Gi', pods: '110' });

const nodeMetrics = (name: string, cpu: string): Json => makeNodeMetrics(name, cpu, '1Gi', STAMP);
const podMetrics = (name: string, cpu: string): Json => makePodMetrics(name, 'shop', cpu, '64Mi', STAMP);

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

const LNU = (usage: string): Json => ({
  lowNodeUtilization: { enabled: true, thresholds: { cpu: 20 }, targetThresholds: { cpu: 60 }, usage },
});
const HNU = (usage: string): Json => ({ highNodeUtilization: { enabled: true, thresholds: { cpu: 30 }, usage } });
const classes = (r: PlanOutcome): Record<string, string> =>
  Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.class]));
const moved = (r: PlanOutcome): string[] => r.plan.evictions.map((e) => `${e.node}→${e.target}`);

/**
 * busy: 8 pods requesting 400m (80% requested) that use little (10% of the node);
 * hot: 4 pods requesting 200m (20% requested) that use 900m each (90% with the node's own 0);
 * idle: empty, 5% used. spare: empty, 5% used.
 */
function cluster(): Buildable[] {
  return [
    node('busy'),
    node('hot'),
    node('idle'),
    node('spare'),
    ...pods('lazy', 'busy', 8),
    ...pods('greedy', 'hot', 4, '200m'),
    nodeMetrics('busy', '400m'),
    nodeMetrics('hot', '3600m'),
    nodeMetrics('idle', '200m'),
    nodeMetrics('spare', '200m'),
    ...Array.from({ length: 8 }, (_, i) => podMetrics(`lazy-busy-${i}`, '50m')),
    ...Array.from({ length: 4 }, (_, i) => podMetrics(`greedy-hot-${i}`, '900m')),
  ];
}

describe('usage: Metrics, lowNodeUtilization', () => {
  it('classifies by what the nodes use: the busy-by-requests node is left alone, the hot one relieved', () => {
    const byRequests = plan(cluster(), LNU('Requests'));
    expect(classes(byRequests)).toMatchObject({ busy: 'over', hot: 'under', idle: 'under' });
    expect(byRequests.plan.evictions.every((e) => e.node === 'busy')).toBe(true);

    const byMetrics = plan(cluster(), LNU('Metrics'));
    expect(classes(byMetrics)).toEqual({ busy: 'under', hot: 'over', idle: 'under', spare: 'under' });
    expect(byMetrics.plan.nodesMeasuredBy).toBe('Metrics');
    expect(byMetrics.plan.nodes?.find((n) => n.name === 'hot')?.utilization['cpu']).toBe(0.9);
    expect(byMetrics.plan.degraded).toBeUndefined();
  });

  it("a moved pod's usage leaves its node and lands with its replacement: 2 pods of 900m bring 90% to 45%", () => {
    const r = plan(cluster(), LNU('Metrics'));
    // One pod leaves 2700m (67.5%, above 60%): two are the fewest.
    expect(r.plan.evictions).toHaveLength(2);
    expect(r.plan.evictions.every((e) => e.node === 'hot' && e.strategy === 'LowNodeUtilization')).toBe(true);
    const after = Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.utilizationAfter!['cpu']]));
    expect(after['hot']).toBe(0.45);
    // Each replacement adds its 900m (not its 200m of requests) where it lands: 5% + 22.5% per pod.
    const landed = r.plan.evictions.map((e) => e.target!);
    const total = ['busy', 'idle', 'spare'].reduce((s, n) => s + after[n]!, 0);
    expect(total).toBeCloseTo(0.1 + 0.05 + 0.05 + 2 * 0.225, 6);
    for (const t of landed) expect(after[t]).toBeGreaterThanOrEqual(0.225);
  });

  it('a pod without PodMetrics yet moves with its requests', () => {
    const objects = cluster().filter(
      (o) =>
        (o as Json)['kind'] !== 'PodMetrics' ||
        !String(((o as Json)['metadata'] as Json)['name']).startsWith('greedy-hot-0'),
    );
    const r = plan(objects, LNU('Metrics'));
    const after = Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.utilizationAfter!['cpu']]));
    // greedy-hot-0 (no metrics: 200m) is first in eviction order but covers least; the plan still reaches ≤ 60%.
    expect(after['hot']).toBeLessThanOrEqual(0.6);
    const moves = r.plan.evictions.map((e) => e.name);
    const leftOnHot = 3600 - moves.reduce((s, n) => s + (n === 'greedy-hot-0' ? 200 : 900), 0);
    expect(after['hot']).toBeCloseTo(leftOnHot / 4000, 6);
  });

  it('a node without NodeMetrics is neither classified nor a target', () => {
    const objects = cluster().filter(
      (o) => !((o as Json)['kind'] === 'NodeMetrics' && JSON.stringify(o).includes('"spare"')),
    );
    const r = plan(objects, LNU('Metrics'));
    expect(classes(r)['spare']).toBe('appropriate');
    // The scheduler would choose the empty spare node (or tie it with idle): it cannot be measured, so no move helps.
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.skipped.map((s) => s.reason).join('\n')).toContain('spare, which is not underutilized');
  });

  it('a reading older than the pods: usage of a pod gone since is taken off, of a pod created since is added', () => {
    // As the operator re-plans after an eviction with the cycle's reading: greedy-hot-0 was evicted (its 900m still in
    // hot's NodeMetrics), and its replacement, created after the reading, runs on idle with no PodMetrics.
    const objects = cluster().filter((o) => !JSON.stringify(o).includes('"greedy-hot-0"'));
    objects.push(
      makePod('greedy-new', 'shop')
        .deployment('greedy')
        .node('idle')
        .requests({ cpu: '200m' })
        .createdAt(NOW + 1000),
    );
    const base = buildSnapshot(objects);
    const reading = base.metrics;
    if (reading === undefined || !reading.available) throw new Error('expected a reading');
    const pods = new Map(reading.pods);
    pods.set('shop/greedy-hot-0', { usage: { cpu: 900, memory: 64 * 2 ** 20 }, node: 'hot' });
    const snapshot = { ...base, now: NOW + 2000, metrics: { ...reading, pods } };
    const policy = parsePolicy(makePolicy('test', { strategies: LNU('Metrics'), eviction: LARGE }), { file: 'p.yaml' });
    const r = planCycle(snapshot, policy);
    const before = Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.utilization['cpu']]));
    expect(before['hot']).toBe(0.675); // 3600m - 900m
    expect(before['idle']).toBe(0.1); // 200m + 200m of requests
    // 67.5% is above 60%: one more 900m pod brings it to 45%.
    expect(r.plan.evictions).toHaveLength(1);
  });

  it('simulate: the replacements carry their usage, so the next cycle finds the hot node at 45% and stops', () => {
    const policy = parsePolicy(makePolicy('test', { strategies: LNU('Metrics'), eviction: LARGE }), { file: 'p.yaml' });
    const result = simulate(buildSnapshot(cluster()), policy, { cycles: 5 });
    expect(result.cycles.map((c) => c.evictions.length)).toEqual([2, 0]);
    const second = Object.fromEntries((result.cycles[1]!.nodes ?? []).map((n) => [n.name, n.utilization['cpu']]));
    expect(second['hot']).toBe(0.45);
    const landed = result.cycles[0]!.evictions.map((e) => e.target!);
    for (const t of landed) expect(second[t]).toBeGreaterThanOrEqual(0.275); // its 5% + a 900m pod's 22.5%
  });

  it('no metrics in the snapshot: nothing planned, the plan says why (JSON and table), never a plan on requests', () => {
    const objects = cluster().filter((o) => !String((o as Json)['kind']).endsWith('Metrics'));
    const r = plan(objects, LNU('Metrics'));
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.nodes).toBeUndefined();
    expect(r.plan.degraded).toEqual([
      {
        strategy: 'LowNodeUtilization',
        reason: 'MetricsUnavailable',
        message: expect.stringContaining('no metrics.k8s.io reading'),
      },
    ]);
    const table = planTable(r.plan);
    expect(table).toContain('DEGRADED LowNodeUtilization (MetricsUnavailable): no metrics.k8s.io reading');
    expect(table).toContain('kubectl get nodes.metrics.k8s.io -o yaml');
  });

  it('with removeDuplicates on too, a degraded Metrics section still reports no nodes by requests', () => {
    const objects = cluster().filter((o) => !String((o as Json)['kind']).endsWith('Metrics'));
    const both = plan(objects, { ...LNU('Metrics'), removeDuplicates: { enabled: true } });
    expect(both.plan.nodes).toBeUndefined();
    expect(both.plan.degraded).toHaveLength(1);
    // removeDuplicates alone reports every node, unclassified, by requests (as before usage: Metrics existed).
    const alone = plan(objects, { removeDuplicates: { enabled: true } });
    expect(alone.plan.nodes?.map((n) => n.class)).toEqual(['appropriate', 'appropriate', 'appropriate', 'appropriate']);
    expect(alone.plan.nodesMeasuredBy).toBe('Requests');
  });

  it('an unavailable reading carries its reason (HTTP status) into the plan', () => {
    const snapshot = {
      ...buildSnapshot(cluster().filter((o) => !String((o as Json)['kind']).endsWith('Metrics'))),
      metrics: {
        available: false as const,
        message: 'metrics.k8s.io/v1beta1 nodes: HTTP 404: the server could not find the requested resource',
      },
    };
    const policy = parsePolicy(makePolicy('test', { strategies: LNU('Metrics'), eviction: LARGE }), { file: 'p.yaml' });
    const r = planCycle(snapshot, policy);
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.degraded?.[0]?.message).toContain('HTTP 404');
    expect(r.plan.degraded?.[0]?.message).toContain('nothing is planned on requests instead');
  });
});

describe('usage: Metrics, highNodeUtilization', () => {
  it('empties the node that uses little though it requests much, onto nodes that are not emptied', () => {
    // low: 2 pods requesting 1 cpu each (50% requested) that use 100m (5% used + the node's 100m): under 30% by usage.
    // The batch pods prefer the packed node, so the scheduler's choice is full-1 whatever its resource scoring.
    const objects: Buildable[] = [
      node('low'),
      makeNode('full-1').allocatable({ cpu: '4', memory: '16Gi', pods: '110' }).label('pack', 'here'),
      node('full-2'),
      ...pods('batch', 'low', 2, '1').map((p) =>
        p.preferredNodeAffinity(100, { matchExpressions: [{ key: 'pack', operator: 'In', values: ['here'] }] }),
      ),
      ...pods('web', 'full-1', 2, '1'),
      ...pods('web', 'full-2', 2, '1'),
      nodeMetrics('low', '300m'),
      nodeMetrics('full-1', '2400m'),
      nodeMetrics('full-2', '2400m'),
      podMetrics('batch-low-0', '100m'),
      podMetrics('batch-low-1', '100m'),
    ];
    const byRequests = plan(objects, HNU('Requests'));
    expect(byRequests.plan.evictions).toEqual([]);
    const byMetrics = plan(objects, HNU('Metrics'));
    expect(classes(byMetrics)).toMatchObject({ low: 'under', 'full-1': 'appropriate', 'full-2': 'appropriate' });
    expect(moved(byMetrics)).toEqual(['low→full-1', 'low→full-1']);
  });

  it('no metrics: Degraded reason for HighNodeUtilization, nothing emptied', () => {
    const r = plan([node('a'), node('b'), ...pods('web', 'a', 1)], HNU('Metrics'));
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.degraded?.map((d) => `${d.strategy}/${d.reason}`)).toEqual([
      'HighNodeUtilization/MetricsUnavailable',
    ]);
  });
});
