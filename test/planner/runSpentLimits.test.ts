// A plan made in the middle of a run (the executor's re-plan after each paced or projected step) starts from what the
// run has already spent of maxPerCycle, maxPerNode and maxPerNamespace (DESIGN.md: those three count a cycle's
// evictions). It must then choose its pod where the run may still evict: with a zone's pods on two nodes and one of
// them used up, the pod comes from the other node; only when every candidate's node or namespace is used up does the
// plan stop, naming the limit. A plan that ignored what was spent picked the used-up node again whenever the
// scheduler's first placement put more pods there, and the run stopped after one eviction (issue 30, on 1.35).
import { describe, expect, it } from 'vitest';
import type { SpentLimits } from '../../src/planner/budget.js';
import { planCycle } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { buildSnapshot, makeNode, makePod, makePolicy, ZONE } from '../builders.js';

const spread = { topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'api' } } };
const api = (name: string, node: string) =>
  makePod(name, 'payments').deployment('api').labels({ app: 'api' }).node(node).spread(spread);

/** Zone a holds all four replicas, two on each of its nodes; zones b and c have room. */
const objects = [
  makeNode('a1').zone('zone-a'),
  makeNode('a2').zone('zone-a'),
  makeNode('b1').zone('zone-b'),
  makeNode('c1').zone('zone-c'),
  api('api-1', 'a1'),
  api('api-2', 'a1'),
  api('api-3', 'a2'),
  api('api-4', 'a2'),
];

const limits = { maxPerCycle: 6, maxPerNode: 1, maxPerNamespace: 3, maxPerWorkload: 1, minPodAge: '0s' };
const policy = parsePolicy(
  makePolicy('zone-balance', {
    mode: 'Evict',
    strategies: { topologySpread: {} },
    eviction: limits,
  }),
  { file: 'test' },
);

const spent = (s: { total?: number; nodes?: Record<string, number>; namespaces?: Record<string, number> }) =>
  ({
    total: s.total ?? 0,
    perNode: new Map(Object.entries(s.nodes ?? {})),
    perNamespace: new Map(Object.entries(s.namespaces ?? {})),
  }) satisfies SpentLimits;

describe('a re-plan within a run starts from what the run spent', () => {
  it.each<{ scenario: string; spent: SpentLimits | undefined; from: string | undefined; stopped?: RegExp }>([
    { scenario: 'a plan of its own (nothing spent) takes the candidate it orders first', spent: undefined, from: 'a2' },
    {
      scenario: 'a spent node that holds none of the candidates changes nothing',
      spent: spent({ total: 1, nodes: { b1: 1 }, namespaces: { payments: 1 } }),
      from: 'a2',
    },
    {
      scenario: 'node a1 used up by the run: the pod comes from a2',
      spent: spent({ total: 1, nodes: { a1: 1 }, namespaces: { payments: 1 } }),
      from: 'a2',
    },
    {
      scenario: 'node a2 used up by the run: the pod comes from a1',
      spent: spent({ total: 1, nodes: { a2: 1 }, namespaces: { payments: 1 } }),
      from: 'a1',
    },
    {
      scenario: 'both nodes of the full zone used up: nothing, and the plan says maxPerNode',
      spent: spent({ total: 2, nodes: { a1: 1, a2: 1 }, namespaces: { payments: 2 } }),
      from: undefined,
      stopped: /^limit maxPerNode \(1\) reached on node a[12]$/,
    },
    {
      scenario: 'the namespace used up: nothing, and the plan says maxPerNamespace',
      spent: spent({ total: 3, namespaces: { payments: 3 } }),
      from: undefined,
      stopped: /^limit maxPerNamespace \(3\) reached in namespace payments$/,
    },
    {
      scenario: 'the cycle used up: nothing, and the plan names maxPerCycle with its own value',
      spent: spent({ total: 6 }),
      from: undefined,
      stopped: /^limit maxPerCycle \(6\) reached/,
    },
  ])('$scenario', ({ spent: used, from, stopped }) => {
    const snapshot = buildSnapshot(objects);
    const { moves, plan } = planCycle(snapshot, policy, used === undefined ? {} : { spent: used });
    expect(moves.map((m) => m.from.name)).toEqual(from === undefined ? [] : [from]);
    if (stopped !== undefined) expect(plan.skipped.map((s) => s.reason)).toContainEqual(expect.stringMatching(stopped));
  });

  it('leaves the caller’s counts as they were', () => {
    const used = spent({ total: 1, nodes: { a1: 1 }, namespaces: { payments: 1 } });
    planCycle(buildSnapshot(objects), policy, { spent: used });
    expect([used.total, [...used.perNode], [...used.perNamespace]]).toEqual([1, [['a1', 1]], [['payments', 1]]]);
  });
});
