// Table cases for plans that fell short (issue 11): a protected pod must not stop the search for its replicas, an
// eviction must lower a skew (alone or with the other moves of the plan), an anti-affinity conflict is cleared by a
// whole set of evictions or none, nodeFit off evicts rule breakers without a target, and a pod never leaves the
// nodes its bound volume can be reached from.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import type { ClusterSnapshot } from '../../src/model/types.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { applyMoves, simulate } from '../../src/planner/simulate.js';
import { parsePolicy } from '../../src/policy/parse.js';
import type { Policy } from '../../src/policy/types.js';
import {
  HOSTNAME,
  ZONE,
  buildSnapshot,
  makeNode,
  makePdb,
  makePersistentVolume,
  makePod,
  makePolicy,
  withRuleStrategies,
  makePvc,
  makeStorageClass,
  type PodBuilder,
} from '../builders.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };

function policyOf(spec: Json = {}): Policy {
  return parsePolicy(makePolicy('test', withRuleStrategies(spec)), { file: 'test-policy.yaml' });
}

interface Run extends PlanOutcome {
  readonly snapshot: ClusterSnapshot;
  readonly policy: Policy;
}

function plan(objects: readonly Buildable[], spec: Json = { eviction: LARGE }): Run {
  const snapshot = buildSnapshot(objects);
  const policy = policyOf(spec);
  return { snapshot, policy, ...planCycle(snapshot, policy) };
}

function named<T extends { readonly scenario: string }>(cases: readonly T[]): Array<readonly [string, T]> {
  return cases.map((c) => [c.scenario, c] as const);
}

const evicted = (r: Run): string[] => r.plan.evictions.map((e) => e.name).sort();
const skipReason = (r: Run, name: string): string | undefined => r.plan.skipped.find((s) => s.name === name)?.reason;
const webGroup = (r: Run) => r.plan.topology.find((t) => t.selector.startsWith('app=web'))!;

/** Domain counts of the web group once the plan's replacements run where it said (re-analysed, not the plan's own). */
function countsAfter(r: Run): Record<string, number> {
  const group = analyze(applyMoves(r.snapshot, r.moves, 1000), r.policy.spec).groups.find((g) =>
    g.workloads.includes('Deployment/web'),
  )!;
  return Object.fromEntries([...group.counts].sort(([a], [b]) => (a < b ? -1 : 1)));
}

const ANNOTATIONS: ReadonlyArray<readonly [string, string]> = [
  ['rebalancer.dev/evict', 'never'],
  ['karpenter.sh/do-not-disrupt', 'true'],
  ['cluster-autoscaler.kubernetes.io/safe-to-evict', 'false'],
  ['descheduler.alpha.kubernetes.io/prefer-no-eviction', ''],
];

/**
 * Deployment `web` spread over `key` with `maxSkew`: `counts[i]` pods on node i (node i in zone i for the zone key,
 * all nodes in one zone for the hostname key). Pods listed in `protect` get the annotation and are the youngest,
 * so the planner's eviction order tries them first.
 */
function web(
  counts: readonly number[],
  opts: { key?: string; maxSkew?: number; protect?: readonly string[]; annotation?: readonly [string, string] } = {},
): Buildable[] {
  const key = opts.key ?? ZONE;
  const out: Buildable[] = [];
  counts.forEach((count, i) => {
    const node = `node-${i}`;
    out.push(makeNode(node).zone(key === ZONE ? `zone-${i}` : 'zone-0'));
    for (let k = 0; k < count; k++) {
      const name = `web-${i}-${k}`;
      let pod = makePod(name, 'shop')
        .deployment('web')
        .label('app', 'web')
        .node(node)
        .spread({ topologyKey: key, maxSkew: opts.maxSkew ?? 1, labelSelector: { matchLabels: { app: 'web' } } });
      if (opts.protect?.includes(name)) {
        const [annotation, value] = opts.annotation ?? ANNOTATIONS[0]!;
        pod = pod.annotation(annotation, value).createdAt('2024-06-01T11:50:00Z');
      }
      out.push(pod);
    }
  });
  return out;
}

// ---- 1. protected pods --------------------------------------------------------------------------------------------

describe('a protected pod does not stop the search for its replicas on the same node', () => {
  const cases = [
    {
      scenario: 'zones [5, 1], three of the five protected → two evictions reach [3, 3]',
      objects: web([5, 1], { protect: ['web-0-0', 'web-0-1', 'web-0-2'] }),
      evictions: 2,
      after: { 'zone-0': 3, 'zone-1': 3 },
    },
    {
      scenario: 'hostname 6/3/0 (maxSkew 2), one annotated pod on the full node → two evictions reach 4/3/2',
      objects: web([6, 3, 0], { key: HOSTNAME, maxSkew: 2, protect: ['web-0-0'] }),
      evictions: 2,
      after: { 'node-0': 4, 'node-1': 3, 'node-2': 2 },
    },
    ...ANNOTATIONS.map(([annotation, value]) => ({
      scenario: `zones [4, 0], the youngest protected by ${annotation} → the next two replicas move`,
      objects: web([4, 0], { protect: ['web-0-0'], annotation: [annotation, value] as const }),
      evictions: 2,
      after: { 'zone-0': 2, 'zone-1': 2 },
    })),
    {
      scenario: 'zones [5, 1], four protected → only the one movable replica goes; skew 2 stays',
      objects: web([5, 1], { protect: ['web-0-0', 'web-0-1', 'web-0-2', 'web-0-3'] }),
      evictions: 1,
      after: { 'zone-0': 4, 'zone-1': 2 },
    },
  ];

  it.each(named(cases))('%s', (_name, c) => {
    const r = plan(c.objects);
    expect(r.plan.evictions).toHaveLength(c.evictions);
    expect(countsAfter(r)).toEqual(c.after);
    for (const e of r.plan.evictions) expect(skipReason(r, e.name)).toBeUndefined();
    // Every protected pod that was tried is reported with its own protection, and none of them is evicted.
    for (const s of r.plan.skipped.filter((x) => x.reason.startsWith('protected'))) {
      expect(evicted(r)).not.toContain(s.name);
    }
  });

  it('a replica too young for minPodAge does not hold back its older siblings', () => {
    const objects = web([4, 0]);
    const young = makePod('web-0-9', 'shop')
      .deployment('web')
      .label('app', 'web')
      .node('node-0')
      .createdAt('2024-06-01T11:59:00Z')
      .spread({ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } });
    const r = plan([...objects, young], { eviction: { ...LARGE, minPodAge: '5m' } });
    expect(skipReason(r, 'web-0-9')).toMatch(/younger than minPodAge/);
    expect(r.plan.evictions).toHaveLength(2);
    expect(evicted(r)).not.toContain('web-0-9');
  });

  it('simulate reaches [3, 3] and only then reports converged', () => {
    const snapshot = buildSnapshot(web([5, 1], { protect: ['web-0-0', 'web-0-1', 'web-0-2'] }));
    const result = simulate(snapshot, policyOf({ eviction: { maxPerWorkload: 1 } }), { cycles: 10 });
    expect(result.converged).toBe(true);
    expect(result.final.topology[0]!.skew).toBe(0);
  });
});

// ---- 2. evictions that do not lower the skew ----------------------------------------------------------------------

/** zones a–d with `counts` pods; zone-d's only node is empty and cordoned, yet still a domain (its minimum is 0). */
function pinnedMinimum(counts: readonly number[], maxSkew = 1, soft = false): Buildable[] {
  const out: Buildable[] = [];
  counts.forEach((count, i) => {
    const node = makeNode(`node-${i}`).zone(`zone-${'abcd'[i]}`);
    out.push(i === counts.length - 1 ? node.unschedulable() : node);
    for (let k = 0; k < count; k++) {
      out.push(
        makePod(`web-${i}-${k}`, 'shop')
          .deployment('web')
          .label('app', 'web')
          .node(`node-${i}`)
          .spread({
            topologyKey: ZONE,
            maxSkew,
            whenUnsatisfiable: soft ? 'ScheduleAnyway' : 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          }),
      );
    }
  });
  return out;
}

describe('an eviction is planned only if it lowers a skew, alone or with other moves of the plan', () => {
  const cases = [
    {
      scenario: 'zones [3, 3, 0, 0 cordoned]: one move to zone-c only lowers the domains at the maximum → nothing',
      objects: pinnedMinimum([3, 3, 0, 0]),
      spec: { eviction: LARGE },
      evictions: 0,
      unrepairable: true,
    },
    {
      scenario: 'zones [4, 4, 0, 0 cordoned]: no set of moves lowers the skew below 4 → nothing',
      objects: pinnedMinimum([4, 4, 0, 0]),
      spec: { eviction: LARGE },
      evictions: 0,
      unrepairable: true,
    },
    {
      scenario: 'soft zones [3, 3, 1, 0 cordoned], acted on: moves that keep the skew at 3 → nothing',
      objects: pinnedMinimum([3, 3, 1, 0], 1, true),
      spec: { eviction: LARGE, strategies: { topologySpread: { includeSoftConstraints: true } } },
      evictions: 0,
      unrepairable: true,
    },
    {
      scenario: 'zones [6, 2, 0 cordoned], maxSkew 3: the first move lowers the skew (6 → 5), the next cannot → one',
      objects: pinnedMinimum([6, 2, 0], 3),
      spec: { eviction: LARGE },
      evictions: 1,
      unrepairable: true,
    },
    {
      scenario: 'zones [3, 3, 1, 1] with large limits: two moves together lower the skew to 0 → both planned',
      objects: web([3, 3, 1, 1]),
      spec: { eviction: LARGE },
      evictions: 2,
      unrepairable: false,
    },
    {
      scenario: 'zones [3, 3, 1, 1] with maxPerCycle 1: the one move this cycle allows cannot lower the skew → nothing',
      objects: web([3, 3, 1, 1]),
      spec: { eviction: { ...LARGE, maxPerCycle: 1 } },
      evictions: 0,
      unrepairable: false,
    },
    {
      // maxPerWorkload paces (evictions in flight): the second move follows once the first replacement is Ready.
      scenario: 'zones [3, 3, 1, 1] with maxPerWorkload 1: the first move of a set the cycle completes → one',
      objects: web([3, 3, 1, 1]),
      spec: { eviction: { ...LARGE, maxPerWorkload: 1 } },
      evictions: 1,
      unrepairable: false,
      lowersAlone: false,
    },
    {
      scenario: 'zones [3, 3, 1, 1], PDB maxUnavailable 1: the budget paces the set like maxPerWorkload → one',
      objects: [...web([3, 3, 1, 1]), makePdb('web', 'shop').maxUnavailable(1).selector({ app: 'web' })],
      spec: { eviction: LARGE },
      evictions: 1,
      unrepairable: false,
      lowersAlone: false,
    },
  ];

  it.each(named(cases))('%s', (_name, c) => {
    const r = plan(c.objects, c.spec);
    expect(r.plan.evictions).toHaveLength(c.evictions);
    const group = webGroup(r);
    expect(group.unrepairable !== undefined).toBe(c.unrepairable);
    if (c.evictions > 0 && ('lowersAlone' in c ? c.lowersAlone : true)) {
      expect(group.skewAfter).toBeLessThan(group.skew);
    } else if (c.evictions > 0) expect(group.skewAfter).toBe(group.skew);
    else expect(group.skewAfter).toBe(group.skew);
  });

  it('hostname [5, 5, 1, 1], four of each full node protected: two moves would lower the skew to 2, not to 1 → nothing', () => {
    const protect = [0, 1, 2, 3].flatMap((k) => [`web-0-${k}`, `web-1-${k}`]);
    const r = plan(web([5, 5, 1, 1], { key: HOSTNAME, protect }));
    expect(r.plan.evictions).toEqual([]);
    expect(webGroup(r).skewAfter).toBe(4);
    expect(skipReason(r, 'web-0-4')).toMatch(/does not bring the skew to maxSkew/);
    // Without the protections the same two moves are the start of a set that reaches maxSkew: all are planned.
    const free = plan(web([5, 5, 1, 1], { key: HOSTNAME }));
    expect(webGroup(free).skewAfter).toBeLessThanOrEqual(1);
  });

  it('a dropped move is reported with why it would not help alone', () => {
    const r = plan(web([3, 3, 1, 1]), { eviction: { ...LARGE, maxPerCycle: 1 } });
    const reasons = r.plan.skipped.map((s) => s.reason).join('\n');
    expect(reasons).toMatch(
      /would not lower the skew of topology.kubernetes.io\/zone spread \(Deployment\/web\) by itself/,
    );
    expect(reasons).toMatch(/limit maxPerCycle \(1\) reached/);
  });

  it('simulate does not call a stalled plan converged', () => {
    const snapshot = buildSnapshot(web([3, 3, 1, 1]));
    const result = simulate(snapshot, policyOf({ eviction: { ...LARGE, maxPerCycle: 1 } }), { cycles: 5 });
    expect(result.converged).toBe(false);
    expect(result.stalled).toBe(true);
  });

  it('maxPerWorkload 1 paces a set over cycles: [3, 3, 1, 1] reaches [2, 2, 2, 2] in two evictions', () => {
    const snapshot = buildSnapshot(web([3, 3, 1, 1]));
    const result = simulate(snapshot, policyOf({ eviction: { ...LARGE, maxPerWorkload: 1 } }), { cycles: 5 });
    expect(result.converged).toBe(true);
    expect(result.cycles.map((c) => c.evictions.length)).toEqual([1, 1, 0]);
    expect(result.final.topology[0]!.skew).toBe(0);
  });

  it('simulate calls unrepairable skew converged (nothing repairable is left)', () => {
    const result = simulate(buildSnapshot(pinnedMinimum([3, 3, 1, 0])), policyOf({ eviction: LARGE }), { cycles: 5 });
    expect(result.cycles.map((c) => c.evictions.length)).toEqual([0]);
    expect(result.converged).toBe(true);
  });
});

// ---- 3. anti-affinity pairs ---------------------------------------------------------------------------------------

interface AntiCase {
  readonly scenario: string;
  /** Which of a, b1, b2 cannot move, and why. */
  readonly stuck: Readonly<Partial<Record<'a' | 'b1' | 'b2', 'protected' | 'pinned'>>>;
  readonly evictions: readonly string[];
}

/** Pod a's required anti-affinity (hostname) matches b1 and b2 on its node; node-2 is free for anyone. */
function antiAffinity(stuck: AntiCase['stuck']): Buildable[] {
  const mark = (p: PodBuilder, who: 'a' | 'b1' | 'b2'): PodBuilder => {
    if (stuck[who] === 'protected') return p.annotation('rebalancer.dev/evict', 'never');
    if (stuck[who] === 'pinned') return p.nodeSelector({ [HOSTNAME]: 'node-1' });
    return p;
  };
  return [
    makeNode('node-1').zone('zone-a'),
    makeNode('node-2').zone('zone-a'),
    mark(
      makePod('a', 'shop')
        .deployment('a')
        .label('app', 'a')
        .node('node-1')
        .podAntiAffinity({ topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'b' } } }),
      'a',
    ),
    mark(makePod('b1', 'shop').deployment('b', 'aaaaaaaaa1').label('app', 'b').node('node-1'), 'b1'),
    mark(makePod('b2', 'shop').deployment('b', 'aaaaaaaaa1').label('app', 'b').node('node-1'), 'b2'),
  ];
}

describe('an anti-affinity conflict is cleared by a whole set of evictions, or none', () => {
  const cases: AntiCase[] = [
    { scenario: 'all movable → the owner alone (one eviction instead of two)', stuck: {}, evictions: ['a'] },
    { scenario: 'owner protected → both matched pods', stuck: { a: 'protected' }, evictions: ['b1', 'b2'] },
    { scenario: 'owner pinned to its node → both matched pods', stuck: { a: 'pinned' }, evictions: ['b1', 'b2'] },
    {
      scenario: 'owner protected, b2 protected → nothing (b1 alone would not help)',
      stuck: { a: 'protected', b2: 'protected' },
      evictions: [],
    },
    { scenario: 'owner pinned, b1 pinned → nothing', stuck: { a: 'pinned', b1: 'pinned' }, evictions: [] },
    { scenario: 'b1 and b2 protected → the owner', stuck: { b1: 'protected', b2: 'protected' }, evictions: ['a'] },
  ];

  it.each(named(cases))('%s', (_name, c) => {
    const r = plan(antiAffinity(c.stuck));
    expect(evicted(r)).toEqual(c.evictions);
    const left = analyze(applyMoves(r.snapshot, r.moves, 1000), r.policy.spec).violations;
    if (c.evictions.length > 0) expect(left.filter((v) => v.strategy === 'PodAntiAffinity')).toEqual([]);
  });

  it('the pod that could move but would not help alone says which pod keeps the violation alive', () => {
    const r = plan(antiAffinity({ a: 'protected', b2: 'protected' }));
    expect(skipReason(r, 'b1')).toMatch(/would not clear the anti-affinity of shop\/a: shop\/b2 must move too/);
    expect(skipReason(r, 'b2')).toMatch(/^protected/);
  });
});

// ---- 4. nodeFit: false --------------------------------------------------------------------------------------------

interface NodeFitCase {
  readonly scenario: string;
  readonly objects: () => Buildable[];
  readonly strategy: string;
}

const NODEFIT_CASES: readonly NodeFitCase[] = [
  {
    scenario: 'required node affinity no node matches any more',
    objects: () => [
      makeNode('node-1').zone('zone-a').label('disk', 'hdd'),
      makeNode('node-2').zone('zone-b').label('disk', 'hdd'),
      makePod('api-0', 'shop').deployment('api').label('app', 'api').node('node-1').nodeAffinityIn('disk', ['ssd']),
    ],
    strategy: 'NodeAffinity',
  },
  {
    scenario: 'a NoSchedule taint on every node',
    objects: () => [
      makeNode('node-1').zone('zone-a').taint('dedicated', 'infra', 'NoSchedule'),
      makeNode('node-2').zone('zone-b').taint('dedicated', 'infra', 'NoSchedule'),
      makePod('api-0', 'shop').deployment('api').label('app', 'api').node('node-1'),
    ],
    strategy: 'NodeTaints',
  },
  {
    scenario: 'required anti-affinity on the only node',
    objects: () => [
      makeNode('node-1').zone('zone-a'),
      makePod('api-0', 'shop')
        .deployment('api')
        .label('app', 'api')
        .node('node-1')
        .podAntiAffinity({ topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'db' } } }),
      makePod('db-0', 'shop')
        .owner('StatefulSet', 'db')
        .label('app', 'db')
        .node('node-1')
        .annotation('rebalancer.dev/evict', 'never'),
    ],
    strategy: 'PodAntiAffinity',
  },
];

describe('nodeFit: false evicts a rule breaker even when no current node can take its replacement', () => {
  it.each(NODEFIT_CASES.map((c) => [c.scenario, c] as const))('%s', (_name, c) => {
    const off = plan(c.objects(), { eviction: { ...LARGE, nodeFit: false } });
    expect(off.plan.evictions).toEqual([
      expect.objectContaining({
        name: 'api-0',
        strategy: c.strategy,
        reason: expect.stringMatching(/capacity is added/),
      }),
    ]);
    expect(off.plan.evictions[0]!.target).toBeUndefined();
    const on = plan(c.objects(), { eviction: LARGE });
    expect(on.plan.evictions).toEqual([]);
    expect(skipReason(on, 'api-0')).toMatch(/no node can take a replacement/);
  });

  it('a pod whose volume no new node could reach is still not evicted, and the reason names the volume', () => {
    const objects = [
      makeNode('node-1').zone('zone-a').taint('dedicated', 'infra', 'NoSchedule'),
      makeNode('node-2').zone('zone-b').taint('dedicated', 'infra', 'NoSchedule'),
      makePod('api-0', 'shop').owner('StatefulSet', 'api').label('app', 'api').node('node-1').pvc('data-api-0'),
      makePvc('data-api-0', 'shop').boundTo('pv-1'),
      makePersistentVolume('pv-1').zone('zone-a'),
    ];
    const r = plan(objects, { eviction: { ...LARGE, nodeFit: false } });
    expect(r.plan.evictions).toEqual([]);
    expect(skipReason(r, 'api-0')).toMatch(/its volume shop\/data-api-0 \(PersistentVolume pv-1\)/);
  });

  it('required pod affinity is not evicted into nothing (no autoscaler makes a partner appear)', () => {
    const objects = [
      makeNode('node-1').zone('zone-a'),
      makePod('api-0', 'shop')
        .deployment('api')
        .label('app', 'api')
        .node('node-1')
        .podAffinity({ topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'cache' } } }),
    ];
    const r = plan(objects, { eviction: { ...LARGE, nodeFit: false }, strategies: { podAffinity: { enabled: true } } });
    expect(r.plan.evictions).toEqual([]);
  });
});

// ---- 5. volume topology -------------------------------------------------------------------------------------------

/** StatefulSet db spread over zones a/b (two nodes each): `inA` pods in zone-a, one in zone-b; claims per `volume`. */
function statefulSet(inA: number, volume: (i: number) => Buildable[]): Buildable[] {
  const out: Buildable[] = [];
  for (const zone of ['a', 'b']) for (const n of [1, 2]) out.push(makeNode(`${zone}${n}`).zone(`zone-${zone}`));
  const place = (i: number, node: string): void => {
    out.push(
      makePod(`db-${i}`, 'shop')
        .owner('StatefulSet', 'db')
        .label('app', 'db')
        .node(node)
        .pvc(`data-db-${i}`)
        .spread({ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'db' } } }),
      ...volume(i),
    );
  };
  for (let i = 0; i < inA; i++) place(i, `a${(i % 2) + 1}`);
  place(inA, 'b1');
  return out;
}

const zonalPv = (zoneOf: (i: number) => string) => (i: number) => [
  makePvc(`data-db-${i}`, 'shop').boundTo(`pv-${i}`),
  makePersistentVolume(`pv-${i}`).zone(zoneOf(i)),
];

describe('volume topology: a pod never leaves the nodes its bound volume can be reached from', () => {
  const zoneOfPod = (inA: number) => (i: number) => (i < inA ? 'zone-a' : 'zone-b');
  const cases = [
    {
      scenario: 'PVs with zonal node affinity → nothing moves',
      objects: statefulSet(3, zonalPv(zoneOfPod(3))),
      moved: [],
    },
    {
      scenario: 'PVs without node affinity, StorageClass with allowedTopologies → nothing moves',
      objects: [
        ...statefulSet(3, (i) => [
          makePvc(`data-db-${i}`, 'shop').boundTo(`pv-${i}`).storageClass('zonal'),
          makePersistentVolume(`pv-${i}`).storageClass('zonal'),
        ]),
        makeStorageClass('zonal', { binding: 'Immediate', zones: ['zone-a'] }),
      ],
      moved: [],
    },
    {
      scenario: 'unbound claims of a WaitForFirstConsumer class constrain nothing → one moves',
      objects: [
        ...statefulSet(3, (i) => [makePvc(`data-db-${i}`, 'shop').storageClass('wffc')]),
        makeStorageClass('wffc'),
      ],
      moved: ['db-2'],
    },
    {
      scenario: 'PVs reachable from every node (no node affinity, no class) → one moves',
      objects: statefulSet(3, (i) => [
        makePvc(`data-db-${i}`, 'shop').boundTo(`pv-${i}`),
        makePersistentVolume(`pv-${i}`),
      ]),
      moved: ['db-2'],
    },
    {
      scenario: 'only db-0 has a free volume (unbound WaitForFirstConsumer) → db-0 moves, not the youngest',
      objects: [
        ...statefulSet(3, (i) =>
          i === 0 ? [makePvc('data-db-0', 'shop').storageClass('wffc')] : zonalPv(zoneOfPod(3))(i),
        ),
        makeStorageClass('wffc'),
      ],
      moved: ['db-0'],
    },
  ];

  it.each(named(cases))('%s', (_name, c) => {
    const r = plan(c.objects);
    expect(evicted(r)).toEqual(c.moved);
    for (const e of r.plan.evictions) expect(e.target).toMatch(/^b/);
  });

  it('a pinned pod is skipped with a reason that names its claim, volume and zone', () => {
    const r = plan(statefulSet(3, zonalPv(zoneOfPod(3))));
    expect(skipReason(r, 'db-2')).toMatch(
      /its volume shop\/data-db-2 \(PersistentVolume pv-2\) is reachable only from nodes with topology.kubernetes.io\/zone=zone-a/,
    );
  });

  it.each([
    ['bound to a local volume on a1', true],
    ['without the volume (control)', false],
  ])('a pod on a tainted node, %s: the local volume keeps it on its node even inside its zone', (_n, bound) => {
    const objects = [
      makeNode('a1').zone('zone-a').taint('maintenance', 'true', 'NoSchedule'),
      makeNode('a2').zone('zone-a'),
      makePod('db-0', 'shop').owner('StatefulSet', 'db').label('app', 'db').node('a1').pvc('data-db-0'),
      makePvc('data-db-0', 'shop').boundTo('local-1'),
      ...(bound ? [makePersistentVolume('local-1').nodeAffinityIn(HOSTNAME, ['a1'])] : []),
    ];
    const r = plan(objects);
    if (!bound) {
      expect(r.plan.evictions).toEqual([expect.objectContaining({ name: 'db-0', target: 'a2' })]);
      return;
    }
    expect(r.plan.evictions).toEqual([]);
    expect(skipReason(r, 'db-0')).toMatch(/its volume shop\/data-db-0 \(PersistentVolume local-1\).*hostname=a1/);
  });

  it('simulate keeps the pods with their volumes across cycles', () => {
    const snapshot = buildSnapshot(statefulSet(3, zonalPv(zoneOfPod(3))));
    const result = simulate(snapshot, policyOf({ eviction: LARGE }), { cycles: 5 });
    expect(result.cycles.flatMap((c) => c.evictions)).toEqual([]);
  });
});

// ---- 6. the fewest evictions when constraints share pods (counterexamples of fewest.property.test.ts) --------------

interface SpreadSpec {
  readonly key: string;
  readonly maxSkew?: number;
  readonly when?: 'DoNotSchedule' | 'ScheduleAnyway';
  /** The selector: the workload's own pods, or every pod labelled tier=web. */
  readonly selects?: 'own' | 'tier';
}

/**
 * Nodes `zone-letter + index` (e.g. 'a1', 'b2') in their zones; Deployments whose pods (all labelled tier=web) sit
 * `pods[node]` to a node, each with the given spread constraints.
 */
function sharedCluster(
  nodes: readonly string[],
  workloads: Record<string, { spread: readonly SpreadSpec[]; pods: Record<string, number> }>,
): Buildable[] {
  const out: Buildable[] = nodes.map((n) => makeNode(n).zone(`zone-${n[0]}`));
  for (const [name, w] of Object.entries(workloads)) {
    let k = 0;
    for (const [node, count] of Object.entries(w.pods)) {
      for (let i = 0; i < count; i++, k++) {
        let pod = makePod(`${name}-${k}`, 'shop').deployment(name).labels({ app: name, tier: 'web' }).node(node);
        for (const c of w.spread) {
          pod = pod.spread({
            topologyKey: c.key,
            maxSkew: c.maxSkew ?? 1,
            whenUnsatisfiable: c.when ?? 'DoNotSchedule',
            labelSelector: { matchLabels: c.selects === 'tier' ? { tier: 'web' } : { app: name } },
          });
        }
        out.push(pod);
      }
    }
  }
  return out;
}

/** Each group's skew above its maxSkew once the plan's replacements run where it said (re-analysed). */
function skewsAfter(r: Run): number[] {
  return analyze(applyMoves(r.snapshot, r.moves, 1000), r.policy.spec)
    .groups.map((g) => g.skew - g.constraint.maxSkew)
    .filter((excess) => excess > 0);
}

describe('the fewest evictions when spread constraints share pods', () => {
  const cases = [
    {
      scenario:
        'zones a (a1, a2) and b (b1, b2), maxSkew 2 by zone and 1 by hostname, pods a1:6 a2:4 → 4 evictions: the ' +
        'fourth from a2, the fullest node, where one from a1 would leave the hostname spread for a fifth',
      objects: sharedCluster(['a1', 'a2', 'b1', 'b2'], {
        web: { spread: [{ key: ZONE, maxSkew: 2 }, { key: HOSTNAME }], pods: { a1: 6, a2: 4 } },
      }),
      evictions: 4,
    },
    {
      scenario:
        'includeSoftConstraints, zones a (a1, a2) and b (b1..b3), web ScheduleAnyway by zone and DoNotSchedule by ' +
        'hostname with pods b1:4 a1:2, api by zone with a1:2 → 4 evictions: the hostname spread takes its third ' +
        'pod from b1, not from a1, which would push the zone spread back above its maxSkew',
      objects: sharedCluster(['a1', 'a2', 'b1', 'b2', 'b3'], {
        web: { spread: [{ key: ZONE, when: 'ScheduleAnyway' }, { key: HOSTNAME }], pods: { b1: 4, a1: 2 } },
        api: { spread: [{ key: ZONE }], pods: { a1: 2 } },
      }),
      spec: { eviction: LARGE, strategies: { topologySpread: { includeSoftConstraints: true } } },
      evictions: 4,
    },
    {
      scenario:
        'zones a/b one node each; web by zone with a1:2; api by zone over every tier=web pod and by hostname (maxSkew ' +
        '2) with b1:3 → api moves to a1 first, then the web move no longer unbalances the tier=web spread',
      objects: sharedCluster(['a1', 'b1'], {
        web: { spread: [{ key: ZONE }], pods: { a1: 2 } },
        api: {
          spread: [
            { key: ZONE, selects: 'tier' },
            { key: HOSTNAME, maxSkew: 2 },
          ],
          pods: { b1: 3 },
        },
      }),
      evictions: 2,
    },
    {
      scenario:
        'zones a/b one node each; web by zone with a1:2; api by zone over every tier=web pod with a1:2 → one web ' +
        'pod (which serves both spreads) and one api pod',
      objects: sharedCluster(['a1', 'b1'], {
        web: { spread: [{ key: ZONE }], pods: { a1: 2 } },
        api: { spread: [{ key: ZONE, selects: 'tier' }], pods: { a1: 2 } },
      }),
      evictions: 2,
    },
  ];

  it.each(named(cases))('%s', (_s, c) => {
    const r = plan(c.objects, c.spec);
    expect(r.plan.evictions).toHaveLength(c.evictions);
    expect(skewsAfter(r)).toEqual([]);
  });
});
