// Table cases of the housekeeping strategies (podLifeTime, tooManyRestarts, failedPods) on snapshots: which pods a
// plan evicts and which it skips, with each filter field, the gates every eviction passes (opt-out annotation,
// priority threshold, budgets) and the reason each eviction gives. Built from raw objects with the test builders and
// loaded through the real loader; expectations restate DESIGN.md ("Utilization and housekeeping strategies") and the
// descheduler's plugins of the same names.
import { describe, expect, it } from 'vitest';
import { planTable } from '../../src/cli/table.js';
import { planCycle } from '../../src/planner/plan.js';
import { simulate } from '../../src/planner/simulate.js';
import type { RebalancePlan } from '../../src/model/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { NOW, buildSnapshot, makeNode, makePdb, makePod, makePolicy, type PodBuilder } from '../builders.js';

type Json = Record<string, unknown>;

const HOUR = 3_600_000;
const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
/** Only the named housekeeping section is on: the balance strategies find nothing to do in these clusters anyway. */
const OFF = {
  topologySpread: { enabled: false },
  podAntiAffinity: { enabled: false },
  nodeAffinity: { enabled: false },
};

function plan(
  pods: readonly PodBuilder[],
  strategies: Json,
  eviction: Json = LARGE,
  extra: Json[] = [],
): RebalancePlan {
  const snapshot = buildSnapshot([makeNode('n1'), makeNode('n2'), ...pods, ...extra]);
  const policy = parsePolicy(makePolicy('hk', { strategies: { ...OFF, ...strategies }, eviction }), { file: 'p.yaml' });
  return planCycle(snapshot, policy).plan;
}

const evicted = (p: RebalancePlan): string[] => p.evictions.map((e) => e.name);
const skipped = (p: RebalancePlan): Record<string, string> =>
  Object.fromEntries(p.skipped.map((s) => [s.name, s.reason]));

/** A Deployment's pod on n1, created `ageH` hours before NOW. */
function web(name: string, ageH = 1): PodBuilder {
  return makePod(name, 'shop')
    .deployment('web')
    .label('app', 'web')
    .node('n1')
    .createdAt(NOW - ageH * HOUR);
}

describe('podLifeTime', () => {
  const on = (more: Json = {}): Json => ({ podLifeTime: { enabled: true, maxPodLifeTime: '24h', ...more } });

  it('evicts Running pods older than maxPodLifeTime, oldest first, and says how old', () => {
    const p = plan([web('young', 23), web('old', 30), web('older', 200)], on());
    expect(evicted(p)).toEqual(['older', 'old']);
    expect(p.evictions[0]).toMatchObject({ strategy: 'PodLifeTime', reason: expect.stringContaining('8d8h old') });
    expect(p.evictions[0]!.reason).toContain('older than maxPodLifeTime 24h');
    expect(p.evictions[0]!.target).toBeDefined();
  });

  it('does not touch a pod younger than maxPodLifeTime (the default is 168h)', () => {
    expect(evicted(plan([web('a', 100)], { podLifeTime: { enabled: true } }))).toEqual([]);
    expect(evicted(plan([web('a', 169)], { podLifeTime: { enabled: true } }))).toEqual(['a']);
  });

  it('is off by default', () => {
    expect(evicted(plan([web('a', 1000)], {}))).toEqual([]);
  });

  it('states: only pods in one of them (a container waiting reason, a terminated reason, a status reason)', () => {
    const pods = [
      web('crashing', 30).containerStatuses([{ waiting: 'CrashLoopBackOff', restarts: 3 }]),
      web('oom', 30).containerStatuses([{ terminated: { reason: 'OOMKilled', exitCode: 137 } }]),
      web('fine', 30).containerStatuses([{}]),
    ];
    expect(evicted(plan(pods, on({ states: ['CrashLoopBackOff'] })))).toEqual(['crashing']);
    expect(evicted(plan(pods, on({ states: ['OOMKilled', 'Running'] })))).toEqual(['crashing', 'fine', 'oom']);
    const p = plan(pods, on({ states: ['OOMKilled'] }));
    expect(p.evictions[0]!.reason).toContain('in state OOMKilled');
  });

  it('states naming a waiting reason or Pending act on Pending pods too; otherwise Pending pods are left', () => {
    const stuck = web('stuck', 30)
      .phase('Pending')
      .notReady()
      .containerStatuses([{ waiting: 'ImagePullBackOff' }]);
    expect(evicted(plan([stuck], on()))).toEqual([]);
    expect(evicted(plan([stuck], on({ states: ['ImagePullBackOff'] })))).toEqual(['stuck']);
    expect(evicted(plan([stuck], on({ states: ['Pending'] })))).toEqual(['stuck']);
  });

  it('maxPodLifeTime "0s" (a converted PodLifeTime without maxPodLifeTimeSeconds): its other filters select, at any age', () => {
    const pods = [
      web('fresh', 0.5).containerStatuses([{ terminated: { reason: 'Error', exitCode: 1 } }]),
      web('fine', 0.5).containerStatuses([{}]),
    ];
    expect(evicted(plan(pods, on({ maxPodLifeTime: '0s', exitCodes: [1] })))).toEqual(['fresh']);
  });

  it('includingInitContainers: states and exitCodes match the init containers too, also while the pod is Pending', () => {
    const initFailing = web('init-failing', 30)
      .phase('Pending')
      .notReady()
      .containerStatuses([{ waiting: 'PodInitializing' }])
      .containerStatuses([{ terminated: { reason: 'Error', exitCode: 3 } }], true);
    const initLooping = web('init-looping', 30).containerStatuses([{ waiting: 'CrashLoopBackOff' }], true);
    const pods = [initFailing, initLooping];
    expect(evicted(plan(pods, on({ states: ['Error', 'CrashLoopBackOff'] })))).toEqual([]);
    expect(evicted(plan(pods, on({ exitCodes: [3] })))).toEqual([]);
    const both = plan(pods, on({ states: ['Error', 'CrashLoopBackOff'], includingInitContainers: true }));
    expect(evicted(both).sort()).toEqual(['init-failing', 'init-looping']);
    expect(evicted(plan(pods, on({ exitCodes: [3], includingInitContainers: true })))).toEqual(['init-failing']);
  });

  it('includingEphemeralContainers: states match the ephemeral (debug) containers too; exit codes do not', () => {
    const debugged = web('debugged', 30).containerStatuses(
      [{ terminated: { reason: 'Error', exitCode: 2 } }],
      'ephemeral',
    );
    expect(evicted(plan([debugged], on({ states: ['Error'] })))).toEqual([]);
    const p = plan([debugged], on({ states: ['Error'], includingEphemeralContainers: true }));
    expect(evicted(p)).toEqual(['debugged']);
    expect(p.evictions[0]!.reason).toContain('in state Error');
    expect(evicted(plan([debugged], on({ exitCodes: [2], includingEphemeralContainers: true })))).toEqual([]);
  });

  it('never touches Failed pods (failedPods does)', () => {
    expect(evicted(plan([web('gone', 30).phase('Failed')], on()))).toEqual([]);
  });
});

describe('tooManyRestarts', () => {
  const on = (more: Json = {}): Json => ({ tooManyRestarts: { enabled: true, ...more } });

  it('evicts pods whose containers restarted podRestartThreshold times or more in sum, most restarts first', () => {
    const pods = [
      web('a').containerStatuses([{ restarts: 60 }, { restarts: 40 }]),
      web('b').containerStatuses([{ restarts: 99 }]),
      web('c').containerStatuses([{ restarts: 150 }]),
    ];
    const p = plan(pods, on());
    expect(evicted(p)).toEqual(['c', 'a']);
    expect(p.evictions[0]).toMatchObject({
      strategy: 'TooManyRestarts',
      reason: '150 restarts of its containers, at or above podRestartThreshold 100',
    });
  });

  it('states: CrashLoopBackOff only pods with a container waiting in it (an init container with includingInitContainers)', () => {
    const looping = web('looping').containerStatuses([{ waiting: 'CrashLoopBackOff', restarts: 120 }]);
    const recovered = web('recovered').containerStatuses([{ restarts: 150 }]);
    const initLooping = web('init-looping')
      .containerStatuses([{ restarts: 110 }])
      .containerStatuses([{ waiting: 'CrashLoopBackOff' }], true);
    const pods = [looping, recovered, initLooping];
    expect(evicted(plan(pods, on())).sort()).toEqual(['init-looping', 'looping', 'recovered']);
    const p = plan(pods, on({ states: ['CrashLoopBackOff'] }));
    expect(evicted(p)).toEqual(['looping']);
    expect(p.evictions[0]!.reason).toBe(
      '120 restarts of its containers, at or above podRestartThreshold 100, in state CrashLoopBackOff',
    );
    const withInit = plan(pods, on({ states: ['CrashLoopBackOff'], includingInitContainers: true }));
    expect(evicted(withInit).sort()).toEqual(['init-looping', 'looping']);
    expect(evicted(plan(pods, on({ states: ['Running'] }))).sort()).toEqual(['init-looping', 'looping', 'recovered']);
  });

  it('podRestartThreshold and includingInitContainers', () => {
    const pod = web('a')
      .containerStatuses([{ restarts: 3 }])
      .containerStatuses([{ restarts: 5 }], true);
    expect(evicted(plan([pod], on({ podRestartThreshold: 5 })))).toEqual([]);
    const p = plan([pod], on({ podRestartThreshold: 5, includingInitContainers: true }));
    expect(evicted(p)).toEqual(['a']);
    expect(p.evictions[0]!.reason).toBe(
      '8 restarts of its containers and init containers, at or above podRestartThreshold 5',
    );
  });

  it('acts on Running pods only', () => {
    const failed = web('a')
      .phase('Failed')
      .containerStatuses([{ restarts: 500, terminated: { exitCode: 1 } }]);
    expect(evicted(plan([failed], on()))).toEqual([]);
  });
});

describe('failedPods', () => {
  const on = (more: Json = {}): Json => ({ failedPods: { enabled: true, ...more } });
  const failed = (name: string, ageH = 2): PodBuilder => web(name, ageH).phase('Failed').notReady();

  it('evicts Failed pods past minPodLifetime (default 1h), and names the failure', () => {
    const pods = [
      failed('evicted').statusReason('Evicted'),
      failed('fresh', 0.5).statusReason('Evicted'),
      web('running'),
    ];
    const p = plan(pods, on());
    expect(evicted(p)).toEqual(['evicted']);
    expect(p.evictions[0]).toMatchObject({ strategy: 'FailedPods', node: 'n1' });
    expect(p.evictions[0]!.reason).toBe('pod Failed (reason Evicted), created 2h ago, past minPodLifetime 1h');
    expect(p.evictions[0]!.target).toBeUndefined();
    expect(evicted(plan(pods, on({ minPodLifetime: '3h' })))).toEqual([]);
    expect(evicted(plan(pods, on({ minPodLifetime: '0s' })))).toEqual(['evicted', 'fresh']);
  });

  it('reasons: the pod status reason or a container waiting/terminated reason', () => {
    const pods = [
      failed('evicted').statusReason('Evicted'),
      failed('oom').containerStatuses([{ terminated: { reason: 'OOMKilled', exitCode: 137 } }]),
      failed('error').containerStatuses([{ terminated: { reason: 'Error', exitCode: 1 } }]),
    ];
    expect(evicted(plan(pods, on({ reasons: ['OOMKilled', 'Evicted'] })))).toEqual(['evicted', 'oom']);
    const p = plan(pods, on({ reasons: ['OOMKilled'] }));
    expect(p.evictions[0]!.reason).toBe(
      'pod Failed (reason OOMKilled; exit code 137), created 2h ago, past minPodLifetime 1h',
    );
  });

  it('exitCodes', () => {
    const pods = [
      failed('oom').containerStatuses([{ terminated: { reason: 'OOMKilled', exitCode: 137 } }]),
      failed('error').containerStatuses([{ terminated: { reason: 'Error', exitCode: 1 } }]),
    ];
    expect(evicted(plan(pods, on({ exitCodes: [1, 2] })))).toEqual(['error']);
  });

  it('includingInitContainers: reasons and exit codes of init containers count only when asked', () => {
    const pod = failed('init').containerStatuses([{ terminated: { reason: 'Error', exitCode: 3 } }], true);
    expect(evicted(plan([pod], on({ reasons: ['Error'] })))).toEqual([]);
    expect(evicted(plan([pod], on({ exitCodes: [3] })))).toEqual([]);
    expect(evicted(plan([pod], on({ reasons: ['Error'], includingInitContainers: true })))).toEqual(['init']);
    expect(evicted(plan([pod], on({ exitCodes: [3], includingInitContainers: true })))).toEqual(['init']);
  });

  it('excludeOwnerKinds (default Job) leaves a Failed Job pod alone', () => {
    const job = makePod('batch-x1', 'shop')
      .owner('Job', 'batch')
      .node('n1')
      .phase('Failed')
      .createdAt(NOW - 2 * HOUR);
    expect(evicted(plan([job], on()))).toEqual([]);
    expect(plan([job], on()).skipped).toEqual([]);
    expect(evicted(plan([job], on({ excludeOwnerKinds: [] })))).toEqual(['batch-x1']);
    expect(evicted(plan([failed('rs')], on({ excludeOwnerKinds: ['ReplicaSet'] })))).toEqual([]);
  });
});

describe('the gates every eviction passes', () => {
  const cases: ReadonlyArray<readonly [string, Json, () => PodBuilder]> = [
    ['podLifeTime', { podLifeTime: { enabled: true, maxPodLifeTime: '1h' } }, () => web('p', 5)],
    ['tooManyRestarts', { tooManyRestarts: { enabled: true } }, () => web('p').containerStatuses([{ restarts: 150 }])],
    ['failedPods', { failedPods: { enabled: true } }, () => web('p', 5).phase('Failed').notReady()],
  ];

  it.each(cases)('%s: an opt-out annotation protects the pod, and the plan says so', (_name, strategies, pod) => {
    const p = plan([pod().annotation('rebalancer.dev/evict', 'never')], strategies);
    expect(evicted(p)).toEqual([]);
    expect(skipped(p)).toEqual({ p: 'protected by annotation rebalancer.dev/evict: "never"' });
  });

  it.each(cases)('%s: a pod at or above the priority threshold is skipped', (_name, strategies, pod) => {
    const p = plan([pod().priority(5000)], strategies, { ...LARGE, priorityThreshold: { value: 1000 } });
    expect(evicted(p)).toEqual([]);
    expect(skipped(p)['p']).toBe('priority 5000 is at or above the threshold 1000');
  });

  it.each(cases)(
    '%s: a pod outside the policy namespaces is neither evicted nor reported',
    (_name, strategies, pod) => {
      const policy = makePolicy('hk', { namespaces: { exclude: ['shop'] }, strategies: { ...OFF, ...strategies } });
      const p = planCycle(buildSnapshot([makeNode('n1'), pod()]), parsePolicy(policy, { file: 'p.yaml' })).plan;
      expect(p.evictions).toEqual([]);
      expect(p.skipped).toEqual([]);
    },
  );

  it('a PodDisruptionBudget at zero holds a Running pod back (tooManyRestarts, podLifeTime)', () => {
    const pdb = makePdb('web', 'shop').selector({ app: 'web' }).minAvailable(1).allowed(0);
    for (const [name, strategies, pod] of cases.slice(0, 2)) {
      const p = plan([pod()], strategies, LARGE, [pdb.obj()]);
      expect(evicted(p), name).toEqual([]);
      expect(skipped(p)['p'], name).toBe('PodDisruptionBudget shop/web allows 0 disruptions');
    }
  });

  it('a PodDisruptionBudget at zero does not hold a Failed pod back: the Eviction API deletes it unchecked', () => {
    const pdb = makePdb('web', 'shop').selector({ app: 'web' }).minAvailable(1).allowed(0);
    const [, strategies, pod] = cases[2]!;
    expect(evicted(plan([pod()], strategies, LARGE, [pdb.obj()]))).toEqual(['p']);
  });

  it('the limits count housekeeping evictions; what is left is reported once', () => {
    const pods = [1, 2, 3, 4].map((i) =>
      web(`f${i}`, 10 - i)
        .phase('Failed')
        .notReady(),
    );
    const p = plan(pods, { failedPods: { enabled: true } }, { ...LARGE, maxPerCycle: 2 });
    expect(evicted(p)).toEqual(['f1', 'f2']);
    expect(skipped(p)).toEqual({ f3: 'limit maxPerCycle (2) reached; 2 pod(s) left for the next cycles' });
  });

  it('a pod two strategies select is evicted once, by the first', () => {
    const pod = web('p', 500).containerStatuses([{ restarts: 150 }]);
    const p = plan([pod], { podLifeTime: { enabled: true }, tooManyRestarts: { enabled: true } });
    expect(p.evictions.map((e) => [e.name, e.strategy])).toEqual([['p', 'PodLifeTime']]);
  });
});

describe('simulate', () => {
  it('a crash-looping pod is replaced by one with no restarts, a Failed one by nothing: then nothing is left', () => {
    const snapshot = buildSnapshot([
      makeNode('n1'),
      makeNode('n2'),
      web('crashing').containerStatuses([{ restarts: 150 }]),
      web('gone', 3).phase('Failed').notReady().statusReason('Evicted'),
    ]);
    const strategies = { ...OFF, tooManyRestarts: { enabled: true }, failedPods: { enabled: true } };
    const policy = parsePolicy(makePolicy('hk', { strategies, eviction: LARGE }), { file: 'p.yaml' });
    const result = simulate(snapshot, policy, { cycles: 5 });
    expect(result.cycles.map((c) => c.evictions.map((e) => `${e.strategy} ${e.name}`))).toEqual([
      ['TooManyRestarts crashing', 'FailedPods gone'],
      [],
    ]);
    expect(result.converged).toBe(true);
  });
});

describe('the table', () => {
  it('names the strategy and the figure behind each housekeeping eviction', () => {
    const pods = [
      web('old', 200),
      web('crashing').containerStatuses([{ restarts: 150 }]),
      web('gone', 3)
        .phase('Failed')
        .notReady()
        .containerStatuses([{ terminated: { reason: 'OOMKilled', exitCode: 137 } }]),
    ];
    const strategies = {
      podLifeTime: { enabled: true },
      tooManyRestarts: { enabled: true },
      failedPods: { enabled: true },
    };
    const lines = planTable(plan(pods, strategies)).split('\n');
    const row = (name: string): string => lines.find((l) => l.includes(`shop/${name} `))!;
    expect(row('old')).toMatch(/PodLifeTime +pod is 8d8h old, older than maxPodLifeTime 7d/);
    expect(row('crashing')).toMatch(/TooManyRestarts +150 restarts of its containers/);
    // A Failed pod has no replacement, so no target.
    expect(row('gone')).toMatch(/n1 +- +FailedPods +pod Failed \(reason OOMKilled; exit code 137\)/);
  });
});
