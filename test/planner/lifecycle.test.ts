// A cordon is not a violation (DESIGN.md): a node in its lifecycle's hands (cordoned, not ready, tainted by the
// autoscaler or Karpenter) is never where a replacement is meant to land, and the utilization strategies never count
// it as underutilized. Scenarios: one busy node, one nearly empty node that someone just cordoned or tainted.
import { describe, expect, it } from 'vitest';
import { planCycle } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { buildSnapshot, makeNode, makePod, makePolicy, type NodeBuilder } from '../builders.js';

type Json = Record<string, unknown>;

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
const node = (name: string): NodeBuilder => makeNode(name).allocatable({ cpu: '4', memory: '16Gi', pods: '110' });

/** n1 runs eight 400m pods (80% cpu), n2 one (10%): lowNodeUtilization moves pods from n1 to n2. */
function cluster(edit: (n2: NodeBuilder) => NodeBuilder): Json[] {
  const busy = Array.from({ length: 8 }, (_, i) =>
    makePod(`web-${i}`, 'shop').deployment('web').label('app', 'web').node('n1').requests({ cpu: '400m' }).obj(),
  );
  const idle = makePod('api-0', 'shop').deployment('api').label('app', 'api').node('n2').requests({ cpu: '400m' });
  return [node('n1').obj(), edit(node('n2')).obj(), ...busy, idle.obj()];
}

function evictions(objects: Json[], strategies: Json): string[] {
  const policy = parsePolicy(makePolicy('p', { strategies, eviction: LARGE }), { file: 'p.yaml' });
  return planCycle(buildSnapshot(objects), policy).plan.evictions.map((e) => `${e.name}→${e.target ?? '-'}`);
}

const LNU = { lowNodeUtilization: { thresholds: { cpu: 20 }, targetThresholds: { cpu: 50 } } };

describe('a node in its lifecycle’s hands is never a landing target nor underutilized', () => {
  it('the scenario moves pods onto the idle node when nothing happens to it (the tests below can fail)', () => {
    expect(
      evictions(
        cluster((n) => n),
        LNU,
      ).length,
    ).toBeGreaterThan(0);
    expect(
      evictions(
        cluster((n) => n),
        LNU,
      ).every((e) => e.endsWith('→n2')),
    ).toBe(true);
  });

  it.each<{ name: string; edit: (n: NodeBuilder) => NodeBuilder }>([
    {
      name: 'cordoned (kubectl cordon)',
      edit: (n) => n.unschedulable().taint('node.kubernetes.io/unschedulable', undefined, 'NoSchedule'),
    },
    { name: 'NotReady', edit: (n) => n.notReady() },
    {
      name: 'marked by the cluster autoscaler',
      edit: (n) => n.taint('ToBeDeletedByClusterAutoscaler', '1700000000', 'NoSchedule'),
    },
    { name: 'disrupted by Karpenter', edit: (n) => n.taint('karpenter.sh/disrupted', undefined, 'NoSchedule') },
  ])('lowNodeUtilization moves nothing onto an idle node $name', ({ edit }) => {
    expect(evictions(cluster(edit), LNU)).toEqual([]);
  });
});
