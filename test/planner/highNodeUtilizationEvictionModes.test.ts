// highNodeUtilization evictionModes (the descheduler v0.36's HighNodeUtilization EvictionModes): with
// OnlyThresholdingResources the descheduler evicts from an underutilized node only the pods whose containers request
// one of the thresholds' resources (the key present, also "0"; `pods` is never a container request). kube-rebalancer
// empties a node whole or not at all, so a node running a pod that requests none of them keeps all its pods.
import { describe, expect, it } from 'vitest';
import { planCycle } from '../../src/planner/plan.js';
import type { RebalancePlan } from '../../src/model/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { buildSnapshot, makeNode, makePod, makePolicy, type NodeBuilder, type PodBuilder } from '../builders.js';

type Json = Record<string, unknown>;

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };

function plan(objects: readonly (Json | { obj(): Json })[], thresholds: Json, evictionModes?: string[]): RebalancePlan {
  const highNodeUtilization = { enabled: true, thresholds, ...(evictionModes ? { evictionModes } : {}) };
  const policy = parsePolicy(makePolicy('t', { strategies: { highNodeUtilization }, eviction: LARGE }), {
    file: 't.yaml',
  });
  return planCycle(buildSnapshot(objects), policy).plan;
}

const node = (name: string): NodeBuilder => makeNode(name).allocatable({ cpu: '4', memory: '16Gi', pods: '110' });
/** A Deployment's pod; those on `low` prefer the node labelled pack=here, so the scheduler sends them to `high`. */
const pod = (name: string, nodeName: string, requests?: Record<string, string>): PodBuilder => {
  const p = makePod(name, 'shop')
    .deployment(name)
    .label('app', name)
    .node(nodeName)
    .preferredNodeAffinity(100, { matchExpressions: [{ key: 'pack', operator: 'In', values: ['here'] }] });
  return requests === undefined ? p : p.requests(requests);
};
/** An underutilized node `low` with `extra` beside one 400m pod, and a busy node `high` that takes them. */
const cluster = (...extra: PodBuilder[]): (Json | { obj(): Json })[] => [
  node('low'),
  pod('sized', 'low', { cpu: '400m' }),
  ...extra,
  node('high').label('pack', 'here'),
  ...[1, 2, 3, 4, 5, 6].map((i) => pod(`busy-${i}`, 'high', { cpu: '400m' })),
];
const evicted = (p: RebalancePlan): string[] => p.evictions.map((e) => e.name).sort();

describe('highNodeUtilization evictionModes', () => {
  it.each<[string, PodBuilder, Json, string[] | undefined, string[]]>([
    ['no modes: a pod with no requests moves too', pod('bare', 'low'), { cpu: 30 }, undefined, ['bare', 'sized']],
    [
      'OnlyThresholdingResources: a pod with no requests keeps the node',
      pod('bare', 'low'),
      { cpu: 30 },
      ['OnlyThresholdingResources'],
      [],
    ],
    [
      'a pod requesting "0" cpu does request cpu',
      pod('zero', 'low', { cpu: '0' }),
      { cpu: 30 },
      ['OnlyThresholdingResources'],
      ['sized', 'zero'],
    ],
    [
      'a pod requesting memory only, with a cpu threshold',
      pod('mem', 'low', { memory: '1Gi' }),
      { cpu: 30 },
      ['OnlyThresholdingResources'],
      [],
    ],
    [
      'the same pod with cpu and memory thresholds (any of them)',
      pod('mem', 'low', { memory: '1Gi' }),
      { cpu: 30, memory: 30 },
      ['OnlyThresholdingResources'],
      ['mem', 'sized'],
    ],
  ])('%s', (_name, extra, thresholds, modes, expected) => {
    const p = plan(cluster(extra), thresholds, modes);
    expect(evicted(p), JSON.stringify(p.skipped.map((s) => [s.name, s.reason]))).toEqual(expected);
  });

  it('a pods threshold alone: no container requests pods, so no node is emptied (as the descheduler evicts none)', () => {
    expect(evicted(plan(cluster(), { pods: 30 }))).toEqual(['sized']);
    expect(evicted(plan(cluster(), { pods: 30 }, ['OnlyThresholdingResources']))).toEqual([]);
  });

  it('says which pod keeps the node, and why the others stay', () => {
    const p = plan(cluster(pod('bare', 'low')), { cpu: 30 }, ['OnlyThresholdingResources']);
    expect(Object.fromEntries(p.skipped.map((s) => [s.name, s.reason]))).toEqual({
      bare: 'it requests none of cpu (evictionModes OnlyThresholdingResources)',
      sized:
        'node low cannot be emptied: shop/bare cannot move (it requests none of cpu (evictionModes OnlyThresholdingResources)); a half-emptied node saves nothing',
    });
  });

  it('an unknown mode is refused, naming the field', () => {
    expect(() => plan(cluster(), { cpu: 30 }, ['OnlyThresholdingResource'])).toThrow(
      /spec\.strategies\.highNodeUtilization\.evictionModes\[0\].*must be one of OnlyThresholdingResources/,
    );
  });
});
