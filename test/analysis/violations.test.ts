// Violations of pods already running, one scenario per rule: the pod, its node, and what the scheduler's
// filter would say about placing that pod there today.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { LIFECYCLE_TAINT_KEYS } from '../../src/model/lifecycleTaints.js';
import { parsePolicy } from '../../src/policy/parse.js';
import type { PolicySpec } from '../../src/policy/types.js';
import { buildSnapshot, HOSTNAME, makeNamespace, makeNode, makePod, ZONE } from '../builders.js';

type Built = Parameters<typeof buildSnapshot>[0][number];

function specWith(spec: Record<string, unknown>): PolicySpec {
  return parsePolicy(
    { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: { name: 't' }, spec },
    { file: 't' },
  ).spec;
}

/** The rule strategies a policy names when it asks for placement rules (podAffinity stays off unless named). */
const RULES: PolicySpec = specWith({
  strategies: { topologySpread: {}, podAntiAffinity: {}, nodeAffinity: {}, nodeTaints: {} },
});

function violations(objects: Built[], spec: PolicySpec = RULES): string[] {
  return analyze(buildSnapshot(objects), spec)
    .violations.map((v) => `${v.strategy}${v.soft ? '(soft)' : ''} ${v.pod.name}@${v.node}`)
    .sort();
}

const pod = (name: string, node: string) => makePod(name).deployment(name.replace(/-\d+$/, '')).node(node);

describe('node affinity', () => {
  it.each<{ name: string; objects: Built[]; want: string[] }>([
    {
      name: 'nodeSelector no longer matched after a label change',
      objects: [makeNode('n1').label('disk', 'hdd'), pod('db-1', 'n1').nodeSelector({ disk: 'ssd' })],
      want: ['NodeAffinity db-1@n1'],
    },
    {
      name: 'nodeSelector matched: no violation',
      objects: [makeNode('n1').label('disk', 'ssd'), pod('db-1', 'n1').nodeSelector({ disk: 'ssd' })],
      want: [],
    },
    {
      name: 'terms are ORed: the second term matches',
      objects: [
        makeNode('n1').label('pool', 'b'),
        pod('api-1', 'n1').nodeAffinityTerms([
          { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] },
          { matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }] },
        ]),
      ],
      want: [],
    },
    {
      name: 'expressions within a term are ANDed: one fails',
      objects: [
        makeNode('n1').labels({ pool: 'a', gen: '3' }),
        pod('api-1', 'n1').nodeAffinityTerms([
          {
            matchExpressions: [
              { key: 'pool', operator: 'In', values: ['a'] },
              { key: 'gen', operator: 'Gt', values: ['4'] },
            ],
          },
        ]),
      ],
      want: ['NodeAffinity api-1@n1'],
    },
    {
      name: 'Lt compares integers: 3 < 10 (not as strings)',
      objects: [
        makeNode('n1').label('gen', '3'),
        pod('api-1', 'n1').nodeAffinityTerms([{ matchExpressions: [{ key: 'gen', operator: 'Lt', values: ['10'] }] }]),
      ],
      want: [],
    },
    {
      name: 'Gt against a non-integer label does not match',
      objects: [
        makeNode('n1').label('gen', 'v5'),
        pod('api-1', 'n1').nodeAffinityTerms([{ matchExpressions: [{ key: 'gen', operator: 'Gt', values: ['1'] }] }]),
      ],
      want: ['NodeAffinity api-1@n1'],
    },
    {
      name: 'NotIn and DoesNotExist match a node without the label',
      objects: [
        makeNode('n1'),
        pod('api-1', 'n1').nodeAffinityTerms([
          {
            matchExpressions: [
              { key: 'pool', operator: 'NotIn', values: ['batch'] },
              { key: 'spot', operator: 'DoesNotExist' },
            ],
          },
        ]),
      ],
      want: [],
    },
    {
      name: 'matchFields metadata.name',
      objects: [
        makeNode('n1'),
        makeNode('n2'),
        pod('api-1', 'n1').nodeAffinityTerms([
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] },
        ]),
      ],
      want: ['NodeAffinity api-1@n1'],
    },
  ])('$name', ({ objects, want }) => {
    expect(violations(objects)).toEqual(want);
  });

  it('preferred affinity: reported as soft when another admitting node scores higher', () => {
    const objects: Built[] = [
      makeNode('n1').label('disk', 'hdd'),
      makeNode('n2').label('disk', 'ssd'),
      makeNode('n3').label('disk', 'ssd').unschedulable(),
      pod('api-1', 'n1').preferredNodeAffinity(50, {
        matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }],
      }),
      pod('ok-1', 'n2').preferredNodeAffinity(50, {
        matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }],
      }),
    ];
    expect(violations(objects)).toEqual(['NodeAffinity(soft) api-1@n1']);
  });

  it('required: false in the policy turns the required check off', () => {
    const objects: Built[] = [makeNode('n1').label('disk', 'hdd'), pod('db-1', 'n1').nodeSelector({ disk: 'ssd' })];
    expect(violations(objects, specWith({ strategies: { nodeAffinity: { required: false } } }))).toEqual([]);
  });
});

describe('node taints', () => {
  const tainted = (effect: 'NoSchedule' | 'NoExecute' | 'PreferNoSchedule' = 'NoSchedule') =>
    makeNode('n1').taint('dedicated', 'gpu', effect);
  it.each<{ name: string; objects: Built[]; spec?: PolicySpec; want: string[] }>([
    { name: 'untolerated NoSchedule', objects: [tainted(), pod('web-1', 'n1')], want: ['NodeTaints web-1@n1'] },
    {
      name: 'untolerated NoExecute',
      objects: [tainted('NoExecute'), pod('web-1', 'n1')],
      want: ['NodeTaints web-1@n1'],
    },
    {
      name: 'PreferNoSchedule ignored by default',
      objects: [tainted('PreferNoSchedule'), pod('web-1', 'n1')],
      want: [],
    },
    {
      name: 'PreferNoSchedule reported (soft) when includePreferNoSchedule',
      objects: [tainted('PreferNoSchedule'), pod('web-1', 'n1')],
      spec: specWith({ strategies: { nodeTaints: { includePreferNoSchedule: true } } }),
      want: ['NodeTaints(soft) web-1@n1'],
    },
    {
      name: 'Equal with the same key and value tolerates',
      objects: [
        tainted(),
        pod('web-1', 'n1').toleration({ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }),
      ],
      want: [],
    },
    {
      name: 'Equal with another value does not tolerate',
      objects: [
        tainted(),
        pod('web-1', 'n1').toleration({ key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }),
      ],
      want: ['NodeTaints web-1@n1'],
    },
    {
      name: 'Exists ignores the value',
      objects: [
        tainted(),
        pod('web-1', 'n1').toleration({ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }),
      ],
      want: [],
    },
    {
      name: 'an empty effect tolerates every effect',
      objects: [tainted('NoExecute'), pod('web-1', 'n1').toleration({ key: 'dedicated', operator: 'Exists' })],
      want: [],
    },
    {
      name: 'an empty key with Exists tolerates every taint',
      objects: [tainted(), pod('web-1', 'n1').toleration({ operator: 'Exists' })],
      want: [],
    },
    {
      name: 'a toleration for another effect does not tolerate',
      objects: [
        tainted('NoExecute'),
        pod('web-1', 'n1').toleration({ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }),
      ],
      want: ['NodeTaints web-1@n1'],
    },
    {
      name: 'excludedTaints by key',
      objects: [tainted(), pod('web-1', 'n1')],
      spec: specWith({ strategies: { nodeTaints: { excludedTaints: ['dedicated'] } } }),
      want: [],
    },
    {
      name: 'excludedTaints by key=value only excludes that value',
      objects: [tainted(), pod('web-1', 'n1')],
      spec: specWith({ strategies: { nodeTaints: { excludedTaints: ['dedicated=cpu'] } } }),
      want: ['NodeTaints web-1@n1'],
    },
  ])('$name', ({ objects, spec, want }) => {
    expect(violations(objects, spec)).toEqual(want);
  });
});

describe("a cordon is not a violation: the node lifecycle's own taints never count", () => {
  // Every policy that names nodeTaints, with PreferNoSchedule included and nothing excluded: the widest one.
  const widest = specWith({ strategies: { nodeTaints: { includePreferNoSchedule: true } } });
  it.each(
    [...LIFECYCLE_TAINT_KEYS].flatMap((key) =>
      (['NoSchedule', 'NoExecute', 'PreferNoSchedule'] as const).map((effect) => ({ key, effect })),
    ),
  )('$key:$effect on the node of a pod that does not tolerate it', ({ key, effect }) => {
    expect(violations([makeNode('n1').taint(key, undefined, effect), pod('web-1', 'n1')], widest)).toEqual([]);
  });

  it('a cordoned node (spec.unschedulable and its taint) holds no violation, and another taint there still counts', () => {
    const cordoned = makeNode('n1').unschedulable().taint('node.kubernetes.io/unschedulable', undefined, 'NoSchedule');
    expect(violations([cordoned, pod('web-1', 'n1')], widest)).toEqual([]);
    expect(violations([cordoned.taint('dedicated', 'gpu', 'NoSchedule'), pod('web-1', 'n1')], widest)).toEqual([
      'NodeTaints web-1@n1',
    ]);
  });
});

describe('inter-pod anti-affinity and affinity', () => {
  const anti = { labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: HOSTNAME };
  it.each<{ name: string; objects: Built[]; spec?: PolicySpec; want: string[] }>([
    {
      name: 'two pods with symmetric anti-affinity on one node: both report',
      objects: [
        makeNode('n1'),
        pod('cache-1', 'n1').label('app', 'cache').podAntiAffinity(anti),
        pod('cache-2', 'n1').label('app', 'cache').podAntiAffinity(anti),
      ],
      want: ['PodAntiAffinity cache-1@n1', 'PodAntiAffinity cache-2@n1'],
    },
    {
      name: "the other direction: a pod without rules sits where another pod's anti-affinity forbids it",
      objects: [
        makeNode('n1'),
        pod('guard-1', 'n1').label('app', 'guard').podAntiAffinity(anti),
        pod('cache-1', 'n1').label('app', 'cache'),
      ],
      want: ['PodAntiAffinity cache-1@n1', 'PodAntiAffinity guard-1@n1'],
    },
    {
      name: 'zone anti-affinity of cache-2 catches cache-1 on another node of the zone (reported on both sides)',
      objects: [
        makeNode('n1').zone('a'),
        makeNode('n2').zone('a'),
        pod('cache-1', 'n1').label('app', 'cache').podAntiAffinity(anti),
        pod('cache-2', 'n2')
          .label('app', 'cache')
          .podAntiAffinity({ ...anti, topologyKey: ZONE }),
      ],
      want: ['PodAntiAffinity cache-1@n1', 'PodAntiAffinity cache-2@n2'],
    },
    {
      name: 'a pod does not conflict with itself',
      objects: [makeNode('n1'), pod('cache-1', 'n1').label('app', 'cache').podAntiAffinity(anti)],
      want: [],
    },
    {
      name: 'anti-affinity looks only in the pod namespace by default',
      objects: [
        makeNode('n1'),
        pod('cache-1', 'n1').label('app', 'cache').podAntiAffinity(anti),
        makePod('cache-x', 'other').label('app', 'cache').node('n1'),
      ],
      want: [],
    },
    {
      name: 'namespaces lists another namespace',
      objects: [
        makeNode('n1'),
        pod('guard-1', 'n1').podAntiAffinity({ ...anti, namespaces: ['other'] }),
        makePod('cache-x', 'other').label('app', 'cache').node('n1'),
      ],
      want: ['PodAntiAffinity guard-1@n1', 'PodAntiAffinity cache-x@n1'].sort(),
    },
    {
      name: 'namespaceSelector selects namespaces by label',
      objects: [
        makeNode('n1'),
        makeNamespace('other', { team: 'data' }),
        pod('guard-1', 'n1').podAntiAffinity({ ...anti, namespaceSelector: { matchLabels: { team: 'data' } } }),
        makePod('cache-x', 'other').label('app', 'cache').node('n1'),
      ],
      want: ['PodAntiAffinity cache-x@n1', 'PodAntiAffinity guard-1@n1'],
    },
    {
      name: 'required affinity no longer satisfied after the peer moved away',
      objects: [
        makeNode('n1').zone('a'),
        makeNode('n2').zone('b'),
        pod('web-1', 'n1').podAffinity({ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: ZONE }),
        pod('cache-1', 'n2').label('app', 'cache'),
      ],
      spec: specWith({ strategies: { podAffinity: { enabled: true } } }),
      want: ['PodAffinity web-1@n1'],
    },
    {
      name: 'required affinity satisfied by a pod in the same zone on another node',
      objects: [
        makeNode('n1').zone('a'),
        makeNode('n2').zone('a'),
        pod('web-1', 'n1').podAffinity({ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: ZONE }),
        pod('cache-1', 'n2').label('app', 'cache'),
      ],
      spec: specWith({ strategies: { podAffinity: { enabled: true } } }),
      want: [],
    },
    {
      name: 'a pod matching its own affinity term may stand alone when no other pod matches',
      objects: [
        makeNode('n1').zone('a'),
        pod('cache-1', 'n1')
          .label('app', 'cache')
          .podAffinity({ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: ZONE }),
      ],
      spec: specWith({ strategies: { podAffinity: { enabled: true } } }),
      want: [],
    },
    {
      name: 'podAffinity is off by default',
      objects: [
        makeNode('n1').zone('a'),
        makeNode('n2').zone('b'),
        pod('web-1', 'n1').podAffinity({ labelSelector: { matchLabels: { app: 'cache' } }, topologyKey: ZONE }),
        pod('cache-1', 'n2').label('app', 'cache'),
      ],
      want: [],
    },
  ])('$name', ({ objects, spec, want }) => {
    expect(violations(objects, spec)).toEqual(want);
  });
});
