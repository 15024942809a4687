// Inter-pod (anti-)affinity parity, re-expressed as snapshots.
// Upstream:
//   - kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering_test.go
//     (TestRequiredAffinitySingleNode, TestRequiredAffinityMultipleNodes): whether a pending pod fits each node,
//     through our placement filter. Semantics: an existing pod counts for the incoming pod's required affinity only
//     if it matches ALL the affinity terms; the node must carry every term's topology key; the first pod of a
//     self-affine group (no pod matches all terms anywhere, the pod matches all its own terms) may go anywhere that
//     has the keys; anti-affinity is checked both ways (the incoming pod's terms against existing pods, existing
//     pods' terms against the incoming pod), any matching term is enough; namespaces default to the pod's own,
//     `namespaces` and `namespaceSelector` are ORed, an empty namespaceSelector selects every namespace.
//   - kubernetes-sigs/descheduler pkg/framework/plugins/removepodsviolatinginterpodantiaffinity/
//     pod_antiaffinity_test.go (TestPodAntiAffinity): which pods a cycle evicts.
import { describe, expect, it } from 'vitest';
import { makeNamespace, makeNode, makePod, type PodAffinityTermOptions } from '../builders.js';
import { fitsOn, permissivePolicy, planOf, type Built } from './helpers.js';

type Labels = Record<string, string>;

const podLabel: Labels = { service: 'securityscan' };
const podLabel2: Labels = { security: 'S1' };

const term = (
  matchExpressions: Array<{ key: string; operator: string; values?: string[] }>,
  topologyKey: string,
  extra: Partial<PodAffinityTermOptions> = {},
): PodAffinityTermOptions => ({ labelSelector: { matchExpressions }, topologyKey, ...extra });

const In = (key: string, ...values: string[]) => ({ key, operator: 'In', values });
const NotIn = (key: string, ...values: string[]) => ({ key, operator: 'NotIn', values });
const Exists = (key: string) => ({ key, operator: 'Exists' });
const DoesNotExist = (key: string) => ({ key, operator: 'DoesNotExist' });

/** A pod with labels, required affinity and anti-affinity terms; pending unless `node` is given. */
function withTerms(
  name: string,
  labels: Labels,
  affinity: PodAffinityTermOptions[] = [],
  anti: PodAffinityTermOptions[] = [],
  node?: string,
  namespace = 'default',
) {
  const p = makePod(name, namespace).labels(labels);
  if (node === undefined) p.phase('Pending');
  else p.node(node);
  for (const t of affinity) p.podAffinity(t);
  for (const t of anti) p.podAntiAffinity(t);
  return p;
}

const machine1 = () => makeNode('machine1').labels({ region: 'r1', zone: 'z11' });
const existing = (labels: Labels, node = 'machine1', namespace = 'default') =>
  makePod('existing', namespace).labels(labels).node(node);

describe('InterPodAffinity filter, one node (filtering_test.go TestRequiredAffinitySingleNode)', () => {
  it.each<{ name: string; objects: Built[]; fits: boolean }>([
    {
      name: 'a pod with no required pod affinity schedules onto a node with no existing pods',
      objects: [machine1(), withTerms('p', {})],
      fits: true,
    },
    {
      name: 'affinity In [securityscan, value2] matches the existing pod',
      objects: [
        machine1(),
        existing(podLabel),
        withTerms('p', podLabel2, [term([In('service', 'securityscan', 'value2')], 'region')]),
      ],
      fits: true,
    },
    {
      name: 'affinity NotIn [securityscan3, value3] matches the existing pod',
      objects: [
        machine1(),
        existing(podLabel),
        withTerms('p', podLabel2, [term([NotIn('service', 'securityscan3', 'value3')], 'region')]),
      ],
      fits: true,
    },
    {
      name: 'affinity does not match: the matching pod is in another namespace than the term selects',
      objects: [
        machine1(),
        existing(podLabel, 'machine1', 'ns'),
        withTerms('p', podLabel2, [
          term([In('service', 'securityscan', 'value2')], 'region', { namespaces: ['DiffNameSpace'] }),
        ]),
      ],
      fits: false,
    },
    {
      name: "affinity doesn't match because the labelSelector does not select the existing pod",
      objects: [
        machine1(),
        existing(podLabel),
        withTerms('p', podLabel, [term([In('service', 'antivirusscan', 'value2')], 'region')]),
      ],
      fits: false,
    },
    {
      name: 'two affinity terms with different operators, both matched by the existing pod',
      objects: [
        machine1(),
        existing(podLabel),
        withTerms('p', podLabel2, [
          term([Exists('service'), DoesNotExist('wrongkey')], 'region'),
          term([In('service', 'securityscan'), NotIn('service', 'WrongValue')], 'region'),
        ]),
      ],
      fits: true,
    },
    {
      name: "matchExpressions are ANDed: one item doesn't match, the pod cannot schedule",
      objects: [
        machine1(),
        existing(podLabel),
        withTerms('p', podLabel2, [
          term([Exists('service'), DoesNotExist('wrongkey')], 'region'),
          term([In('service', 'securityscan2'), NotIn('service', 'WrongValue')], 'region'),
        ]),
      ],
      fits: false,
    },
    {
      name: 'affinity satisfied and anti-affinity (antivirusscan, on a key the node lacks) not violated',
      objects: [
        machine1(),
        existing(podLabel),
        withTerms(
          'p',
          podLabel2,
          [term([In('service', 'securityscan', 'value2')], 'region')],
          [term([In('service', 'antivirusscan', 'value2')], 'node')],
        ),
      ],
      fits: true,
    },
    {
      name: "affinity, anti-affinity and the existing pod's anti-affinity (symmetry) all satisfied",
      objects: [
        machine1(),
        withTerms('existing', podLabel, [], [term([In('service', 'antivirusscan', 'value2')], 'node')], 'machine1'),
        withTerms(
          'p',
          podLabel2,
          [term([In('service', 'securityscan', 'value2')], 'region')],
          [term([In('service', 'antivirusscan', 'value2')], 'node')],
        ),
      ],
      fits: true,
    },
    {
      name: "affinity satisfied but the incoming pod's anti-affinity (zone) matches the existing pod",
      objects: [
        machine1(),
        existing(podLabel),
        withTerms(
          'p',
          podLabel2,
          [term([In('service', 'securityscan', 'value2')], 'region')],
          [term([In('service', 'securityscan', 'value2')], 'zone')],
        ),
      ],
      fits: false,
    },
    {
      name: "affinity and anti-affinity satisfied but the existing pod's anti-affinity (symmetry) matches the incoming pod",
      objects: [
        machine1(),
        withTerms('existing', podLabel, [], [term([In('service', 'securityscan', 'value2')], 'zone')], 'machine1'),
        withTerms(
          'p',
          podLabel,
          [term([In('service', 'securityscan', 'value2')], 'region')],
          [term([In('service', 'antivirusscan', 'value2')], 'node')],
        ),
      ],
      fits: false,
    },
    {
      name: 'the pod does not match its own NotIn affinity term and the only matching pod is on a node not in the cluster',
      objects: [
        machine1(),
        existing(podLabel, 'machine2'),
        withTerms('p', podLabel, [term([NotIn('service', 'securityscan', 'value2')], 'region')]),
      ],
      fits: false,
    },
    {
      name: "the existing pod's anti-affinity is respected when the incoming pod has none (symmetry violated)",
      objects: [
        machine1(),
        withTerms('existing', podLabel, [], [term([In('service', 'securityscan', 'value2')], 'zone')], 'machine1'),
        withTerms('p', podLabel),
      ],
      fits: false,
    },
    {
      name: "the existing pod's anti-affinity (NotIn) does not select the incoming pod (symmetry satisfied)",
      objects: [
        machine1(),
        withTerms('existing', podLabel, [], [term([NotIn('service', 'securityscan', 'value2')], 'zone')], 'machine1'),
        withTerms('p', podLabel),
      ],
      fits: true,
    },
    {
      name: "the incoming pod's anti-affinity (two terms, one matching) rejects the node; any term is enough",
      objects: [
        machine1(),
        withTerms('existing', podLabel2, [], [term([Exists('security')], 'zone')], 'machine1'),
        withTerms('p', podLabel, [], [term([Exists('service')], 'region'), term([Exists('security')], 'region')]),
      ],
      fits: false,
    },
    {
      name: 'symmetry a1: partial mutual match on anti-affinity terms, the incoming pod is rejected',
      objects: [
        machine1(),
        withTerms('existing', podLabel2, [], [term([Exists('security')], 'zone')], 'machine1'),
        withTerms('p', podLabel, [], [term([Exists('service')], 'zone'), term([Exists('security')], 'zone')]),
      ],
      fits: false,
    },
    {
      name: 'symmetry a2: the existing pod has the two terms, one of which selects the incoming pod',
      objects: [
        machine1(),
        withTerms(
          'existing',
          podLabel,
          [],
          [term([Exists('service')], 'zone'), term([Exists('security')], 'zone')],
          'machine1',
        ),
        withTerms('p', podLabel2, [], [term([Exists('security')], 'zone')]),
      ],
      fits: false,
    },
    {
      name: 'symmetry b1: both pods carry abc/def anti-affinity terms, each matching the other',
      objects: [
        machine1(),
        withTerms(
          'existing',
          { def: '', xyz: '' },
          [],
          [term([Exists('abc')], 'zone'), term([Exists('def')], 'zone')],
          'machine1',
        ),
        withTerms('p', { abc: '', xyz: '' }, [], [term([Exists('abc')], 'zone'), term([Exists('def')], 'zone')]),
      ],
      fits: false,
    },
  ])('$name', ({ objects, fits }) => {
    expect(fitsOn(objects, 'p')).toEqual({ machine1: fits });
  });
});

describe('InterPodAffinity filter, several nodes (filtering_test.go TestRequiredAffinityMultipleNodes)', () => {
  const china = { region: 'China' };
  const chinaAz1 = { region: 'China', az: 'az1' };
  const india = { region: 'India' };

  it.each<{ name: string; objects: Built[]; fits: Record<string, boolean>; ns?: string }>([
    {
      name: 'every node with the same region value as the node of a matching pod fits; the other region does not',
      objects: [
        makeNode('machine1').labels(china),
        makeNode('machine2').labels(chinaAz1),
        makeNode('machine3').labels(india),
        existing({ foo: 'bar' }),
        withTerms('p', {}, [term([In('foo', 'bar')], 'region')]),
      ],
      fits: { machine1: true, machine2: true, machine3: false },
    },
    {
      name: 'the first pod of a self-affine collection is not blocked: the existing pod matches only one of its two terms',
      objects: [
        makeNode('nodeA').labels({ zone: 'az1', hostname: 'h1' }),
        makeNode('nodeB').labels({ zone: 'az2', hostname: 'h2' }),
        makePod('p1').labels({ foo: 'bar' }).node('nodeA'),
        withTerms('p', { foo: 'bar', service: 'securityscan' }, [
          term([In('foo', 'bar')], 'zone'),
          term([In('service', 'securityscan')], 'zone'),
        ]),
      ],
      fits: { nodeA: true, nodeB: true },
    },
    {
      name: 'anti-affinity by region: nodeA and nodeB share the region of a matching pod, neither fits',
      objects: [
        makeNode('nodeA').labels({ region: 'r1', hostname: 'nodeA' }),
        makeNode('nodeB').labels({ region: 'r1', hostname: 'nodeB' }),
        makePod('p1').labels({ foo: 'abc' }).node('nodeA'),
        withTerms('p', {}, [], [term([In('foo', 'abc')], 'region')]),
      ],
      fits: { nodeA: false, nodeB: false },
    },
    {
      name: 'anti-affinity matches when any of its terms matches a pod',
      objects: [
        makeNode('nodeA').labels({ region: 'r1', zone: 'z1', hostname: 'nodeA' }),
        makeNode('nodeB').labels({ region: 'r1', zone: 'z2', hostname: 'nodeB' }),
        makePod('p1').labels({ foo: 'abc', service: 'securityscan' }).node('nodeA'),
        withTerms('p', {}, [], [term([In('foo', 'abc')], 'region'), term([In('service', 'securityscan')], 'zone')]),
      ],
      fits: { nodeA: false, nodeB: false },
    },
    {
      name: 'anti-affinity by region: nodeA and nodeB are excluded, nodeC in another region fits',
      objects: [
        makeNode('nodeA').labels(china),
        makeNode('nodeB').labels(chinaAz1),
        makeNode('nodeC').labels(india),
        makePod('p1').labels({ foo: 'abc' }).node('nodeA'),
        withTerms('p', {}, [], [term([In('foo', 'abc')], 'region')]),
      ],
      fits: { nodeA: false, nodeB: false, nodeC: true },
    },
    {
      name: "the incoming pod's anti-affinity excludes China; the NS2 pod's anti-affinity selects NS2 pods only, so nodeC fits",
      objects: [
        makeNode('nodeA').labels(china),
        makeNode('nodeB').labels(chinaAz1),
        makeNode('nodeC').labels(india),
        makePod('p1', 'NS1').labels({ foo: 'bar' }).node('nodeA'),
        withTerms('guard', {}, [], [term([In('foo', '123')], 'region')], 'nodeC', 'NS2'),
        withTerms('p', { foo: '123' }, [], [term([In('foo', 'bar')], 'region')], undefined, 'NS1'),
      ],
      fits: { nodeA: false, nodeB: false, nodeC: true },
      ns: 'NS1',
    },
    {
      name: 'required affinity to a key the node lacks fails even for the first pod of a self-affine group',
      objects: [
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('nodeB').labels({}),
        withTerms('p', { app: 'db' }, [term([In('app', 'db')], 'zone')]),
      ],
      fits: { nodeA: true, nodeB: false },
    },
    {
      name: 'a self-affine pod is not "first" once another matching pod runs: it must join that pod\'s zone',
      objects: [
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('nodeB').labels({ zone: 'z2' }),
        makePod('db-0').labels({ app: 'db' }).node('nodeA'),
        withTerms('p', { app: 'db' }, [term([In('app', 'db')], 'zone')]),
      ],
      fits: { nodeA: true, nodeB: false },
    },
    {
      name: 'a matching pod on a node without the topology key records no pair: the first-pod rule still applies',
      objects: [
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('bare').labels({}),
        makePod('db-0').labels({ app: 'db' }).node('bare'),
        withTerms('p', { app: 'db' }, [term([In('app', 'db')], 'zone')]),
      ],
      fits: { nodeA: true, bare: false },
    },
    {
      name: 'required affinity to pods in the namespaces a namespaceSelector picks (team=data)',
      objects: [
        makeNamespace('data', { team: 'data' }),
        makeNamespace('web', { team: 'web' }),
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('nodeB').labels({ zone: 'z2' }),
        makePod('cache', 'data').labels({ app: 'cache' }).node('nodeA'),
        makePod('cache', 'web').labels({ app: 'cache' }).node('nodeB'),
        withTerms('p', {}, [
          term([In('app', 'cache')], 'zone', { namespaceSelector: { matchLabels: { team: 'data' } } }),
        ]),
      ],
      fits: { nodeA: true, nodeB: false },
    },
    {
      name: 'an empty namespaceSelector selects every namespace',
      objects: [
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('nodeB').labels({ zone: 'z2' }),
        makePod('cache', 'elsewhere').labels({ app: 'cache' }).node('nodeB'),
        withTerms('p', {}, [term([In('app', 'cache')], 'zone', { namespaceSelector: {} })]),
      ],
      fits: { nodeA: false, nodeB: true },
    },
    {
      name: 'namespaces and namespaceSelector are ORed (anti-affinity against ns-a by name and team=b by label)',
      objects: [
        makeNamespace('ns-a', {}),
        makeNamespace('ns-b', { team: 'b' }),
        makeNamespace('ns-c', {}),
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('nodeB').labels({ zone: 'z2' }),
        makeNode('nodeC').labels({ zone: 'z3' }),
        makePod('x', 'ns-a').labels({ app: 'x' }).node('nodeA'),
        makePod('x', 'ns-b').labels({ app: 'x' }).node('nodeB'),
        makePod('x', 'ns-c').labels({ app: 'x' }).node('nodeC'),
        withTerms(
          'p',
          {},
          [],
          [term([In('app', 'x')], 'zone', { namespaces: ['ns-a'], namespaceSelector: { matchLabels: { team: 'b' } } })],
        ),
      ],
      fits: { nodeA: false, nodeB: false, nodeC: true },
    },
    {
      name: "an existing pod's anti-affinity with a namespaceSelector covers the incoming pod's namespace",
      objects: [
        makeNamespace('shop', { env: 'prod' }),
        makeNode('nodeA').labels({ zone: 'z1' }),
        makeNode('nodeB').labels({ zone: 'z2' }),
        withTerms(
          'guard',
          {},
          [],
          [term([In('app', 'web')], 'zone', { namespaceSelector: { matchLabels: { env: 'prod' } } })],
          'nodeA',
          'ops',
        ),
        withTerms('p', { app: 'web' }, [], [], undefined, 'shop'),
      ],
      fits: { nodeA: false, nodeB: true },
      ns: 'shop',
    },
  ])('$name', ({ objects, fits, ns }) => {
    expect(fitsOn(objects, 'p', undefined, ns)).toEqual(fits);
  });
});

describe('inter-pod affinity violations of running pods (required affinity, first-pod rule, namespaces)', () => {
  const affinityOn = permissivePolicy({
    strategies: { podAffinity: { enabled: true }, podAntiAffinity: { enabled: true } },
  });
  const violationsOf = (objects: Built[]) =>
    planOf(objects, affinityOn).plan.violations.map((v) => `${v.strategy} ${v.name}`);

  it('two affinity terms satisfied by two different pods are not satisfied (one pod must match both)', () => {
    const objects = [
      makeNode('n1').labels({ zone: 'z1' }),
      makePod('db').labels({ app: 'db' }).node('n1'),
      makePod('cache').labels({ app: 'cache' }).node('n1'),
      withTerms('web', {}, [term([In('app', 'db')], 'zone'), term([In('app', 'cache')], 'zone')], [], 'n1'),
    ];
    expect(violationsOf(objects)).toEqual(['PodAffinity web']);
  });

  it('two affinity terms satisfied by one pod that matches both', () => {
    const objects = [
      makeNode('n1').labels({ zone: 'z1' }),
      makePod('both').labels({ app: 'db', tier: 'cache' }).node('n1'),
      withTerms('web', {}, [term([In('app', 'db')], 'zone'), term([In('tier', 'cache')], 'zone')], [], 'n1'),
    ];
    expect(violationsOf(objects)).toEqual([]);
  });

  it('a self-affine pod alone in the cluster is fine; on a node without the topology key it is not', () => {
    const self = (node: string) => withTerms('db-0', { app: 'db' }, [term([In('app', 'db')], 'zone')], [], node);
    expect(violationsOf([makeNode('n1').labels({ zone: 'z1' }), self('n1')])).toEqual([]);
    expect(violationsOf([makeNode('n1').labels({}), self('n1')])).toEqual(['PodAffinity db-0']);
  });

  it("another namespace's anti-affinity with a namespaceSelector: reported on the rule's owner and on the pod it excludes", () => {
    const objects = [
      makeNamespace('shop', { env: 'prod' }),
      makeNamespace('ops', {}),
      makeNode('n1').labels({ zone: 'z1' }),
      makeNode('n2').labels({ zone: 'z2' }),
      withTerms(
        'guard',
        {},
        [],
        [term([In('app', 'web')], 'zone', { namespaceSelector: { matchLabels: { env: 'prod' } } })],
        'n1',
        'ops',
      ).owner('ReplicaSet', 'g'),
      makePod('web', 'shop').labels({ app: 'web' }).node('n1').owner('ReplicaSet', 'w'),
    ];
    const { plan } = planOf(objects, affinityOn);
    expect(plan.violations.map((v) => `${v.strategy} ${v.namespace}/${v.name}`).sort()).toEqual([
      'PodAntiAffinity ops/guard',
      'PodAntiAffinity shop/web',
    ]);
    expect(plan.evictions).toHaveLength(1);
  });

  it('the same rule without a namespaceSelector looks only in its own namespace: no violation', () => {
    const objects = [
      makeNode('n1').labels({ zone: 'z1' }),
      withTerms('guard', {}, [], [term([In('app', 'web')], 'zone')], 'n1', 'ops'),
      makePod('web', 'shop').labels({ app: 'web' }).node('n1'),
    ];
    expect(violationsOf(objects)).toEqual([]);
  });

  it('anti-affinity is reported on both pods of a pair, and the pair is broken by one eviction', () => {
    const objects = [
      makeNode('n1').labels({ zone: 'z1' }),
      makeNode('n2').labels({ zone: 'z2' }),
      withTerms('a', { app: 'x' }, [], [term([In('app', 'x')], 'zone')], 'n1').owner('ReplicaSet', 'x'),
      withTerms('b', { app: 'x' }, [], [term([In('app', 'x')], 'zone')], 'n1').owner('ReplicaSet', 'x'),
    ];
    const { plan } = planOf(objects, affinityOn);
    expect(plan.violations.map((v) => `${v.strategy} ${v.name}`).sort()).toEqual([
      'PodAntiAffinity a',
      'PodAntiAffinity b',
    ]);
    expect(plan.evictions).toHaveLength(1);
  });
});

describe('descheduler RemovePodsViolatingInterPodAntiAffinity (pod_antiaffinity_test.go)', () => {
  // test.SetPodAntiAffinity(pod, k, v): required anti-affinity, k In [v], topologyKey "region".
  const anti = (k: string, v: string): PodAffinityTermOptions => term([In(k, v)], 'region');
  const mainRegion = (name: string) => makeNode(name).labels({ region: 'main-region' });
  /** Somewhere else to go: the descheduler evicts even when no node could take the pod, we do not. */
  const otherRegion = () => makeNode('elsewhere').labels({ region: 'other-region' });
  const owned = (name: string, node = 'n1') =>
    makePod(name).owner('ReplicaSet', 'rs').node(node).requests({ cpu: '100m' });
  const p1 = () => owned('p1').podAntiAffinity(anti('foo', 'bar'));
  const p2 = () => owned('p2').labels({ foo: 'bar' });
  const p3 = () => owned('p3').podAntiAffinity(anti('foo', 'bar'));
  const p4 = () => owned('p4').podAntiAffinity(anti('foo', 'bar'));
  const nonEvictable = () => makePod('non-evict').node('n1').priority(2_000_000_000).labels({ foo: 'bar' });

  it.each<{ name: string; objects: Built[]; spec?: Record<string, unknown>; evicted: number | string[] }>([
    {
      // Upstream (nodeFit off, one node) evicts p1, p3 and p4. We move the pod in the most conflicts first: p2,
      // whose move clears p1's, p3's and p4's conflicts at once: 1 eviction.
      name: 'p1, p3, p4 repel p2 on one node: p2 alone is evicted (upstream: p1, p3, p4)',
      objects: [mainRegion('n1'), makeNode('n2'), p1(), p2(), p3(), p4()],
      evicted: ['p2'],
    },
    {
      name: 'the same without anywhere for p2 to go, but the others can: p1, p3 and p4 are evicted (upstream: 3)',
      objects: [
        mainRegion('n1'),
        otherRegion(),
        p1(),
        p2(),
        p3(),
        p4(),
        makePod('blocker').labels({}).node('elsewhere').podAntiAffinity(anti('foo', 'bar')),
      ],
      evicted: ['p1', 'p3', 'p4'],
    },
    {
      name: 'maxPerNode 3: 3 evicted',
      objects: [mainRegion('n1'), otherRegion(), p1(), p2().annotation('rebalancer.dev/evict', 'never'), p3(), p4()],
      spec: { eviction: { maxPerNode: 3 } },
      evicted: 3,
    },
    {
      name: 'maxPerCycle 1 (maxNoOfPodsToEvictTotal): 1 evicted',
      objects: [mainRegion('n1'), otherRegion(), p1(), p2().annotation('rebalancer.dev/evict', 'never'), p3(), p4()],
      spec: { eviction: { maxPerCycle: 1, maxPerNamespace: 3 } },
      evicted: 1,
    },
    {
      name: 'evict only 1 pod after sorting: p7 (priority 0) conflicts with p5 and p6 (priorities 100, 50)',
      objects: [
        mainRegion('n1'),
        otherRegion(),
        owned('p5').labels({ foo: 'bar' }).podAntiAffinity(anti('foo1', 'bar1')).priority(100),
        owned('p6').labels({ foo: 'bar' }).podAntiAffinity(anti('foo1', 'bar1')).priority(50),
        owned('p7').labels({ foo1: 'bar1' }).podAntiAffinity(anti('foo', 'bar')).priority(0),
      ],
      evicted: ['p7'],
    },
    {
      name: 'evicts the pod that conflicts with a critical pod, never the critical pod',
      objects: [mainRegion('n1'), otherRegion(), p1(), nonEvictable()],
      spec: { eviction: { maxPerNode: 1 } },
      evicted: ['p1'],
    },
    {
      name: "won't evict: the pod's node selector matches no other node",
      objects: [
        mainRegion('n1'),
        makeNode('n2').labels({ datacenter: 'east' }),
        owned('p8').nodeSelector({ datacenter: 'west' }).podAntiAffinity(anti('foo', 'bar')),
        nonEvictable(),
      ],
      evicted: [],
    },
    {
      name: "won't evict: the only other node is cordoned",
      objects: [mainRegion('n1'), makeNode('n3').unschedulable(), p1(), nonEvictable()],
      evicted: [],
    },
    {
      name: 'no pod evicted: all of them are terminating',
      objects: [mainRegion('n1'), otherRegion(), p1().terminating(), p3().labels({ foo: 'bar' }).terminating()],
      evicted: [],
    },
    {
      name: "won't evict: the only other node has no room (2m cpu, 1 pod)",
      objects: [
        mainRegion('n1'),
        makeNode('n4').allocatable({ cpu: '2m', memory: '2', pods: 1 }),
        p1(),
        p2(),
        p3(),
        p4(),
      ],
      evicted: [],
    },
    {
      name: 'anti-affinity across nodes of one region (p1 on n1, p11 on n5): one pod is evicted, to another region',
      objects: [mainRegion('n1'), mainRegion('n5'), otherRegion(), p1(), owned('p11', 'n5').labels({ foo: 'bar' })],
      evicted: 1,
    },
    {
      name: 'anti-affinity across nodes of one region with no other region: nothing can move (upstream, nodeFit off: 1)',
      objects: [mainRegion('n1'), mainRegion('n5'), p1(), owned('p11', 'n5').labels({ foo: 'bar' })],
      evicted: [],
    },
  ])('$name', ({ objects, spec, evicted }) => {
    const result = planOf(objects, permissivePolicy(spec ?? {}));
    if (typeof evicted === 'number') expect(result.evicted).toHaveLength(evicted);
    else expect([...result.evicted].sort()).toEqual(evicted);
  });
});
