// kube-scheduler PodTopologySpread, re-expressed as snapshots.
// Upstream: kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering_test.go
//   - TestPreFilterState      → what our analysis measures for the incoming pod's constraints (domain counts,
//                                global minimum, skew): the PreFilter state TpValueToMatchNum / CriticalPaths.
//   - TestSingleConstraint    → whether the incoming (pending) pod fits each node, through our placement filter.
//   - TestMultipleConstraints → the same with several constraints.
// Upstream's unit tests run the spread plugin alone; our placement filter runs every filter together (node
// affinity, taints, resources, inter-pod affinity, spread), so where upstream notes "in real case it's false"
// we assert the real case and say so in the case name.
// Node labels use upstream's plain keys ("zone", "node"); every pod lives in namespace "default" unless named.
import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../src/policy/parse.js';
import { makeNode, makePod, makePolicy, type SpreadOptions } from '../builders.js';
import { fitsOn, groupsOf, type Built } from './helpers.js';

type Labels = Record<string, string>;

const FOO = { matchExpressions: [{ key: 'foo', operator: 'Exists' }] };
const BAR = { matchExpressions: [{ key: 'bar', operator: 'Exists' }] };
const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/** A node with upstream's plain labels. */
const node = (name: string, labels: Labels, tainted = false): Built => {
  const n = makeNode(name).labels(labels);
  return tainted ? n.taint(UNSCHEDULABLE_TAINT, undefined, 'NoSchedule') : n;
};

/** Upstream's four-node, two-zone cluster: node-a, node-b in zone1; node-x, node-y in zone2. */
const fourNodes = (): Built[] => [
  node('node-a', { zone: 'zone1', node: 'node-a' }),
  node('node-b', { zone: 'zone1', node: 'node-b' }),
  node('node-x', { zone: 'zone2', node: 'node-x' }),
  node('node-y', { zone: 'zone2', node: 'node-y' }),
];

/** An existing (bound, running) pod with labels. */
const existing = (name: string, onNode: string, labels: Labels, namespace = 'default') =>
  makePod(name, namespace).labels(labels).node(onNode);

/** Existing pods on one node, named p-<node suffix><n> (p-a1, p-a2, …), one per label set. */
const pods = (onNode: string, ...labelSets: Labels[]): Built[] =>
  labelSets.map((labels, i) => existing(`p-${onNode.slice(5)}${i + 1}`, onNode, labels));

const foo: Labels = { foo: '' };
const bar: Labels = { bar: '' };
const fooBar: Labels = { foo: '', bar: '' };

const c = (topologyKey: string, labelSelector: SpreadOptions['labelSelector'], extra: Partial<SpreadOptions> = {}) => ({
  topologyKey,
  labelSelector,
  maxSkew: 1,
  whenUnsatisfiable: 'DoNotSchedule' as const,
  ...extra,
});

/** The incoming pod `p`: pending, not bound, with labels and constraints. */
const incoming = (labels: Labels, ...constraints: SpreadOptions[]) => {
  const p = makePod('p').labels(labels).phase('Pending');
  for (const constraint of constraints) p.spread(constraint);
  return p;
};

const hard = (views: ReturnType<typeof groupsOf>) =>
  views.filter((v) => v.whenUnsatisfiable === 'DoNotSchedule').map(({ domains, min }) => ({ domains, min }));

describe('PodTopologySpread PreFilter state (filtering_test.go TestPreFilterState)', () => {
  it.each<{ name: string; objects: Built[]; want: Array<{ domains: Record<string, number>; min: number }> }>([
    {
      name: 'clean cluster with one spreadConstraint: both zones exist with 0',
      objects: [...fourNodes(), incoming(foo, c('zone', { matchLabels: { foo: 'bar' } }, { maxSkew: 5 }))],
      want: [{ domains: { zone1: 0, zone2: 0 }, min: 0 }],
    },
    {
      name: 'normal case with one spreadConstraint: zones 3/2, min 2',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo),
        incoming(foo, c('zone', FOO)),
      ],
      want: [{ domains: { zone1: 3, zone2: 2 }, min: 2 }],
    },
    {
      name: 'null label selector matches nothing: zones 0/0',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo),
        incoming(foo, c('zone', undefined)),
      ],
      want: [{ domains: { zone1: 0, zone2: 0 }, min: 0 }],
    },
    {
      name: 'one spreadConstraint on a 3-zone cluster: 3/2/0, min 0',
      objects: [
        ...fourNodes(),
        node('node-o', { zone: 'zone3', node: 'node-o' }),
        node('node-p', { zone: 'zone3', node: 'node-p' }),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo),
        incoming(foo, c('zone', FOO)),
      ],
      want: [{ domains: { zone1: 3, zone2: 2, zone3: 0 }, min: 0 }],
    },
    {
      name: "namespace mismatch doesn't count: zones 2/1",
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo),
        existing('p-a2', 'node-a', foo, 'ns1'),
        existing('p-b1', 'node-b', foo),
        existing('p-y1', 'node-y', foo, 'ns2'),
        existing('p-y2', 'node-y', foo),
        incoming(foo, c('zone', FOO)),
      ],
      want: [{ domains: { zone1: 2, zone2: 1 }, min: 1 }],
    },
    {
      name: 'two spreadConstraints (zone, node): zones 3/4, nodes 2/1/0/4',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo, foo),
        incoming(foo, c('zone', FOO), c('node', FOO)),
      ],
      want: [
        { domains: { zone1: 3, zone2: 4 }, min: 3 },
        { domains: { 'node-a': 2, 'node-b': 1, 'node-x': 0, 'node-y': 4 }, min: 0 },
      ],
    },
    {
      name: 'soft spreadConstraints are not part of the filter state (hard zone 3/4, hard node 2/1/4)',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo, foo),
        incoming(
          foo,
          c('zone', FOO, { whenUnsatisfiable: 'ScheduleAnyway' }),
          c('zone', FOO),
          c('node', FOO, { whenUnsatisfiable: 'ScheduleAnyway' }),
          c('node', FOO),
        ),
      ],
      want: [
        { domains: { zone1: 3, zone2: 4 }, min: 3 },
        { domains: { 'node-a': 2, 'node-b': 1, 'node-y': 4 }, min: 1 },
      ],
    },
    {
      name: 'different labelSelectors, simple: zone(foo) 1/0, node(bar) 0/1/0',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        existing('p-a', 'node-a', foo),
        existing('p-b', 'node-b', bar),
        incoming(fooBar, c('zone', FOO), c('node', BAR)),
      ],
      want: [
        { domains: { zone1: 1, zone2: 0 }, min: 0 },
        { domains: { 'node-a': 0, 'node-b': 1, 'node-y': 0 }, min: 0 },
      ],
    },
    {
      name: 'different labelSelectors, complex pods: zone(foo) 3/4, node(bar) 1/0/2',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        ...pods('node-a', foo, fooBar),
        ...pods('node-b', foo),
        ...pods('node-y', foo, fooBar, foo, fooBar),
        incoming(fooBar, c('zone', FOO), c('node', BAR)),
      ],
      want: [
        { domains: { zone1: 3, zone2: 4 }, min: 3 },
        { domains: { 'node-a': 1, 'node-b': 0, 'node-y': 2 }, min: 0 },
      ],
    },
    {
      name: 'two spreadConstraints and node affinity NotIn node-x: node-x is no domain (zones 3/4, nodes 2/1/4)',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo, foo),
        incoming(foo, c('zone', FOO), c('node', FOO)).nodeAffinityTerms([
          { matchExpressions: [{ key: 'node', operator: 'NotIn', values: ['node-x'] }] },
        ]),
      ],
      want: [
        { domains: { zone1: 3, zone2: 4 }, min: 3 },
        { domains: { 'node-a': 2, 'node-b': 1, 'node-y': 4 }, min: 1 },
      ],
    },
    {
      name: 'NodeAffinityPolicy honored (default) with nodeSelector: node-c lacks foo and is no domain (1/2)',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-c', { node: 'node-c', bar: '' }),
        existing('p-a', 'node-a', bar),
        existing('p-b', 'node-b', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-c', {}),
        incoming(foo, c('node', BAR)).nodeSelector({ foo: '' }),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2 }, min: 1 }],
    },
    {
      name: 'NodeAffinityPolicy Ignore with nodeSelector: node-c is a domain with 0 (1/2/0)',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-c', { node: 'node-c', bar: '' }),
        existing('p-a', 'node-a', bar),
        existing('p-b', 'node-b', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-c', {}),
        incoming(foo, c('node', BAR, { nodeAffinityPolicy: 'Ignore' })).nodeSelector({ foo: '' }),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2, 'node-c': 0 }, min: 0 }],
    },
    {
      name: 'NodeAffinityPolicy honored with required node affinity (foo In [""]): 1/2',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-c', { node: 'node-c', bar: '' }),
        existing('p-a', 'node-a', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-b', bar),
        existing('p-e', 'node-c', {}),
        incoming(foo, c('node', BAR)).nodeAffinityIn('foo', ['']),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2 }, min: 1 }],
    },
    {
      name: 'NodeAffinityPolicy Ignore with required node affinity: 1/2/0',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-c', { node: 'node-c', bar: '' }),
        existing('p-a', 'node-a', bar),
        existing('p-b', 'node-b', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-c', {}),
        incoming(foo, c('node', BAR, { nodeAffinityPolicy: 'Ignore' })).nodeAffinityIn('foo', ['']),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2, 'node-c': 0 }, min: 0 }],
    },
    {
      name: 'NodeTaintsPolicy Ignore (default): the tainted node-c is a domain (1/2/0)',
      objects: [
        node('node-a', { node: 'node-a' }),
        node('node-b', { node: 'node-b' }),
        node('node-c', { node: 'node-c', bar: '' }, true),
        existing('p-a', 'node-a', bar),
        existing('p-b', 'node-b', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-c', {}),
        incoming(foo, c('node', BAR)),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2, 'node-c': 0 }, min: 0 }],
    },
    {
      name: 'NodeTaintsPolicy Honor: the untolerated tainted node-c is no domain (1/2)',
      objects: [
        node('node-a', { node: 'node-a' }),
        node('node-b', { node: 'node-b' }),
        node('node-c', { node: 'node-c', bar: '' }, true),
        existing('p-a', 'node-a', bar),
        existing('p-b', 'node-b', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-c', {}),
        incoming(foo, c('node', BAR, { nodeTaintsPolicy: 'Honor' })),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2 }, min: 1 }],
    },
    {
      name: 'NodeTaintsPolicy Honor with the taint tolerated: node-c is a domain (1/2/0)',
      objects: [
        node('node-a', { node: 'node-a' }),
        node('node-b', { node: 'node-b' }),
        node('node-c', { node: 'node-c', bar: '' }, true),
        existing('p-a', 'node-a', bar),
        existing('p-b', 'node-b', bar),
        existing('p-c', 'node-b', bar),
        existing('p-d', 'node-c', {}),
        incoming(foo, c('node', BAR, { nodeTaintsPolicy: 'Honor' })).toleration({
          key: UNSCHEDULABLE_TAINT,
          operator: 'Exists',
        }),
      ],
      want: [{ domains: { 'node-a': 1, 'node-b': 2, 'node-c': 0 }, min: 0 }],
    },
    {
      name: 'two inclusion policies, zone honor/ignore, node ignore/ignore: zones 0/1, nodes 0/2/1',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a', foo: '' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        existing('p-b1', 'node-b', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-x1', 'node-x', foo),
        incoming(foo, c('zone', FOO), c('node', FOO, { nodeAffinityPolicy: 'Ignore' })).nodeSelector({ foo: '' }),
      ],
      want: [
        { domains: { zone1: 0, zone2: 1 }, min: 0 },
        { domains: { 'node-a': 0, 'node-b': 2, 'node-x': 1 }, min: 0 },
      ],
    },
    {
      name: 'two inclusion policies, zone honor/honor, node honor/ignore: zones 0/1, nodes 0/2/1',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a', foo: '' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }, true),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        existing('p-b1', 'node-b', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-x1', 'node-x', foo),
        incoming(foo, c('zone', FOO, { nodeTaintsPolicy: 'Honor' }), c('node', FOO)),
      ],
      want: [
        { domains: { zone1: 0, zone2: 1 }, min: 0 },
        { domains: { 'node-a': 0, 'node-b': 2, 'node-x': 1 }, min: 0 },
      ],
    },
    {
      name: 'two inclusion policies, zone honor/ignore, node honor/ignore: zones 0/1, nodes b 0 / x 1',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zone: 'zone1', node: 'node-b', foo: '' }, true),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        ...pods('node-a', foo, foo),
        ...pods('node-x', foo),
        ...pods('node-y', foo),
        incoming(foo, c('zone', FOO), c('node', FOO)).nodeSelector({ foo: '' }),
      ],
      want: [
        { domains: { zone1: 0, zone2: 1 }, min: 0 },
        { domains: { 'node-b': 0, 'node-x': 1 }, min: 0 },
      ],
    },
    {
      name: 'two inclusion policies, zone ignore/ignore, node honor/honor: zones 2/3, nodes x 2 / y 1',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zone: 'zone1', node: 'node-b', foo: '' }, true),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        node('node-y', { zone: 'zone2', node: 'node-y', foo: '' }),
        ...pods('node-a', foo, foo),
        ...pods('node-x', foo, foo),
        ...pods('node-y', foo),
        incoming(
          foo,
          c('zone', FOO, { nodeAffinityPolicy: 'Ignore' }),
          c('node', FOO, { nodeTaintsPolicy: 'Honor' }),
        ).nodeSelector({ foo: '' }),
      ],
      want: [
        { domains: { zone1: 2, zone2: 3 }, min: 2 },
        { domains: { 'node-x': 2, 'node-y': 1 }, min: 1 },
      ],
    },
    {
      name: 'matchLabelKeys ANDed with a non-empty labelSelector (foo exists AND bar=a): zones 1/1',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo),
        existing('p-a2', 'node-a', { foo: '', bar: 'a' }),
        existing('p-b1', 'node-b', foo),
        existing('p-y1', 'node-y', { foo: '', bar: 'a' }),
        existing('p-y2', 'node-y', { bar: '' }),
        incoming({ foo: '', bar: 'a' }, c('zone', FOO, { matchLabelKeys: ['bar'] })),
      ],
      want: [{ domains: { zone1: 1, zone2: 1 }, min: 1 }],
    },
    {
      name: 'matchLabelKeys ANDed with an empty labelSelector ({} AND foo=a): zones 3/2',
      objects: [
        ...fourNodes(),
        ...pods('node-a', { foo: 'a' }, { foo: 'a' }),
        ...pods('node-b', { foo: 'a' }),
        ...pods('node-y', { foo: 'a' }, { foo: 'a' }),
        incoming({ foo: 'a' }, c('zone', {}, { matchLabelKeys: ['foo'] })),
      ],
      want: [{ domains: { zone1: 3, zone2: 2 }, min: 2 }],
    },
    {
      name: 'matchLabelKeys does not turn a nil labelSelector into a match: zones 0/0',
      objects: [
        ...fourNodes(),
        ...pods('node-a', { foo: 'a' }, { foo: 'a' }),
        ...pods('node-b', { foo: 'a' }),
        ...pods('node-y', { foo: 'a' }, { foo: 'a' }),
        incoming(foo, c('zone', undefined, { matchLabelKeys: ['bar'] })),
      ],
      want: [{ domains: { zone1: 0, zone2: 0 }, min: 0 }],
    },
    {
      name: 'a matchLabelKeys key the pod lacks is ignored (selector stays foo exists): zones 3/2',
      objects: [
        ...fourNodes(),
        ...pods('node-a', { foo: 'a' }, { foo: 'a' }),
        ...pods('node-b', { foo: 'a' }),
        ...pods('node-y', { foo: 'a' }, { foo: 'a' }),
        incoming(foo, c('zone', FOO, { matchLabelKeys: ['bar'] })),
      ],
      want: [{ domains: { zone1: 3, zone2: 2 }, min: 2 }],
    },
    {
      name: 'two spreadConstraints with the same topologyKey: foo 2/1, bar 1/3',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', fooBar),
        existing('p-b1', 'node-b', foo),
        existing('p-x1', 'node-x', bar),
        existing('p-y1', 'node-y', fooBar),
        existing('p-y2', 'node-y', bar),
        incoming(fooBar, c('zone', FOO), c('zone', BAR)),
      ],
      want: [
        { domains: { zone1: 2, zone2: 1 }, min: 1 },
        { domains: { zone1: 1, zone2: 3 }, min: 1 },
      ],
    },
    {
      name: 'skip if not specified: a pod without constraints has no spread state',
      objects: [node('node-a', { zone: 'zone1', node: 'node-a' }), incoming(foo)],
      want: [],
    },
  ])('$name', ({ objects, want }) => {
    expect(hard(groupsOf(objects, 'p'))).toEqual(want);
  });

  it('a domain set smaller than minDomains makes the global minimum 0 (minDomains 4 over 3 nodes 2/2/1)', () => {
    const objects = [
      node('node-a', { node: 'node-a' }),
      node('node-b', { node: 'node-b' }),
      node('node-c', { node: 'node-c' }),
      ...pods('node-a', foo, foo),
      ...pods('node-b', foo, foo),
      ...pods('node-c', foo),
      incoming(foo, c('node', FOO, { maxSkew: 2, minDomains: 4 })),
    ];
    expect(groupsOf(objects, 'p')).toEqual([
      {
        topologyKey: 'node',
        whenUnsatisfiable: 'DoNotSchedule',
        domains: { 'node-a': 2, 'node-b': 2, 'node-c': 1 },
        min: 0,
        skew: 2,
      },
    ]);
  });

  it('no node has the topology key: no domains (upstream: empty TpValueToMatchNum), skew 0', () => {
    const objects = [
      node('node-a', { zone: 'zone1', node: 'node-a' }),
      node('node-x', { zone: 'zone2', node: 'node-x' }),
      incoming(foo, c('rack', FOO)),
    ];
    expect(groupsOf(objects, 'p')).toEqual([
      { topologyKey: 'rack', whenUnsatisfiable: 'DoNotSchedule', domains: {}, min: 0, skew: 0 },
    ]);
  });
});

describe('default constraints (filtering_test.go TestPreFilterState, "default constraints …")', () => {
  // Upstream derives the default selector from the Services/ReplicaSets/StatefulSets that select the pod. A
  // snapshot carries no Services or controllers, so a pod owned by a ReplicaSet/StatefulSet/ReplicationController
  // uses its own labels (minus per-instance ones) as the selector; other pods get no default constraints.
  const policy = parsePolicy(
    makePolicy('defaults', {
      strategies: {
        topologySpread: {
          defaultConstraints: [
            { maxSkew: 3, topologyKey: 'node', whenUnsatisfiable: 'DoNotSchedule' },
            { maxSkew: 2, topologyKey: 'node', whenUnsatisfiable: 'ScheduleAnyway' },
            { maxSkew: 5, topologyKey: 'rack', whenUnsatisfiable: 'DoNotSchedule' },
          ],
        },
      },
    }),
    { file: 'defaults.yaml' },
  );
  const nodes = (): Built[] => [
    node('node-a', { node: 'node-a', rack: 'r1' }),
    node('node-b', { node: 'node-b', rack: 'r2' }),
  ];

  it('default constraints and a controller: both hard defaults apply (node maxSkew 3, rack maxSkew 5) and the soft one', () => {
    const objects = [
      ...nodes(),
      makePod('p').labels({ foo: 'bar' }).owner('ReplicaSet', 'web-1').node('node-a'),
      makePod('q').labels({ foo: 'bar' }).owner('ReplicaSet', 'web-1').node('node-a'),
    ];
    const views = groupsOf(objects, 'p', policy).map((v) => [v.topologyKey, v.whenUnsatisfiable, v.domains]);
    expect(views).toEqual(
      expect.arrayContaining([
        ['node', 'DoNotSchedule', { 'node-a': 2, 'node-b': 0 }],
        ['node', 'ScheduleAnyway', { 'node-a': 2, 'node-b': 0 }],
        ['rack', 'DoNotSchedule', { r1: 2, r2: 0 }],
      ]),
    );
    expect(views).toHaveLength(3);
  });

  it('default constraints and nothing that selects the pod (a bare pod): Skip, no constraints', () => {
    const objects = [...nodes(), makePod('p').labels({ foo: 'bar' }).node('node-a')];
    expect(groupsOf(objects, 'p', policy)).toEqual([]);
  });

  it('default constraints, but the pod has its own: only its own constraints apply (hard zone, soft planet)', () => {
    const objects = [
      node('node-a', { node: 'node-a', rack: 'r1', zone: 'z1', planet: 'earth' }),
      makePod('p')
        .labels({ foo: 'bar', baz: 'tar' })
        .owner('ReplicaSet', 'web-1')
        .node('node-a')
        .spread(c('zone', { matchLabels: { baz: 'tar' } }))
        .spread(c('planet', { matchLabels: { fot: 'rok' } }, { maxSkew: 2, whenUnsatisfiable: 'ScheduleAnyway' })),
    ];
    const views = groupsOf(objects, 'p', policy).map((v) => [v.topologyKey, v.whenUnsatisfiable]);
    expect(views).toEqual([
      ['zone', 'DoNotSchedule'],
      ['planet', 'ScheduleAnyway'],
    ]);
  });

  it('only soft default constraints: the filter has nothing to check (no DoNotSchedule group)', () => {
    const softOnly = parsePolicy(
      makePolicy('soft', {
        strategies: {
          topologySpread: {
            defaultConstraints: [{ maxSkew: 2, topologyKey: 'node', whenUnsatisfiable: 'ScheduleAnyway' }],
          },
        },
      }),
      { file: 'soft.yaml' },
    );
    const objects = [...nodes(), makePod('p').labels({ foo: 'bar' }).owner('ReplicaSet', 'web-1').node('node-a')];
    expect(groupsOf(objects, 'p', softOnly).filter((v) => v.whenUnsatisfiable === 'DoNotSchedule')).toEqual([]);
  });
});

describe('PodTopologySpread Filter, one constraint (filtering_test.go TestSingleConstraint)', () => {
  it.each<{ name: string; objects: Built[]; want: Record<string, boolean> }>([
    {
      name: 'no existing pods: every node fits',
      objects: [...fourNodes(), incoming(foo, c('zone', FOO))],
      want: { 'node-a': true, 'node-b': true, 'node-x': true, 'node-y': true },
    },
    {
      name: "no existing pods, incoming pod doesn't match itself: every node fits",
      objects: [...fourNodes(), incoming(foo, c('zone', BAR))],
      want: { 'node-a': true, 'node-b': true, 'node-x': true, 'node-y': true },
    },
    {
      name: 'existing pods in a different namespace do not count: zone1 (0) fits, zone2 (2) does not',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo, 'ns1'),
        existing('p-b1', 'node-a', foo, 'ns2'),
        existing('p-x1', 'node-x', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('zone', FOO)),
      ],
      want: { 'node-a': true, 'node-b': true, 'node-x': false, 'node-y': false },
    },
    {
      name: 'existing pods do not match a null selector: every node fits',
      objects: [...fourNodes(), ...pods('node-x', foo), ...pods('node-y', foo), incoming(foo, c('zone', undefined))],
      want: { 'node-a': true, 'node-b': true, 'node-x': true, 'node-y': true },
    },
    {
      name: 'pods spread across zones as 3/3: every node fits',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo),
        incoming(foo, c('zone', FOO)),
      ],
      want: { 'node-a': true, 'node-b': true, 'node-x': true, 'node-y': true },
    },
    {
      name: "pods spread across zones as 1/2 because node-b lacks 'zone' (it has 'zon'): only node-a fits",
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zon: 'zone1', node: 'node-b' }),
        node('node-x', { zone: 'zone2', node: 'node-x' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        ...pods('node-a', foo),
        ...pods('node-b', foo),
        ...pods('node-x', foo),
        ...pods('node-y', foo),
        incoming(foo, c('zone', FOO)),
      ],
      want: { 'node-a': true, 'node-b': false, 'node-x': false, 'node-y': false },
    },
    {
      name: "no node has label 'rack': nothing fits",
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-x', { zone: 'zone2', node: 'node-x' }),
        incoming(foo, c('rack', FOO)),
      ],
      want: { 'node-a': false, 'node-x': false },
    },
    {
      name: 'pods spread across nodes as 2/1/0/3: only node-x fits',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo),
        incoming(foo, c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'pods spread across nodes as 2/1/0/3, maxSkew 2: node-b and node-x fit',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo),
        incoming(foo, c('node', FOO, { maxSkew: 2 })),
      ],
      want: { 'node-a': false, 'node-b': true, 'node-x': true, 'node-y': false },
    },
    {
      name: "pods spread across nodes as 2/1/0/3, incoming pod doesn't match itself: node-b and node-x fit",
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo),
        incoming(bar, c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': true, 'node-x': true, 'node-y': false },
    },
    {
      name: 'node affinity In [node-a, node-y], spread 2/~1~/~0~/3: node-a fits (b, x fail node affinity, as in the real case)',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo),
        incoming(foo, c('node', FOO)).nodeAffinityIn('node', ['node-a', 'node-y']),
      ],
      want: { 'node-a': true, 'node-b': false, 'node-x': false, 'node-y': false },
    },
    {
      name: 'terminating pods are excluded: node-a (its only pod is terminating) fits, node-b does not',
      objects: [
        node('node-a', { node: 'node-a' }),
        node('node-b', { node: 'node-b' }),
        existing('p-a', 'node-a', foo).terminating(),
        existing('p-b', 'node-b', foo),
        incoming(foo, c('node', FOO)),
      ],
      want: { 'node-a': true, 'node-b': false },
    },
    {
      name: 'node affinity NotIn [node-b], zones 0/~2~/0/1: node-a fits (node-b fails node affinity, as in the real case)',
      objects: [
        ...fourNodes(),
        ...pods('node-b', foo, foo),
        ...pods('node-y', foo),
        incoming(foo, c('zone', FOO)).nodeAffinityTerms([
          { matchExpressions: [{ key: 'node', operator: 'NotIn', values: ['node-b'] }] },
        ]),
      ],
      want: { 'node-a': true, 'node-b': false, 'node-x': false, 'node-y': false },
    },
    {
      name: 'nodes 2/2/1, maxSkew 2, 3 domains < minDomains 4: global minimum 0, only node-c fits',
      objects: [
        node('node-a', { node: 'node-a' }),
        node('node-b', { node: 'node-b' }),
        node('node-c', { node: 'node-c' }),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo, foo),
        ...pods('node-c', foo),
        incoming(foo, c('node', FOO, { maxSkew: 2, minDomains: 4 })),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-c': true },
    },
    {
      name: 'nodes 2/2/1, maxSkew 2, 3 domains > minDomains 2: every node fits',
      objects: [
        node('node-a', { node: 'node-a' }),
        node('node-b', { node: 'node-b' }),
        node('node-c', { node: 'node-c' }),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo, foo),
        ...pods('node-c', foo),
        incoming(foo, c('node', FOO, { maxSkew: 2, minDomains: 2 })),
      ],
      want: { 'node-a': true, 'node-b': true, 'node-c': true },
    },
    {
      name: 'zones 2/1, maxSkew 2, 2 domains < minDomains 3: only zone2 nodes fit',
      objects: [
        ...fourNodes(),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('zone', FOO, { maxSkew: 2, minDomains: 3 })),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': true },
    },
    {
      name: 'zones 2/1, maxSkew 2, 2 domains > minDomains 1: every node fits',
      objects: [
        ...fourNodes(),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('zone', FOO, { maxSkew: 2, minDomains: 1 })),
      ],
      want: { 'node-a': true, 'node-b': true, 'node-x': true, 'node-y': true },
    },
    {
      name: 'NodeAffinityPolicy honored with nodeSelector, nodes 1/1/0/~0~: node-x fits (node-y fails its nodeSelector, as in the real case)',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-x', { node: 'node-x', foo: '' }),
        node('node-y', { node: 'node-y' }),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('node', FOO)).nodeSelector({ foo: '' }),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'NodeAffinityPolicy Ignore with nodeSelector, nodes 1/1/0/1: only node-x fits',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-x', { node: 'node-x', foo: '' }),
        node('node-y', { node: 'node-y' }),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('node', FOO, { nodeAffinityPolicy: 'Ignore' })).nodeSelector({ foo: '' }),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'NodeAffinityPolicy honored with node affinity, nodes 1/1/0/~0~: node-x fits',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-x', { node: 'node-x', foo: '' }),
        node('node-y', { node: 'node-y' }),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('node', FOO)).nodeAffinityIn('foo', ['']),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'NodeTaintsPolicy Honor, nodes 1/1/0/~0~: node-x fits (tainted node-y fails TaintToleration, as in the real case)',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-x', { node: 'node-x', foo: '' }),
        node('node-y', { node: 'node-y' }, true),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('node', FOO, { nodeTaintsPolicy: 'Honor' })),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'NodeTaintsPolicy Ignore, nodes 1/1/0/1: only node-x fits',
      objects: [
        node('node-a', { node: 'node-a', foo: '' }),
        node('node-b', { node: 'node-b', foo: '' }),
        node('node-x', { node: 'node-x', foo: '' }),
        node('node-y', { node: 'node-y' }, true),
        existing('p-b1', 'node-a', foo),
        existing('p-b2', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
  ])('$name', ({ objects, want }) => {
    expect(fitsOn(objects, 'p')).toEqual(want);
  });
});

describe('PodTopologySpread Filter, several constraints (filtering_test.go TestMultipleConstraints)', () => {
  it.each<{ name: string; objects: Built[]; want: Record<string, boolean> }>([
    {
      name: 'zone and node, spreads [3/3, 2/1/0/3]: only node-x fits',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo),
        incoming(foo, c('zone', FOO), c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'zone and node, spreads [3/4, 2/1/0/4]: nothing fits',
      objects: [
        ...fourNodes(),
        ...pods('node-a', foo, foo),
        ...pods('node-b', foo),
        ...pods('node-y', foo, foo, foo, foo),
        incoming(foo, c('zone', FOO), c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': false, 'node-y': false },
    },
    {
      name: 'different labelSelectors, spreads [1/0, 1/0/0/1]: only node-x fits',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo),
        existing('p-y1', 'node-y', bar),
        incoming(fooBar, c('zone', FOO), c('node', BAR)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'different labelSelectors, spreads [1/0, 0/0/1/1]: nothing fits',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo),
        existing('p-x1', 'node-x', bar),
        existing('p-y1', 'node-y', bar),
        incoming(fooBar, c('zone', FOO), c('node', BAR)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': false, 'node-y': false },
    },
    {
      name: 'different labelSelectors, spreads [2/3, 1/0/0/1]: only node-b fits',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo),
        existing('p-a2', 'node-a', fooBar),
        existing('p-y1', 'node-y', foo),
        existing('p-y2', 'node-y', fooBar),
        existing('p-y3', 'node-y', foo),
        incoming(fooBar, c('zone', FOO), c('node', BAR)),
      ],
      want: { 'node-a': false, 'node-b': true, 'node-x': false, 'node-y': false },
    },
    {
      name: "different labelSelectors, the pod doesn't match itself on 'zone': node-a and node-b fit",
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', foo),
        existing('p-x1', 'node-x', bar),
        existing('p-y1', 'node-y', bar),
        incoming(bar, c('zone', FOO), c('node', BAR)),
      ],
      want: { 'node-a': true, 'node-b': true, 'node-x': false, 'node-y': false },
    },
    {
      name: "zone and node, node-x lacks 'node' (excluded from both), spreads [1/1, 1/0/-/1]: only node-b fits",
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-x', { zone: 'zone2' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        existing('p-a1', 'node-a', foo),
        existing('p-y3', 'node-y', foo),
        incoming(foo, c('zone', FOO), c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': true, 'node-x': false, 'node-y': false },
    },
    {
      name: 'inclusion policies zone honor/ignore, node ignore/ignore, spreads [2/~0~, 1/1/0/~1~]: only node-x fits',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a', foo: '' }),
        node('node-b', { zone: 'zone1', node: 'node-b', foo: '' }),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }),
        existing('p-a1', 'node-a', foo),
        existing('p-b1', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('zone', FOO), c('node', FOO, { nodeAffinityPolicy: 'Ignore' })).nodeSelector({ foo: '' }),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'inclusion policies zone honor/honor, node honor/ignore, spreads [2/0, 1/1/0/~1~]: only node-x fits',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a', foo: '' }),
        node('node-b', { zone: 'zone1', node: 'node-b', foo: '' }),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        node('node-y', { zone: 'zone2', node: 'node-y' }, true),
        existing('p-a1', 'node-a', foo),
        existing('p-b1', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('zone', FOO, { nodeTaintsPolicy: 'Honor' }), c('node', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'inclusion policies zone honor/ignore, node honor/ignore, spreads [1/~1~, 1/0/0/~1~]: node-x fits (node-b fails its nodeSelector, as in the real case)',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a', foo: '' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        node('node-y', { zone: 'zone2', node: 'node-y', foo: '' }, true),
        existing('p-a1', 'node-a', foo),
        existing('p-b1', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(foo, c('zone', FOO), c('node', FOO)).nodeSelector({ foo: '' }),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'inclusion policies zone honor/honor, node ignore/ignore, spreads [1/0, 1/~1~/0/~1~]: only node-x fits',
      objects: [
        node('node-a', { zone: 'zone1', node: 'node-a', foo: '' }),
        node('node-b', { zone: 'zone1', node: 'node-b' }),
        node('node-x', { zone: 'zone2', node: 'node-x', foo: '' }),
        node('node-y', { zone: 'zone2', node: 'node-y', foo: '' }, true),
        existing('p-a1', 'node-a', foo),
        existing('p-b1', 'node-b', foo),
        existing('p-y1', 'node-y', foo),
        incoming(
          foo,
          c('zone', FOO, { nodeTaintsPolicy: 'Honor' }),
          c('node', FOO, { nodeAffinityPolicy: 'Ignore' }),
        ).nodeSelector({ foo: '' }),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': false },
    },
    {
      name: 'two constraints on zone, spreads [bar 2/1, foo 3/3]: node-x and node-y fit',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', fooBar),
        existing('p-a2', 'node-a', foo),
        existing('p-b1', 'node-b', fooBar),
        existing('p-y1', 'node-y', foo),
        existing('p-y2', 'node-y', fooBar),
        existing('p-y3', 'node-y', foo),
        incoming(fooBar, c('zone', BAR), c('zone', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': true, 'node-y': true },
    },
    {
      name: 'two constraints on zone, spreads [bar 2/1, foo 3/4]: nothing fits',
      objects: [
        ...fourNodes(),
        existing('p-a1', 'node-a', fooBar),
        existing('p-a2', 'node-a', foo),
        existing('p-b1', 'node-b', fooBar),
        existing('p-y1', 'node-y', foo),
        existing('p-y2', 'node-y', fooBar),
        existing('p-y3', 'node-y', foo),
        existing('p-y4', 'node-y', foo),
        incoming(fooBar, c('zone', BAR), c('zone', FOO)),
      ],
      want: { 'node-a': false, 'node-b': false, 'node-x': false, 'node-y': false },
    },
  ])('$name', ({ objects, want }) => {
    expect(fitsOn(objects, 'p')).toEqual(want);
  });
});

describe('label selector operators in spread selectors (apimachinery labels semantics, as counted by the PreFilter)', () => {
  // Zones: zone1 = node-a + node-b, zone2 = node-x + node-y. Pods: a1 app=web,tier=fe; a2 app=web; b1 app=api;
  // x1 app=web,tier=be; y1 (no labels).
  const cluster = (): Built[] => [
    ...fourNodes(),
    existing('a1', 'node-a', { app: 'web', tier: 'fe' }),
    existing('a2', 'node-a', { app: 'web' }),
    existing('b1', 'node-b', { app: 'api' }),
    existing('x1', 'node-x', { app: 'web', tier: 'be' }),
    existing('y1', 'node-y', {}),
  ];
  it.each<{ name: string; selector: Record<string, unknown>; want: Record<string, number> }>([
    { name: 'matchLabels app=web', selector: { matchLabels: { app: 'web' } }, want: { zone1: 2, zone2: 1 } },
    {
      name: 'In with several values (app in web, api)',
      selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] },
      want: { zone1: 3, zone2: 1 },
    },
    {
      name: 'NotIn also selects pods that lack the key (app notin web)',
      selector: { matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['web'] }] },
      want: { zone1: 1, zone2: 1 },
    },
    {
      name: 'Exists (tier)',
      selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] },
      want: { zone1: 1, zone2: 1 },
    },
    {
      name: 'DoesNotExist (tier) selects pods without the key, unlabelled ones included',
      selector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      want: { zone1: 2, zone2: 1 },
    },
    {
      name: 'matchLabels and matchExpressions are ANDed (app=web, tier notin fe)',
      selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['fe'] }] },
      want: { zone1: 1, zone2: 1 },
    },
    { name: 'an empty selector {} selects every pod of the namespace', selector: {}, want: { zone1: 3, zone2: 2 } },
  ])('$name', ({ selector, want }) => {
    const objects = [...cluster(), incoming({}, c('zone', selector, { maxSkew: 5 }))];
    expect(hard(groupsOf(objects, 'p'))).toEqual([{ domains: want, min: Math.min(...Object.values(want)) }]);
  });

  it('NodeTaintsPolicy Honor with a toleration of empty key and operator Exists: the tainted node stays a domain', () => {
    const objects = [
      node('node-a', { node: 'node-a' }),
      node('node-c', { node: 'node-c' }, true),
      incoming(foo, c('node', FOO, { nodeTaintsPolicy: 'Honor' })).toleration({ operator: 'Exists' }),
    ];
    expect(hard(groupsOf(objects, 'p'))).toEqual([{ domains: { 'node-a': 0, 'node-c': 0 }, min: 0 }]);
  });
});
