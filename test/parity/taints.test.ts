// Taints and tolerations parity, re-expressed as snapshots.
// Upstream:
//   - kubernetes/kubernetes pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
//     (TestTaintTolerationFilter) and k8s.io/api core/v1 Toleration.ToleratesTaint: whether a pending pod fits a
//     tainted node, through our placement filter (NoSchedule and NoExecute are filtered, PreferNoSchedule is not;
//     an empty toleration effect matches every effect; an empty key with Exists matches every key; Exists ignores
//     the value; an empty operator means Equal).
//   - kubernetes-sigs/descheduler pkg/framework/plugins/removepodsviolatingnodetaints/node_taint_test.go
//     (TestDeletePodsViolatingNodeTaints): which pods a cycle evicts.
// The descheduler evicts with nodeFit off even when no other node could take the pod; we only evict when the
// replacement has a node to go to, so those cases add an untainted "spare" node and say so.
import { describe, expect, it } from 'vitest';
import { makeNode, makePod, type TolerationOptions } from '../builders.js';
import { fitsOn, permissivePolicy, planOf, type Built } from './helpers.js';

type Effect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
type TaintSpec = [key: string, value: string | undefined, effect: Effect];

const taintedNode = (name: string, ...taints: TaintSpec[]) => {
  const n = makeNode(name);
  for (const [k, v, e] of taints) n.taint(k, v, e);
  return n;
};

const pendingWith = (...tolerations: TolerationOptions[]) => {
  const p = makePod('p').phase('Pending');
  for (const t of tolerations) p.toleration(t);
  return p;
};

describe('TaintToleration filter (taint_toleration_test.go TestTaintTolerationFilter, v1 ToleratesTaint)', () => {
  it.each<{ name: string; taints: TaintSpec[]; tolerations: TolerationOptions[]; fits: boolean }>([
    {
      name: "a pod with no tolerations can't be scheduled onto a node with a NoSchedule taint",
      taints: [['dedicated', 'user1', 'NoSchedule']],
      tolerations: [],
      fits: false,
    },
    {
      name: 'a pod tolerating dedicated=user1:NoSchedule (operator Equal) fits the node dedicated to user1',
      taints: [['dedicated', 'user1', 'NoSchedule']],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'user1', effect: 'NoSchedule' }],
      fits: true,
    },
    {
      name: "a pod tolerating dedicated=user2 can't be scheduled on the node dedicated to user1",
      taints: [['dedicated', 'user1', 'NoSchedule']],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'user2', effect: 'NoSchedule' }],
      fits: false,
    },
    {
      name: 'a toleration with operator Exists tolerates the taint whatever its value',
      taints: [['foo', 'bar', 'NoSchedule']],
      tolerations: [{ key: 'foo', operator: 'Exists', effect: 'NoSchedule' }],
      fits: true,
    },
    {
      name: 'several tolerations, several taints, all tolerated: fits',
      taints: [
        ['dedicated', 'user2', 'NoSchedule'],
        ['foo', 'bar', 'NoSchedule'],
      ],
      tolerations: [
        { key: 'dedicated', operator: 'Equal', value: 'user2', effect: 'NoSchedule' },
        { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
      ],
      fits: true,
    },
    {
      name: "key and value match but the (non-empty) effect doesn't: can't be scheduled",
      taints: [['foo', 'bar', 'NoSchedule']],
      tolerations: [{ key: 'foo', operator: 'Equal', value: 'bar', effect: 'PreferNoSchedule' }],
      fits: false,
    },
    {
      name: 'key and value match and the toleration effect is empty: tolerates a NoSchedule taint',
      taints: [['foo', 'bar', 'NoSchedule']],
      tolerations: [{ key: 'foo', operator: 'Equal', value: 'bar' }],
      fits: true,
    },
    {
      name: 'an empty toleration effect also tolerates NoExecute',
      taints: [['foo', 'bar', 'NoExecute']],
      tolerations: [{ key: 'foo', operator: 'Equal', value: 'bar' }],
      fits: true,
    },
    {
      name: "toleration key/value don't match, but the taint is PreferNoSchedule: can be scheduled",
      taints: [['dedicated', 'user1', 'PreferNoSchedule']],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'user2', effect: 'NoSchedule' }],
      fits: true,
    },
    {
      name: 'no toleration, the taint is PreferNoSchedule: can be scheduled',
      taints: [['dedicated', 'user1', 'PreferNoSchedule']],
      tolerations: [],
      fits: true,
    },
    {
      name: 'an untolerated NoExecute taint filters the node like NoSchedule',
      taints: [['maintenance', 'true', 'NoExecute']],
      tolerations: [],
      fits: false,
    },
    {
      name: 'an empty key with operator Exists tolerates every taint of every effect',
      taints: [
        ['a', '1', 'NoSchedule'],
        ['b', '2', 'NoExecute'],
      ],
      tolerations: [{ operator: 'Exists' }],
      fits: true,
    },
    {
      name: 'an empty key with Exists and effect NoSchedule does not tolerate a NoExecute taint',
      taints: [
        ['a', '1', 'NoSchedule'],
        ['b', '2', 'NoExecute'],
      ],
      tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }],
      fits: false,
    },
    {
      name: 'an omitted operator means Equal: the value must match',
      taints: [['foo', 'bar', 'NoSchedule']],
      tolerations: [{ key: 'foo', value: 'baz', effect: 'NoSchedule' }],
      fits: false,
    },
    {
      name: 'an omitted operator with an empty value tolerates a taint with no value',
      taints: [['foo', undefined, 'NoSchedule']],
      tolerations: [{ key: 'foo', effect: 'NoSchedule' }],
      fits: true,
    },
    {
      name: 'Equal with an empty value does not tolerate a taint that has a value',
      taints: [['foo', 'bar', 'NoSchedule']],
      tolerations: [{ key: 'foo', operator: 'Equal', effect: 'NoSchedule' }],
      fits: false,
    },
    {
      name: 'a toleration of another key does not help',
      taints: [['foo', 'bar', 'NoSchedule']],
      tolerations: [{ key: 'other', operator: 'Exists' }],
      fits: false,
    },
  ])('$name', ({ taints, tolerations, fits }) => {
    expect(fitsOn([taintedNode('node1', ...taints), pendingWith(...tolerations)], 'p')).toEqual({ node1: fits });
  });

  it('a cordoned node admits only pods tolerating node.kubernetes.io/unschedulable:NoSchedule (NodeUnschedulable)', () => {
    const nodes = [makeNode('node1').unschedulable()];
    expect(fitsOn([...nodes, pendingWith()], 'p')).toEqual({ node1: false });
    expect(
      fitsOn(
        [...nodes, pendingWith({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' })],
        'p',
      ),
    ).toEqual({ node1: true });
  });
});

describe('descheduler RemovePodsViolatingNodeTaints (node_taint_test.go)', () => {
  const T1: TaintSpec = ['testTaint1', 'test1', 'NoSchedule'];
  const TING1: TaintSpec = ['testingTaint1', 'testing1', 'NoSchedule'];
  const PREFER_T1: TaintSpec = ['testTaint1', 'test1', 'PreferNoSchedule'];
  const tolerate = (key: string, value: string, effect: Effect): TolerationOptions => ({ key, value, effect });

  /** A pod owned by a ReplicaSet (test.SetNormalOwnerRef), 100m cpu. */
  const owned = (name: string, node: string, ...tolerations: TolerationOptions[]) => {
    const p = makePod(name).owner('ReplicaSet', 'rs').node(node).requests({ cpu: '100m' });
    for (const t of tolerations) p.toleration(t);
    return p;
  };
  const p1 = () => owned('p1', 'n1', tolerate('testTaint1', 'test1', 'NoSchedule'));
  const p2 = () => owned('p2', 'n1');
  const p3 = () => owned('p3', 'n1', tolerate('testTaint1', 'test1', 'NoSchedule'));
  const p4 = () => owned('p4', 'n1', tolerate('testTaintX1', 'testX1', 'NoSchedule'));
  const p5 = () => owned('p5', 'n1');
  const p6 = () => owned('p6', 'n1');
  const p7 = () =>
    makePod('p7', 'kube-system').owner('ReplicaSet', 'rs').node('n2').priority(2_000_000_000).requests({ cpu: '100m' });
  const p8 = () => makePod('p8').daemonSet('ds').node('n2').requests({ cpu: '100m' });
  const p9 = () => owned('p9', 'n2').hostPath('somePath').emptyDir();
  const p10 = () => owned('p10', 'n2').mirror();
  const p11 = () => owned('p11', 'n2');
  const p12 = () => owned('p12', 'n2').nodeSelector({ datacenter: 'west' });
  const p13 = () => owned('p13', 'n5', tolerate('testTaint0', 'test0', 'PreferNoSchedule'));
  const spare = () => makeNode('spare');

  it.each<{ name: string; objects: Built[]; spec?: Record<string, unknown>; evicted: string[] | number }>([
    {
      name: 'pods not tolerating the node taint are evicted (p2), with a spare node to go to',
      objects: [taintedNode('n1', T1), spare(), p1(), p2(), p3()],
      evicted: ['p2'],
    },
    {
      name: 'pods with tolerations that do not tolerate the node taint are evicted (p4), with a spare node',
      objects: [taintedNode('n1', T1), spare(), p1(), p3(), p4()],
      evicted: ['p4'],
    },
    {
      name: 'only maxPerCycle (maxNoOfPodsToEvictTotal 1, maxPerNode 2) pods are evicted: p5 or p6',
      objects: [taintedNode('n1', T1), spare(), p1(), p5(), p6()],
      spec: { eviction: { maxPerCycle: 1, maxPerNode: 2 } },
      evicted: 1,
    },
    {
      name: 'only maxPerNode (1) pods are evicted: p5 or p6',
      objects: [taintedNode('n1', T1), spare(), p1(), p5(), p6()],
      spec: { eviction: { maxPerNode: 1 } },
      evicted: 1,
    },
    {
      name: 'only maxPerNamespace (1) pods are evicted: p5 or p6',
      objects: [taintedNode('n1', T1), spare(), p1(), p5(), p6()],
      spec: { eviction: { maxPerNamespace: 1 } },
      evicted: 1,
    },
    {
      name: 'critical, DaemonSet, local-storage and mirror pods not tolerating the taint are not evicted',
      objects: [taintedNode('n2', TING1), spare(), p7(), p8(), p9(), p10()],
      evicted: [],
    },
    {
      name: 'the same with evictLocalStoragePods: only the local-storage pod (p9) is evicted',
      objects: [taintedNode('n2', TING1), spare(), p7(), p8(), p9(), p10()],
      spec: { eviction: { evictLocalStoragePods: true } },
      evicted: ['p9'],
    },
    {
      name: 'critical and non-critical pods: only the non-critical p11 is evicted',
      objects: [taintedNode('n2', TING1), spare(), p7(), p8(), p10(), p11()],
      evicted: ['p11'],
    },
    {
      name: 'critical pods too when the policy allows them (threshold above, kube-system in scope): p2 and p7',
      objects: [taintedNode('n1', T1), taintedNode('n2', TING1), spare(), p2(), p7(), p9(), p10()],
      // The descheduler's evictSystemCriticalPods: here the explicit opt-in and a threshold above the pods.
      spec: {
        namespaces: { exclude: [] },
        eviction: { evictSystemCriticalPods: true, priorityThreshold: { value: 2_100_000_000 } },
      },
      evicted: ['p2', 'p7'],
    },
    {
      name: "p2 doesn't tolerate its node's taint nor the other node's: not evicted (nodeFit)",
      objects: [taintedNode('n1', T1), taintedNode('n2', TING1), p1(), p2(), p3()],
      evicted: [],
    },
    {
      name: "p12's node is not in the snapshot (and no node matches its selector): not evicted",
      objects: [taintedNode('n1', T1), makeNode('n3').label('datacenter', 'east'), p1(), p3(), p12()],
      evicted: [],
    },
    {
      name: 'p2 does not tolerate its node taint and the only other node is cordoned: not evicted',
      objects: [taintedNode('n1', T1), makeNode('n4').unschedulable(), p1(), p2(), p3()],
      evicted: [],
    },
    {
      name: 'pods not tolerating a PreferNoSchedule taint are not evicted unless includePreferNoSchedule',
      objects: [taintedNode('n5', PREFER_T1), spare(), p13()],
      evicted: [],
    },
    {
      name: 'pods not tolerating a PreferNoSchedule taint are evicted with includePreferNoSchedule (p13)',
      objects: [taintedNode('n5', PREFER_T1), spare(), p13()],
      spec: { strategies: { nodeTaints: { includePreferNoSchedule: true } } },
      evicted: ['p13'],
    },
    {
      name: 'excludedTaints by key (excludedTaint1, testTaint1): the matching taint is ignored, nothing evicted',
      objects: [taintedNode('n1', T1), spare(), p2()],
      spec: { strategies: { nodeTaints: { excludedTaints: ['excludedTaint1', 'testTaint1'] } } },
      evicted: [],
    },
    {
      name: 'excludedTaints by key=value (testTaint1=test1): the taint is ignored, nothing evicted',
      objects: [taintedNode('n1', T1), spare(), p2()],
      spec: { strategies: { nodeTaints: { excludedTaints: ['testTaint1=test1'] } } },
      evicted: [],
    },
    {
      name: 'excludedTaints key matches but the value does not (testTaint1=test2): p2 is evicted',
      objects: [taintedNode('n1', T1), spare(), p2()],
      spec: { strategies: { nodeTaints: { excludedTaints: ['testTaint1=test2'] } } },
      evicted: ['p2'],
    },
    {
      name: 'the only other node has no room (1m cpu, 1 pod): nothing evicted (nodeFit)',
      objects: [
        taintedNode('n1', T1),
        taintedNode('n6', PREFER_T1).allocatable({ cpu: '1m', memory: '1', pods: 1 }),
        p2(),
        p7().node('n1'),
        p9(),
        p10(),
      ],
      // The descheduler's evictSystemCriticalPods: here the explicit opt-in and a threshold above the pods.
      spec: {
        namespaces: { exclude: [] },
        eviction: { evictSystemCriticalPods: true, priorityThreshold: { value: 2_100_000_000 } },
      },
      evicted: [],
    },
    {
      name: 'two taints: the pod tolerating both stays, the pod tolerating one is evicted',
      objects: [
        taintedNode('n7', T1, TING1),
        spare(),
        owned('p14', 'n7', tolerate('testTaint1', 'test1', 'NoSchedule')),
        owned(
          'p15',
          'n7',
          tolerate('testTaint1', 'test1', 'NoSchedule'),
          tolerate('testingTaint1', 'testing1', 'NoSchedule'),
        ),
      ],
      evicted: ['p14'],
    },
  ])('$name', ({ objects, spec, evicted }) => {
    const result = planOf(objects, permissivePolicy(spec ?? {}));
    if (typeof evicted === 'number') expect(result.evicted).toHaveLength(evicted);
    else expect([...result.evicted].sort()).toEqual(evicted);
  });

  it('the taint violation of a pod with nowhere to go is reported (descheduler, nodeFit off, would evict it)', () => {
    const { plan } = planOf([taintedNode('n1', T1), p1(), p2(), p3()], permissivePolicy());
    expect(plan.evictions).toEqual([]);
    expect(plan.violations.map((v) => [v.strategy, v.name, v.node])).toEqual([['NodeTaints', 'p2', 'n1']]);
    expect(plan.skipped.map((s) => s.name)).toEqual(['p2']);
  });

  it('PreferNoSchedule taints are looked at only with includePreferNoSchedule, and then reported as soft', () => {
    const objects = [taintedNode('n5', PREFER_T1), spare(), p13()];
    expect(planOf(objects, permissivePolicy()).plan.violations).toEqual([]);
    const included = permissivePolicy({ strategies: { nodeTaints: { includePreferNoSchedule: true } } });
    expect(planOf(objects, included).plan.violations).toEqual([
      expect.objectContaining({ strategy: 'NodeTaints', name: 'p13', soft: true }),
    ]);
  });

  it('differs from the descheduler: an untolerated NoExecute taint is a violation we act on (the descheduler leaves it to the taint manager)', () => {
    const { plan, evicted } = planOf(
      [taintedNode('n1', ['maintenance', 'true', 'NoExecute']), spare(), owned('p', 'n1')],
      permissivePolicy(),
    );
    expect(plan.violations.map((v) => v.strategy)).toEqual(['NodeTaints']);
    expect(evicted).toEqual(['p']);
  });
});
