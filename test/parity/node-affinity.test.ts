// Node affinity parity, re-expressed as snapshots.
// Upstream:
//   - kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (TestNodeAffinity):
//     whether a pending pod fits a node, through our placement filter; the matching itself is
//     staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity (nodeSelector AND required terms; terms
//     ORed; expressions and fields ANDed; an empty term or one that does not parse matches nothing; Gt/Lt parse
//     the label as an int64).
//   - kubernetes-sigs/descheduler pkg/framework/plugins/removepodsviolatingnodeaffinity/node_affinity_test.go
//     (TestRemovePodsViolatingNodeAffinity): which pods a cycle evicts.
import { describe, expect, it } from 'vitest';
import { makeNode, makePod } from '../builders.js';
import { fitsOn, permissivePolicy, planOf, type Built } from './helpers.js';

type Labels = Record<string, string>;
type Term = Record<string, unknown>;

const expr = (key: string, operator: string, values?: string[]) =>
  values ? { key, operator, values } : { key, operator };

/** One node with the labels, and the pending pod `p` built by `pod`. */
const oneNode = (labels: Labels, pod: ReturnType<typeof makePod>, nodeName = 'node1'): Built[] => [
  makeNode(nodeName).labels(labels),
  pod,
];

const pending = () => makePod('p').phase('Pending');
const withTerms = (...terms: Term[]) => pending().nodeAffinityTerms(terms);

describe('NodeAffinity filter (node_affinity_test.go TestNodeAffinity)', () => {
  it.each<{ name: string; objects: Built[]; fits: boolean }>([
    {
      name: 'missing labels: nodeSelector foo=bar on a node without labels',
      objects: oneNode({}, pending().nodeSelector({ foo: 'bar' })),
      fits: false,
    },
    { name: 'same labels', objects: oneNode({ foo: 'bar' }, pending().nodeSelector({ foo: 'bar' })), fits: true },
    {
      name: 'node labels are a superset',
      objects: oneNode({ foo: 'bar', baz: 'blah' }, pending().nodeSelector({ foo: 'bar' })),
      fits: true,
    },
    {
      name: 'node labels are a subset',
      objects: oneNode({ foo: 'bar' }, pending().nodeSelector({ foo: 'bar', baz: 'blah' })),
      fits: false,
    },
    {
      name: 'matchExpressions In that matches the node',
      objects: oneNode({ foo: 'bar' }, withTerms({ matchExpressions: [expr('foo', 'In', ['bar', 'value2'])] })),
      fits: true,
    },
    {
      name: 'matchExpressions Gt that matches the node (kernel-version 0206 > 0204, compared as integers)',
      objects: oneNode(
        { 'kernel-version': '0206' },
        withTerms({ matchExpressions: [expr('kernel-version', 'Gt', ['0204'])] }),
      ),
      fits: true,
    },
    {
      name: 'matchExpressions Lt compares integers, not strings (9 < 10)',
      objects: oneNode({ cores: '9' }, withTerms({ matchExpressions: [expr('cores', 'Lt', ['10'])] })),
      fits: true,
    },
    {
      name: 'matchExpressions Gt on a label that is not an integer does not match',
      objects: oneNode({ cores: 'many' }, withTerms({ matchExpressions: [expr('cores', 'Gt', ['1'])] })),
      fits: false,
    },
    {
      name: 'matchExpressions Gt on a label beyond int64 does not match (strconv.ParseInt fails)',
      objects: oneNode(
        { cores: '99999999999999999999' },
        withTerms({ matchExpressions: [expr('cores', 'Gt', ['1'])] }),
      ),
      fits: false,
    },
    {
      name: 'matchExpressions Lt with a missing label does not match',
      objects: oneNode({}, withTerms({ matchExpressions: [expr('cores', 'Lt', ['10'])] })),
      fits: false,
    },
    {
      name: 'matchExpressions NotIn that matches the node (DDR3 not in DDR, DDR2)',
      objects: oneNode(
        { 'mem-type': 'DDR3' },
        withTerms({ matchExpressions: [expr('mem-type', 'NotIn', ['DDR', 'DDR2'])] }),
      ),
      fits: true,
    },
    {
      name: 'matchExpressions NotIn matches a node that lacks the key',
      objects: oneNode({}, withTerms({ matchExpressions: [expr('mem-type', 'NotIn', ['DDR'])] })),
      fits: true,
    },
    {
      name: 'matchExpressions Exists that matches the node',
      objects: oneNode({ GPU: 'NVIDIA-GRID-K1' }, withTerms({ matchExpressions: [expr('GPU', 'Exists')] })),
      fits: true,
    },
    {
      name: 'matchExpressions DoesNotExist on a node that has the key does not match',
      objects: oneNode({ GPU: 'NVIDIA-GRID-K1' }, withTerms({ matchExpressions: [expr('GPU', 'DoesNotExist')] })),
      fits: false,
    },
    {
      name: "affinity that doesn't match the node's labels won't schedule onto the node",
      objects: oneNode({ foo: 'bar' }, withTerms({ matchExpressions: [expr('foo', 'In', ['value1', 'value2'])] })),
      fits: false,
    },
    {
      name: 'an empty matchExpressions term matches no node',
      objects: oneNode({ foo: 'bar' }, withTerms({ matchExpressions: [] })),
      fits: false,
    },
    { name: 'no affinity schedules onto any node', objects: oneNode({ foo: 'bar' }, pending()), fits: true },
    {
      name: 'affinity without a required node selector schedules onto any node',
      objects: oneNode({ foo: 'bar' }, pending().set('spec.affinity', { nodeAffinity: {} })),
      fits: true,
    },
    {
      name: 'multiple matchExpressions ANDed that match the node (GPU exists, not AMD/INTER)',
      objects: oneNode(
        { GPU: 'NVIDIA-GRID-K1' },
        withTerms({ matchExpressions: [expr('GPU', 'Exists'), expr('GPU', 'NotIn', ['AMD', 'INTER'])] }),
      ),
      fits: true,
    },
    {
      name: "multiple matchExpressions ANDed that don't match the node (GPU exists, In AMD/INTER)",
      objects: oneNode(
        { GPU: 'NVIDIA-GRID-K1' },
        withTerms({ matchExpressions: [expr('GPU', 'Exists'), expr('GPU', 'In', ['AMD', 'INTER'])] }),
      ),
      fits: false,
    },
    {
      name: 'multiple nodeSelectorTerms ORed: the first matches, the second does not',
      objects: oneNode(
        { foo: 'bar' },
        withTerms(
          { matchExpressions: [expr('foo', 'In', ['bar', 'value2'])] },
          { matchExpressions: [expr('diffkey', 'In', ['wrong', 'value2'])] },
        ),
      ),
      fits: true,
    },
    {
      name: 'affinity and spec.nodeSelector both satisfied',
      objects: oneNode(
        { foo: 'bar' },
        withTerms({ matchExpressions: [expr('foo', 'Exists')] }).nodeSelector({ foo: 'bar' }),
      ),
      fits: true,
    },
    {
      name: 'affinity matches but spec.nodeSelector is not satisfied (both must hold)',
      objects: oneNode(
        { foo: 'barrrrrr' },
        withTerms({ matchExpressions: [expr('foo', 'Exists')] }).nodeSelector({ foo: 'bar' }),
      ),
      fits: false,
    },
    {
      name: 'an invalid value in a term (not a label value) makes the term match nothing, even with NotIn',
      objects: oneNode(
        { foo: 'bar' },
        withTerms({ matchExpressions: [expr('foo', 'NotIn', ['invalid value: ___@#$%^'])] }),
      ),
      fits: false,
    },
    {
      name: 'a negative Gt value is not a valid label value, so the term matches nothing',
      objects: oneNode({ cores: '8' }, withTerms({ matchExpressions: [expr('cores', 'Gt', ['-1'])] })),
      fits: false,
    },
    {
      name: 'matchFields metadata.name In [node1] on node1',
      objects: oneNode({}, withTerms({ matchFields: [expr('metadata.name', 'In', ['node1'])] }), 'node1'),
      fits: true,
    },
    {
      name: 'matchFields metadata.name In [node1] on node2',
      objects: oneNode({}, withTerms({ matchFields: [expr('metadata.name', 'In', ['node1'])] }), 'node2'),
      fits: false,
    },
    {
      name: 'two terms: matchFields does not match, but matchExpressions matches',
      objects: oneNode(
        { foo: 'bar' },
        withTerms(
          { matchFields: [expr('metadata.name', 'In', ['node1']), expr('metadata.name', 'In', ['node2'])] },
          { matchExpressions: [expr('foo', 'In', ['bar'])] },
        ),
        'node2',
      ),
      fits: true,
    },
    {
      name: 'one term: matchFields does not match, matchExpressions matches (ANDed within the term)',
      objects: oneNode(
        { foo: 'bar' },
        withTerms({
          matchFields: [expr('metadata.name', 'In', ['node1'])],
          matchExpressions: [expr('foo', 'In', ['bar'])],
        }),
        'node2',
      ),
      fits: false,
    },
    {
      name: 'one term: both matchFields and matchExpressions match',
      objects: oneNode(
        { foo: 'bar' },
        withTerms({
          matchFields: [expr('metadata.name', 'In', ['node1'])],
          matchExpressions: [expr('foo', 'In', ['bar'])],
        }),
        'node1',
      ),
      fits: true,
    },
    {
      name: 'two terms: both matchFields and matchExpressions fail',
      objects: oneNode(
        { foo: 'bar' },
        withTerms(
          { matchFields: [expr('metadata.name', 'In', ['node1'])] },
          { matchExpressions: [expr('foo', 'In', ['not-match-to-bar'])] },
        ),
        'node2',
      ),
      fits: false,
    },
    {
      name: 'matchFields metadata.name NotIn [node1] on node2',
      objects: oneNode({}, withTerms({ matchFields: [expr('metadata.name', 'NotIn', ['node1'])] }), 'node2'),
      fits: true,
    },
  ])('$name', ({ objects, fits }) => {
    const nodeName = (objects[0] as ReturnType<typeof makeNode>).obj()['metadata'] as { name: string };
    expect(fitsOn(objects, 'p')).toEqual({ [nodeName.name]: fits });
  });
});

describe('descheduler RemovePodsViolatingNodeAffinity (node_affinity_test.go)', () => {
  const DESIRED = 'kubernetes.io/desiredNode';
  const nodeWithLabels = () => makeNode('nodeWithLabels').label(DESIRED, 'yes');
  const nodeWithoutLabels = () => makeNode('nodeWithoutLabels');
  const unschedulableWithLabels = () => makeNode('unschedulableNodeWithLabels').label(DESIRED, 'yes').unschedulable();

  /** addPodsToNode: the pod with affinity plus two plain pods, all owned by a ReplicaSet, 100m cpu each. */
  const podsOn = (nodeName: string, type: 'required' | 'preferred', terminating = false): Built[] => {
    const withAffinity = makePod('podWithNodeAffinity')
      .owner('ReplicaSet', 'rs')
      .node(nodeName)
      .requests({ cpu: '100m' });
    if (type === 'required') withAffinity.nodeAffinityIn(DESIRED, ['yes']);
    else withAffinity.preferredNodeAffinity(10, { matchExpressions: [expr(DESIRED, 'In', ['yes'])] });
    const plain = ['pod1', 'pod2'].map((n) =>
      makePod(n).owner('ReplicaSet', 'rs').node(nodeName).requests({ cpu: '100m' }),
    );
    const all = [withAffinity, ...plain];
    if (terminating) for (const p of all) p.terminating();
    return all;
  };

  const required = { strategies: { nodeAffinity: { required: true, preferred: false } } };
  const preferred = { strategies: { nodeAffinity: { required: false, preferred: true } } };

  it.each<{ name: string; objects: Built[]; spec: Record<string, unknown>; evicted: string[] }>([
    {
      name: 'neither required nor preferred node affinity enabled (upstream: an invalid affinity type): no eviction',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: { strategies: { nodeAffinity: { required: false, preferred: false } } },
      evicted: [],
    },
    {
      name: 'pod correctly scheduled on its node, no eviction [required affinity]',
      objects: [nodeWithLabels(), ...podsOn('nodeWithLabels', 'required')],
      spec: required,
      evicted: [],
    },
    {
      name: 'pod correctly scheduled on its node, no eviction [preferred affinity]',
      objects: [nodeWithLabels(), ...podsOn('nodeWithLabels', 'preferred')],
      spec: preferred,
      evicted: [],
    },
    {
      name: 'pod on a node without matching labels, another schedulable node available: evicted [required affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: required,
      evicted: ['podWithNodeAffinity'],
    },
    {
      name: 'pod on a node without matching labels, a better-scoring node available: evicted [preferred affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'preferred')],
      spec: preferred,
      evicted: ['podWithNodeAffinity'],
    },
    {
      name: 'preferred affinity is only reported, not acted on, unless nodeAffinity.preferred is set',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'preferred')],
      spec: required,
      evicted: [],
    },
    {
      name: 'maxPerNode 1: evicted [required affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: { ...required, eviction: { maxPerNode: 1 } },
      evicted: ['podWithNodeAffinity'],
    },
    {
      name: 'maxPerNode 0: not evicted [required affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: { ...required, eviction: { maxPerNode: 0 } },
      evicted: [],
    },
    {
      name: 'maxPerNode 0: not evicted [preferred affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'preferred')],
      spec: { ...preferred, eviction: { maxPerNode: 0 } },
      evicted: [],
    },
    {
      name: 'pod terminating: not evicted [required affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required', true)],
      spec: required,
      evicted: [],
    },
    {
      name: 'pod terminating: not evicted [preferred affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'preferred', true)],
      spec: preferred,
      evicted: [],
    },
    {
      name: 'maxPerNamespace 1: evicted [required affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: { ...required, eviction: { maxPerNamespace: 1 } },
      evicted: ['podWithNodeAffinity'],
    },
    {
      name: 'maxPerNamespace 1 and maxPerCycle 0: not evicted [required affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: { ...required, eviction: { maxPerNamespace: 1, maxPerCycle: 0 } },
      evicted: [],
    },
    {
      name: 'maxPerNamespace 0: not evicted [preferred affinity]',
      objects: [nodeWithoutLabels(), nodeWithLabels(), ...podsOn('nodeWithoutLabels', 'preferred')],
      spec: { ...preferred, eviction: { maxPerNamespace: 0 } },
      evicted: [],
    },
    {
      name: 'no node where the pod fits (the labelled node is cordoned): not evicted [required affinity]',
      objects: [nodeWithoutLabels(), unschedulableWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: required,
      evicted: [],
    },
    {
      name: 'no node where the pod fits (the labelled node is cordoned): not evicted [preferred affinity]',
      objects: [nodeWithoutLabels(), unschedulableWithLabels(), ...podsOn('nodeWithoutLabels', 'preferred')],
      spec: preferred,
      evicted: [],
    },
    {
      name: 'pods on a node that is not in the snapshot are not considered [required affinity]',
      objects: [nodeWithLabels(), unschedulableWithLabels(), ...podsOn('nodeWithoutLabels', 'required')],
      spec: required,
      evicted: [],
    },
  ])('$name', ({ objects, spec, evicted }) => {
    expect(planOf(objects, permissivePolicy(spec)).evicted).toEqual(evicted);
  });

  it('the violation of a pod with no fitting node is still reported', () => {
    const objects = [nodeWithoutLabels(), unschedulableWithLabels(), ...podsOn('nodeWithoutLabels', 'required')];
    const { plan } = planOf(objects, permissivePolicy(required));
    expect(plan.violations.map((v) => [v.strategy, v.name])).toEqual([['NodeAffinity', 'podWithNodeAffinity']]);
    expect(plan.skipped.map((s) => s.name)).toEqual(['podWithNodeAffinity']);
  });
});
