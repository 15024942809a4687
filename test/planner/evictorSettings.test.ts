// Table cases of the eviction settings the descheduler's DefaultEvictor and DeschedulerPolicy have (issue 32):
// evictFailedBarePods (Failed bare pods only), minReplicas, evictPodsWithoutPDB and gracePeriodSeconds. Each
// case plans a small cluster and asserts which pods are evicted and why the others were kept; the PDB, priority and
// other gates stay as they are (the safety properties cover them for every policy).
import { describe, expect, it } from 'vitest';
import { createApiEvictor } from '../../src/operator/eviction/evictor.js';
import { compareCandidates } from '../../src/planner/candidates.js';
import { planCycle } from '../../src/planner/plan.js';
import type { RebalancePlan } from '../../src/model/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import {
  NOW,
  buildSnapshot,
  makeNamespace,
  makeNode,
  makePdb,
  makePod,
  makePolicy,
  makePvc,
  type PodBuilder,
} from '../builders.js';

type Json = Record<string, unknown>;

const HOUR = 3_600_000;
const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };

function plan(
  pods: readonly PodBuilder[],
  strategies: Json,
  eviction: Json,
  extra: Parameters<typeof buildSnapshot>[0] = [],
): RebalancePlan {
  const snapshot = buildSnapshot([makeNode('n1'), makeNode('n2'), ...pods, ...extra]);
  const spec = {
    strategies: { topologySpread: { enabled: false }, ...strategies },
    eviction: { ...LARGE, ...eviction },
  };
  return planCycle(snapshot, parsePolicy(makePolicy('p', spec), { file: 'p.yaml' })).plan;
}

const evicted = (p: RebalancePlan): string[] => p.evictions.map((e) => e.name).sort();
const skipped = (p: RebalancePlan): Record<string, string> =>
  Object.fromEntries(p.skipped.map((s) => [s.name, s.reason]));

/** A pod no controller owns, on n1, created 30h before NOW. */
const bare = (name: string): PodBuilder =>
  makePod(name, 'shop')
    .node('n1')
    .createdAt(NOW - 30 * HOUR);
const web = (name: string): PodBuilder =>
  makePod(name, 'shop')
    .deployment('web')
    .label('app', 'web')
    .node('n1')
    .createdAt(NOW - 30 * HOUR);

const failedPods = { failedPods: { enabled: true } };
const lifeTime = { podLifeTime: { enabled: true, maxPodLifeTime: '24h' } };

describe('evictFailedBarePods', () => {
  it.each<readonly [string, Json, Json, readonly string[], Record<string, RegExp>]>([
    [
      'unset: a Failed bare pod is kept, and the reason names the setting',
      failedPods,
      {},
      [],
      { failed: /Failed bare pod without a controller \(set evictFailedBarePods/ },
    ],
    ['set: failedPods removes the Failed bare pod', failedPods, { evictFailedBarePods: true }, ['failed'], {}],
    [
      'set: a Running bare pod past maxPodLifeTime is still protected (evictBarePods is not lifted)',
      lifeTime,
      { evictFailedBarePods: true },
      [],
      { running: /^bare pod without a controller/ },
    ],
    ['evictBarePods lifts both', { ...failedPods, ...lifeTime }, { evictBarePods: true }, ['failed', 'running'], {}],
  ])('%s', (_name, strategies, eviction, expected, reasons) => {
    const pods = [bare('failed').phase('Failed').notReady(), bare('running')];
    const p = plan(pods, strategies, eviction);
    expect(evicted(p)).toEqual(expected);
    for (const [pod, reason] of Object.entries(reasons)) expect(skipped(p)[pod]).toMatch(reason);
  });
});

describe('minReplicas', () => {
  const three = [web('w1'), web('w2'), web('w3')];
  it.each<readonly [string, Json, readonly string[]]>([
    ['unset: no floor', {}, ['w1', 'w2', 'w3']],
    ['3 with 3 pods: evicted (fewer than, not at)', { minReplicas: 3 }, ['w1', 'w2', 'w3']],
    ['4 with 3 pods: kept', { minReplicas: 4 }, []],
  ])('%s', (_name, eviction, expected) => {
    const p = plan(three, lifeTime, eviction);
    expect(evicted(p)).toEqual(expected);
    // Counted per controller, as the descheduler counts a pod's owner's pods: here the Deployment's ReplicaSet.
    if (expected.length === 0)
      expect(skipped(p)['w1']).toMatch(/^ReplicaSet web-\w+ has 3 pod\(s\), fewer than minReplicas 4$/);
  });

  it('counts only live pods: a Failed pod of the workload does not lift the floor', () => {
    const pods = [web('w1'), web('w2'), web('gone').phase('Failed').notReady()];
    expect(evicted(plan(pods, lifeTime, { minReplicas: 3 }))).toEqual([]);
  });
});

describe('evictPodsWithoutPDB', () => {
  const pods = [
    web('w1'),
    makePod('solo', 'shop')
      .deployment('solo')
      .node('n1')
      .createdAt(NOW - 30 * HOUR),
  ];
  const pdb = makePdb('web', 'shop').selector({ app: 'web' }).maxUnavailable(5);
  it.each<readonly [string, Json, readonly string[]]>([
    ['unset: pods without a budget are evicted like the others', {}, ['solo', 'w1']],
    ['false: only the pod a budget selects', { evictPodsWithoutPDB: false }, ['w1']],
  ])('%s', (_name, eviction, expected) => {
    const p = plan(pods, lifeTime, eviction, [pdb]);
    expect(evicted(p)).toEqual(expected);
    if (expected.length === 1)
      expect(skipped(p)['solo']).toBe('no PodDisruptionBudget selects the pod (evictPodsWithoutPDB is false)');
  });
});

describe('gracePeriodSeconds', () => {
  it.each<readonly [string, number | undefined, Json]>([
    ['unset: the pod keeps its own grace period', undefined, { preconditions: { uid: 'u1' } }],
    ['set: sent in the Eviction', 10, { preconditions: { uid: 'u1' }, gracePeriodSeconds: 10 }],
    ['0 is sent too (immediate)', 0, { preconditions: { uid: 'u1' }, gracePeriodSeconds: 0 }],
  ])('%s', async (_name, grace, deleteOptions) => {
    const bodies: unknown[] = [];
    const evictor = createApiEvictor({
      createNamespacedPodEviction: (p) => {
        bodies.push(p.body);
        return Promise.resolve({});
      },
    });
    const target = { namespace: 'shop', name: 'w1', uid: 'u1' };
    await evictor.evict(grace === undefined ? target : { ...target, gracePeriodSeconds: grace }, false);
    expect((bodies[0] as Json)['deleteOptions']).toEqual(deleteOptions);
  });

  it('the policy field is read, and a negative one refused as the CRD refuses it', () => {
    const read = (g: unknown) =>
      parsePolicy(makePolicy('p', { eviction: { gracePeriodSeconds: g } }), { file: 'p.yaml' }).spec.eviction;
    expect(read(30).gracePeriodSeconds).toBe(30);
    expect(() => read(-1)).toThrow(/spec\.eviction\.gracePeriodSeconds/);
  });
});

describe('podLifeTime ownerKinds and exitCodes (the descheduler PodLifeTime arguments)', () => {
  const job = (name: string): PodBuilder =>
    makePod(name, 'shop')
      .owner('Job', 'nightly')
      .node('n1')
      .createdAt(NOW - 30 * HOUR);
  const exited = (name: string, code: number): PodBuilder =>
    web(name).containerStatuses([{ terminated: { reason: 'Error', exitCode: code } }]);
  it.each<readonly [string, Json, readonly PodBuilder[], readonly string[]]>([
    ['no filter: every old pod', {}, [web('w1'), job('j1')], ['j1', 'w1']],
    ['exclude Job', { ownerKinds: { exclude: ['Job'] } }, [web('w1'), job('j1')], ['w1']],
    ['include Job only', { ownerKinds: { include: ['Job'] } }, [web('w1'), job('j1')], ['j1']],
    ['include never matches a bare pod', { ownerKinds: { include: ['ReplicaSet'] } }, [web('w1'), bare('b1')], ['w1']],
    [
      'exitCodes: only a container that exited with one',
      { exitCodes: [3] },
      [exited('e3', 3), exited('e1', 1)],
      ['e3'],
    ],
  ])('%s', (_name, more, pods, expected) => {
    const strategies = { podLifeTime: { enabled: true, maxPodLifeTime: '24h', ...more } };
    expect(evicted(plan(pods, strategies, { evictBarePods: true }))).toEqual(expected);
  });
});

describe('namespaces.labelSelector (the descheduler namespaceLabelSelector)', () => {
  const inNs = (name: string, ns: string): PodBuilder =>
    makePod(name, ns)
      .deployment(`app-${name}`)
      .node('n1')
      .createdAt(NOW - 30 * HOUR);
  const spaces = [makeNamespace('prod-a', { env: 'prod' }), makeNamespace('dev-a', { env: 'dev' })];
  it.each<readonly [string, Json | undefined, readonly string[]]>([
    ['unset: every namespace', undefined, ['d1', 'p1', 'x1']],
    ['env=prod: only the namespace labelled so', { matchLabels: { env: 'prod' } }, ['p1']],
    // A namespace the snapshot does not list still has its kubernetes.io/metadata.name label, as the API server sets.
    ['by the name label', { matchLabels: { 'kubernetes.io/metadata.name': 'other' } }, ['x1']],
  ])('%s', (_name, labelSelector, expected) => {
    const snapshot = buildSnapshot([
      makeNode('n1'),
      makeNode('n2'),
      ...spaces,
      inNs('p1', 'prod-a'),
      inNs('d1', 'dev-a'),
      inNs('x1', 'other'),
    ]);
    const spec = {
      namespaces: { include: [], exclude: [], ...(labelSelector ? { labelSelector } : {}) },
      strategies: { topologySpread: { enabled: false }, ...lifeTime },
      eviction: LARGE,
    };
    const p = planCycle(snapshot, parsePolicy(makePolicy('p', spec), { file: 'p.yaml' })).plan;
    expect(evicted(p)).toEqual(expected);
  });
});

describe('protectedStorageClasses (the descheduler podProtections.config.PodsWithPVC)', () => {
  const claimed = (name: string, claim: string): PodBuilder => web(name).pvc(claim);
  const pods = [claimed('fast', 'data-fast'), claimed('slow', 'data-slow'), claimed('lost', 'data-missing'), web('w1')];
  const claims = [
    makePvc('data-fast', 'shop').storageClass('fast-ssd'),
    makePvc('data-slow', 'shop').storageClass('standard'),
  ];
  it.each<readonly [string, Json, readonly string[], Record<string, string>]>([
    ['evictPodsWithPVC true (default): every pod with a claim is evicted', {}, ['fast', 'lost', 'slow', 'w1'], {}],
    [
      'evictPodsWithPVC false, no classes: every pod with a claim is kept',
      { evictPodsWithPVC: false },
      ['w1'],
      { slow: 'pod uses a PersistentVolumeClaim (evictPodsWithPVC is false)' },
    ],
    [
      'fast-ssd protected: the standard claim goes; the claim of unknown class stays, as the descheduler keeps it',
      { evictPodsWithPVC: false, protectedStorageClasses: ['fast-ssd'] },
      ['slow', 'w1'],
      {
        fast: 'pod uses a PersistentVolumeClaim of StorageClass fast-ssd (protectedStorageClasses)',
        lost: 'pod uses a PersistentVolumeClaim whose StorageClass is not known (protectedStorageClasses)',
      },
    ],
  ])('%s', (_name, eviction, expected, reasons) => {
    const p = plan(pods, lifeTime, eviction, claims);
    expect(evicted(p)).toEqual(expected);
    for (const [pod, reason] of Object.entries(reasons)) expect(skipped(p)[pod]).toBe(reason);
  });

  it('the list without evictPodsWithPVC: false is refused, as the CRD refuses it', () => {
    const read = (eviction: Json) => () => parsePolicy(makePolicy('p', { eviction }), { file: 'p.yaml' });
    expect(read({ protectedStorageClasses: ['fast-ssd'] })).toThrow(/spec\.eviction\.protectedStorageClasses/);
    expect(read({ evictPodsWithPVC: false, protectedStorageClasses: ['Fast SSD'] })).toThrow(
      /protectedStorageClasses\[0\]/,
    );
  });
});

describe('noEvictionPolicy and the prefer-no-eviction annotation', () => {
  const soft = (name: string): PodBuilder =>
    web(name).annotation('descheduler.alpha.kubernetes.io/prefer-no-eviction', '');
  const pods = [soft('soft'), web('w1'), web('hard').annotation('karpenter.sh/do-not-disrupt', 'true')];
  it.each<readonly [string, Json, readonly string[]]>([
    ['unset (Mandatory): the annotated pod is kept', {}, ['w1']],
    ['Mandatory: kept', { noEvictionPolicy: 'Mandatory' }, ['w1']],
    // Preferred lifts only the descheduler's soft opt-out; karpenter's do-not-disrupt still protects.
    ['Preferred: evicted; other opt-outs still protect', { noEvictionPolicy: 'Preferred' }, ['soft', 'w1']],
  ])('%s', (_name, eviction, expected) => {
    const p = plan(pods, lifeTime, eviction);
    expect(evicted(p)).toEqual(expected);
    expect(skipped(p)['hard']).toBe('protected by annotation karpenter.sh/do-not-disrupt: "true"');
    if (!expected.includes('soft'))
      expect(skipped(p)['soft']).toBe('protected by annotation descheduler.alpha.kubernetes.io/prefer-no-eviction');
  });

  it('Preferred: among equal candidates the annotated pod comes last, whatever its age', () => {
    const snapshot = buildSnapshot([
      soft('soft')
        .createdAt(NOW - HOUR)
        .node('n1'),
      web('plain').createdAt(NOW - 30 * HOUR),
    ]);
    const [a, b] = snapshot.pods;
    const ordered = [a!, b!].sort(compareCandidates).map((p) => p.name);
    expect(ordered).toEqual(['plain', 'soft']);
  });
});

describe('evictSystemCriticalPods and the priority rule', () => {
  const critical = web('critical').priority(2_000_000_000);
  const nodeCritical = web('agent').priority(2_000_001_000);
  const pods = [critical, nodeCritical, web('w1')];
  it.each<readonly [string, Json, readonly string[], Record<string, string>]>([
    [
      'default threshold: neither system-critical pod',
      {},
      ['w1'],
      { critical: 'priority 2000000000 is at or above the threshold 2000000000' },
    ],
    [
      'a threshold above them without the opt-in: still kept',
      { priorityThreshold: { value: 2_000_001_001 } },
      ['w1'],
      { critical: 'priority 2000000000 is system-critical (set evictSystemCriticalPods to evict such pods)' },
    ],
    [
      'the opt-in alone: the threshold still protects',
      { evictSystemCriticalPods: true },
      ['w1'],
      { critical: 'priority 2000000000 is at or above the threshold 2000000000' },
    ],
    [
      'the opt-in and a threshold between them: only the pod below it',
      { evictSystemCriticalPods: true, priorityThreshold: { value: 2_000_000_500 } },
      ['critical', 'w1'],
      { agent: 'priority 2000001000 is at or above the threshold 2000000500' },
    ],
    [
      'the opt-in and a threshold above both: both',
      { evictSystemCriticalPods: true, priorityThreshold: { value: 2_000_001_001 } },
      ['agent', 'critical', 'w1'],
      {},
    ],
  ])('%s', (_name, eviction, expected, reasons) => {
    const p = plan(pods, lifeTime, eviction);
    expect(evicted(p)).toEqual(expected);
    for (const [pod, reason] of Object.entries(reasons)) expect(skipped(p)[pod]).toBe(reason);
  });
});

describe('podLifeTime states Succeeded and Failed (the descheduler PodLifeTime phases)', () => {
  const job = (name: string): PodBuilder =>
    makePod(name, 'shop')
      .owner('Job', 'nightly')
      .node('n1')
      .createdAt(NOW - 30 * HOUR);
  const pods = [job('done').phase('Succeeded').notReady(), job('crashed').phase('Failed').notReady(), web('w1')];
  it.each<readonly [string, readonly string[], readonly string[]]>([
    ['no states: Running pods only', [], ['w1']],
    ['Succeeded: the finished pod only', ['Succeeded'], ['done']],
    ['Failed: the failed pod only', ['Failed'], ['crashed']],
    ['Running and Succeeded', ['Running', 'Succeeded'], ['done', 'w1']],
  ])('%s', (_name, states, expected) => {
    const strategies = { podLifeTime: { enabled: true, maxPodLifeTime: '24h', states } };
    const p = plan(pods, strategies, {});
    expect(evicted(p)).toEqual(expected);
    // A finished pod frees nothing and needs no landing: no target is simulated for it.
    for (const e of p.evictions.filter((x) => x.name !== 'w1')) expect(e.target).toBeUndefined();
  });
});

describe('nodeSelector (the descheduler nodeSelector)', () => {
  it.each<readonly [string, Json | undefined, readonly string[]]>([
    ['unset: pods on every node', undefined, ['a1', 'b1']],
    ['pool=a: only the pod on the matching node', { matchLabels: { pool: 'a' } }, ['a1']],
    ['pool notin (a, b): neither', { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['a', 'b'] }] }, []],
  ])('%s', (_name, nodeSelector, expected) => {
    const snapshot = buildSnapshot([
      makeNode('na').label('pool', 'a'),
      makeNode('nb').label('pool', 'b'),
      makeNode('nc'),
      web('a1').node('na'),
      makePod('b1', 'shop')
        .deployment('other')
        .node('nb')
        .createdAt(NOW - 30 * HOUR),
    ]);
    const spec = {
      ...(nodeSelector ? { nodeSelector } : {}),
      strategies: { topologySpread: { enabled: false }, ...lifeTime },
      eviction: LARGE,
    };
    const p = planCycle(snapshot, parsePolicy(makePolicy('p', spec), { file: 'p.yaml' })).plan;
    expect(evicted(p)).toEqual(expected);
    if (nodeSelector !== undefined && !expected.includes('b1'))
      expect(skipped(p)['b1']).toBe("node nb does not match the policy's nodeSelector");
  });
});
