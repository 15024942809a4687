import { Registry } from 'prom-client';
import { beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { RebalancerMetrics, TopologySeriesInput } from '../../src/metrics/metrics.js';
import { EVICTION_RESULTS, METRIC_DEFINITIONS, METRIC_NAMES } from '../../src/metrics/names.js';
import type { RebalancePlan } from '../../src/model/plan.js';
import { STRATEGIES } from '../../src/strategies/registry.js';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';

function group(
  namespace: string,
  workloads: string[],
  skew: number,
  maxSkew = 1,
  topologyKey = ZONE,
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway' = 'DoNotSchedule',
): TopologySeriesInput {
  return { namespace, workloads, topologyKey, whenUnsatisfiable, skew, maxSkew };
}

/** A plan of `count` evictions and nothing else. */
function planOfEvictions(policy: string, count: number): RebalancePlan {
  const evictions = Array.from({ length: count }, (_, i) => ({
    namespace: 'shop',
    name: `web-${i}`,
    node: 'a1',
    strategy: 'TopologySpread' as const,
    reason: 'skew',
    priority: 0,
  }));
  return {
    apiVersion: 'rebalancer.dev/v1alpha1',
    kind: 'RebalancePlan',
    policy,
    evictions,
    skipped: [],
    topology: [],
    violations: [],
    summary: { nodes: 1, pods: count, violations: 0, evictions: count, skipped: 0 },
  };
}

/** The sample lines of one metric in the exposition text, without HELP/TYPE lines, sorted. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  const text = await registry.metrics();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .sort();
}

describe('createMetrics', () => {
  let registry: Registry;
  let metrics: RebalancerMetrics;
  let clock: number;

  beforeEach(() => {
    registry = new Registry();
    clock = 1_700_000_000_000;
    metrics = createMetrics(registry, { now: () => clock });
  });

  it('registers every catalogued metric on the injected registry and nothing else', async () => {
    const registered = registry.getMetricsAsArray().map((metric) => metric.name);
    expect(registered.sort()).toEqual([...METRIC_NAMES].sort());
    const text = await registry.metrics();
    for (const definition of METRIC_DEFINITIONS) {
      expect(text).toContain(`# TYPE ${definition.name} ${definition.type}`);
    }
  });

  it('keeps metrics of two registries apart (no global registry)', async () => {
    const other = new Registry();
    const second = createMetrics(other);
    second.setLeader(true);
    expect(await samples(registry, 'rebalancer_leader')).toEqual(['rebalancer_leader 0']);
    expect(await samples(other, 'rebalancer_leader')).toEqual(['rebalancer_leader 1']);
  });

  it('sets leader to 1 and back to 0', async () => {
    metrics.setLeader(true);
    expect(await samples(registry, 'rebalancer_leader')).toEqual(['rebalancer_leader 1']);
    metrics.setLeader(false);
    expect(await samples(registry, 'rebalancer_leader')).toEqual(['rebalancer_leader 0']);
  });

  describe('topology skew', () => {
    it('sets skew and max skew for every workload of every group', async () => {
      metrics.recordTopology('default', [
        group('shop', ['Deployment/web'], 4, 1),
        group('shop', ['StatefulSet/db', 'Deployment/db-proxy'], 0, 2, HOST),
      ]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/db-proxy",topology_key="kubernetes.io/hostname",when_unsatisfiable="DoNotSchedule"} 0',
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 4',
        'rebalancer_topology_skew{namespace="shop",workload="StatefulSet/db",topology_key="kubernetes.io/hostname",when_unsatisfiable="DoNotSchedule"} 0',
      ]);
      expect(await samples(registry, 'rebalancer_topology_max_skew')).toEqual([
        'rebalancer_topology_max_skew{namespace="shop",workload="Deployment/db-proxy",topology_key="kubernetes.io/hostname",when_unsatisfiable="DoNotSchedule"} 2',
        'rebalancer_topology_max_skew{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 1',
        'rebalancer_topology_max_skew{namespace="shop",workload="StatefulSet/db",topology_key="kubernetes.io/hostname",when_unsatisfiable="DoNotSchedule"} 2',
      ]);
      expect(metrics.skewSeriesCount()).toBe(3);
    });

    it('marks a group actionable only for an evicting policy and repairable skew; any evicting owner makes it so', async () => {
      const web = group('shop', ['Deployment/web'], 4, 1);
      const stuck = { ...group('shop', ['Deployment/db'], 4, 1), unrepairable: 'no eligible node has room' };
      metrics.recordTopology('dry', [web, stuck], { evicts: false });
      expect(await samples(registry, 'rebalancer_topology_actionable')).toEqual([
        'rebalancer_topology_actionable{namespace="shop",workload="Deployment/db",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 0',
        'rebalancer_topology_actionable{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 0',
      ]);
      metrics.recordTopology('evict', [web, stuck], { evicts: true });
      expect(await samples(registry, 'rebalancer_topology_actionable')).toEqual([
        'rebalancer_topology_actionable{namespace="shop",workload="Deployment/db",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 0',
        'rebalancer_topology_actionable{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 1',
      ]);
      // The evicting policy stops reporting it: the DryRun policy's view is left.
      metrics.recordTopology('evict', []);
      expect(await samples(registry, 'rebalancer_topology_actionable')).toContain(
        'rebalancer_topology_actionable{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 0',
      );
      metrics.recordTopology('dry', []);
      expect(await samples(registry, 'rebalancer_topology_actionable')).toEqual([]);
    });

    it('keeps a hard and a soft constraint of one workload and key apart, labelled by when_unsatisfiable', async () => {
      metrics.recordTopology('default', [
        group('shop', ['Deployment/web'], 1, 1, HOST, 'DoNotSchedule'),
        group('shop', ['Deployment/web'], 3, 1, HOST, 'ScheduleAnyway'),
      ]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/web",topology_key="kubernetes.io/hostname",when_unsatisfiable="DoNotSchedule"} 1',
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/web",topology_key="kubernetes.io/hostname",when_unsatisfiable="ScheduleAnyway"} 3',
      ]);
      metrics.recordTopology('default', [group('shop', ['Deployment/web'], 1, 1, HOST, 'DoNotSchedule')]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toHaveLength(1);
    });

    it('updates values and removes the series of a workload that disappeared', async () => {
      metrics.recordTopology('default', [group('shop', ['Deployment/web'], 4), group('shop', ['Deployment/api'], 2)]);
      metrics.recordTopology('default', [group('shop', ['Deployment/web'], 1)]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 1',
      ]);
      expect(await samples(registry, 'rebalancer_topology_max_skew')).toHaveLength(1);
      metrics.recordTopology('default', []);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([]);
      expect(await samples(registry, 'rebalancer_topology_max_skew')).toEqual([]);
      expect(metrics.skewSeriesCount()).toBe(0);
    });

    it('keeps a series another policy still reports', async () => {
      metrics.recordTopology('zones', [group('shop', ['Deployment/web'], 3)]);
      metrics.recordTopology('hosts', [group('shop', ['Deployment/web'], 3), group('shop', ['Deployment/api'], 1)]);
      metrics.recordTopology('zones', []);
      expect(await samples(registry, 'rebalancer_topology_skew')).toHaveLength(2);
      metrics.recordTopology('hosts', []);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([]);
    });

    it('exports the worst group when a workload has two constraints on the same key', async () => {
      // A lenient constraint (skew 3, maxSkew 5) must not hide a violated one (skew 2, maxSkew 1).
      metrics.recordTopology('default', [
        group('shop', ['Deployment/web'], 3, 5),
        group('shop', ['Deployment/web'], 2, 1),
      ]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 2',
      ]);
      expect(await samples(registry, 'rebalancer_topology_max_skew')).toEqual([
        'rebalancer_topology_max_skew{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 1',
      ]);
    });

    it('ignores groups without workloads (no pods, nothing to label)', async () => {
      metrics.recordTopology('default', [
        { namespace: 'shop', topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', skew: 0, maxSkew: 1 },
      ]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([]);
    });

    it('escapes label values as the exposition format requires', async () => {
      metrics.recordTopology('default', [group('shop', ['Deployment/we"b'], 1)]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/we\\"b",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 1',
      ]);
    });
  });

  describe('series cap', () => {
    beforeEach(() => {
      registry = new Registry();
      metrics = createMetrics(registry, { maxSkewSeries: 2 });
    });

    it('starts the dropped counter at 0', async () => {
      expect(await samples(registry, 'rebalancer_metric_series_dropped_total')).toEqual([
        'rebalancer_metric_series_dropped_total 0',
      ]);
    });

    it('exports at most the cap, worst groups first, and counts the rest as dropped', async () => {
      metrics.recordTopology('default', [
        group('a', ['Deployment/ok'], 0),
        group('b', ['Deployment/worst'], 6),
        group('c', ['Deployment/bad'], 3),
        group('d', ['Deployment/fine'], 1),
      ]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="b",workload="Deployment/worst",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 6',
        'rebalancer_topology_skew{namespace="c",workload="Deployment/bad",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 3',
      ]);
      expect(await samples(registry, 'rebalancer_topology_max_skew')).toHaveLength(2);
      expect(await samples(registry, 'rebalancer_metric_series_dropped_total')).toEqual([
        'rebalancer_metric_series_dropped_total 2',
      ]);
    });

    it('keeps exported series stable and frees room when a workload disappears', async () => {
      metrics.recordTopology('default', [group('a', ['Deployment/one'], 1), group('a', ['Deployment/two'], 1)]);
      // A new, worse group does not evict an exported series: it is dropped until room is freed.
      metrics.recordTopology('default', [
        group('a', ['Deployment/one'], 1),
        group('a', ['Deployment/two'], 1),
        group('a', ['Deployment/three'], 9),
      ]);
      expect(await samples(registry, 'rebalancer_metric_series_dropped_total')).toEqual([
        'rebalancer_metric_series_dropped_total 1',
      ]);
      metrics.recordTopology('default', [group('a', ['Deployment/two'], 1), group('a', ['Deployment/three'], 9)]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="a",workload="Deployment/three",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 9',
        'rebalancer_topology_skew{namespace="a",workload="Deployment/two",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 1',
      ]);
      expect(await samples(registry, 'rebalancer_metric_series_dropped_total')).toEqual([
        'rebalancer_metric_series_dropped_total 1',
      ]);
      expect(metrics.skewSeriesCount()).toBe(2);
    });

    it('applies the cap across policies', async () => {
      metrics.recordTopology('p1', [group('a', ['Deployment/one'], 1), group('a', ['Deployment/two'], 1)]);
      metrics.recordTopology('p2', [group('b', ['Deployment/three'], 1)]);
      expect(metrics.skewSeriesCount()).toBe(2);
      expect(await samples(registry, 'rebalancer_metric_series_dropped_total')).toEqual([
        'rebalancer_metric_series_dropped_total 1',
      ]);
    });

    it('uses 10,000 label sets by default', () => {
      const fresh = createMetrics(new Registry());
      const many = Array.from({ length: 10_001 }, (_, i) => group('ns', [`Deployment/w${i}`], 0));
      fresh.recordTopology('default', many);
      expect(fresh.skewSeriesCount()).toBe(10_000);
    });

    it('rejects a negative or fractional cap', () => {
      expect(() => createMetrics(new Registry(), { maxSkewSeries: -1 })).toThrow(RangeError);
      expect(() => createMetrics(new Registry(), { maxSkewSeries: 1.5 })).toThrow(RangeError);
    });
  });

  describe('evictions, violations and cycles', () => {
    it('counts evictions by policy, strategy and result', async () => {
      metrics.recordEviction('default', 'TopologySpread', 'evicted');
      metrics.recordEviction('default', 'TopologySpread', 'evicted');
      metrics.recordEviction('default', 'NodeTaints', 'pdb_blocked');
      metrics.recordEviction('dry', 'TopologySpread', 'dry_run');
      expect(await samples(registry, 'rebalancer_evictions_total')).toEqual([
        'rebalancer_evictions_total{policy="default",strategy="NodeTaints",result="pdb_blocked"} 1',
        'rebalancer_evictions_total{policy="default",strategy="TopologySpread",result="evicted"} 2',
        'rebalancer_evictions_total{policy="dry",strategy="TopologySpread",result="dry_run"} 1',
      ]);
    });

    it.each(EVICTION_RESULTS)('accepts result %s', async (result) => {
      metrics.recordEviction('default', 'PodAntiAffinity', result);
      expect(await samples(registry, 'rebalancer_evictions_total')).toEqual([
        `rebalancer_evictions_total{policy="default",strategy="PodAntiAffinity",result="${result}"} 1`,
      ]);
    });

    it('writes a violation gauge for every registered strategy, 0 when absent', async () => {
      const counts: Record<string, number> = { NodeAffinity: 3, TopologySpread: 1 };
      metrics.recordViolations('default', counts);
      expect(await samples(registry, 'rebalancer_violations')).toEqual(
        STRATEGIES.names
          .map((name) => `rebalancer_violations{policy="default",strategy="${name}"} ${counts[name] ?? 0}`)
          .sort(),
      );
      expect(STRATEGIES.names).toEqual(expect.arrayContaining(Object.keys(counts)));
    });

    it('counts cycles by what triggered them', async () => {
      metrics.observeCycle('default', 1, 'success', 'node');
      metrics.observeCycle('default', 1, 'success', 'node');
      metrics.observeCycle('default', 2, 'failed', 'policy');
      expect(await samples(registry, 'rebalancer_cycles_total')).toEqual([
        'rebalancer_cycles_total{policy="default",result="failed",trigger="policy"} 1',
        'rebalancer_cycles_total{policy="default",result="success",trigger="node"} 2',
      ]);
      metrics.forgetPolicy('default');
      expect(await samples(registry, 'rebalancer_cycles_total')).toEqual([]);
    });

    it('observes cycle duration, counts outcomes and stamps the last success', async () => {
      metrics.observeCycle('default', 0.2, 'success');
      clock += 60_000;
      metrics.observeCycle('default', 7, 'failed');
      metrics.observeCycle('default', 0, 'skipped_overlap');
      expect(await samples(registry, 'rebalancer_cycles_total')).toEqual([
        'rebalancer_cycles_total{policy="default",result="failed",trigger="schedule"} 1',
        'rebalancer_cycles_total{policy="default",result="skipped_overlap",trigger="schedule"} 1',
        'rebalancer_cycles_total{policy="default",result="success",trigger="schedule"} 1',
      ]);
      expect(await samples(registry, 'rebalancer_cycle_duration_seconds_count')).toEqual([
        'rebalancer_cycle_duration_seconds_count{policy="default"} 2',
      ]);
      expect(await samples(registry, 'rebalancer_cycle_duration_seconds_sum')).toEqual([
        'rebalancer_cycle_duration_seconds_sum{policy="default"} 7.2',
      ]);
      const buckets = await samples(registry, 'rebalancer_cycle_duration_seconds_bucket');
      expect(buckets).toContain('rebalancer_cycle_duration_seconds_bucket{le="0.25",policy="default"} 1');
      expect(buckets).toContain('rebalancer_cycle_duration_seconds_bucket{le="10",policy="default"} 2');
      expect(await samples(registry, 'rebalancer_last_successful_cycle_timestamp_seconds')).toEqual([
        'rebalancer_last_successful_cycle_timestamp_seconds{policy="default"} 1700000000',
      ]);
    });

    it('records a whole plan: topology, violations by strategy and planned evictions', async () => {
      const plan: RebalancePlan = {
        apiVersion: 'rebalancer.dev/v1alpha1',
        kind: 'RebalancePlan',
        policy: 'default',
        evictions: [
          { namespace: 'shop', name: 'web-1', node: 'a1', strategy: 'TopologySpread', reason: 'skew', priority: 0 },
        ],
        skipped: [],
        topology: [
          {
            namespace: 'shop',
            selector: 'app=web',
            topologyKey: ZONE,
            whenUnsatisfiable: 'DoNotSchedule',
            maxSkew: 1,
            domains: { a: 3, b: 1 },
            skew: 2,
            skewAfter: 1,
            workloads: ['Deployment/web'],
          },
        ],
        violations: [
          { strategy: 'NodeTaints', namespace: 'shop', name: 'api-1', node: 'b1', reason: 'taint' },
          { strategy: 'NodeTaints', namespace: 'shop', name: 'api-2', node: 'b1', reason: 'taint' },
        ],
        summary: { nodes: 2, pods: 4, violations: 2, evictions: 1, skipped: 0 },
      };
      metrics.recordPlan(plan);
      // A plan is what a cycle starts from: what the cycle evicted is set when it ends (recordCycleEvictions).
      expect(await samples(registry, 'rebalancer_plan_evictions')).toEqual([]);
      metrics.recordCycleEvictions('default', 3);
      expect(await samples(registry, 'rebalancer_plan_evictions')).toEqual([
        'rebalancer_plan_evictions{policy="default"} 3',
      ]);
      expect(await samples(registry, 'rebalancer_topology_skew')).toEqual([
        'rebalancer_topology_skew{namespace="shop",workload="Deployment/web",topology_key="topology.kubernetes.io/zone",when_unsatisfiable="DoNotSchedule"} 2',
      ]);
      expect(await samples(registry, 'rebalancer_violations')).toContain(
        'rebalancer_violations{policy="default",strategy="NodeTaints"} 2',
      );
      // The hard spread group above its maxSkew is a TopologySpread violation.
      expect(await samples(registry, 'rebalancer_violations')).toContain(
        'rebalancer_violations{policy="default",strategy="TopologySpread"} 1',
      );
    });

    it('counts nodes per utilization class per policy, never a series per node, and drops them with the strategy', async () => {
      const node = (name: string, c: 'under' | 'appropriate' | 'over') => ({
        name,
        class: c,
        utilization: { cpu: 0.5 },
      });
      const nodes = [
        node('a', 'over'),
        node('b', 'under'),
        node('c', 'under'),
        ...Array.from({ length: 500 }, (_, i) => node(`n${i}`, 'appropriate')),
      ];
      metrics.recordPlan({ ...planOfEvictions('lnu', 2), nodes });
      expect((await samples(registry, 'rebalancer_nodes_by_utilization')).sort()).toEqual([
        'rebalancer_nodes_by_utilization{policy="lnu",class="appropriate"} 500',
        'rebalancer_nodes_by_utilization{policy="lnu",class="over"} 1',
        'rebalancer_nodes_by_utilization{policy="lnu",class="under"} 2',
      ]);
      metrics.recordPlan(planOfEvictions('lnu', 0));
      expect(await samples(registry, 'rebalancer_nodes_by_utilization')).toEqual([]);
    });

    it('forgets every series of a deleted policy and keeps the others', async () => {
      for (const policy of ['gone', 'kept']) {
        metrics.recordPlan(planOfEvictions(policy, 4));
        metrics.recordCycleEvictions(policy, 4);
        metrics.recordTopology(policy, [group(policy, ['Deployment/web'], 2)]);
        metrics.recordViolations(policy, { NodeTaints: 1 });
        metrics.recordEviction(policy, 'NodeTaints', 'failed');
        metrics.observeCycle(policy, 1, 'success');
      }
      metrics.forgetPolicy('gone');
      const text = await registry.metrics();
      expect(text).not.toContain('"gone"');
      expect(text).toContain('rebalancer_evictions_total{policy="kept",strategy="NodeTaints",result="failed"} 1');
      expect(text).toContain('rebalancer_plan_evictions{policy="kept"} 4');
      expect(await samples(registry, 'rebalancer_topology_skew')).toHaveLength(1);
    });
  });
});
