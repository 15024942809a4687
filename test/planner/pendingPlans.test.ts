// The operator's plans (PlanOptions.pendingLandings, inFlight, maxMoves): each prediction allows for the replacements
// planned before it and those the run has in flight; a pod related to one in flight waits for it to land; a paced step
// holds a bounded number of evictions. `plan` and `simulate` plan without these (each replacement on its target).
import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../src/model/types.js';
import { planCycle } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { buildSnapshot, makeNode, makePod, makePolicy, ZONE } from '../builders.js';

const spread = (app: string) => ({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app } } });
const pod = (workload: string, name: string, node: string) =>
  makePod(name, 'shop')
    .deployment(workload)
    .labels({ app: workload })
    .node(node)
    .requests({ cpu: '1', memory: '1Gi' })
    .spread(spread(workload));

/** Zone a: one large node with web ×3 and api ×2. Zone b: two one-cpu nodes, so each takes one replacement. */
function cluster() {
  const small = (name: string) => makeNode(name).zone('zone-b').allocatable({ cpu: '1', memory: '4Gi', pods: '110' });
  return buildSnapshot([
    makeNode('n-a').zone('zone-a'),
    small('n-b1'),
    small('n-b2'),
    ...['1', '2', '3'].map((i) => pod('web', `web-${i}`, 'n-a')),
    ...['1', '2'].map((i) => pod('api', `api-${i}`, 'n-a')),
  ]);
}

const policy = parsePolicy(makePolicy('p', { mode: 'Evict', eviction: { minPodAge: '0s', maxPerWorkload: 1 } }), {
  file: 'test',
});
const landings = (moves: ReturnType<typeof planCycle>['moves']) =>
  moves.map((m) => `${m.pod.workload.name} → ${[m.target!, ...m.ties].map((n) => n.name).join(',')}`);

describe("the operator's plans allow for the replacements on their way", () => {
  it('plain (plan, simulate): api assumes web on its target, so api goes to the other node', () => {
    expect(landings(planCycle(cluster(), policy).moves)).toEqual(['web → n-b1,n-b2', 'api → n-b2']);
  });

  it('pendingLandings: web may land on either node, so api may too (it fits wherever web does not)', () => {
    const { moves } = planCycle(cluster(), policy, { pendingLandings: true });
    expect(landings(moves)).toEqual(['web → n-b1,n-b2', 'api → n-b1,n-b2']);
  });

  it('a replacement in flight to n-b1 or n-b2: the plan for api allows for it on either', () => {
    const snapshot = cluster();
    const web = snapshot.pods.find((p) => p.name === 'web-1')!;
    const { moves } = planCycle(snapshot, policy, {
      pendingLandings: true,
      inFlight: [{ pod: web, nodes: ['n-b1', 'n-b2'] }],
      heldWorkloads: new Map([['shop/Deployment/web', 'an eviction in flight']]),
    });
    expect(landings(moves)).toEqual(['api → n-b1,n-b2']);
  });

  it('a pod whose spread counts a replacement in flight waits for it to land, and says so', () => {
    const snapshot = buildSnapshot([
      makeNode('n-a').zone('zone-a'),
      makeNode('n-b').zone('zone-b'),
      ...['1', '2', '3'].map((i) => pod('web', `web-${i}`, 'n-a')),
      ...['1', '2', '3'].map((i) =>
        makePod(`shop-${i}`, 'shop')
          .deployment('shop')
          .labels({ app: 'shop' })
          .node('n-a')
          .spread({
            topologyKey: ZONE,
            maxSkew: 1,
            labelSelector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
          }),
      ),
    ]);
    const inFlight: PodInfo = snapshot.pods.find((p) => p.name === 'web-1')!;
    const { plan } = planCycle(snapshot, policy, {
      pendingLandings: true,
      inFlight: [{ pod: inFlight, nodes: ['n-b'] }],
      heldWorkloads: new Map([['shop/Deployment/web', 'an eviction in flight']]),
    });
    const waiting = plan.skipped.filter((s) => s.name.startsWith('shop-'));
    expect(waiting.length).toBeGreaterThan(0);
    expect(waiting[0]!.reason).toBe(
      'waits for the replacement of shop/web-1 to land (where it lands changes this prediction)',
    );
    expect(plan.evictions.filter((e) => e.name.startsWith('shop-'))).toEqual([]);
  });

  it('maxMoves: a paced step holds that many evictions, the rest skipped for a later step', () => {
    const { moves, plan } = planCycle(cluster(), policy, { pendingLandings: true, maxMoves: 1 });
    expect(moves).toHaveLength(1);
    expect(plan.skipped.map((s) => s.reason)).toContain(
      "planned in a later step of this run (a paced run plans 1 evictions at a time, the next as they land); the group's skew is left for a later step",
    );
  });
});
