// Safety of podLifeTime `conditions` and highNodeUtilization `evictionModes`: each only ever removes pods from what a
// plan evicts. For random pods (status conditions with random statuses, reasons and transition times; random
// container requests) and random filters, the plan with them evicts a subset of the plan without.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planCycle } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { NOW, buildSnapshot, makeNode, makePod, makePolicy } from '../builders.js';

type Json = Record<string, unknown>;

const HOUR = 3_600_000;
const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
const OFF = {
  topologySpread: { enabled: false },
  podAntiAffinity: { enabled: false },
  nodeAffinity: { enabled: false },
};

const condition = fc.record({
  type: fc.constantFrom('Ready', 'ContainersReady', 'Initialized'),
  status: fc.constantFrom('True', 'False', 'Unknown'),
  reason: fc.option(fc.constantFrom('PodCompleted', 'ContainersNotReady'), { nil: undefined }),
  sinceH: fc.option(fc.integer({ min: -2, max: 12 }), { nil: undefined }),
});
const filter = fc
  .record(
    {
      type: fc.constantFrom('Ready', 'ContainersReady', 'Initialized'),
      status: fc.constantFrom('True', 'False', 'Unknown'),
      reason: fc.constantFrom('PodCompleted', 'ContainersNotReady'),
      minTimeSinceLastTransition: fc.constantFrom('0s', '30m', '3h', '8h'),
    },
    { requiredKeys: [] },
  )
  .filter((f) => Object.keys(f).length > 0);
const podSpec = fc.record({
  conditions: fc.array(condition, { maxLength: 3 }),
  requests: fc.constantFrom<Record<string, string> | undefined>(
    undefined,
    { cpu: '300m' },
    { memory: '1Gi' },
    { cpu: '0' },
  ),
  onLow: fc.boolean(),
});

function evictions(
  pods: readonly (typeof podSpec extends fc.Arbitrary<infer T> ? T : never)[],
  strategies: Json,
): Set<string> {
  const objects = [
    makeNode('low').allocatable({ cpu: '4', memory: '16Gi', pods: '110' }),
    makeNode('high').allocatable({ cpu: '4', memory: '16Gi', pods: '110' }).label('pack', 'here'),
    ...[1, 2, 3, 4, 5, 6].map((i) =>
      makePod(`busy-${i}`, 'shop')
        .deployment(`busy-${i}`)
        .node('high')
        .requests({ cpu: '400m' })
        .createdAt(NOW - 48 * HOUR),
    ),
    ...pods.map((p, i) => {
      let b = makePod(`p${i}`, 'shop')
        .deployment(`p${i}`)
        .label('app', `p${i}`)
        .node(p.onLow ? 'low' : 'high')
        .createdAt(NOW - 48 * HOUR)
        .preferredNodeAffinity(100, { matchExpressions: [{ key: 'pack', operator: 'In', values: ['here'] }] });
      if (p.requests !== undefined) b = b.requests(p.requests);
      for (const c of p.conditions) {
        b = b.condition(c.type, c.status, {
          ...(c.reason === undefined ? {} : { reason: c.reason }),
          ...(c.sinceH === undefined ? {} : { since: NOW - c.sinceH * HOUR }),
        });
      }
      return b;
    }),
  ];
  const policy = parsePolicy(makePolicy('prop', { strategies: { ...OFF, ...strategies }, eviction: LARGE }), {
    file: 'p.yaml',
  });
  return new Set(planCycle(buildSnapshot(objects), policy).plan.evictions.map((e) => e.name));
}

const subset = (a: Set<string>, b: Set<string>): boolean => [...a].every((x) => b.has(x));

describe('filters only narrow what a plan evicts', () => {
  it('podLifeTime: with conditions ⊆ without', () => {
    fc.assert(
      fc.property(
        fc.array(podSpec, { minLength: 1, maxLength: 5 }),
        fc.array(filter, { minLength: 1, maxLength: 3 }),
        (pods, filters) => {
          const lifetime = { enabled: true, maxPodLifeTime: '1h' };
          const without = evictions(pods, { podLifeTime: lifetime });
          const withFilters = evictions(pods, { podLifeTime: { ...lifetime, conditions: filters } });
          expect(subset(withFilters, without), `${[...withFilters].join()} ⊄ ${[...without].join()}`).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('highNodeUtilization: with OnlyThresholdingResources ⊆ without', () => {
    fc.assert(
      fc.property(
        fc.array(podSpec, { minLength: 1, maxLength: 4 }),
        fc.constantFrom<Json>({ cpu: 30 }, { memory: 30 }, { cpu: 30, memory: 30 }),
        (pods, thresholds) => {
          const hnu = { enabled: true, thresholds };
          const without = evictions(pods, { highNodeUtilization: hnu });
          const strict = evictions(pods, {
            highNodeUtilization: { ...hnu, evictionModes: ['OnlyThresholdingResources'] },
          });
          expect(subset(strict, without), `${[...strict].join()} ⊄ ${[...without].join()}`).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });
});
