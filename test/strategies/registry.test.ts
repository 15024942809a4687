// The strategy registry is the only seam: a strategy defined in test/ and registered at run time is parsed from the
// policy, detected, planned, reported and counted without any change to the parser, the analysis, the planner, the
// report or the metrics.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { planTable } from '../../src/cli/table.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { planCycle } from '../../src/planner/plan.js';
import { checkPolicy, parsePolicy } from '../../src/policy/parse.js';
import { BUILTIN_STRATEGIES, STRATEGIES } from '../../src/strategies/registry.js';
import { buildSnapshot, makeNode, makePod, makePolicy } from '../builders.js';
import { markedForMove } from './markedForMove.js';

const registry = STRATEGIES.with(markedForMove);

// Two nodes; web-1 is marked and shares n1 with a larger replica, so the scheduler puts its replacement on n2.
const snapshot = buildSnapshot([
  makeNode('n1').allocatable({ cpu: '4', memory: '8Gi', pods: 110 }),
  makeNode('n2').allocatable({ cpu: '4', memory: '8Gi', pods: 110 }),
  makePod('web-1')
    .deployment('web')
    .label('app', 'web')
    .label('example.com/move', 'true')
    .requests({ cpu: '1' })
    .node('n1'),
  makePod('web-2').deployment('web').label('app', 'web').requests({ cpu: '2' }).node('n1'),
]);

const raw = makePolicy('marked', { strategies: { markedForMove: { enabled: true } } });

describe('a strategy registered at run time', () => {
  it('has its own section of spec.strategies, with its defaults', () => {
    const policy = parsePolicy(raw, { file: 'policy.yaml' }, registry);
    expect(policy.spec.strategies['markedForMove']).toEqual({ enabled: true, label: 'example.com/move' });
    // The built-in sections are there, off: the policy names only markedForMove (what a policy names is what runs).
    expect(policy.spec.strategies.topologySpread).toEqual({ ...STRATEGIES.all[0]!.policy.defaults, enabled: false });
  });

  it('is unknown to the built-in registry, whose parser names its section an unknown field', () => {
    expect(checkPolicy(raw).problems).toEqual([
      { field: 'spec.strategies.markedForMove', problem: expect.stringContaining('unknown field') },
    ]);
  });

  it('is planned: its violation becomes an eviction whose replacement lands where the rule holds', () => {
    const policy = parsePolicy(raw, { file: 'policy.yaml' }, registry);
    const { plan } = planCycle(snapshot, policy, { strategies: registry });
    expect(plan.violations).toEqual([
      {
        strategy: 'MarkedForMove',
        namespace: 'default',
        name: 'web-1',
        node: 'n1',
        reason: 'marked example.com/move=true on n1',
      },
    ]);
    expect(plan.evictions).toEqual([
      expect.objectContaining({
        namespace: 'default',
        name: 'web-1',
        node: 'n1',
        target: 'n2',
        strategy: 'MarkedForMove',
        reason: 'marked example.com/move=true on n1',
      }),
    ]);
  });

  it('is planned only by a registry that has it', () => {
    const policy = parsePolicy(raw, { file: 'policy.yaml' }, registry);
    const { plan } = planCycle(snapshot, policy);
    expect(plan.violations).toEqual([]);
    expect(plan.evictions).toEqual([]);
  });

  it('is reported: in the plan JSON and the table, under its name and with its reason', () => {
    const policy = parsePolicy(raw, { file: 'policy.yaml' }, registry);
    const { plan } = planCycle(snapshot, policy, { strategies: registry });
    const json = JSON.parse(JSON.stringify(plan));
    expect(json.evictions[0]).toMatchObject({
      strategy: 'MarkedForMove',
      reason: 'marked example.com/move=true on n1',
    });
    expect(json.summary).toMatchObject({ violations: 1, evictions: 1 });
    const table = planTable(plan);
    expect(table).toMatch(/default\/web-1 +n1 +n2 +MarkedForMove +marked example\.com\/move=true on n1/);
  });

  it('is counted: the violation gauge and the eviction counter are labelled with its name', async () => {
    const policy = parsePolicy(raw, { file: 'policy.yaml' }, registry);
    const { plan } = planCycle(snapshot, policy, { strategies: registry });
    const prom = new Registry();
    const metrics = createMetrics(prom, { strategies: registry });
    metrics.recordPlan(plan);
    for (const e of plan.evictions) metrics.recordEviction(plan.policy, e.strategy, 'dry_run');
    const text = await prom.metrics();
    expect(text).toContain('rebalancer_violations{policy="marked",strategy="MarkedForMove"} 1');
    expect(text).toContain('rebalancer_violations{policy="marked",strategy="NodeTaints"} 0');
    expect(text).toContain('rebalancer_evictions_total{policy="marked",strategy="MarkedForMove",result="dry_run"} 1');
    metrics.forgetPolicy('marked');
    expect(await prom.metrics()).not.toContain('strategy="MarkedForMove"');
  });
});

describe('the registry', () => {
  it('lists the built-in strategies in the order of DESIGN.md', () => {
    expect(STRATEGIES.names).toEqual([
      'TopologySpread',
      'PodAntiAffinity',
      'PodAffinity',
      'NodeAffinity',
      'NodeTaints',
      'LowNodeUtilization',
      'HighNodeUtilization',
      'RemoveDuplicates',
      'PodLifeTime',
      'TooManyRestarts',
      'FailedPods',
    ]);
    expect(BUILTIN_STRATEGIES.map((s) => s.key)).toEqual([
      'topologySpread',
      'podAntiAffinity',
      'podAffinity',
      'nodeAffinity',
      'nodeTaints',
      'lowNodeUtilization',
      'highNodeUtilization',
      'removeDuplicates',
      'podLifeTime',
      'tooManyRestarts',
      'failedPods',
    ]);
  });

  it('keeps the built-in strategies when more are registered, and the planner fixes rules in fixOrder', () => {
    expect(registry.names).toEqual([...STRATEGIES.names, 'MarkedForMove']);
    expect(registry.rules.map((s) => s.name)).toEqual([
      'NodeTaints',
      'NodeAffinity',
      'PodAntiAffinity',
      'PodAffinity',
      'MarkedForMove',
    ]);
    expect(registry.skew.map((s) => s.name)).toEqual(['TopologySpread']);
  });

  it('refuses a second strategy with a name, key or descheduler plugin already taken', () => {
    expect(() => registry.with({ ...markedForMove, key: 'other' })).toThrow(
      'two strategies have the name "MarkedForMove"',
    );
    expect(() => STRATEGIES.with({ ...markedForMove, key: 'nodeTaints' })).toThrow('the key "nodeTaints"');
    expect(() =>
      STRATEGIES.with({
        ...markedForMove,
        descheduler: { plugin: 'RemovePodsViolatingNodeTaints', convertArgs: () => undefined },
      }),
    ).toThrow('the descheduler plugin "RemovePodsViolatingNodeTaints"');
  });
});
