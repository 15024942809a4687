// podLifeTime `conditions` (the descheduler's PodLifeTime PodConditionFilter, v0.36): which pods a plan evicts, on
// snapshots built from raw pods with status conditions. The cases restate the plugin's README and its rules: a
// filter's fields are ANDed, the filters ORed; minTimeSinceLastTransition counts from the matching condition's
// lastTransitionTime (a condition without one never matches it); conditions narrow what states, exitCodes, ownerKinds
// and maxPodLifeTime select (all ANDed); the age limit counts from creation, not from a transition.
import { describe, expect, it } from 'vitest';
import { planCycle } from '../../src/planner/plan.js';
import type { RebalancePlan } from '../../src/model/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { NOW, buildSnapshot, makeNode, makePdb, makePod, makePolicy, type PodBuilder } from '../builders.js';

type Json = Record<string, unknown>;

const HOUR = 3_600_000;
const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
const OFF = {
  topologySpread: { enabled: false },
  podAntiAffinity: { enabled: false },
  nodeAffinity: { enabled: false },
};

function plan(pods: readonly PodBuilder[], lifetime: Json, eviction: Json = LARGE, extra: Json[] = []): RebalancePlan {
  const snapshot = buildSnapshot([makeNode('n1'), makeNode('n2'), ...pods, ...extra]);
  const strategies = { ...OFF, podLifeTime: { enabled: true, maxPodLifeTime: '0s', ...lifetime } };
  return planCycle(snapshot, parsePolicy(makePolicy('lt', { strategies, eviction }), { file: 'p.yaml' })).plan;
}

const evicted = (p: RebalancePlan): string[] => p.evictions.map((e) => e.name).sort();

/** A Deployment's pod on n1, created `ageH` hours before NOW. */
function web(name: string, ageH = 48): PodBuilder {
  return makePod(name, 'shop')
    .deployment('web')
    .label('app', 'web')
    .node('n1')
    .createdAt(NOW - ageH * HOUR);
}

/**
 * A Job's pod that completed `hoursAgo` hours before NOW, as the kubelet reports it: phase Succeeded, Initialized True
 * and Ready False, both with reason PodCompleted and transitioned then (no transition time when undefined).
 */
function completed(name: string, hoursAgo: number | undefined): PodBuilder {
  const at = hoursAgo === undefined ? {} : { since: NOW - hoursAgo * HOUR };
  return makePod(name, 'batch')
    .owner('Job', 'nightly')
    .node('n1')
    .createdAt(NOW - 48 * HOUR)
    .phase('Succeeded')
    .condition('Initialized', 'True', { reason: 'PodCompleted', ...at })
    .condition('Ready', 'False', { reason: 'PodCompleted', ...at });
}

describe('podLifeTime conditions, as the descheduler README describes them', () => {
  it('"evict completed pods idle for 4 hours": Succeeded, PodCompleted, transitioned at least 4h ago', () => {
    const pods = [completed('done-5h', 5), completed('done-4h', 4), completed('done-3h', 3)];
    const args = {
      states: ['Succeeded'],
      conditions: [{ reason: 'PodCompleted', status: 'True', minTimeSinceLastTransition: '4h' }],
    };
    const p = plan(pods, args);
    expect(evicted(p)).toEqual(['done-4h', 'done-5h']);
    expect(p.evictions.find((e) => e.name === 'done-5h')!.reason).toContain(
      'condition Initialized=True (PodCompleted) for 5h',
    );
  });

  it('a condition without a lastTransitionTime matches no minimum time, but matches a filter without one', () => {
    const pods = [completed('no-time', undefined)];
    expect(
      evicted(
        plan(pods, {
          states: ['Succeeded'],
          conditions: [{ reason: 'PodCompleted', minTimeSinceLastTransition: '1s' }],
        }),
      ),
    ).toEqual([]);
    expect(evicted(plan(pods, { states: ['Succeeded'], conditions: [{ reason: 'PodCompleted' }] }))).toEqual([
      'no-time',
    ]);
  });

  it('a transition in the future (clock skew) matches no minimum time', () => {
    const skewed = completed('skewed', -1);
    expect(
      evicted(plan([skewed], { states: ['Succeeded'], conditions: [{ minTimeSinceLastTransition: '0s' }] })),
    ).toEqual([]);
  });
});

describe('how the filters combine', () => {
  const notReady = (name: string, hoursAgo: number): PodBuilder =>
    web(name).condition('Ready', 'False', { reason: 'ContainersNotReady', since: NOW - hoursAgo * HOUR });
  const pods = [
    notReady('unready-2h', 2),
    notReady('unready-10m', 1 / 6),
    web('ready').condition('Ready', 'True', { since: NOW - 40 * HOUR }),
  ];

  it.each<[string, Json, string[]]>([
    [
      'type and status: both must agree',
      { conditions: [{ type: 'Ready', status: 'False' }] },
      ['unready-10m', 'unready-2h'],
    ],
    ['type alone', { conditions: [{ type: 'Ready' }] }, ['ready', 'unready-10m', 'unready-2h']],
    ['reason alone', { conditions: [{ reason: 'ContainersNotReady' }] }, ['unready-10m', 'unready-2h']],
    [
      'status of another type (PodScheduled True is on every pod)',
      { conditions: [{ status: 'True' }] },
      ['ready', 'unready-10m', 'unready-2h'],
    ],
    [
      'a minimum time since the transition',
      { conditions: [{ type: 'Ready', status: 'False', minTimeSinceLastTransition: '1h' }] },
      ['unready-2h'],
    ],
    ['a reason no condition has', { conditions: [{ type: 'Ready', reason: 'PodCompleted' }] }, []],
    [
      'two filters: either may match (ORed)',
      {
        conditions: [
          { type: 'Ready', status: 'True' },
          { reason: 'ContainersNotReady', minTimeSinceLastTransition: '1h' },
        ],
      },
      ['ready', 'unready-2h'],
    ],
    [
      'ANDed with maxPodLifeTime (counted from creation, not from the transition)',
      { maxPodLifeTime: '72h', conditions: [{ type: 'Ready', status: 'False' }] },
      [],
    ],
    ['ANDed with states', { states: ['CrashLoopBackOff'], conditions: [{ type: 'Ready', status: 'False' }] }, []],
    ['ANDed with ownerKinds', { ownerKinds: { exclude: ['ReplicaSet'] }, conditions: [{ type: 'Ready' }] }, []],
    ['an empty list: any conditions', { conditions: [] }, ['ready', 'unready-10m', 'unready-2h']],
  ])('%s', (_name, args, expected) => {
    expect(evicted(plan(pods, args))).toEqual(expected);
  });
});

describe('the same guarantees as every podLifeTime eviction', () => {
  const stale = (): PodBuilder => web('p').condition('Ready', 'False', { since: NOW - 5 * HOUR });
  const args = { conditions: [{ type: 'Ready', status: 'False', minTimeSinceLastTransition: '1h' }] };

  it('a PodDisruptionBudget at zero holds the pod back', () => {
    const pdb = makePdb('web', 'shop').selector({ app: 'web' }).minAvailable(1).allowed(0);
    const p = plan([stale()], args, LARGE, [pdb.obj()]);
    expect(evicted(p)).toEqual([]);
    expect(p.skipped.map((s) => [s.name, s.reason])).toEqual([
      ['p', 'PodDisruptionBudget shop/web allows 0 disruptions'],
    ]);
  });

  it('a pod at or above the priority threshold is skipped', () => {
    const p = plan([stale().priority(5000)], args, { ...LARGE, priorityThreshold: { value: 1000 } });
    expect(evicted(p)).toEqual([]);
    expect(p.skipped.map((s) => s.reason)).toEqual(['priority 5000 is at or above the threshold 1000']);
  });
});
