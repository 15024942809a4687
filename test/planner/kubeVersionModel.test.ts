// The pod API and scheduler changes between 1.26 and 1.37 that move a landing or change what may be evicted, as table
// cases over one cluster: Deployment `web` with both replicas in zone-a (nodes a1, a2) and none in zone-b, whose node
// b1 is where a spread move sends a replica unless something below keeps it out. Each case has a control row (the
// same cluster without the feature, or with the amount that fits) that moves web-2 to b1, and the row with the feature
// that does not (or the reverse), so a row cannot pass by the planner refusing everything.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import type { KubeVersion } from '../../src/model/kubeVersion.js';
import { isPendingForScheduler } from '../../src/model/pods.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { placeReplacement } from '../../src/scheduling/placement.js';
import { ZONE, buildSnapshot, makeNode, makePod, makePolicy, type NodeBuilder, type PodBuilder } from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

const POLICY = parsePolicy(
  makePolicy('test', { eviction: { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 } }),
  { file: 'test-policy.yaml' },
);

function zoneSkew(
  pod: (p: PodBuilder) => PodBuilder,
  b1: (n: NodeBuilder) => NodeBuilder = (n) => n,
  extra: readonly Buildable[] = [],
): Buildable[] {
  return [
    makeNode('a1').zone('zone-a'),
    makeNode('a2').zone('zone-a'),
    b1(makeNode('b1').zone('zone-b')),
    ...[1, 2].map((i) =>
      pod(
        makePod(`web-${i}`, 'shop')
          .deployment('web')
          .label('app', 'web')
          .node(`a${i}`)
          .createdAt(`2024-06-01T11:0${i}:00Z`)
          .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } }),
      ),
    ),
    ...extra,
  ];
}

function plan(objects: readonly Buildable[], kubeVersion?: KubeVersion): PlanOutcome {
  const snapshot = buildSnapshot(objects);
  return planCycle(kubeVersion === undefined ? snapshot : { ...snapshot, kubeVersion }, POLICY);
}

function moves(r: PlanOutcome): string[] {
  return r.plan.evictions.map((e) => `${e.name}→${e.target ?? '?'}`).sort();
}

const smallB1 = (cpu: string) => (n: NodeBuilder) => n.allocatable({ cpu, memory: '8Gi', pods: '110' });

/** A pod already on b1 taking `cpu` by its spec; `resize` says what the kubelet allocated to it in place. */
const batchOnB1 = (cpu: string, resize?: Parameters<PodBuilder['resized']>): PodBuilder => {
  const p = makePod('batch-0', 'jobs').owner('Job', 'batch').node('b1').requests({ cpu });
  return resize === undefined ? p : p.resized(...resize);
};

describe('sidecar containers: restartable init containers add to the pod, ordinary ones only peak', () => {
  it.each([
    {
      scenario: 'control: main 1 cpu + ordinary init 1500m → needs 1500m, fits b1 (2 cpu)',
      pod: (p: PodBuilder) => p.requests({ cpu: '1' }).addContainer('setup', { requests: { cpu: '1500m' } }, 'init'),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'main 1 cpu + sidecar 1500m → needs 2500m, no landing on b1 (2 cpu)',
      pod: (p: PodBuilder) => p.requests({ cpu: '1' }).addContainer('proxy', { requests: { cpu: '1500m' } }, 'sidecar'),
      moves: [],
    },
    {
      scenario: 'an init container after a sidecar runs beside it: sidecar 500m + init 1800m → 2300m, no landing',
      pod: (p: PodBuilder) =>
        p
          .requests({ cpu: '100m' })
          .addContainer('proxy', { requests: { cpu: '500m' } }, 'sidecar')
          .addContainer('setup', { requests: { cpu: '1800m' } }, 'init'),
      moves: [],
    },
  ])('$scenario', (c) => {
    expect(moves(plan(zoneSkew(c.pod, smallB1('2'))))).toEqual(c.moves);
  });
});

describe('pod-level resources (spec.resources): the pod-level request replaces the containers’ sum', () => {
  it.each([
    { scenario: 'control: containers ask 500m → fits b1 (2 cpu)', podLevel: undefined, moves: ['web-2→b1'] },
    { scenario: 'pod-level 3 cpu over a 500m container → no landing on b1', podLevel: '3', moves: [] },
    { scenario: 'pod-level 1500m → fits b1', podLevel: '1500m', moves: ['web-2→b1'] },
  ])('$scenario', (c) => {
    const pod = (p: PodBuilder): PodBuilder => {
      const q = p.requests({ cpu: '500m' });
      return c.podLevel === undefined ? q : q.podResources({ cpu: c.podLevel });
    };
    expect(moves(plan(zoneSkew(pod, smallB1('2'))))).toEqual(c.moves);
  });
});

describe('in-place resize: a pod holds the larger of its spec and what its status says was allocated', () => {
  it.each([
    {
      scenario: 'control: batch asks 1 cpu of b1 (4 cpu), web asks 1 → fits',
      batch: batchOnB1('1'),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'batch asks 1 cpu but was resized up to 3500m allocated → web (1 cpu) no longer fits b1',
      batch: batchOnB1('1', [{ cpu: '3500m' }]),
      moves: [],
    },
    {
      scenario: 'resize actuated at 3500m though allocated says 1 → the larger counts, no landing',
      batch: batchOnB1('1', [{ cpu: '1' }, { actuated: { cpu: '3500m' } }]),
      moves: [],
    },
    {
      scenario: 'batch asks 3500m, resize to it Infeasible, 1 cpu allocated → only the allocated counts, fits',
      batch: batchOnB1('3500m', [{ cpu: '1' }, { infeasible: true }]),
      moves: ['web-2→b1'],
    },
    {
      scenario: 'control: batch asks 3500m with nothing reported in status → web does not fit',
      batch: batchOnB1('3500m'),
      moves: [],
    },
  ])('$scenario', (c) => {
    expect(moves(plan(zoneSkew((p) => p.requests({ cpu: '1' }), smallB1('4'), [c.batch])))).toEqual(c.moves);
  });

  it.each([
    { version: '1.37' as const, moves: [], why: '1.37 reads allocatedResources alone' },
    { version: '1.36' as const, moves: ['web-2→b1'], why: 'before 1.37 only a status with resources counts' },
    { version: '1.35' as const, moves: ['web-2→b1'], why: 'likewise' },
  ])('$version: allocated 3500m, no actuated resources in status → $moves ($why)', (c) => {
    const objects = zoneSkew((p) => p.requests({ cpu: '1' }), smallB1('4'), [batchOnB1('1', [{ cpu: '3500m' }])]);
    expect(moves(plan(objects, c.version))).toEqual(c.moves);
  });

  it.each(['1.35', '1.36', '1.37'] as const)('%s: actuated 3500m in status → no landing', (version) => {
    const batch = batchOnB1('1', [{ cpu: '3500m' }, { actuated: { cpu: '3500m' } }]);
    expect(
      moves(
        plan(
          zoneSkew((p) => p.requests({ cpu: '1' }), smallB1('4'), [batch]),
          version,
        ),
      ),
    ).toEqual([]);
  });

  it('the replacement asks what the spec asks, not what its evicted pod was allocated', () => {
    // web-2 runs with 3 cpu allocated after a resize but asks 1 cpu: its replacement fits b1 (2 cpu).
    const objects = zoneSkew((p) => p.requests({ cpu: '1' }).resized({ cpu: '3' }), smallB1('2'));
    expect(moves(plan(objects))).toEqual(['web-2→b1']);
    const web2 = buildSnapshot(objects).pods.find((p) => p.name === 'web-2')!;
    expect(web2.requests['cpu']).toBe(1000);
    expect(web2.held?.requests['cpu']).toBe(3000);
  });
});

describe('NodeDeclaredFeatures: on by default from 1.36, a pod needing a node feature lands only where it is declared', () => {
  const needsFeature = (p: PodBuilder): PodBuilder => p.restartAllContainersOn(42);
  it.each([
    { version: '1.35' as const, declared: false, moves: ['web-2→b1'], why: 'the filter is off (alpha)' },
    { version: '1.36' as const, declared: false, moves: [], why: 'b1 does not declare the feature' },
    { version: '1.37' as const, declared: false, moves: [], why: 'b1 does not declare the feature' },
    { version: '1.37' as const, declared: true, moves: ['web-2→b1'], why: 'b1 declares it' },
  ])('$version, b1 declares the feature: $declared → $moves ($why)', (c) => {
    const b1 = (n: NodeBuilder): NodeBuilder =>
      c.declared ? n.declaredFeatures('RestartAllContainersOnContainerExits') : n;
    expect(moves(plan(zoneSkew(needsFeature, b1), c.version))).toEqual(c.moves);
  });

  it('a pod needing no feature is not filtered by it', () => {
    expect(
      moves(
        plan(
          zoneSkew((p) => p),
          '1.37',
        ),
      ),
    ).toEqual(['web-2→b1']);
  });
});

describe('toleration operators Lt/Gt: behind an alpha gate off in 1.35–1.37, they tolerate nothing', () => {
  it.each([
    {
      scenario: 'control: Equal 3 tolerates gpu-gen=3:NoSchedule → lands on b1',
      operator: 'Equal' as const,
      value: '3',
      moves: ['web-2→b1'],
    },
    {
      scenario: 'Gt 2 would tolerate gen 3 with the gate on; off → no landing',
      operator: 'Gt' as const,
      value: '2',
      moves: [],
    },
    { scenario: 'Lt 9, likewise', operator: 'Lt' as const, value: '9', moves: [] },
  ])('$scenario', (c) => {
    const objects = zoneSkew(
      (p) => p.toleration({ key: 'gpu-gen', operator: c.operator, value: c.value, effect: 'NoSchedule' }),
      (n) => n.taint('gpu-gen', '3', 'NoSchedule'),
    );
    expect(moves(plan(objects))).toEqual(c.moves);
  });
});

describe('DRA resourceClaims: the claim’s device constraints are not modelled, so such a pod is left alone', () => {
  it.each([
    { scenario: 'control: no claim → web-2 moves', claim: false, moves: ['web-2→b1'] },
    { scenario: 'a pod with a resource claim → skipped with the reason', claim: true, moves: [] },
  ])('$scenario', (c) => {
    const r = plan(zoneSkew((p) => (c.claim ? p.resourceClaim('gpu') : p)));
    expect(moves(r)).toEqual(c.moves);
    if (c.claim) {
      expect(r.plan.skipped.map((s) => `${s.name}: ${s.reason}`)).toContain(
        'web-2: pod uses DRA resourceClaims (gpu): where a replacement can get its devices is not modelled',
      );
    }
  });
});

describe('scheduling gates: a gated pod is not scheduled', () => {
  it.each([
    { scenario: 'Pending, no gates: waits for the scheduler', gate: false, phase: 'Pending' as const, pending: true },
    {
      scenario: 'Pending with a gate: the scheduler does not try it',
      gate: true,
      phase: 'Pending' as const,
      pending: false,
    },
    { scenario: 'Running: placed', gate: false, phase: 'Running' as const, pending: false },
  ])('$scenario', (c) => {
    let p = makePod('web-new', 'shop').deployment('web').label('app', 'web').phase(c.phase);
    if (c.gate) p = p.schedulingGate('example.com/quota');
    const pod = buildSnapshot([p]).pods[0]!;
    expect(pod.schedulingGated === true).toBe(c.gate);
    expect(isPendingForScheduler(pod)).toBe(c.pending);
  });

  it('a gated unbound replacement is no landing: it counts in no spread domain', () => {
    const gated = makePod('web-3', 'shop')
      .deployment('web')
      .label('app', 'web')
      .phase('Pending')
      .schedulingGate('example.com/quota')
      .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } });
    const r = plan(zoneSkew((p) => p, undefined, [gated]));
    expect(r.plan.topology[0]?.domains).toEqual({ 'zone-a': 2, 'zone-b': 0 });
  });
});

describe('matchLabelKeys: merged into labelSelector by the API server since 1.34, never applied twice', () => {
  it('a merged and an unmerged constraint compile to the same selector', () => {
    const hash = '6d4cf56db6';
    const unmerged = makePod('web-1', 'shop')
      .deployment('web', hash)
      .label('app', 'web')
      .spread({
        topologyKey: ZONE,
        labelSelector: { matchLabels: { app: 'web' } },
        matchLabelKeys: ['pod-template-hash'],
      });
    const merged = makePod('web-2', 'shop')
      .deployment('web', hash)
      .label('app', 'web')
      .spread({
        topologyKey: ZONE,
        labelSelector: {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'pod-template-hash', operator: 'In', values: [hash] }],
        },
        matchLabelKeys: ['pod-template-hash'],
      });
    const [a, b] = buildSnapshot([unmerged, merged]).pods;
    const text = (p: typeof a) => (p!.spreadConstraints[0]!.selector as { text: string }).text;
    expect(text(a)).toBe(`app=web,pod-template-hash=${hash}`);
    expect(text(b)).toBe(text(a));
  });
});

describe('placement reads the snapshot’s version', () => {
  it('a snapshot without one is modelled as the newest supported minor', () => {
    const objects = zoneSkew((p) => p.restartAllContainersOn(1));
    const state = new ClusterState(analyze(buildSnapshot(objects), POLICY.spec));
    expect(state.kubeVersion).toBe('1.37');
    const web2 = state.snapshotPods().find((p) => p.name === 'web-2')!;
    const placed = placeReplacement(state, web2, { pod: web2, node: state.nodes.get('a2')! });
    expect(placed.node?.name).not.toBe('b1');
  });
});

describe('non-zero requests for scoring: defaults per container, sidecars summed, pod-level values win', () => {
  const GiB = 2 ** 30;
  const MiB = 2 ** 20;
  it.each([
    { scenario: 'one container without requests', pod: (p: PodBuilder) => p, cpu: 100, memory: 200 * MiB },
    {
      scenario: 'a sidecar without requests beside a main container without: both get the defaults',
      pod: (p: PodBuilder) => p.addContainer('proxy', {}, 'sidecar'),
      cpu: 200,
      memory: 400 * MiB,
    },
    {
      scenario: 'pod-level cpu set: it replaces the containers’ cpu; memory still defaulted per container',
      pod: (p: PodBuilder) => p.podResources({ cpu: '2' }),
      cpu: 2000,
      memory: 200 * MiB,
    },
    {
      scenario: 'pod-level memory over a container asking 500m cpu',
      pod: (p: PodBuilder) => p.requests({ cpu: '500m' }).podResources({ memory: '1Gi' }),
      cpu: 500,
      memory: GiB,
    },
  ])('$scenario', (c) => {
    const pod = buildSnapshot([c.pod(makePod('p'))]).pods[0]!;
    expect(pod.nonZeroRequests).toEqual({ cpu: c.cpu, memory: c.memory });
  });
});

describe('NodeResourcesFit scores the pod being placed by its containers, pod-level requests aside (1.35–1.37)', () => {
  it.each([
    {
      scenario: 'no pod-level requests: nothing apart',
      pod: (p: PodBuilder) => p.requests({ cpu: '500m' }),
      fit: undefined,
    },
    {
      scenario: 'pod-level 2 cpu over a 500m container without memory: Fit counts 500m and 200Mi',
      pod: (p: PodBuilder) => p.requests({ cpu: '500m' }).podResources({ cpu: '2' }),
      fit: { cpu: 500, memory: 200 * 2 ** 20 },
    },
  ])('$scenario', (c) => {
    const pod = buildSnapshot([c.pod(makePod('p'))]).pods[0]!;
    expect(pod.fitNonZeroRequests).toEqual(c.fit);
  });
});
