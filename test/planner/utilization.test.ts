// Table-driven scenarios of the load strategies (lowNodeUtilization, highNodeUtilization, removeDuplicates): which
// pods a plan evicts, where the replacements land, which it leaves and why. Built from raw objects with the test
// builders through the real loader; expectations restate DESIGN.md ("Utilization and housekeeping strategies") and
// the descheduler issues the strategies answer (#616, #725, #994).
import { describe, expect, it } from 'vitest';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import type { Policy } from '../../src/policy/types.js';
import {
  buildSnapshot,
  makeNode,
  makePdb,
  makePod,
  makePolicy,
  type NodeBuilder,
  type PodBuilder,
} from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };

function plan(
  objects: readonly Buildable[],
  strategies: Json,
  eviction: Json = LARGE,
): PlanOutcome & { policy: Policy } {
  const policy = parsePolicy(makePolicy('test', { strategies, eviction }), { file: 'test-policy.yaml' });
  return { policy, ...planCycle(buildSnapshot(objects), policy) };
}

const node = (name: string, cpu = '4'): NodeBuilder =>
  makeNode(name).allocatable({ cpu, memory: '16Gi', pods: '110' }).label('capacity-type', 'on-demand');

/** `n` pods of 400m of one Deployment (`app: prefix`, as its selector would be) on a node. */
function pods(
  prefix: string,
  nodeName: string,
  n: number,
  edit: (p: PodBuilder) => PodBuilder = (p) => p,
): PodBuilder[] {
  return Array.from({ length: n }, (_, i) =>
    edit(
      makePod(`${prefix}-${nodeName}-${i}`, 'shop')
        .deployment(prefix)
        .label('app', prefix)
        .node(nodeName)
        .requests({ cpu: '400m' }),
    ),
  );
}

const LNU = (thresholds: Json, targetThresholds: Json, more: Json = {}): Json => ({
  lowNodeUtilization: { enabled: true, thresholds, targetThresholds, ...more },
});
const evictions = (r: PlanOutcome): string[] => r.plan.evictions.map((e) => `${e.name}→${e.target}`);
const cpuAfter = (r: PlanOutcome): Record<string, number> =>
  Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.utilizationAfter!['cpu']!]));

describe('lowNodeUtilization', () => {
  it('on-demand nodes at 80% and two empty spot nodes: 6 evictions of the unpinned pods, all onto spot', () => {
    const objects: Buildable[] = [];
    for (const n of ['od-1', 'od-2', 'od-3']) {
      objects.push(node(n));
      objects.push(...pods('free', n, 4));
      objects.push(...pods('pinned', n, 4, (p) => p.nodeSelector({ 'capacity-type': 'on-demand' })));
    }
    objects.push(node('spot-1').label('capacity-type', 'spot'), node('spot-2').label('capacity-type', 'spot'));
    const r = plan(objects, LNU({ cpu: 20, memory: 20, pods: 20 }, { cpu: 60, memory: 60, pods: 60 }));
    expect(r.plan.evictions).toHaveLength(6);
    expect(r.plan.evictions.every((e) => e.name.startsWith('free-'))).toBe(true);
    expect(r.plan.evictions.every((e) => e.target?.startsWith('spot-'))).toBe(true);
    for (const [, share] of Object.entries(cpuAfter(r))) expect(share).toBeLessThanOrEqual(0.6);
    expect(r.plan.nodes?.find((n) => n.name === 'od-1')).toMatchObject({ class: 'over', utilization: { cpu: 0.8 } });
    expect(r.plan.nodes?.find((n) => n.name === 'spot-1')).toMatchObject({ class: 'under', utilization: { cpu: 0 } });
  });

  it('descheduler#616: a replacement that would land on a node that is not underutilized is never evicted', () => {
    // The only underutilized node is tainted: the scheduler would put the replacement on the appropriate node.
    const r = plan(
      [
        node('busy'),
        ...pods('web', 'busy', 8),
        node('mid'),
        ...pods('other', 'mid', 4),
        node('empty').taint('dedicated', 'gpu', 'NoSchedule'),
      ],
      LNU({ cpu: 20 }, { cpu: 60 }),
    );
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.skipped.find((s) => s.name === 'web-busy-0')?.reason).toMatch(
      /could land on mid, which is not underutilized/,
    );
  });

  it('the fewest evictions: one large pod rather than four small ones', () => {
    const r = plan(
      [
        node('a', '2'),
        ...Array.from({ length: 4 }, (_, i) =>
          makePod(`small-${i}`, 'shop').deployment('small').node('a').requests({ cpu: '100m' }),
        ),
        makePod('large', 'shop').deployment('large').node('a').requests({ cpu: '1' }),
        node('b', '2'),
      ],
      LNU({ cpu: 20 }, { cpu: 50 }),
    );
    expect(evictions(r)).toEqual(['large→b']);
  });

  it('among sets of the fewest evictions, the lower priority, then BestEffort before Burstable before Guaranteed', () => {
    const pod = (name: string): PodBuilder =>
      makePod(name, 'shop').deployment(name).node('a').requests({ cpu: '500m' });
    const r = plan(
      [
        node('a', '2'),
        pod('important').priority(100),
        pod('guaranteed').limits({ cpu: '500m', memory: '1Gi' }).requests({ cpu: '500m', memory: '1Gi' }),
        pod('burstable'),
        node('b', '2'),
      ],
      LNU({ cpu: 20 }, { cpu: 50 }),
    );
    expect(evictions(r)).toEqual(['burstable→b']);
  });

  it('as close as the room allows: the underutilized node stays at or below its target', () => {
    // 'a' needs 4 evictions to reach 50%, 'b' can take 2 before it is above 50%.
    const r = plan(
      [node('a'), ...pods('web', 'a', 9), node('b', '2'), ...pods('x', 'b', 0)],
      LNU({ cpu: 20 }, { cpu: 50 }),
    );
    expect(r.plan.evictions).toHaveLength(2);
    expect(cpuAfter(r)['b']).toBeLessThanOrEqual(0.5);
  });

  it('numberOfNodes: nothing while no more nodes than that are underutilized', () => {
    const objects = [node('a'), ...pods('web', 'a', 9), node('b')];
    expect(plan(objects, LNU({ cpu: 20 }, { cpu: 50 }, { numberOfNodes: 1 })).plan.evictions).toEqual([]);
    expect(plan(objects, LNU({ cpu: 20 }, { cpu: 50 }, { numberOfNodes: 0 })).plan.evictions).not.toEqual([]);
  });

  it('useDeviationThresholds: classes around the mean utilization', () => {
    // cpu 90%, 50%, 10%: mean 50%; ±20 points makes 90% over and 10% under, 50% appropriate.
    const r = plan(
      [
        node('a', '2'),
        ...pods('w', 'a', 5).slice(0, 4),
        makePod('half', 'shop').deployment('half').node('a').requests({ cpu: '200m' }),
        node('b', '2'),
        ...pods('v', 'b', 2),
        makePod('q', 'shop').deployment('q').node('b').requests({ cpu: '200m' }),
        node('c', '2'),
        makePod('r', 'shop').deployment('r').node('c').requests({ cpu: '200m' }),
      ],
      LNU({ cpu: 20 }, { cpu: 20 }, { useDeviationThresholds: true }),
    );
    expect(Object.fromEntries((r.plan.nodes ?? []).map((n) => [n.name, n.class]))).toEqual({
      a: 'over',
      b: 'appropriate',
      c: 'under',
    });
    expect(r.plan.evictions.every((e) => e.node === 'a' && e.target === 'c')).toBe(true);
    expect(r.plan.evictions.length).toBeGreaterThan(0);
  });

  it('a PodDisruptionBudget at its floor: its pods stay, the others move', () => {
    const r = plan(
      [
        node('a'),
        ...pods('guarded', 'a', 4).map((p) => p.label('app', 'guarded')),
        // Higher priority: the guarded pods come first in eviction order.
        ...pods('web', 'a', 4, (p) => p.priority(10)),
        node('b'),
        makePdb('guarded', 'shop').selector({ app: 'guarded' }).minAvailable(4),
      ],
      LNU({ cpu: 20 }, { cpu: 50 }),
    );
    expect(r.plan.evictions.map((e) => e.name).every((n) => n.startsWith('web-'))).toBe(true);
    expect(r.plan.skipped.find((s) => s.name.startsWith('guarded-'))?.reason).toMatch(/PodDisruptionBudget/);
  });

  it('breaks no spread constraint another strategy acts on', () => {
    // The replacement would land on b, where a soft hostname spread acted on (includeSoftConstraints) is already fullest.
    const spread = (p: PodBuilder): PodBuilder =>
      p.label('app', 'web').spread({
        topologyKey: 'kubernetes.io/hostname',
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { app: 'web' } },
      });
    const r = plan(
      [
        node('a'),
        ...pods('web', 'a', 8, spread),
        node('b'),
        ...pods('web', 'b', 1, spread).map((p) => p.requests({ cpu: '100m' })),
        ...pods('zz', 'b', 0),
      ],
      { ...LNU({ cpu: 20 }, { cpu: 50 }), topologySpread: { includeSoftConstraints: true } },
    );
    // Spread alone moves pods a→b too; what matters is that no kept move leaves the acted-on group worse.
    expect(r.plan.topology.every((t) => t.skewAfter <= Math.max(t.skew, t.maxSkew))).toBe(true);
  });
});

const HNU = (cpu: number, more: Json = {}): Json => ({
  highNodeUtilization: { enabled: true, thresholds: { cpu }, ...more },
});

describe('highNodeUtilization', () => {
  it('descheduler#725: with every node underutilized, the most utilized one is kept and the others are emptied', () => {
    // The pods prefer the packed node, so the scheduler's choice is c whatever its resource scoring.
    const prefer = (p: PodBuilder): PodBuilder =>
      p.preferredNodeAffinity(100, { matchExpressions: [{ key: 'pack', operator: 'In', values: ['here'] }] });
    const r = plan(
      [
        node('a'),
        ...pods('w', 'a', 1, prefer),
        node('b'),
        ...pods('x', 'b', 2, prefer),
        node('c').label('pack', 'here'),
        ...pods('y', 'c', 3),
      ],
      HNU(50),
    );
    expect(r.plan.evictions.map((e) => e.node).sort()).toEqual(['a', 'b', 'b']);
    expect(r.plan.evictions.every((e) => e.target === 'c')).toBe(true);
  });

  it('LeastAllocated: the replacements would land on the other node being emptied, so nothing is evicted', () => {
    const objects = [
      node('low-1'),
      ...pods('a', 'low-1', 2),
      node('low-2'),
      ...pods('b', 'low-2', 2),
      ...['high-1', 'high-2', 'high-3'].flatMap((n) => [node(n), ...pods(`c${n}`, n, 6)]),
    ];
    const r = plan(objects, HNU(30));
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.skipped.map((s) => s.reason).join('\n')).toMatch(
      /would land on low-[12], an underutilized node being emptied/,
    );
    expect(r.plan.nodes?.filter((n) => n.class === 'under').map((n) => n.name)).toEqual(['low-1', 'low-2']);
  });

  it('a node with a pod that cannot move is not half-emptied', () => {
    const r = plan(
      [
        node('low'),
        ...pods('a', 'low', 1),
        makePod('kept', 'shop')
          .deployment('kept')
          .node('low')
          .requests({ cpu: '400m' })
          .annotation('rebalancer.dev/evict', 'never'),
        node('high'),
        ...pods('c', 'high', 6),
      ],
      HNU(30),
    );
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.skipped.find((s) => s.name === 'a-low-0')?.reason).toMatch(/cannot be emptied/);
  });
});

describe('removeDuplicates', () => {
  const RD = (more: Json = {}): Json => ({ removeDuplicates: { enabled: true, ...more } });

  it('three pods of one ReplicaSet on one node and two empty nodes: one moves now, as b and c tie', () => {
    // The first replacement may land on b or c (tied top score), so either may then run a pod of the owner: the
    // second move waits for the first replacement to land (the next plan), as every tie must be right.
    const r = plan([node('a'), ...pods('web', 'a', 3), node('b'), node('c')], RD());
    expect(r.plan.evictions).toHaveLength(1);
    expect([r.plan.evictions[0]!.target, ...r.plan.evictions[0]!.targetTies!].sort()).toEqual(['b', 'c']);
    expect(r.plan.evictions[0]?.strategy).toBe('RemoveDuplicates');
  });

  it('excludeOwnerKinds: ReplicaSet pods are left alone', () => {
    const r = plan([node('a'), ...pods('web', 'a', 3), node('b')], RD({ excludeOwnerKinds: ['ReplicaSet'] }));
    expect(r.plan.evictions).toEqual([]);
  });

  it('where every other node already runs a pod of the owner, the duplicate stays and the plan says why', () => {
    const r = plan([node('a'), ...pods('web', 'a', 2), node('b'), ...pods('web', 'b', 1)], RD());
    expect(r.plan.evictions).toEqual([]);
    expect(r.plan.skipped[0]?.reason).toMatch(/already runs a pod of shop\/ReplicaSet\/web-/);
  });
});
