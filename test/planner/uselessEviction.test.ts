// "No useless eviction" (issue 19): an eviction that cannot lower the skew it is planned for, given the pods that
// cannot move, is not planned — neither alone nor as the first move of a set. The case: hostname counts
// 2,2,1,0,0,0 where both pods of the fullest node are opted out (rebalancer.dev/evict: never). Five pods on six nodes
// keep the minimum at 0, and the opted-out node keeps the maximum at 2: no set of moves lowers the skew below 2.
import { describe, expect, it } from 'vitest';
import { planCycle } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { HOSTNAME, buildSnapshot, makeNode, makePod, makePolicy } from '../builders.js';

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100, minPodAge: '0s' };

function cluster(whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway', optOut: boolean) {
  const nodes = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'];
  const on = ['n1', 'n1', 'n2', 'n2', 'n3'];
  return buildSnapshot([
    ...nodes.map((n) => makeNode(n).zone('zone-a')),
    ...on.map((node, i) => {
      const pod = makePod(`web-${i}`, 'shop')
        .deployment('web')
        .label('app', 'web')
        .node(node)
        .spread({
          topologyKey: HOSTNAME,
          maxSkew: 1,
          whenUnsatisfiable,
          labelSelector: { matchLabels: { app: 'web' } },
        });
      return optOut && node === 'n1' ? pod.annotation('rebalancer.dev/evict', 'never') : pod;
    }),
  ]);
}

describe('no useless eviction', () => {
  it.each(['DoNotSchedule', 'ScheduleAnyway'] as const)(
    'hostname 2,2,1,0,0,0 (%s) with the fullest node opted out: nothing is evicted',
    (when) => {
      const policy = parsePolicy(
        makePolicy('p', { eviction: LARGE, strategies: { topologySpread: { includeSoftConstraints: true } } }),
        { file: 'p.yaml' },
      );
      const plan = planCycle(cluster(when, true), policy).plan;
      expect(plan.evictions.map((e) => `${e.name} ${e.node} → ${e.target}`)).toEqual([]);
    },
  );

  it('without the opt-out the fullest nodes are drained to 1,1,1,1,1,0', () => {
    const policy = parsePolicy(makePolicy('p', { eviction: LARGE }), { file: 'p.yaml' });
    const plan = planCycle(cluster('DoNotSchedule', false), policy).plan;
    expect(plan.evictions.map((e) => e.node).sort()).toEqual(['n1', 'n2']);
    for (const e of plan.evictions) expect(['n4', 'n5', 'n6']).toContain(e.target);
  });
});
