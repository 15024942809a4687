// Topology spread analysis, case by case from the scheduler documentation's examples: one cluster diagram per
// case, asserting the domain counts and skew kube-scheduler's PodTopologySpread would compute.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { DEFAULT_POLICY, parsePolicy } from '../../src/policy/parse.js';
import type { PolicySpec } from '../../src/policy/types.js';
import { buildSnapshot, HOSTNAME, makeNode, makePod, ZONE, type SpreadOptions } from '../builders.js';

type Built = Parameters<typeof buildSnapshot>[0][number];

/** Four nodes in two zones, as in the documentation's first example. */
const fourNodes = (): Built[] => [
  makeNode('node1').zone('zoneA'),
  makeNode('node2').zone('zoneA'),
  makeNode('node3').zone('zoneB'),
  makeNode('node4').zone('zoneB'),
];

const fooSpread = (extra: Partial<SpreadOptions> = {}): SpreadOptions => ({
  maxSkew: 1,
  topologyKey: ZONE,
  whenUnsatisfiable: 'DoNotSchedule',
  labelSelector: { matchLabels: { foo: 'bar' } },
  ...extra,
});

const fooPod = (name: string, node: string, extra: Partial<SpreadOptions> = {}) =>
  makePod(name).deployment('foo').label('foo', 'bar').node(node).spread(fooSpread(extra));

function groupsOf(objects: Built[], spec: PolicySpec = DEFAULT_POLICY.spec) {
  return analyze(buildSnapshot(objects), spec).groups.map((g) => ({
    key: g.constraint.topologyKey,
    domains: Object.fromEntries([...g.counts].sort()),
    skew: g.skew,
  }));
}

describe('topology spread: domains and skew', () => {
  it.each<{
    name: string;
    objects: Built[];
    want: Array<{ key: string; domains: Record<string, number>; skew: number }>;
  }>([
    {
      name: 'docs example: 3 pods, zoneA has 2, zoneB has 1, skew 1',
      objects: [...fourNodes(), fooPod('p1', 'node1'), fooPod('p2', 'node2'), fooPod('p3', 'node3')],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneB: 1 }, skew: 1 }],
    },
    {
      name: 'a domain with no matching pod exists with count 0',
      objects: [...fourNodes(), fooPod('p1', 'node1'), fooPod('p2', 'node2')],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneB: 0 }, skew: 2 }],
    },
    {
      name: 'maxSkew does not change the measured skew (maxSkew 3 group measured 2)',
      objects: [...fourNodes(), fooPod('p1', 'node1', { maxSkew: 3 }), fooPod('p2', 'node2', { maxSkew: 3 })],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneB: 0 }, skew: 2 }],
    },
    {
      name: 'nodes without the topology key are not domains and their pods do not count',
      objects: [...fourNodes(), makeNode('node5'), fooPod('p1', 'node1'), fooPod('p5', 'node5'), fooPod('p6', 'node5')],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }],
    },
    {
      name: 'terminating pods are not counted',
      objects: [...fourNodes(), fooPod('p1', 'node1'), fooPod('p2', 'node2').terminating(), fooPod('p3', 'node3')],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 1 }, skew: 0 }],
    },
    {
      name: 'Succeeded and Failed pods are not counted',
      objects: [
        ...fourNodes(),
        fooPod('p1', 'node1'),
        fooPod('p2', 'node2').phase('Succeeded'),
        fooPod('p3', 'node1').phase('Failed'),
      ],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }],
    },
    {
      name: 'pods of another namespace with matching labels are not counted',
      objects: [...fourNodes(), fooPod('p1', 'node1'), makePod('other', 'elsewhere').label('foo', 'bar').node('node1')],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }],
    },
    {
      name: 'every matching pod counts, whatever its owner (a bare pod too)',
      objects: [
        ...fourNodes(),
        fooPod('p1', 'node3'),
        makePod('bare').label('foo', 'bar').node('node1'),
        makePod('bare2').label('foo', 'bar').node('node2'),
      ],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneB: 1 }, skew: 1 }],
    },
    {
      name: 'minDomains 3 with 2 eligible domains: the global minimum is 0',
      objects: [...fourNodes(), fooPod('p1', 'node1', { minDomains: 3 }), fooPod('p2', 'node3', { minDomains: 3 })],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 1 }, skew: 1 }],
    },
    {
      name: 'minDomains 2 with 2 eligible domains: the real minimum counts',
      objects: [...fourNodes(), fooPod('p1', 'node1', { minDomains: 2 }), fooPod('p2', 'node3', { minDomains: 2 })],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 1 }, skew: 0 }],
    },
    {
      name: 'nodeAffinityPolicy Honor (default): nodes outside the pod nodeSelector are not domains',
      objects: [
        makeNode('node1').zone('zoneA').label('disk', 'ssd'),
        makeNode('node2').zone('zoneB').label('disk', 'hdd'),
        makeNode('node3').zone('zoneC').label('disk', 'ssd'),
        fooPod('p1', 'node1').nodeSelector({ disk: 'ssd' }),
        fooPod('p2', 'node1').nodeSelector({ disk: 'ssd' }),
      ],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneC: 0 }, skew: 2 }],
    },
    {
      name: 'nodeAffinityPolicy Ignore: every node with the key is a domain',
      objects: [
        makeNode('node1').zone('zoneA').label('disk', 'ssd'),
        makeNode('node2').zone('zoneB').label('disk', 'hdd'),
        fooPod('p1', 'node1', { nodeAffinityPolicy: 'Ignore' }).nodeSelector({ disk: 'ssd' }),
      ],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }],
    },
    {
      name: 'nodeTaintsPolicy Ignore (default): a tainted node is still a domain',
      objects: [
        makeNode('node1').zone('zoneA'),
        makeNode('node2').zone('zoneB').taint('dedicated', 'gpu', 'NoSchedule'),
        fooPod('p1', 'node1'),
        fooPod('p2', 'node1'),
      ],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneB: 0 }, skew: 2 }],
    },
    {
      name: 'nodeTaintsPolicy Honor: an untolerated NoSchedule node is not a domain',
      objects: [
        makeNode('node1').zone('zoneA'),
        makeNode('node2').zone('zoneB').taint('dedicated', 'gpu', 'NoSchedule'),
        fooPod('p1', 'node1', { nodeTaintsPolicy: 'Honor' }),
        fooPod('p2', 'node1', { nodeTaintsPolicy: 'Honor' }),
      ],
      want: [{ key: ZONE, domains: { zoneA: 2 }, skew: 0 }],
    },
    {
      name: 'nodeTaintsPolicy Honor: a tolerated taint keeps the node a domain',
      objects: [
        makeNode('node1').zone('zoneA'),
        makeNode('node2').zone('zoneB').taint('dedicated', 'gpu', 'NoSchedule'),
        fooPod('p1', 'node1', { nodeTaintsPolicy: 'Honor' }).toleration({ key: 'dedicated', operator: 'Exists' }),
      ],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }],
    },
    {
      name: 'matchLabelKeys folds the pod-template-hash in: the old ReplicaSet does not count',
      objects: [
        ...fourNodes(),
        fooPod('new-1', 'node1', { matchLabelKeys: ['pod-template-hash'] }),
        makePod('old-1').deployment('foo', 'oldhash').label('foo', 'bar').node('node3'),
        makePod('old-2').deployment('foo', 'oldhash').label('foo', 'bar').node('node4'),
      ],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }],
    },
    {
      name: 'a node must carry every hard topology key of the pod: node without hostname is not a zone domain',
      objects: [
        makeNode('node1').zone('zoneA'),
        makeNode('node2')
          .zone('zoneB')
          .set(`metadata.labels`, { [ZONE]: 'zoneB' }),
        fooPod('p1', 'node1').spread(fooSpread({ topologyKey: HOSTNAME, maxSkew: 5 })),
      ],
      want: [
        { key: ZONE, domains: { zoneA: 1 }, skew: 0 },
        { key: HOSTNAME, domains: { node1: 1 }, skew: 0 },
      ],
    },
    {
      name: 'a nil labelSelector matches nothing: every domain counts 0',
      objects: [...fourNodes(), makePod('p1').deployment('x').node('node1').spread({ topologyKey: ZONE })],
      want: [{ key: ZONE, domains: { zoneA: 0, zoneB: 0 }, skew: 0 }],
    },
    {
      name: 'cordoned and NotReady nodes are still domains',
      objects: [
        makeNode('node1').zone('zoneA'),
        makeNode('node2').zone('zoneB').unschedulable(),
        makeNode('node3').zone('zoneC').notReady(),
        fooPod('p1', 'node1'),
      ],
      want: [{ key: ZONE, domains: { zoneA: 1, zoneB: 0, zoneC: 0 }, skew: 1 }],
    },
    {
      name: 'set-based selector: app in (a,b), tier notin (cache), release exists',
      objects: [
        ...fourNodes(),
        makePod('a1')
          .deployment('a')
          .labels({ app: 'a', release: 'r1' })
          .node('node1')
          .spread({
            topologyKey: ZONE,
            labelSelector: {
              matchExpressions: [
                { key: 'app', operator: 'In', values: ['a', 'b'] },
                { key: 'tier', operator: 'NotIn', values: ['cache'] },
                { key: 'release', operator: 'Exists' },
              ],
            },
          }),
        makePod('b1').labels({ app: 'b', release: 'r1' }).node('node2'),
        makePod('b2').labels({ app: 'b', release: 'r1', tier: 'cache' }).node('node3'),
        makePod('b3').labels({ app: 'b' }).node('node4'),
      ],
      want: [{ key: ZONE, domains: { zoneA: 2, zoneB: 0 }, skew: 2 }],
    },
  ])('$name', ({ objects, want }) => {
    expect(groupsOf(objects)).toEqual(want);
  });
});

describe('topology spread: which constraints are analysed', () => {
  it('soft constraints are reported alongside hard ones', () => {
    const groups = groupsOf([...fourNodes(), fooPod('p1', 'node1', { whenUnsatisfiable: 'ScheduleAnyway' })]);
    expect(groups).toEqual([{ key: ZONE, domains: { zoneA: 1, zoneB: 0 }, skew: 1 }]);
  });

  it('policy defaultConstraints apply, with the workload labels as selector, only to pods without constraints', () => {
    const spec = parsePolicy(
      {
        apiVersion: 'rebalancer.dev/v1alpha1',
        kind: 'RebalancePolicy',
        metadata: { name: 'p' },
        spec: {
          strategies: {
            topologySpread: {
              defaultConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' }],
            },
          },
        },
      },
      { file: 'test' },
    ).spec;
    const objects: Built[] = [
      ...fourNodes(),
      makePod('web-1').deployment('web').label('app', 'web').node('node1'),
      makePod('web-2').deployment('web').label('app', 'web').node('node2'),
      // Same labels as the ReplicaSet's pods (its selector includes pod-template-hash), but no owner.
      makePod('bare').labels({ app: 'web', 'pod-template-hash': '6d4cf56db6' }).node('node3'),
      makePod('ds').daemonSet('agent').label('app', 'agent').node('node1'),
      fooPod('own', 'node1', { maxSkew: 4 }),
    ];
    const groups = analyze(buildSnapshot(objects), spec).groups;
    const defaulted = groups.filter((g) => g.constraint.fromDefaults);
    expect(defaulted).toHaveLength(1);
    // The bare pod matches the workload's labels and so counts, but gets no default constraint of its own.
    expect(defaulted[0]!.members.map((p) => p.name).sort()).toEqual(['web-1', 'web-2']);
    expect(Object.fromEntries(defaulted[0]!.counts)).toEqual({ zoneA: 2, zoneB: 1 });
    expect(groups.filter((g) => !g.constraint.fromDefaults).map((g) => g.constraint.maxSkew)).toEqual([4]);
  });

  it('namespaces outside the policy are not analysed', () => {
    const spec = parsePolicy(
      {
        apiVersion: 'rebalancer.dev/v1alpha1',
        kind: 'RebalancePolicy',
        metadata: { name: 'p' },
        spec: { namespaces: { include: ['shop'] } },
      },
      { file: 'test' },
    ).spec;
    const objects: Built[] = [
      ...fourNodes(),
      fooPod('p1', 'node1'),
      makePod('s1', 'shop')
        .deployment('s')
        .label('app', 's')
        .node('node1')
        .spread({ topologyKey: ZONE, labelSelector: { matchLabels: { app: 's' } } }),
    ];
    expect(analyze(buildSnapshot(objects), spec).groups.map((g) => g.namespace)).toEqual(['shop']);
  });

  it('pods of one workload share one group; replicas with another nodeSelector form their own', () => {
    const objects: Built[] = [
      makeNode('node1').zone('zoneA').label('pool', 'x'),
      makeNode('node2').zone('zoneB').label('pool', 'y'),
      fooPod('p1', 'node1').nodeSelector({ pool: 'x' }),
      fooPod('p2', 'node1').nodeSelector({ pool: 'x' }),
      fooPod('p3', 'node2').nodeSelector({ pool: 'y' }),
    ];
    const groups = analyze(buildSnapshot(objects), DEFAULT_POLICY.spec).groups;
    expect(groups.map((g) => [g.members.length, Object.fromEntries(g.counts)])).toEqual([
      [2, { zoneA: 2 }],
      [1, { zoneB: 1 }],
    ]);
  });
});
