// A soft (ScheduleAnyway) spread constraint the policy acts on (includeSoftConstraints) never ends worse than it
// started, on any node the scheduler may pick (issue 29: plans took a soft zone skew from 2 to 4 and a hostname skew
// from 3 to 5 while repairing another group). Here web must spread over zones a and b (DoNotSchedule, and a node
// affinity that keeps it out of zone c), and the tier's soft zone constraint counts every tier=web pod over a, b, c.
//   web (app=web, tier=web): zone a 3, zone b 0           → hard skew 3
//   cache (tier=web):        zone b 3, zone c 2           → tier counts a 3, b 3, c 2: soft skew 1 (maxSkew 1)
// Moving a web pod a → b lowers web's skew and raises the tier's to 2 (a 2, b 4, c 2).
import { describe, expect, it } from 'vitest';
import { planCycle } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { ZONE, buildSnapshot, makeNode, makePod, makePolicy } from '../builders.js';

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100, minPodAge: '0s' };
const tierSpread = {
  topologyKey: ZONE,
  maxSkew: 1,
  whenUnsatisfiable: 'ScheduleAnyway' as const,
  labelSelector: { matchLabels: { tier: 'web' } },
};

function cluster() {
  const web = (i: number) =>
    makePod(`web-${i}`, 'shop')
      .deployment('web')
      .labels({ app: 'web', tier: 'web' })
      .node('a1')
      .nodeAffinityIn(ZONE, ['zone-a', 'zone-b'])
      .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } });
  const cache = (i: number, node: string) =>
    makePod(`cache-${i}`, 'shop')
      .deployment('cache')
      .labels({ app: 'cache', tier: 'web' })
      .node(node)
      .spread(tierSpread);
  return buildSnapshot([
    makeNode('a1').zone('zone-a'),
    makeNode('b1').zone('zone-b'),
    makeNode('c1').zone('zone-c'),
    ...[0, 1, 2].map(web),
    ...[0, 1, 2].map((i) => cache(i, 'b1')),
    ...[3, 4].map((i) => cache(i, 'c1')),
  ]);
}

function planWith(includeSoftConstraints: boolean) {
  const policy = parsePolicy(
    makePolicy('p', { eviction: LARGE, strategies: { topologySpread: { includeSoftConstraints } } }),
    { file: 'p.yaml' },
  );
  return planCycle(cluster(), policy).plan;
}

const skewOf = (plan: ReturnType<typeof planWith>, when: string) =>
  plan.topology.find((t) => t.whenUnsatisfiable === when && t.topologyKey === ZONE && t.selector.includes('tier'));

describe('a soft spread constraint the policy acts on never ends worse', () => {
  it('includeSoftConstraints: web is not moved, since every landing would raise the tier skew from 1 to 2', () => {
    const plan = planWith(true);
    expect(plan.evictions).toEqual([]);
    expect(skewOf(plan, 'ScheduleAnyway')).toMatchObject({ skew: 1, skewAfter: 1 });
    expect(plan.skipped.map((s) => s.reason)).toContainEqual(
      expect.stringMatching(/raise the skew of topology\.kubernetes\.io\/zone spread \(ScheduleAnyway\).* to 2/),
    );
  });

  it('without includeSoftConstraints the soft constraint is not considered: web is balanced, the tier skew rises', () => {
    const plan = planWith(false);
    expect(plan.evictions.map((e) => [e.name, e.target])).toEqual([[expect.stringMatching(/^web-/), 'b1']]);
    expect(skewOf(plan, 'ScheduleAnyway')).toMatchObject({ skew: 1, skewAfter: 2 });
  });
});
