// The converters, driven through the real loader with raw objects from the builders (buildSnapshot), plus direct
// calls where a FieldError's exact path is the point.
import { describe, expect, it } from 'vitest';
import { FieldError, InputError } from '../../src/errors.js';
import { matchesSelector, selectorText } from '../../src/model/labels.js';
import { matchesRequiredNodeAffinity } from '../../src/model/nodeAffinity.js';
import type { PodInfo } from '../../src/model/types.js';
import {
  ConversionCache,
  convertNamespace,
  convertNode,
  convertPdb,
  convertPod,
  convertPriorityClass,
  makePriorityResolver,
} from '../../src/snapshot/convert.js';
import { snapshotFromObjects } from '../../src/snapshot/load.js';
import {
  buildSnapshot,
  COMPACT_POD_FIELDS,
  HOSTNAME,
  loadObjects,
  makeNamespace,
  makeNode,
  makePdb,
  makePod,
  makePriorityClass,
  NOW,
  ZONE,
  type PodBuilder,
} from '../builders.js';

function pod(builder: PodBuilder, ...others: unknown[]): PodInfo {
  const snapshot = buildSnapshot([...(others as never[]), builder]);
  return snapshot.pods[snapshot.pods.length - 1]!;
}

/** The FieldError a converter throws, or undefined. */
function fieldError(fn: () => unknown): FieldError | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof FieldError) return e;
    throw e;
  }
  return undefined;
}

describe('convertNode', () => {
  it('reads labels, taints, unschedulable, readiness and allocatable', () => {
    const [node] = buildSnapshot([
      makeNode('a1')
        .zone('zone-a')
        .taint('dedicated', 'batch', 'NoSchedule')
        .taint('spot', undefined, 'PreferNoSchedule')
        .unschedulable()
        .allocatable({ cpu: '3920m', memory: '15147784Ki', pods: '58', 'nvidia.com/gpu': '2', 'hugepages-2Mi': '1Gi' }),
    ]).nodes;
    expect(node).toEqual({
      name: 'a1',
      labels: { [HOSTNAME]: 'a1', [ZONE]: 'zone-a' },
      taints: [
        { key: 'dedicated', value: 'batch', effect: 'NoSchedule' },
        { key: 'spot', value: '', effect: 'PreferNoSchedule' },
      ],
      unschedulable: true,
      ready: true,
      allocatable: { cpu: 3920, memory: 15147784 * 1024, pods: 58, 'nvidia.com/gpu': 2, 'hugepages-2Mi': 2 ** 30 },
      images: [],
    });
  });

  it('reads node.status.images for ImageLocality, one shared list for nodes reporting the same images', () => {
    const image = (n: ReturnType<typeof makeNode>) =>
      n
        .image(['registry.example/app@sha256:ab12', 'registry.example/app:1.0'], 250 * 2 ** 20)
        .image(['pause:3.9'], 300_000);
    const [a, b] = buildSnapshot([image(makeNode('a')), image(makeNode('b'))]).nodes;
    expect(a!.images).toEqual([
      { names: ['registry.example/app@sha256:ab12', 'registry.example/app:1.0'], sizeBytes: 250 * 2 ** 20 },
      { names: ['pause:3.9'], sizeBytes: 300_000 },
    ]);
    expect(b!.images).toBe(a!.images);
  });

  it.each([
    ['Ready True', makeNode('n'), true],
    ['Ready False', makeNode('n').notReady(), false],
    ['Ready Unknown', makeNode('n').set('status.conditions', [{ type: 'Ready', status: 'Unknown' }]), false],
    ['no conditions', makeNode('n').set('status.conditions', undefined), false],
  ])('readiness: %s', (_name, builder, ready) => {
    expect(convertNode(builder.obj()).ready).toBe(ready);
  });

  it.each([
    ['missing name', makeNode('n').set('metadata.name', undefined), 'metadata.name'],
    ['bad cpu quantity', makeNode('n').allocatable({ cpu: '4 cores' }), 'status.allocatable.cpu'],
    ['negative memory', makeNode('n').allocatable({ memory: '-1Gi' }), 'status.allocatable.memory'],
    [
      'extended resource is bracketed',
      makeNode('n').allocatable({ 'nvidia.com/gpu': 'x' }),
      'status.allocatable[nvidia.com/gpu]',
    ],
    ['taint without key', makeNode('n').set('spec.taints', [{ effect: 'NoSchedule' }]), 'spec.taints[0].key'],
    ['taint with a bad effect', makeNode('n').taint('a', 'b', 'NoScheduel' as 'NoSchedule'), 'spec.taints[0].effect'],
    ['taint without effect', makeNode('n').set('spec.taints', [{ key: 'a' }]), 'spec.taints[0].effect'],
    ['unschedulable not a boolean', makeNode('n').set('spec.unschedulable', 'yes'), 'spec.unschedulable'],
    ['label value not a string', makeNode('n').label('rack', 7 as unknown as string), 'metadata.labels.rack'],
    ['taints not a list', makeNode('n').set('spec.taints', { key: 'a' }), 'spec.taints'],
  ])('rejects %s at %s', (_name, builder, field) => {
    expect(fieldError(() => convertNode(builder.obj()))?.field).toBe(field);
  });
});

describe('convertPod: identity, status and priority', () => {
  it('reads the basic fields of a running replica', () => {
    const p = pod(makePod('web-1', 'shop').label('app', 'web').node('a1').createdAt('2024-06-01T10:00:00Z'));
    expect(p).toMatchObject({
      uid: 'uid-shop-web-1',
      namespace: 'shop',
      name: 'web-1',
      labels: { app: 'web' },
      nodeName: 'a1',
      phase: 'Running',
      terminating: false,
      ready: true,
      createdAt: Date.parse('2024-06-01T10:00:00Z'),
      priority: 0,
      priorityClassName: undefined,
      owner: undefined,
      workload: { kind: 'Pod', name: 'web-1' },
    });
  });

  it.each([
    ['namespace defaults to "default"', makePod('p').set('metadata.namespace', undefined), { namespace: 'default' }],
    ['phase defaults to Pending', makePod('p').set('status.phase', undefined), { phase: 'Pending' }],
    ['unscheduled pod has no node', makePod('p'), { nodeName: undefined }],
    ['deletionTimestamp ⇒ terminating', makePod('p').terminating(), { terminating: true }],
    ['Ready False', makePod('p').notReady(), { ready: false }],
    ['no status at all', makePod('p').set('status', undefined), { ready: false, phase: 'Pending' }],
    ['missing creationTimestamp ⇒ 0', makePod('p').set('metadata.creationTimestamp', undefined), { createdAt: 0 }],
    ['createdAt from epoch ms', makePod('p').createdAt(NOW - 60_000), { createdAt: NOW - 60_000 }],
    ['missing uid ⇒ namespace/name', makePod('p', 'ns').set('metadata.uid', undefined), { uid: 'ns/p' }],
    ['Succeeded', makePod('p').phase('Succeeded'), { phase: 'Succeeded' }],
    [
      'terminationGracePeriodSeconds 0 (deleted at once)',
      makePod('p').set('spec.terminationGracePeriodSeconds', 0),
      { terminationGracePeriodSeconds: 0 },
    ],
    ['no terminationGracePeriodSeconds', makePod('p'), { terminationGracePeriodSeconds: undefined }],
  ])('%s', (_name, builder, expected) => {
    expect(pod(builder)).toMatchObject(expected);
  });

  it.each([
    ['spec.priority wins over the class', makePod('p').priority(7).priorityClass('high'), 7],
    ['the class value when spec.priority is absent', makePod('p').priorityClass('high'), 1000],
    ['the globalDefault class without a class name', makePod('p'), 50],
    ['an unknown class falls back to the globalDefault', makePod('p').priorityClass('nope'), 50],
    ['a built-in class missing from the snapshot', makePod('p').priorityClass('system-node-critical'), 2000001000],
    ['spec.priority 0 is kept', makePod('p').priority(0).priorityClass('high'), 0],
  ])('priority: %s', (_name, builder, expected) => {
    const classes = [makePriorityClass('high', 1000), makePriorityClass('default-low', 50, true)];
    expect(pod(builder, ...classes).priority).toBe(expected);
  });

  it('priority without any PriorityClass is 0, and classes may come after the pods in the file', () => {
    expect(pod(makePod('p').priorityClass('high')).priority).toBe(0);
    const snapshot = buildSnapshot([makePod('p').priorityClass('high'), makePriorityClass('high', 1000)]);
    expect(snapshot.pods[0]!.priority).toBe(1000);
  });

  it('the lowest globalDefault wins when several claim it', () => {
    const resolve = makePriorityResolver([
      convertPriorityClass(makePriorityClass('a', 300, true)),
      convertPriorityClass(makePriorityClass('b', 200, true)),
    ]);
    expect(resolve(undefined)).toBe(200);
  });
});

describe('convertPod: schedulerName', () => {
  it.each([
    { scenario: 'none given: default-scheduler, kept as undefined', name: undefined, expected: undefined },
    { scenario: 'an empty name: default-scheduler', name: '', expected: undefined },
    { scenario: 'default-scheduler: kept as undefined', name: 'default-scheduler', expected: undefined },
    { scenario: 'another scheduler: its name', name: 'bin-packer', expected: 'bin-packer' },
  ])('$scenario', ({ name, expected }) => {
    const builder = makePod('p').set('spec.schedulerName', name);
    expect(pod(builder).schedulerName).toBe(expected);
  });
});

describe('convertPod: owner and workload', () => {
  it.each([
    [
      'Deployment via the ReplicaSet and pod-template-hash',
      makePod('web-x').deployment('web', 'abc123'),
      { kind: 'Deployment', name: 'web' },
    ],
    [
      'ReplicaSet whose name does not end with the hash',
      makePod('p').owner('ReplicaSet', 'standalone').label('pod-template-hash', 'abc'),
      { kind: 'ReplicaSet', name: 'standalone' },
    ],
    [
      'ReplicaSet without the hash label',
      makePod('p').owner('ReplicaSet', 'rs-abc'),
      { kind: 'ReplicaSet', name: 'rs-abc' },
    ],
    ['StatefulSet', makePod('db-0').owner('StatefulSet', 'db'), { kind: 'StatefulSet', name: 'db' }],
    ['DaemonSet', makePod('ds-x').daemonSet('node-exporter'), { kind: 'DaemonSet', name: 'node-exporter' }],
    ['Job', makePod('job-x').owner('Job', 'report'), { kind: 'Job', name: 'report' }],
    ['bare pod', makePod('lonely'), { kind: 'Pod', name: 'lonely' }],
  ])('%s', (_name, builder, workload) => {
    expect(pod(builder).workload).toEqual(workload);
  });

  it('takes the controller reference, not the first one', () => {
    const p = pod(
      makePod('p').set('metadata.ownerReferences', [
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'u1' },
        { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: 'u2', controller: true },
      ]),
    );
    expect(p.owner).toEqual({ kind: 'StatefulSet', name: 'db', uid: 'u2' });
  });

  it('non-controller references only ⇒ bare pod', () => {
    const p = pod(makePod('p').set('metadata.ownerReferences', [{ kind: 'ConfigMap', name: 'cm', uid: 'u1' }]));
    expect(p.owner).toBeUndefined();
    expect(p.workload).toEqual({ kind: 'Pod', name: 'p' });
  });
});

describe('convertPod: flags from owners, volumes and annotations', () => {
  it.each([
    ['DaemonSet pod', makePod('p').daemonSet('ds'), { daemonSet: true, mirror: false }],
    ['mirror pod (annotation and Node owner)', makePod('p').node('a1').mirror(), { mirror: true, daemonSet: false }],
    ['mirror annotation alone', makePod('p').annotation('kubernetes.io/config.mirror', 'x'), { mirror: true }],
    ['Node owner alone', makePod('p').owner('Node', 'a1'), { mirror: true }],
    ['emptyDir', makePod('p').emptyDir(), { localStorage: true, pvc: false }],
    ['hostPath', makePod('p').hostPath(), { localStorage: true }],
    ['persistentVolumeClaim', makePod('p').pvc('data'), { pvc: true, localStorage: false }],
    [
      'ephemeral volume',
      makePod('p').set('spec.volumes', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }]),
      { pvc: true },
    ],
    [
      'configMap volume is neither',
      makePod('p').set('spec.volumes', [{ name: 'c', configMap: { name: 'x' } }]),
      { pvc: false, localStorage: false },
    ],
  ])('%s', (_name, builder, expected) => {
    expect(pod(builder)).toMatchObject(expected);
  });

  it.each([
    ['no annotations', makePod('p'), undefined, undefined],
    [
      'rebalancer.dev/evict: never',
      makePod('p').annotation('rebalancer.dev/evict', 'never'),
      'never',
      'rebalancer.dev/evict',
    ],
    [
      'rebalancer.dev/evict: Never (case-insensitive)',
      makePod('p').annotation('rebalancer.dev/evict', 'Never'),
      'never',
      'rebalancer.dev/evict',
    ],
    ['rebalancer.dev/evict: always', makePod('p').annotation('rebalancer.dev/evict', 'always'), 'always', undefined],
    [
      'rebalancer.dev/evict: other value ignored',
      makePod('p').annotation('rebalancer.dev/evict', 'sometimes'),
      undefined,
      undefined,
    ],
    [
      'descheduler evict annotation ⇒ always',
      makePod('p').annotation('descheduler.alpha.kubernetes.io/evict', ''),
      'always',
      undefined,
    ],
    [
      'never wins over the descheduler evict annotation',
      makePod('p')
        .annotation('descheduler.alpha.kubernetes.io/evict', 'true')
        .annotation('rebalancer.dev/evict', 'never'),
      'never',
      'rebalancer.dev/evict',
    ],
    [
      'karpenter do-not-disrupt true',
      makePod('p').annotation('karpenter.sh/do-not-disrupt', 'true'),
      undefined,
      'karpenter.sh/do-not-disrupt',
    ],
    [
      'karpenter do-not-disrupt false',
      makePod('p').annotation('karpenter.sh/do-not-disrupt', 'false'),
      undefined,
      undefined,
    ],
    [
      'cluster-autoscaler safe-to-evict false',
      makePod('p').annotation('cluster-autoscaler.kubernetes.io/safe-to-evict', 'false'),
      undefined,
      'cluster-autoscaler.kubernetes.io/safe-to-evict',
    ],
    [
      'cluster-autoscaler safe-to-evict true',
      makePod('p').annotation('cluster-autoscaler.kubernetes.io/safe-to-evict', 'true'),
      undefined,
      undefined,
    ],
    [
      'descheduler prefer-no-eviction, any value',
      makePod('p').annotation('descheduler.alpha.kubernetes.io/prefer-no-eviction', ''),
      undefined,
      'descheduler.alpha.kubernetes.io/prefer-no-eviction',
    ],
  ])('%s', (_name, builder, evictAnnotation, protectedBy) => {
    const p = pod(builder);
    expect(p.evictAnnotation).toBe(evictAnnotation);
    if (protectedBy === undefined) expect(p.protectedBy).toBeUndefined();
    else expect(p.protectedBy).toContain(protectedBy);
  });
});

describe('convertPod: requests and QoS', () => {
  it.each([
    ['no requests', makePod('p'), {}],
    ['one container', makePod('p').requests({ cpu: '250m', memory: '256Mi' }), { cpu: 250, memory: 256 * 2 ** 20 }],
    ['cpu rounds up to a millicore', makePod('p').requests({ cpu: '0.0001' }), { cpu: 1 }],
    ['numbers are quantities too', makePod('p').requests({ cpu: 2, memory: 1e9 }), { cpu: 2000, memory: 1e9 }],
    [
      'limits alone are the requests (API defaulting)',
      makePod('p').limits({ cpu: '1', memory: '1Gi' }),
      { cpu: 1000, memory: 2 ** 30 },
    ],
    [
      'regular containers are summed',
      makePod('p')
        .requests({ cpu: '100m' })
        .addContainer('side', { requests: { cpu: '200m', memory: '64Mi' } }),
      { cpu: 300, memory: 64 * 2 ** 20 },
    ],
    [
      'a big init container dominates',
      makePod('p')
        .requests({ cpu: '100m' })
        .addContainer('init', { requests: { cpu: '2', memory: '10Mi' } }, 'init'),
      { cpu: 2000, memory: 10 * 2 ** 20 },
    ],
    [
      'a small init container does not add',
      makePod('p')
        .requests({ cpu: '500m' })
        .addContainer('init', { requests: { cpu: '100m' } }, 'init'),
      { cpu: 500 },
    ],
    [
      'sidecars add to the sum',
      makePod('p')
        .requests({ cpu: '500m' })
        .addContainer('proxy', { requests: { cpu: '100m' } }, 'sidecar'),
      { cpu: 600 },
    ],
    [
      'an init container after a sidecar runs next to it',
      makePod('p')
        .requests({ cpu: '100m' })
        .addContainer('proxy', { requests: { cpu: '300m' } }, 'sidecar')
        .addContainer('migrate', { requests: { cpu: '1' } }, 'init'),
      { cpu: 1300 },
    ],
    [
      'an init container before a sidecar runs alone',
      makePod('p')
        .requests({ cpu: '100m' })
        .addContainer('migrate', { requests: { cpu: '1' } }, 'init')
        .addContainer('proxy', { requests: { cpu: '300m' } }, 'sidecar'),
      { cpu: 1000 },
    ],
    [
      'overhead is added',
      makePod('p').requests({ cpu: '100m', memory: '100Mi' }).overhead({ cpu: '250m', memory: '120Mi' }),
      { cpu: 350, memory: 220 * 2 ** 20 },
    ],
    ['extended resources', makePod('p').requests({ 'nvidia.com/gpu': '1' }), { 'nvidia.com/gpu': 1 }],
  ])('requests: %s', (_name, builder, requests) => {
    expect(pod(builder).requests).toEqual(requests);
  });

  it.each([
    ['nothing set ⇒ BestEffort', makePod('p'), 'BestEffort'],
    ['requests only ⇒ Burstable', makePod('p').requests({ cpu: '100m' }), 'Burstable'],
    [
      'requests = limits for cpu and memory ⇒ Guaranteed',
      makePod('p').requests({ cpu: '1', memory: '1Gi' }).limits({ cpu: '1', memory: '1Gi' }),
      'Guaranteed',
    ],
    [
      'limits only (requests default to them) ⇒ Guaranteed',
      makePod('p').limits({ cpu: '1', memory: '1Gi' }),
      'Guaranteed',
    ],
    [
      'equal but expressed differently ⇒ Guaranteed',
      makePod('p').requests({ cpu: '1000m', memory: '1024Mi' }).limits({ cpu: '1', memory: '1Gi' }),
      'Guaranteed',
    ],
    [
      'requests below limits ⇒ Burstable',
      makePod('p').requests({ cpu: '500m', memory: '1Gi' }).limits({ cpu: '1', memory: '1Gi' }),
      'Burstable',
    ],
    ['memory limit only ⇒ Burstable', makePod('p').limits({ memory: '1Gi' }), 'Burstable'],
    [
      'one container without limits ⇒ Burstable',
      makePod('p')
        .limits({ cpu: '1', memory: '1Gi' })
        .addContainer('side', { requests: { cpu: '100m' } }),
      'Burstable',
    ],
    ['zero amounts are ignored ⇒ BestEffort', makePod('p').requests({ cpu: '0', memory: '0' }), 'BestEffort'],
    [
      'extended resources do not count ⇒ BestEffort',
      makePod('p').requests({ 'nvidia.com/gpu': '1' }).limits({ 'nvidia.com/gpu': '1' }),
      'BestEffort',
    ],
    ['status.qosClass wins', makePod('p').set('status.qosClass', 'Guaranteed'), 'Guaranteed'],
  ])('qos: %s', (_name, builder, qos) => {
    expect(pod(builder).qos).toBe(qos);
  });
});

describe('convertPod: node affinity', () => {
  const node = (labels: Record<string, string>, name = 'n1') => ({ name, labels });

  it('nodeSelector and required terms, with canonical text', () => {
    const p = pod(
      makePod('p')
        .nodeSelector({ disk: 'ssd', arch: 'amd64' })
        .nodeAffinityTerms([
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b', 'a'] }] },
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n9'] }] },
        ]),
    );
    const req = p.requiredNodeAffinity;
    expect(req.nodeSelector).toEqual({ arch: 'amd64', disk: 'ssd' });
    expect(req.text).toBe('nodeSelector: arch=amd64,disk=ssd; affinity: (field:metadata.name=n9) or (zone in (a,b))');
    expect(matchesRequiredNodeAffinity(req, node({ disk: 'ssd', arch: 'amd64', zone: 'a' }))).toBe(true);
    expect(matchesRequiredNodeAffinity(req, node({ disk: 'ssd', arch: 'amd64' }, 'n9'))).toBe(true);
    expect(matchesRequiredNodeAffinity(req, node({ disk: 'ssd', arch: 'amd64', zone: 'c' }))).toBe(false);
    expect(matchesRequiredNodeAffinity(req, node({ disk: 'hdd', arch: 'amd64', zone: 'a' }))).toBe(false);
  });

  it('equal requirements written differently share one text (and one object)', () => {
    const snapshot = buildSnapshot([
      makePod('a').nodeAffinityTerms([
        {
          matchExpressions: [
            { key: 'zone', operator: 'In', values: ['a', 'b'] },
            { key: 'gpu', operator: 'Exists' },
          ],
        },
      ]),
      makePod('b').nodeAffinityTerms([
        {
          matchExpressions: [
            { key: 'gpu', operator: 'Exists' },
            { key: 'zone', operator: 'In', values: ['b', 'a', 'a'] },
          ],
        },
      ]),
      makePod('c'),
    ]);
    const [a, b, c] = snapshot.pods;
    expect(a!.requiredNodeAffinity.text).toBe('affinity: gpu,zone in (a,b)');
    expect(b!.requiredNodeAffinity).toBe(a!.requiredNodeAffinity);
    expect(c!.requiredNodeAffinity).toEqual({ nodeSelector: undefined, terms: undefined, text: '' });
  });

  it('an empty nodeSelector is no requirement', () => {
    expect(pod(makePod('p').nodeSelector({})).requiredNodeAffinity.text).toBe('');
  });

  it('preferred terms keep their weight', () => {
    const p = pod(
      makePod('p').preferredNodeAffinity(80, { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }),
    );
    expect(p.preferredNodeAffinity).toEqual([
      { weight: 80, term: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }], matchFields: [] } },
    ]);
  });

  const path = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]';
  it.each([
    [
      'unknown operator',
      [{ matchExpressions: [{ key: 'a', operator: 'Inn', values: ['x'] }] }],
      `${path}.matchExpressions[0].operator`,
    ],
    [
      'In without values',
      [{ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }],
      `${path}.matchExpressions[0].values`,
    ],
    [
      'NotIn without values',
      [{ matchExpressions: [{ key: 'a', operator: 'NotIn' }] }],
      `${path}.matchExpressions[0].values`,
    ],
    [
      'Exists with values',
      [{ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }],
      `${path}.matchExpressions[0].values`,
    ],
    [
      'DoesNotExist with values',
      [{ matchExpressions: [{ key: 'a', operator: 'DoesNotExist', values: ['x'] }] }],
      `${path}.matchExpressions[0].values`,
    ],
    [
      'Gt with two values',
      [{ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1', '2'] }] }],
      `${path}.matchExpressions[0].values`,
    ],
    ['invalid key', [{ matchExpressions: [{ key: 'a b', operator: 'Exists' }] }], `${path}.matchExpressions[0].key`],
    [
      'matchFields on a label',
      [{ matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['x'] }] }],
      `${path}.matchFields[0].key`,
    ],
    [
      'matchFields with Exists',
      [{ matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }],
      `${path}.matchFields[0].operator`,
    ],
    [
      'matchFields with two names',
      [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] }],
      `${path}.matchFields[0].values`,
    ],
    ['no terms', [], 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms'],
  ])('rejects %s', (_name, terms, field) => {
    expect(
      fieldError(() => convertPod(makePod('p').nodeAffinityTerms(terms).obj(), new ConversionCache()))?.field,
    ).toBe(field);
  });

  it.each([
    ['weight 0', 0],
    ['weight 101', 101],
    ['fractional weight', 1.5],
  ])('rejects a preferred term with %s', (_name, weight) => {
    const raw = makePod('p')
      .preferredNodeAffinity(weight, { matchExpressions: [{ key: 'a', operator: 'Exists' }] })
      .obj();
    expect(fieldError(() => convertPod(raw, new ConversionCache()))?.field).toBe(
      'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
    );
  });

  it('Gt/Lt accept signed integers (the API does), but such a term matches no node', () => {
    const p = pod(
      makePod('p').nodeAffinityTerms([{ matchExpressions: [{ key: 'cpus', operator: 'Gt', values: ['+4'] }] }]),
    );
    // The scheduler's labels.NewRequirement rejects "+4" as a label value: the term is a parse error.
    expect(matchesRequiredNodeAffinity(p.requiredNodeAffinity, node({ cpus: '8' }))).toBe(false);
    expect(p.requiredNodeAffinity.text).toBe('affinity: cpus>+4');
  });
});

describe('convertPod: tolerations', () => {
  it('defaults operator to Equal and value/effect to empty, ignores tolerationSeconds', () => {
    const p = pod(
      makePod('p')
        .toleration({ key: 'dedicated', value: 'batch' })
        .toleration({
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        })
        .toleration({ operator: 'Exists' }),
    );
    expect(p.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'batch', effect: '' },
      { key: 'node.kubernetes.io/unreachable', operator: 'Exists', value: '', effect: 'NoExecute' },
      { key: '', operator: 'Exists', value: '', effect: '' },
    ]);
  });

  it.each([
    ['Exists with a value', { key: 'a', operator: 'Exists' as const, value: 'x' }, 'spec.tolerations[0].value'],
    ['empty key with Equal', { value: 'x' }, 'spec.tolerations[0].operator'],
    ['unknown operator', { key: 'a', operator: 'Gte' as 'Equal' }, 'spec.tolerations[0].operator'],
    ['unknown effect', { key: 'a', effect: 'NoScheduleX' as 'NoSchedule' }, 'spec.tolerations[0].effect'],
  ])('rejects %s', (_name, toleration, field) => {
    expect(fieldError(() => convertPod(makePod('p').toleration(toleration).obj(), new ConversionCache()))?.field).toBe(
      field,
    );
  });
});

describe('convertPod: topology spread constraints', () => {
  const selector = { matchLabels: { app: 'web' } };

  it('applies the scheduler defaults', () => {
    const p = pod(makePod('p').label('app', 'web').spread({ topologyKey: ZONE, labelSelector: selector }));
    expect(p.spreadConstraints).toHaveLength(1);
    const c = p.spreadConstraints[0]!;
    expect(c).toMatchObject({
      maxSkew: 1,
      topologyKey: ZONE,
      whenUnsatisfiable: 'DoNotSchedule',
      minDomains: 1,
      nodeAffinityPolicy: 'Honor',
      nodeTaintsPolicy: 'Ignore',
      fromDefaults: false,
    });
    expect(selectorText(c.selector)).toBe('app=web');
  });

  it('keeps explicit values', () => {
    const p = pod(
      makePod('p').spread({
        maxSkew: 3,
        topologyKey: HOSTNAME,
        whenUnsatisfiable: 'DoNotSchedule',
        labelSelector: selector,
        minDomains: 4,
        nodeAffinityPolicy: 'Ignore',
        nodeTaintsPolicy: 'Honor',
      }),
    );
    expect(p.spreadConstraints[0]).toMatchObject({
      maxSkew: 3,
      minDomains: 4,
      nodeAffinityPolicy: 'Ignore',
      nodeTaintsPolicy: 'Honor',
    });
  });

  it.each([
    ['a nil labelSelector matches nothing', undefined, [], { app: 'web' }, false],
    ['an empty labelSelector matches every pod', {}, [], { other: 'x' }, true],
    [
      'matchLabelKeys ANDs the pod’s value: same hash matches',
      selector,
      ['pod-template-hash'],
      { app: 'web', 'pod-template-hash': 'h1' },
      true,
    ],
    [
      'matchLabelKeys ANDs the pod’s value: other hash does not',
      selector,
      ['pod-template-hash'],
      { app: 'web', 'pod-template-hash': 'h2' },
      false,
    ],
    ['matchLabelKeys the pod lacks are ignored', selector, ['missing'], { app: 'web' }, true],
  ])('%s', (_name, labelSelector, matchLabelKeys, otherLabels, matches) => {
    const p = pod(
      makePod('p')
        .labels({ app: 'web', 'pod-template-hash': 'h1' })
        .spread({ topologyKey: ZONE, labelSelector, matchLabelKeys }),
    );
    expect(matchesSelector(p.spreadConstraints[0]!.selector, otherLabels)).toBe(matches);
  });

  it('matchLabelKeys selectors are shared between replicas', () => {
    const spread = { topologyKey: ZONE, labelSelector: selector, matchLabelKeys: ['pod-template-hash'] };
    const [a, b] = buildSnapshot([
      makePod('a').deployment('web', 'h1').label('app', 'web').spread(spread),
      makePod('b').deployment('web', 'h1').label('app', 'web').spread(spread),
    ]).pods;
    expect(selectorText(a!.spreadConstraints[0]!.selector)).toBe('app=web,pod-template-hash=h1');
    expect(b!.spreadConstraints[0]!.selector).toBe(a!.spreadConstraints[0]!.selector);
  });

  const path = 'spec.topologySpreadConstraints[0]';
  it.each([
    ['maxSkew 0', { maxSkew: 0 }, `${path}.maxSkew`],
    ['maxSkew missing', { maxSkew: undefined }, `${path}.maxSkew`],
    ['maxSkew fractional', { maxSkew: 1.5 }, `${path}.maxSkew`],
    ['maxSkew as a string', { maxSkew: '1' }, `${path}.maxSkew`],
    ['topologyKey empty', { topologyKey: '' }, `${path}.topologyKey`],
    ['whenUnsatisfiable missing', { whenUnsatisfiable: undefined }, `${path}.whenUnsatisfiable`],
    ['whenUnsatisfiable unknown', { whenUnsatisfiable: 'Never' }, `${path}.whenUnsatisfiable`],
    ['minDomains 0', { minDomains: 0 }, `${path}.minDomains`],
    ['minDomains with ScheduleAnyway', { minDomains: 2, whenUnsatisfiable: 'ScheduleAnyway' }, `${path}.minDomains`],
    ['nodeAffinityPolicy unknown', { nodeAffinityPolicy: 'Always' }, `${path}.nodeAffinityPolicy`],
    ['nodeTaintsPolicy unknown', { nodeTaintsPolicy: 'honor' }, `${path}.nodeTaintsPolicy`],
    [
      'malformed labelSelector',
      { labelSelector: { matchExpressions: [{ key: 'app', operator: 'Inn', values: ['x'] }] } },
      `${path}.labelSelector.matchExpressions[0].operator`,
    ],
    ['matchLabelKeys not strings', { matchLabelKeys: [1] }, `${path}.matchLabelKeys[0]`],
  ])('rejects %s', (_name, patch, field) => {
    const base = { maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule', labelSelector: selector };
    const raw = makePod('p')
      .set('spec.topologySpreadConstraints', [{ ...base, ...patch }])
      .obj();
    expect(fieldError(() => convertPod(raw, new ConversionCache()))?.field).toBe(field);
  });
});

describe('convertPod: pod (anti-)affinity', () => {
  it('compiles required terms; neither namespaces nor namespaceSelector means the pod’s namespace', () => {
    const p = pod(
      makePod('p', 'shop')
        .labels({ app: 'db', 'pod-template-hash': 'h1', tenant: 't1' })
        .podAntiAffinity({ topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'db' } } })
        .podAffinity({
          topologyKey: ZONE,
          labelSelector: { matchLabels: { app: 'cache' } },
          namespaces: ['infra'],
          namespaceSelector: {},
          matchLabelKeys: ['pod-template-hash'],
          mismatchLabelKeys: ['tenant', 'absent'],
        }),
    );
    const anti = p.podAntiAffinity[0]!;
    expect(anti.topologyKey).toBe(HOSTNAME);
    expect(anti.namespaces).toEqual(['shop']);
    expect(anti.namespaceSelector).toBeUndefined();
    expect(selectorText(anti.selector)).toBe('app=db');

    const aff = p.podAffinity[0]!;
    expect(aff.namespaces).toEqual(['infra']);
    expect(aff.namespaceSelector && selectorText(aff.namespaceSelector)).toBe('');
    expect(selectorText(aff.selector)).toBe('app=cache,pod-template-hash=h1,tenant!=t1');
  });

  it.each([
    ['a nil labelSelector matches nothing', undefined, { app: 'db' }, false],
    ['an empty labelSelector matches everything', {}, { any: 'thing' }, true],
  ])('%s', (_name, labelSelector, labels, matches) => {
    const p = pod(makePod('p').podAntiAffinity({ topologyKey: HOSTNAME, labelSelector }));
    expect(matchesSelector(p.podAntiAffinity[0]!.selector, labels)).toBe(matches);
  });

  it('a null namespaceSelector is absent; a namespaceSelector without names selects only by labels', () => {
    const p = pod(
      makePod('p', 'shop')
        .podAffinity({ topologyKey: ZONE, labelSelector: {}, namespaceSelector: null })
        .podAffinity({ topologyKey: ZONE, labelSelector: {}, namespaceSelector: { matchLabels: { team: 'a' } } }),
    );
    expect(p.podAffinity[0]!.namespaceSelector).toBeUndefined();
    expect(p.podAffinity[0]!.namespaces).toEqual(['shop']);
    expect(p.podAffinity[1]!.namespaces).toEqual([]);
    expect(matchesSelector(p.podAffinity[1]!.namespaceSelector!, { team: 'a' })).toBe(true);
  });

  it.each([
    [
      'missing topologyKey',
      { labelSelector: {} },
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey',
    ],
    [
      'malformed selector',
      { topologyKey: HOSTNAME, labelSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      'spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values',
    ],
  ])('rejects %s', (_name, term, field) => {
    const raw = makePod('p')
      .set('spec.affinity', { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term] } })
      .obj();
    expect(fieldError(() => convertPod(raw, new ConversionCache()))?.field).toBe(field);
  });
});

describe('convertPod: field errors', () => {
  it.each([
    ['missing name', makePod('p').set('metadata.name', undefined), 'metadata.name'],
    ['metadata not an object', makePod('p').set('metadata', 'x'), 'metadata'],
    ['bad phase', makePod('p').phase('Runing' as 'Running'), 'status.phase'],
    [
      'bad creationTimestamp',
      makePod('p').set('metadata.creationTimestamp', 'yesterday'),
      'metadata.creationTimestamp',
    ],
    ['priority not an integer', makePod('p').set('spec.priority', '100'), 'spec.priority'],
    [
      'grace period not an integer',
      makePod('p').set('spec.terminationGracePeriodSeconds', '30s'),
      'spec.terminationGracePeriodSeconds',
    ],
    ['bad request quantity', makePod('p').requests({ cpu: 'lots' }), 'spec.containers[0].resources.requests.cpu'],
    [
      'bad init container limit',
      makePod('p').addContainer('i', { limits: { memory: '1GB' } }, 'init'),
      'spec.initContainers[0].resources.limits.memory',
    ],
    ['bad overhead', makePod('p').overhead({ cpu: '?' }), 'spec.overhead.cpu'],
    ['label value not a string', makePod('p').label('v', 1 as unknown as string), 'metadata.labels.v'],
    ['containers not a list', makePod('p').set('spec.containers', {}), 'spec.containers'],
    ['nodeSelector value not a string', makePod('p').set('spec.nodeSelector', { a: true }), 'spec.nodeSelector.a'],
    ['qosClass unknown', makePod('p').set('status.qosClass', 'Gold'), 'status.qosClass'],
    [
      'owner reference without kind',
      makePod('p').set('metadata.ownerReferences', [{ name: 'x', controller: true }]),
      'metadata.ownerReferences[0].kind',
    ],
  ])('rejects %s at %s', (_name, builder, field) => {
    expect(fieldError(() => convertPod(builder.obj(), new ConversionCache()))?.field).toBe(field);
  });

  it('a non-object is rejected', () => {
    expect(fieldError(() => convertPod('pod', new ConversionCache()))?.problem).toContain('must be an object');
  });
});

describe('convertPod: nothing of the raw object is kept', () => {
  it('copies labels and keeps only model fields', () => {
    const raw = makePod('p').labels({ app: 'web' }).annotation('big', 'x'.repeat(1000)).obj();
    const p = convertPod(raw, new ConversionCache());
    (raw['metadata'] as { labels: Record<string, string> }).labels['app'] = 'changed';
    expect(p.labels).toEqual({ app: 'web' });
    expect(Object.isFrozen(p.labels)).toBe(true);
    expect(JSON.stringify(p)).not.toContain('xxxxxxxxxx');
    expect(Object.keys(p).sort()).toEqual([...COMPACT_POD_FIELDS].sort());
  });

  it('replicas share label sets, requests and tolerations', () => {
    const replica = (name: string) =>
      makePod(name, 'shop')
        .deployment('web', 'h1')
        .labels({ app: 'web' })
        .requests({ cpu: '100m' })
        .toleration({ key: 'k', operator: 'Exists' });
    const [a, b] = buildSnapshot([replica('a'), replica('b')]).pods;
    expect(b!.labels).toBe(a!.labels);
    expect(b!.requests).toBe(a!.requests);
    expect(b!.tolerations).toBe(a!.tolerations);
    expect(b!.owner).toBe(a!.owner);
  });

  it('a pod that fails conversion leaves the cache as it was for the next replica', () => {
    const cache = new ConversionCache();
    const near = (app: string) => ({ topologyKey: ZONE, labelSelector: { matchLabels: { app } } });
    const replica = (name: string) => makePod(name, 'shop').labels({ app: 'web' }).podAffinity(near('cache'));
    const before = convertPod(replica('a').obj(), cache);
    // Its podAffinity converts, its podAntiAffinity does not.
    const broken = makePod('bad', 'shop')
      .labels({ app: 'web' })
      .podAffinity(near('db'))
      .podAntiAffinity({ topologyKey: '', labelSelector: {} });
    expect(fieldError(() => convertPod(broken.obj(), cache))).toBeDefined();
    const after = convertPod(replica('b').obj(), cache);
    expect(selectorText(after.podAffinity[0]!.selector)).toBe('app=cache');
    expect(after.podAffinity).toBe(before.podAffinity);
  });

  it("what one cache shares stays with its owner: another cache's pods are equal, not shared", () => {
    const raw = makePod('p', 'shop')
      .deployment('web', 'h1')
      .labels({ app: 'web' })
      .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } })
      .obj();
    const first = convertPod(raw, new ConversionCache());
    const second = convertPod(raw, new ConversionCache());
    expect(second).toEqual(first);
    expect(second.spreadConstraints).not.toBe(first.spreadConstraints);
    expect(second.owner).not.toBe(first.owner);
  });

  it('labels may be named like Object.prototype members', () => {
    const p = pod(makePod('p').labels({ constructor: 'x', toString: 'y' }));
    expect(Object.hasOwn(p.labels, 'constructor')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(p.labels, 'toString')?.value).toBe('y');
  });
});

describe('convertPdb', () => {
  it.each([
    [
      'minAvailable int',
      makePdb('p').selector({ app: 'web' }).minAvailable(2),
      { minAvailable: { kind: 'int', value: 2 }, maxUnavailable: undefined },
    ],
    [
      'minAvailable percent',
      makePdb('p').selector({ app: 'web' }).minAvailable('50%'),
      { minAvailable: { kind: 'percent', value: 50 } },
    ],
    [
      'maxUnavailable int',
      makePdb('p').selector({ app: 'web' }).maxUnavailable(1),
      { maxUnavailable: { kind: 'int', value: 1 } },
    ],
    [
      'maxUnavailable percent',
      makePdb('p').selector({ app: 'web' }).maxUnavailable('100%'),
      { maxUnavailable: { kind: 'percent', value: 100 } },
    ],
    [
      'status disruptionsAllowed',
      makePdb('p').selector({ app: 'web' }).minAvailable(1).allowed(3),
      { statusAllowed: 3 },
    ],
    ['no status', makePdb('p').selector({ app: 'web' }).minAvailable(1), { statusAllowed: undefined }],
    [
      'status without disruptionsAllowed',
      makePdb('p').selector({}).set('status', { currentHealthy: 1 }),
      { statusAllowed: undefined },
    ],
  ])('%s', (_name, builder, expected) => {
    expect(convertPdb(builder.obj())).toMatchObject(expected);
  });

  it.each([
    ['policy/v1 nil selector matches nothing', makePdb('p').selector(null), { app: 'web' }, false],
    ['policy/v1 missing selector matches nothing', makePdb('p'), { app: 'web' }, false],
    ['policy/v1 empty selector matches every pod', makePdb('p').selector({}), { app: 'web' }, true],
    [
      'policy/v1beta1 empty selector matches nothing',
      makePdb('p').selector({}).set('apiVersion', 'policy/v1beta1'),
      { app: 'web' },
      false,
    ],
    ['matchLabels', makePdb('p').selector({ app: 'web' }), { app: 'web' }, true],
  ])('%s', (_name, builder, labels, matches) => {
    expect(matchesSelector(convertPdb(builder.obj()).selector, labels)).toBe(matches);
  });

  it.each([
    ['a plain string', makePdb('p').selector({}).minAvailable('2'), 'spec.minAvailable'],
    ['a fraction', makePdb('p').selector({}).maxUnavailable('12.5%'), 'spec.maxUnavailable'],
    ['over 100%', makePdb('p').selector({}).maxUnavailable('150%'), 'spec.maxUnavailable'],
    ['negative', makePdb('p').selector({}).minAvailable(-1), 'spec.minAvailable'],
    ['both set', makePdb('p').selector({}).minAvailable(1).maxUnavailable(1), 'spec.maxUnavailable'],
    [
      'malformed selector',
      makePdb('p').selector({ matchExpressions: [{ key: 'app', operator: 'In', values: [] }] }),
      'spec.selector.matchExpressions[0].values',
    ],
  ])('rejects %s', (_name, builder, field) => {
    expect(fieldError(() => convertPdb(builder.obj()))?.field).toBe(field);
  });
});

describe('convertPriorityClass and convertNamespace', () => {
  it('reads value and globalDefault', () => {
    expect(convertPriorityClass(makePriorityClass('high', 1000))).toEqual({
      name: 'high',
      value: 1000,
      globalDefault: false,
    });
    expect(convertPriorityClass(makePriorityClass('low', -5, true))).toEqual({
      name: 'low',
      value: -5,
      globalDefault: true,
    });
  });

  it.each([
    ['missing value', { kind: 'PriorityClass', metadata: { name: 'x' } }, 'value'],
    ['string value', { kind: 'PriorityClass', metadata: { name: 'x' }, value: '100' }, 'value'],
    [
      'bad globalDefault',
      { kind: 'PriorityClass', metadata: { name: 'x' }, value: 1, globalDefault: 'yes' },
      'globalDefault',
    ],
  ])('rejects a PriorityClass with %s', (_name, raw, field) => {
    expect(fieldError(() => convertPriorityClass(raw))?.field).toBe(field);
  });

  it('always labels a namespace with kubernetes.io/metadata.name', () => {
    expect(convertNamespace(makeNamespace('shop', { team: 'checkout' }))).toEqual({
      name: 'shop',
      labels: { team: 'checkout', 'kubernetes.io/metadata.name': 'shop' },
    });
    expect(convertNamespace(makeNamespace('x', { 'kubernetes.io/metadata.name': 'spoofed' })).labels).toEqual({
      'kubernetes.io/metadata.name': 'x',
    });
  });
});

describe('errors through the loader name the object', () => {
  it.each([
    [
      'a pod',
      [makePod('web-1', 'shop').spread({ topologyKey: ZONE, maxSkew: 0 })],
      'Pod shop/web-1',
      'spec.topologySpreadConstraints[0].maxSkew',
    ],
    ['a node', [makeNode('a1').allocatable({ cpu: 'x' })], 'Node a1', 'status.allocatable.cpu'],
    ['a PDB', [makePdb('db', 'shop').minAvailable('1')], 'PodDisruptionBudget shop/db', 'spec.minAvailable'],
    [
      'a nameless pod',
      [makeNode('a1'), makePod('p').set('metadata.name', undefined)],
      'Pod at document 1, items[1]',
      'metadata.name',
    ],
  ])('%s', (_name, objects, object, field) => {
    let error: unknown;
    try {
      loadObjects(objects);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ file: 'test-snapshot.yaml', object, field });
  });
});

describe('at scale', () => {
  it('converts 150,000 pods of 500 workloads, each pod once', () => {
    const workloads = 500;
    const items: unknown[] = [];
    for (let w = 0; w < workloads; w++) {
      const template = makePod(`web-${w}`, `ns-${w % 40}`)
        .deployment(`web-${w}`, `h${w}`)
        .labels({ app: `web-${w}`, tier: 'frontend', 'app.kubernetes.io/name': `web-${w}` })
        .requests({ cpu: '250m', memory: '512Mi' })
        .limits({ cpu: '1', memory: '1Gi' })
        .toleration({
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        })
        .toleration({
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        })
        .spread({
          topologyKey: ZONE,
          labelSelector: { matchLabels: { app: `web-${w}` } },
          matchLabelKeys: ['pod-template-hash'],
        });
      if (w % 5 === 0)
        template.podAntiAffinity({ topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: `web-${w}` } } });
      if (w % 7 === 0) template.nodeAffinityIn('node.kubernetes.io/instance-type', ['m5.large', 'm5.xlarge']);
      const json = JSON.stringify(template.obj());
      for (let i = 0; i < 150_000 / workloads; i++) {
        const raw = JSON.parse(json) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
        raw.metadata['name'] = `web-${w}-h${w}-${i}`;
        raw.metadata['uid'] = `uid-${w}-${i}`;
        raw.spec['nodeName'] = `node-${i % 3000}`;
        items.push(raw);
      }
    }
    // Its speed is the bench's (the 150k rows of `npm run bench`): a time limit here fails on a loaded machine.
    const { snapshot } = snapshotFromObjects([{ apiVersion: 'v1', kind: 'List', items }], {
      file: 'big.json',
      now: NOW,
    });
    expect(snapshot.pods).toHaveLength(150_000);
    expect(new Set(snapshot.pods.map((p) => p.uid)).size).toBe(150_000);
  });
});

describe('convertPod: what the API server accepts loads', () => {
  it('Lt with a non-integer value loads (the API only checks the count) and matches no node', () => {
    const snapshot = buildSnapshot([
      makeNode('n1').label('gen', '1'),
      makePod('p')
        .node('n1')
        .nodeAffinityTerms([{ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['1.5'] }] }]),
    ]);
    const pod = snapshot.pods[0]!;
    expect(matchesRequiredNodeAffinity(pod.requiredNodeAffinity, snapshot.nodes[0]!)).toBe(false);
  });
});

describe('convertPod: what the scheduler scoring reads', () => {
  it('counts a container without a cpu or memory request as 100m and 200Mi, one set to 0 as 0 (non-zero requests)', () => {
    const p = pod(
      makePod('p')
        .requests({ cpu: '250m' })
        .addContainer('zero', { requests: { cpu: '0', memory: '0' } })
        .addContainer('init', { requests: { cpu: '2' } }, 'init'),
    );
    expect(p.requests).toEqual({ cpu: 2000, memory: 0 });
    // Regular: 250m + 0 cpu, 200Mi + 0 memory; the init container needs 2 cpu and 200Mi (its memory is unset).
    expect(p.nonZeroRequests).toEqual({ cpu: 2000, memory: 200 * 2 ** 20 });
    expect(pod(makePod('q')).nonZeroRequests).toEqual({ cpu: 100, memory: 200 * 2 ** 20 });
  });

  it('normalises container images as ImageLocality looks them up (a name without a tag is :latest)', () => {
    const p = pod(makePod('p').images('nginx', 'registry.example:5000/app', 'busybox:1.36', 'app@sha256:ab12'));
    expect(p.images).toEqual(['nginx:latest', 'registry.example:5000/app:latest', 'busybox:1.36', 'app@sha256:ab12']);
  });

  it('reads preferred pod affinity and anti-affinity with their weights', () => {
    const p = pod(
      makePod('p', 'shop')
        .preferredPodAffinity(80, { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'cache' } } })
        .preferredPodAntiAffinity(20, { topologyKey: HOSTNAME, labelSelector: { matchLabels: { app: 'web' } } }),
    );
    expect(p.preferredPodAffinity?.map((t) => [t.weight, t.term.topologyKey, t.term.namespaces])).toEqual([
      [80, ZONE, ['shop']],
    ]);
    expect(p.preferredPodAntiAffinity?.map((t) => [t.weight, selectorText(t.term.selector)])).toEqual([
      [20, 'app=web'],
    ]);
    expect(() =>
      pod(
        makePod('p').set('spec.affinity', {
          podAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, podAffinityTerm: { topologyKey: ZONE } }],
          },
        }),
      ),
    ).toThrow('spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be 1–100');
  });
});

describe('convertPod: status conditions (podLifeTime conditions)', () => {
  const at = '2024-06-01T08:00:00Z';

  it('keeps type, status, reason and lastTransitionTime of each, in order; no message', () => {
    const p = pod(
      makePod('a', 'shop')
        .condition('Ready', 'False', { reason: 'ContainersNotReady', since: at })
        .condition('example.com/gate', 'Unknown'),
    );
    expect(p.conditions!.entries).toEqual([
      { type: 'PodScheduled', status: 'True', reason: undefined },
      { type: 'Ready', status: 'False', reason: 'ContainersNotReady' },
      { type: 'example.com/gate', status: 'Unknown', reason: undefined },
    ]);
    expect(p.conditions!.transitions).toEqual([undefined, Date.parse(at), undefined]);
  });

  it('pods of the same shape share one frozen list of entries and keep their own times', () => {
    const cache = new ConversionCache();
    const raw = (name: string, time: string): unknown =>
      makePod(name, 'shop').condition('Ready', 'True', { since: time }).obj();
    const a = convertPod(raw('a', at), cache);
    const b = convertPod(raw('b', '2024-06-01T09:00:00Z'), cache);
    expect(b.conditions!.entries).toBe(a.conditions!.entries);
    expect(Object.isFrozen(a.conditions!.entries)).toBe(true);
    expect(a.conditions!.transitions).not.toEqual(b.conditions!.transitions);
  });

  it('reads a Date as the live client hands it over; an unreadable time counts as none', () => {
    const raw = makePod('a', 'shop').obj() as { status: Record<string, unknown> };
    raw.status['conditions'] = [
      { type: 'Ready', status: 'True', lastTransitionTime: new Date(at) },
      { type: 'Initialized', status: 'True', lastTransitionTime: 'yesterday' },
    ];
    expect(convertPod(raw, new ConversionCache()).conditions!.transitions).toEqual([Date.parse(at), undefined]);
  });

  it('a pod whose status lists no conditions has none', () => {
    const raw = makePod('a', 'shop').obj() as { status: Record<string, unknown> };
    delete raw.status['conditions'];
    expect(convertPod(raw, new ConversionCache()).conditions).toBeUndefined();
  });
});

describe('convertPod: requested resource names (highNodeUtilization evictionModes)', () => {
  it("names every resource a container or init container requests, a zero quantity too; not the pod's own", () => {
    const raw = makePod('a', 'shop').requests({ cpu: '0' }).obj() as { spec: Record<string, unknown> };
    raw.spec['initContainers'] = [{ name: 'init', resources: { requests: { 'example.com/gpu': '1' } } }];
    raw.spec['resources'] = { requests: { memory: '1Gi' } };
    raw.spec['overhead'] = { memory: '100Mi' };
    const p = convertPod(raw, new ConversionCache());
    expect(p.requestedResources).toEqual(['cpu', 'example.com/gpu']);
    expect(p.requests['memory']).toBeGreaterThan(0);
  });

  it('pods with the same names share one frozen list; a pod requesting nothing has an empty one', () => {
    const cache = new ConversionCache();
    const a = convertPod(makePod('a', 'shop').requests({ cpu: '1', memory: '1Gi' }).obj(), cache);
    const b = convertPod(makePod('b', 'shop').requests({ memory: '2Gi', cpu: '2' }).obj(), cache);
    expect(b.requestedResources).toBe(a.requestedResources);
    expect(Object.isFrozen(a.requestedResources)).toBe(true);
    expect(convertPod(makePod('c', 'shop').obj(), cache).requestedResources).toEqual([]);
  });
});
