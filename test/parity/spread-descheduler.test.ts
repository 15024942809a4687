// descheduler RemovePodsViolatingTopologySpreadConstraint, re-expressed as snapshots and planned by planCycle.
// Upstream: kubernetes-sigs/descheduler
//   pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/topologyspreadconstraint_test.go
//   (TestTopologySpreadConstraint).
// The upstream pods are built like createTestPods: names pod-0, pod-1, … in order, namespace ns1, 100m cpu each,
// owned by one ReplicaSet; only some of them carry the constraint. Here they are also created one second apart in
// that order, so "youngest first" (our eviction order among equals) picks from the end of the list, as the
// descheduler does.
// Our planner is deliberately more careful than the descheduler: it evicts a pod only when the simulated
// reschedule of its replacement lands somewhere that strictly lowers the skew (nodeFit on), so it never evicts a
// pod that would stay Pending or come back. Cases where that changes the outcome say so in their names.
import { describe, expect, it } from 'vitest';
import { makeNode, makePod, NOW, type SpreadOptions } from '../builders.js';
import { permissivePolicy, planOf, type Built } from './helpers.js';

type Labels = Record<string, string>;

interface PodList {
  count: number;
  node: string;
  labels: Labels;
  constraints?: SpreadOptions[];
  nodeSelector?: Labels;
  nodeAffinity?: Record<string, unknown>[];
  tolerations?: Array<{ key: string; operator?: 'Equal' | 'Exists'; value?: string; effect: 'NoSchedule' }>;
  noOwners?: boolean;
  terminating?: boolean;
}

const FOO_BAR = { matchLabels: { foo: 'bar' } };

/** getDefaultTopologyConstraints: zone, DoNotSchedule, foo=bar. */
const zoneConstraint = (maxSkew = 1, extra: Partial<SpreadOptions> = {}): SpreadOptions[] => [
  { maxSkew, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: FOO_BAR, ...extra },
];

/** createTestPods: pod-0, pod-1, … in list order. */
function createPods(lists: PodList[]): Built[] {
  const out: Built[] = [];
  let n = 0;
  for (const list of lists) {
    for (let i = 0; i < list.count; i++, n++) {
      const p = makePod(`pod-${n}`, 'ns1')
        .labels(list.labels)
        .node(list.node)
        .requests({ cpu: '100m' })
        .createdAt(NOW - 3_600_000 + n * 1000);
      if (!list.noOwners) p.owner('ReplicaSet', 'rs-1');
      for (const c of list.constraints ?? []) p.spread(c);
      if (list.nodeSelector) p.nodeSelector(list.nodeSelector);
      if (list.nodeAffinity) p.nodeAffinityTerms(list.nodeAffinity);
      for (const t of list.tolerations ?? []) p.toleration(t);
      if (list.terminating) p.terminating();
      out.push(p);
    }
  }
  return out;
}

/** test.BuildTestNode(name, milliCPU, memory, pods) with extra labels. */
const node = (name: string, labels: Labels, milliCpu = 2000, pods = 110) =>
  makeNode(name)
    .labels(labels)
    .allocatable({ cpu: `${milliCpu}m`, memory: '64Gi', pods });

const zoneNodes = (...zones: string[]): Built[] => zones.map((z, i) => node(`n${i + 1}`, { zone: `zone${z}` }));

interface Case {
  name: string;
  objects: Built[];
  /** Total evictions. */
  evictions: number;
  /** Evictions per source zone (or other key), when the case pins them down. */
  from?: Record<string, number>;
  /** Evicted pods, when the case pins them down. */
  pods?: string[];
  spec?: Record<string, unknown>;
  key?: string;
}

function check(c: Case): void {
  const result = planOf(c.objects, permissivePolicy(c.spec ?? {}), c.key ?? 'zone');
  expect(result.evicted).toHaveLength(c.evictions);
  if (c.from) expect(result.fromDomains).toEqual(c.from);
  if (c.pods) expect([...result.evicted].sort()).toEqual([...c.pods].sort());
}

describe('descheduler TopologySpread: zone balancing (TestTopologySpreadConstraint)', () => {
  it.each<Case>([
    {
      name: '2 domains, sizes [2,1], maxSkew=1, move 0 pods',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
          { count: 1, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2]',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'n1', labels: { foo: 'bar' } },
          { count: 1, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 1,
      from: { zoneA: 1 },
    },
    {
      name: '2 domains, sizes [3,1], maxSkew=1, soft constraint, includeSoftConstraints: move 1 pod',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(1, { whenUnsatisfiable: 'ScheduleAnyway' }),
          },
          { count: 2, node: 'n1', labels: { foo: 'bar' } },
          { count: 1, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      spec: { strategies: { topologySpread: { includeSoftConstraints: true } } },
      evictions: 1,
      from: { zoneA: 1 },
    },
    {
      name: '2 domains, sizes [3,1], maxSkew=1, soft constraint without includeSoftConstraints: move 0 pods',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(1, { whenUnsatisfiable: 'ScheduleAnyway' }),
          },
          { count: 2, node: 'n1', labels: { foo: 'bar' } },
          { count: 1, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '2 domains, sizes [3,1], maxSkew=1, no pods eligible (bare pods), move 0 pods',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint(), noOwners: true },
          { count: 2, node: 'n1', labels: { foo: 'bar' }, noOwners: true },
          { count: 1, node: 'n2', labels: { foo: 'bar' }, noOwners: true },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '2 domains, sizes [3,1], maxSkew=1, move 1 pod to achieve [2,2], exclude kube-system namespace',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'n1', labels: { foo: 'bar' } },
          { count: 1, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      spec: { namespaces: { exclude: ['kube-system'] } },
      evictions: 1,
    },
    {
      name: '2 domains, sizes [5,2], maxSkew=1, move 1 pod to achieve [4,3]',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 4, node: 'n1', labels: { foo: 'bar' } },
          { count: 2, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 1,
      from: { zoneA: 1 },
    },
    {
      name: '2 domains, sizes [4,0], maxSkew=1, move 2 pods to achieve [2,2]',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 3, node: 'n1', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 2,
      from: { zoneA: 2 },
    },
    {
      name: "2 domains, sizes [4,0], maxSkew=1, only move 1 pod since pods with nodeSelector and nodeAffinity aren't evicted",
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(),
            nodeSelector: { zone: 'zoneA' },
          },
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(),
            nodeSelector: { zone: 'zoneA' },
          },
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(),
            nodeAffinity: [{ matchExpressions: [{ key: 'foo', operator: 'In', values: ['bar'] }] }],
          },
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 1,
      pods: ['pod-3'],
    },
    {
      name: '2 domains, sizes [4,0], maxSkew=1, move 2 pods since selector matches multiple nodes',
      objects: [
        node('n1', { zone: 'zoneA', region: 'boston' }),
        node('n2', { zone: 'zoneB', region: 'boston' }),
        ...createPods([
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(),
            nodeSelector: { region: 'boston' },
          },
          { count: 3, node: 'n1', labels: { foo: 'bar' }, nodeSelector: { region: 'boston' } },
        ]),
      ],
      evictions: 2,
      from: { zoneA: 2 },
    },
    {
      // Upstream runs this with nodeFit off (its nodes hold 10 pods); here the nodes are big enough for the result.
      name: '3 domains, sizes [0, 1, 100], maxSkew=1, move 66 pods to get [34, 33, 34]',
      objects: [
        node('n1', { zone: 'zoneA' }, 16000),
        node('n2', { zone: 'zoneB' }, 16000),
        node('n3', { zone: 'zoneC' }, 16000),
        ...createPods([
          { count: 1, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 100, node: 'n3', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 66,
      from: { zoneC: 66 },
    },
    {
      name: '4 domains, sizes [0, 1, 3, 5], should move 3 to get [2, 2, 3, 2]',
      objects: [
        ...zoneNodes('A', 'B', 'C', 'D'),
        ...createPods([
          { count: 1, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 3, node: 'n3', labels: { foo: 'bar' } },
          { count: 5, node: 'n4', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 3,
      from: { zoneD: 3 },
    },
    {
      name: '2 domains size [2 6], maxSkew=2, should move 1 to get [3 5]',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint(2) },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
          { count: 6, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 1,
      from: { zoneB: 1 },
    },
    {
      name: "2 domains size [2 6], maxSkew=2, can't move any because of node taints",
      objects: [
        node('n1', { zone: 'zoneA' }).taint('hardware', 'gpu', 'NoSchedule'),
        node('n2', { zone: 'zoneB' }),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint(2) },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
          { count: 6, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 0,
    },
    {
      name: "2 domains size [2 6], maxSkew=2, can't move any because node1 does not have enough CPU",
      objects: [
        node('n1', { zone: 'zoneA' }, 200),
        node('n2', { zone: 'zoneB' }),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint(2) },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
          { count: 6, node: 'n2', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 0,
    },
    {
      name: 'Multiple constraints (6 nodes/2 zones, 4 pods): soft zone [3,1] included, hard hostname kept, move 1',
      objects: [
        ...['n1', 'n2', 'n3'].map((n) => node(n, { 'topology.kubernetes.io/zone': 'zoneA' })),
        ...['n4', 'n5', 'n6'].map((n) => node(n, { 'topology.kubernetes.io/zone': 'zoneB' })),
        ...createPods(
          ['n1', 'n2', 'n3', 'n4'].map((n) => ({
            count: 1,
            node: n,
            labels: { app: 'whoami' },
            constraints: [
              {
                maxSkew: 1,
                topologyKey: 'topology.kubernetes.io/zone',
                whenUnsatisfiable: 'ScheduleAnyway' as const,
                labelSelector: { matchLabels: { app: 'whoami' } },
              },
              {
                maxSkew: 1,
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'DoNotSchedule' as const,
                labelSelector: { matchLabels: { app: 'whoami' } },
              },
            ],
          })),
        ),
      ],
      spec: { strategies: { topologySpread: { includeSoftConstraints: true } } },
      key: 'topology.kubernetes.io/zone',
      evictions: 1,
      from: { zoneA: 1 },
    },
    {
      name: '3 domains size [8 7 0], maxSkew=1, should move 5 to get [5 5 5] (3 from zoneA, 2 from zoneB)',
      objects: [
        ...zoneNodes('A', 'B', 'C'),
        ...createPods([
          { count: 8, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 7, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 5,
      from: { zoneA: 3, zoneB: 2 },
    },
    {
      name: '3 domains size [5 5 5], maxSkew=1, should move 0 to retain [5 5 5]',
      objects: [
        ...zoneNodes('A', 'B', 'C'),
        ...createPods([
          { count: 5, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 5, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 5, node: 'n3', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '3 domains [6,2,1], maxSkew=1: exactly 3 evictions to reach [3,3,3]',
      objects: [
        ...zoneNodes('A', 'B', 'C'),
        ...createPods([
          { count: 6, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n3', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 3,
      from: { zoneA: 3 },
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 1 pod since pod tolerates the node with taint',
      objects: [
        node('n1', { zone: 'zoneA' }),
        node('n2', { zone: 'zoneB' }).taint('taint-test', 'test', 'NoSchedule'),
        ...createPods([
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar' },
            constraints: zoneConstraint(),
            tolerations: [{ key: 'taint-test', value: 'test', operator: 'Equal', effect: 'NoSchedule' }],
          },
          { count: 1, node: 'n1', labels: { foo: 'bar' }, nodeSelector: { zone: 'zoneA' } },
        ]),
      ],
      evictions: 1,
      pods: ['pod-0'],
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 0 pods since pod does not tolerate the tainted node',
      objects: [
        node('n1', { zone: 'zoneA' }),
        node('n2', { zone: 'zoneB' }).taint('taint-test', 'test', 'NoSchedule'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n1', labels: { foo: 'bar' }, nodeSelector: { zone: 'zoneA' } },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with PreferNoSchedule Taint',
      objects: [
        node('n1', { zone: 'zoneA' }),
        node('n2', { zone: 'zoneB' }).taint('taint-test', 'test', 'PreferNoSchedule'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n1', labels: { foo: 'bar' }, nodeSelector: { zone: 'zoneA' } },
        ]),
      ],
      evictions: 1,
      pods: ['pod-0'],
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 0 pod for node with unmatched label filtering (podSelector foo In [baz])',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
        ]),
      ],
      spec: { podSelector: { matchExpressions: [{ key: 'foo', operator: 'In', values: ['baz'] }] } },
      evictions: 0,
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering (podSelector foo In [bar])',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
        ]),
      ],
      spec: { podSelector: { matchExpressions: [{ key: 'foo', operator: 'In', values: ['bar'] }] } },
      evictions: 1,
      pods: ['pod-1'],
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 1 pod for node with matched label filtering (NotIn op)',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 1, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'n1', labels: { foo: 'bar' } },
        ]),
      ],
      spec: { podSelector: { matchExpressions: [{ key: 'foo', operator: 'NotIn', values: ['baz'] }] } },
      evictions: 1,
      pods: ['pod-1'],
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 1 pods given matchLabelKeys on same replicaset',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          {
            count: 2,
            node: 'n1',
            labels: { foo: 'bar', 'pod-template-hash': 'foo' },
            constraints: zoneConstraint(1, { matchLabelKeys: ['pod-template-hash'] }),
          },
        ]),
      ],
      evictions: 1,
      pods: ['pod-1'],
    },
    {
      name: '2 domains, sizes [2,0], maxSkew=1, move 0 pods given matchLabelKeys on two different replicasets',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar', 'pod-template-hash': 'foo' },
            constraints: zoneConstraint(1, { matchLabelKeys: ['pod-template-hash'] }),
          },
          {
            count: 1,
            node: 'n1',
            labels: { foo: 'bar', 'pod-template-hash': 'bar' },
            constraints: zoneConstraint(1, { matchLabelKeys: ['pod-template-hash'] }),
          },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '2 domains, sizes [4,2], maxSkew=1, 2 pods in termination; nothing should be moved',
      objects: [
        ...zoneNodes('A', 'B'),
        ...createPods([
          { count: 2, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint(), terminating: true },
          { count: 2, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '3 domains, sizes [2,3,4], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA; nothing should be moved',
      objects: [
        node('n1', { zone: 'zoneA' }, 250, 9),
        node('n2', { zone: 'zoneB' }, 1000, 9),
        node('n3', { zone: 'zoneC' }, 1000, 9),
        ...createPods([
          { count: 2, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 3, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 4, node: 'n3', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '3 domains, sizes [2,3,4], maxSkew=1, nodeFit false, not enough cpu on zoneA: 1 moved to force a scale-up',
      objects: [
        node('n1', { zone: 'zoneA' }, 250, 9),
        node('n2', { zone: 'zoneB' }, 1000, 9),
        node('n3', { zone: 'zoneC' }, 1000, 9),
        ...createPods([
          { count: 2, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 3, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 4, node: 'n3', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      spec: { eviction: { nodeFit: false } },
      evictions: 1,
      from: { zoneC: 1 },
    },
    {
      name: '3 domains, sizes [[1,0], [1,1], [2,1]], maxSkew=1, NodeFit is enabled, and not enough cpu on zoneA; nothing should be moved',
      objects: [
        node('A1', { zone: 'zoneA' }, 150, 9),
        node('B1', { zone: 'zoneB' }, 1000, 9),
        node('C1', { zone: 'zoneC' }, 1000, 9),
        node('A2', { zone: 'zoneA' }, 50, 9),
        node('B2', { zone: 'zoneB' }, 1000, 9),
        node('C2', { zone: 'zoneC' }, 1000, 9),
        ...createPods([
          { count: 1, node: 'A1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'B1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'B2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'C1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'C2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 0,
    },
    {
      name: '2 domains, sizes [[1,4], [2,1]], maxSkew=1, NodeFit is enabled; should move 1 (pod-4)',
      objects: [
        node('A1', { zone: 'zoneA' }, 1000, 9),
        node('A2', { zone: 'zoneA' }, 1000, 9),
        node('B1', { zone: 'zoneB' }, 1000, 9),
        node('B2', { zone: 'zoneB' }, 1000, 9),
        ...createPods([
          { count: 1, node: 'A1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 4, node: 'A2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'B1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'B2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        ]),
      ],
      evictions: 1,
      pods: ['pod-4'],
    },
    {
      name: 'ZoneAwareNodeFit: 2 domains [4,1], the target zone has capacity, should evict 1',
      objects: [
        node('A1', { zone: 'zoneA' }),
        node('A2', { zone: 'zoneA' }),
        node('B1', { zone: 'zoneB' }),
        ...createPods([
          { count: 4, node: 'A1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'B1', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 1,
      from: { zoneA: 1 },
    },
    {
      name: 'ZoneAwareNodeFit: 2 domains [4,1], every target zone at CPU capacity, should evict 0 (no churn)',
      objects: [
        node('A1', { zone: 'zoneA' }),
        node('A2', { zone: 'zoneA' }),
        node('B1', { zone: 'zoneB' }, 50),
        ...createPods([
          { count: 4, node: 'A1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'B1', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 0,
    },
    {
      // The descheduler evicts 3 here; after the first move ([5,2,3]) no replacement fits anywhere: zoneB has no
      // CPU left and zoneA/zoneC would exceed maxSkew against zoneB's 2, so its 2nd and 3rd replacements would stay
      // Pending. We evict only the one whose replacement the scheduler can place.
      name: 'ZoneAwareNodeFit: 3 domains [6,2,2], zoneB at CPU capacity, zoneC has room: 1 (descheduler: 3, two would stay Pending)',
      objects: [
        node('A1', { zone: 'zoneA' }),
        node('B1', { zone: 'zoneB' }, 50),
        node('C1', { zone: 'zoneC' }),
        ...createPods([
          { count: 6, node: 'A1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 2, node: 'B1', labels: { foo: 'bar' } },
          { count: 2, node: 'C1', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 1,
      from: { zoneA: 1 },
    },
    {
      name: 'ZoneAwareNodeFit off (default), 2 domains [4,1], the target zone at CPU capacity: TopologyBalanceNodeFit blocks, 0',
      objects: [
        node('A1', { zone: 'zoneA' }),
        node('B1', { zone: 'zoneB' }, 50),
        ...createPods([
          { count: 4, node: 'A1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
          { count: 1, node: 'B1', labels: { foo: 'bar' } },
        ]),
      ],
      evictions: 0,
    },
  ])('$name', (c) => check(c));
});

describe('descheduler TopologySpread: node-level domains and node selection (TestTopologySpreadConstraint)', () => {
  const linuxAndWindows = (...extraWindows: string[]): Built[] => [
    node('n1', { node: 'linNodeA', os: 'linux' }),
    node('n2', { node: 'linNodeB', os: 'linux' }),
    node('n3', { node: 'linNodeC', os: 'linux' }),
    node('n4', { node: 'winNodeA', os: 'windows' }),
    node('n5', { node: 'winNodeB', os: 'windows' }),
    node('n6', { node: 'winNodeC', os: 'windows' }),
    ...extraWindows.map((name, i) => node(`n${7 + i}`, { node: name, os: 'windows' })),
  ];
  const nodeConstraint = (): SpreadOptions[] => [
    { maxSkew: 1, topologyKey: 'node', whenUnsatisfiable: 'DoNotSchedule', labelSelector: FOO_BAR },
  ];
  const windows = { os: 'windows' };

  it.each<Case>([
    {
      name: '6 domains, sizes [0,0,0,3,3,2], maxSkew=1: balanced once the linux nodes are excluded by the nodeSelector',
      objects: [
        ...linuxAndWindows(),
        ...createPods([
          { count: 3, node: 'n4', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 3, node: 'n5', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 2, node: 'n6', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
        ]),
      ],
      key: 'node',
      evictions: 0,
    },
    {
      name: '7 domains, sizes [0,0,0,3,3,2,0], maxSkew=1, two pods are evicted and moved to the new windows node',
      objects: [
        ...linuxAndWindows('winNodeD'),
        ...createPods([
          { count: 3, node: 'n4', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 3, node: 'n5', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 2, node: 'n6', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
        ]),
      ],
      key: 'node',
      evictions: 2,
      from: { winNodeA: 1, winNodeB: 1 },
    },
    {
      name: '6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 1 pod is evicted from winNodeA',
      objects: [
        ...linuxAndWindows(),
        ...createPods([
          { count: 4, node: 'n4', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 3, node: 'n5', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 1, node: 'n6', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
        ]),
      ],
      key: 'node',
      evictions: 1,
      from: { winNodeA: 1 },
    },
    {
      name: '6 domains, sizes [0,0,0,4,3,1], maxSkew=1, 0 evicted: the winNodeA pods can only run on winNodeA',
      objects: [
        ...linuxAndWindows(),
        ...createPods([
          {
            count: 4,
            node: 'n4',
            labels: { foo: 'bar' },
            constraints: nodeConstraint(),
            nodeSelector: { node: 'winNodeA' },
          },
          { count: 3, node: 'n5', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
          { count: 1, node: 'n6', labels: { foo: 'bar' }, constraints: nodeConstraint(), nodeSelector: windows },
        ]),
      ],
      key: 'node',
      evictions: 0,
    },
    {
      name: '2 domains, sizes [3, 1], maxSkew=1, tainted control-plane/infra nodes are no hostname domains; nothing should be moved',
      objects: [
        node('controlplane1', { zone: 'zoneA', 'kubernetes.io/hostname': 'cp-1' })
          .taint('node-role.kubernetes.io/controlplane', 'true', 'NoSchedule')
          .taint('node-role.kubernetes.io/etcd', 'true', 'NoSchedule'),
        node('infraservices1', { zone: 'zoneA', infra_service: 'true', 'kubernetes.io/hostname': 'infra-1' }).taint(
          'infra_service',
          undefined,
          'NoSchedule',
        ),
        node('app1', { zone: 'zoneA', app_service: 'true', 'kubernetes.io/hostname': 'app-1' }),
        node('app2', { zone: 'zoneB', app_service: 'true', 'kubernetes.io/hostname': 'app-2' }),
        ...createPods(
          ['app1', 'app2'].map((n) => ({
            count: 2,
            node: n,
            labels: { 'app.kubernetes.io/name': 'service' },
            constraints: [
              {
                maxSkew: 1,
                topologyKey: 'kubernetes.io/hostname',
                whenUnsatisfiable: 'DoNotSchedule',
                labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'service' } },
              },
            ],
            nodeAffinity: [{ matchExpressions: [{ key: 'app_service', operator: 'Exists' }] }],
          })),
        ),
      ],
      evictions: 0,
    },
  ])('$name', (c) => check(c));
});

describe('scheduler semantics the descheduler does not model, in the same setting', () => {
  it('[4,0], maxSkew=1, minDomains=3 over 2 zones: the global minimum stays 0, so only 1 replacement can be placed', () => {
    const objects = [
      ...zoneNodes('A', 'B'),
      ...createPods([
        { count: 4, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint(1, { minDomains: 3 }) },
      ]),
    ];
    const result = planOf(objects, permissivePolicy(), 'zone');
    expect(result.evicted).toHaveLength(1);
    expect(result.plan.topology[0]).toMatchObject({ domains: { zoneA: 4, zoneB: 0 }, skew: 4, skewAfter: 3 });
  });

  it('[5,1], maxSkew=1: 2 evictions to reach [3,3], reported as skew 4 → 0', () => {
    const objects = [
      ...zoneNodes('A', 'B'),
      ...createPods([
        { count: 5, node: 'n1', labels: { foo: 'bar' }, constraints: zoneConstraint() },
        { count: 1, node: 'n2', labels: { foo: 'bar' }, constraints: zoneConstraint() },
      ]),
    ];
    const result = planOf(objects, permissivePolicy(), 'zone');
    expect(result.fromDomains).toEqual({ zoneA: 2 });
    expect(result.plan.topology[0]).toMatchObject({ domains: { zoneA: 5, zoneB: 1 }, skew: 4, skewAfter: 0 });
  });

  it('default constraints apply only to pods without their own: a defaulted ReplicaSet [3,1] is balanced, a pod with its own soft constraint is not', () => {
    const spec = {
      strategies: {
        topologySpread: {
          defaultConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
        },
      },
    };
    const defaulted = createPods([
      { count: 3, node: 'n1', labels: { foo: 'bar' } },
      { count: 1, node: 'n2', labels: { foo: 'bar' } },
    ]);
    expect(planOf([...zoneNodes('A', 'B'), ...defaulted], permissivePolicy(spec), 'zone').fromDomains).toEqual({
      zoneA: 1,
    });
    const ownSoft = createPods([
      {
        count: 3,
        node: 'n1',
        labels: { foo: 'bar' },
        constraints: zoneConstraint(1, { whenUnsatisfiable: 'ScheduleAnyway' }),
      },
      {
        count: 1,
        node: 'n2',
        labels: { foo: 'bar' },
        constraints: zoneConstraint(1, { whenUnsatisfiable: 'ScheduleAnyway' }),
      },
    ]);
    expect(planOf([...zoneNodes('A', 'B'), ...ownSoft], permissivePolicy(spec), 'zone').evicted).toEqual([]);
  });
});

describe('replicas of one workload on one node with different node affinity are tried one by one', () => {
  // Here pod-1 (nodeSelector zone=zoneA, so its replacement returns to zoneA) is refused first; pod-0 of the same
  // ReplicaSet on the same node has other scheduling constraints, so it is tried too and moved to zoneC, as the
  // descheduler does.
  const c: Case = {
    name: '3 domains, sizes [2, 1, 0] with selectors, maxSkew=1, nodeAffinityPolicy=Ignore, should move 1 (pod-0) for [1, 1, 1]',
    objects: [
      node('A1', { zone: 'zoneA', 'kubernetes.io/arch': 'arm64' }, 1000, 9),
      node('B1', { zone: 'zoneB', 'kubernetes.io/arch': 'arm64' }, 1000, 9),
      node('C1', { zone: 'zoneC', 'kubernetes.io/arch': 'arm64' }, 1000, 9),
      ...createPods([
        {
          count: 1,
          node: 'A1',
          labels: { foo: 'bar' },
          constraints: zoneConstraint(1, { nodeAffinityPolicy: 'Ignore' }),
          nodeSelector: { 'kubernetes.io/arch': 'arm64' },
        },
        {
          count: 1,
          node: 'A1',
          labels: { foo: 'bar' },
          constraints: zoneConstraint(1, { nodeAffinityPolicy: 'Ignore' }),
          nodeSelector: { zone: 'zoneA', 'kubernetes.io/arch': 'arm64' },
        },
        {
          count: 1,
          node: 'B1',
          labels: { foo: 'bar' },
          constraints: zoneConstraint(1, { nodeAffinityPolicy: 'Ignore' }),
          nodeSelector: { 'kubernetes.io/arch': 'arm64' },
        },
      ]),
    ],
    evictions: 1,
    pods: ['pod-0'],
  };
  it(c.name, () => check(c));
});
