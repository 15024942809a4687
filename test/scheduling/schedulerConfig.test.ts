// KubeSchedulerConfiguration → SchedulerProfile (issue 19): the score plugins' weights after kube-scheduler v1.26's
// merge of defaults, multiPoint and score; NodeResourcesFit's scoring strategy; PodTopologySpread's defaulting; and
// every invalid field named by its path.
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../../src/scheduling/profile.js';
import { parseSchedulerConfig } from '../../src/scheduling/schedulerConfig.js';

const HEADER = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';

function profileOf(body: string, header = HEADER): SchedulerProfile {
  const result = parseSchedulerConfig(header + body, 'sched.yaml');
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.profile;
}

function problemsOf(body: string, header = HEADER): string[] {
  const result = parseSchedulerConfig(header + body, 'sched.yaml');
  if (result.ok) throw new Error('expected problems');
  return result.problems.map((p) => `${p.field}: ${p.problem}`);
}

const DEFAULT_WEIGHTS: Record<string, number | undefined> = { ...DEFAULT_PROFILE.scoreWeights };
const defined = (weights: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(weights).filter(([, w]) => w !== undefined));

describe('score plugin weights', () => {
  it.each([
    { scenario: 'no profiles: v1.26 defaults', body: '', weights: DEFAULT_WEIGHTS },
    {
      scenario: 'a default-scheduler profile without plugins',
      body: 'profiles: [{schedulerName: default-scheduler}]',
      weights: DEFAULT_WEIGHTS,
    },
    {
      scenario: 'multiPoint re-weights a default in place',
      body: 'profiles: [{plugins: {multiPoint: {enabled: [{name: NodeResourcesFit, weight: 5}]}}}]',
      weights: { ...DEFAULT_WEIGHTS, NodeResourcesFit: 5 },
    },
    {
      scenario: 'multiPoint disables one default',
      body: 'profiles: [{plugins: {multiPoint: {disabled: [{name: ImageLocality}]}}}]',
      weights: { ...DEFAULT_WEIGHTS, ImageLocality: undefined },
    },
    {
      scenario: 'multiPoint disables all (*) and enables one, weight absent → 1',
      body: 'profiles: [{plugins: {multiPoint: {disabled: [{name: "*"}], enabled: [{name: NodeAffinity}]}}}]',
      weights: { NodeAffinity: 1 },
    },
    {
      scenario: 'score.disabled keeps a multiPoint plugin out of scoring',
      body: 'profiles: [{plugins: {score: {disabled: [{name: NodeResourcesBalancedAllocation}]}}}]',
      weights: { ...DEFAULT_WEIGHTS, NodeResourcesBalancedAllocation: undefined },
    },
    {
      scenario: 'score.disabled * with score.enabled: only the listed plugins score, weight 0 → 1',
      body:
        'profiles: [{plugins: {score: {disabled: [{name: "*"}], enabled: ' +
        '[{name: NodeResourcesFit, weight: 3}, {name: PodTopologySpread, weight: 0}]}}}]',
      weights: { NodeResourcesFit: 3, PodTopologySpread: 1 },
    },
    {
      scenario: 'score.enabled overrides the multiPoint weight of the same plugin',
      body: 'profiles: [{plugins: {score: {enabled: [{name: TaintToleration, weight: 10}]}}}]',
      weights: { ...DEFAULT_WEIGHTS, TaintToleration: 10 },
    },
    {
      scenario: 'another scheduler’s profile leaves default-scheduler’s as it is',
      body:
        'profiles: [{schedulerName: batch, plugins: {multiPoint: {disabled: [{name: "*"}]}}}, ' +
        '{schedulerName: default-scheduler}]',
      weights: DEFAULT_WEIGHTS,
    },
  ])('$scenario', ({ body, weights }) => {
    expect(profileOf(body).scoreWeights).toEqual(defined(weights));
  });

  it('v1beta3 reads the same way', () => {
    const header = 'apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n';
    const body = 'profiles: [{plugins: {score: {disabled: [{name: ImageLocality}]}}}]';
    expect(profileOf(body, header).scoreWeights).toEqual(defined({ ...DEFAULT_WEIGHTS, ImageLocality: undefined }));
  });
});

const fitArgs = (args: string): string => `profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: ${args}\n`;
const spreadArgs = (args: string): string =>
  `profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: ${args}\n`;

describe('NodeResourcesFit scoring strategy', () => {
  it.each([
    { scenario: 'no pluginConfig: LeastAllocated cpu and memory', body: '', expected: DEFAULT_PROFILE.fitScoring },
    {
      scenario: 'MostAllocated without resources: cpu and memory, weight 1',
      body: fitArgs('{scoringStrategy: {type: MostAllocated}}'),
      expected: {
        type: 'MostAllocated',
        resources: [
          { name: 'cpu', weight: 1 },
          { name: 'memory', weight: 1 },
        ],
      },
    },
    {
      scenario: 'LeastAllocated with weights',
      body: fitArgs(
        '{scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 3}, {name: nvidia.com/gpu, weight: 5}]}}',
      ),
      expected: {
        type: 'LeastAllocated',
        resources: [
          { name: 'cpu', weight: 3 },
          { name: 'nvidia.com/gpu', weight: 5 },
        ],
      },
    },
    {
      scenario: 'RequestedToCapacityRatio with a shape',
      body: fitArgs(
        '{scoringStrategy: {type: RequestedToCapacityRatio, resources: [{name: cpu, weight: 1}], ' +
          'requestedToCapacityRatio: {shape: [{utilization: 0, score: 0}, {utilization: 100, score: 10}]}}}',
      ),
      expected: {
        type: 'RequestedToCapacityRatio',
        resources: [{ name: 'cpu', weight: 1 }],
        shape: [
          { utilization: 0, score: 0 },
          { utilization: 100, score: 10 },
        ],
      },
    },
  ])('$scenario', ({ body, expected }) => {
    expect(profileOf(body).fitScoring).toEqual(expected);
  });
});

describe('PodTopologySpread defaulting', () => {
  it('System by default; List with the given constraints; List with none turns defaulting off', () => {
    expect(profileOf('').spreadDefaulting).toEqual({ type: 'System' });
    expect(profileOf(spreadArgs('{defaultingType: System}')).spreadDefaulting).toEqual({ type: 'System' });
    const list = spreadArgs(
      '{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, ' +
        'whenUnsatisfiable: ScheduleAnyway, nodeTaintsPolicy: Honor}]}',
    );
    expect(profileOf(list).spreadDefaulting).toEqual({
      type: 'List',
      constraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'ScheduleAnyway',
          nodeTaintsPolicy: 'Honor',
        },
      ],
    });
    expect(profileOf(spreadArgs('{defaultingType: List}')).spreadDefaulting).toEqual({ type: 'List', constraints: [] });
  });
});

describe('invalid files name the field', () => {
  const V1BETA2 = 'apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n';
  it.each([
    ['not YAML', 'a: [', /^: invalid YAML at line \d+, column \d+/, ''],
    [
      'another kind',
      '',
      /^kind: must be KubeSchedulerConfiguration \(got "Pod"\)/,
      'apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n',
    ],
    ['an old apiVersion', '', /^apiVersion: must be .*\/v1 or .*\/v1beta3 \(got ".*\/v1beta2"\)/, V1BETA2],
    ['a misspelt top-level field', 'profile: []', /^profile: unknown field/, HEADER],
    [
      'no default-scheduler profile',
      'profiles: [{schedulerName: batch}]',
      /^profiles: has no default-scheduler/,
      HEADER,
    ],
    [
      'an unknown plugin',
      'profiles: [{plugins: {score: {enabled: [{name: NodeResourceFit}]}}}]',
      /^profiles\[0\]\.plugins\.score\.enabled\[0\]\.name: unknown plugin "NodeResourceFit"/,
      HEADER,
    ],
    [
      'a filter plugin as a score plugin',
      'profiles: [{plugins: {score: {enabled: [{name: NodePorts}]}}}]',
      /^profiles\[0\]\.plugins\.score\.enabled\[0\]\.name: NodePorts is not a score plugin/,
      HEADER,
    ],
    [
      'a negative weight',
      'profiles: [{plugins: {multiPoint: {enabled: [{name: ImageLocality, weight: -1}]}}}]',
      /^profiles\[0\]\.plugins\.multiPoint\.enabled\[0\]\.weight: must be between 0 and/,
      HEADER,
    ],
    [
      'an unknown scoring type',
      fitArgs('{scoringStrategy: {type: Balanced}}'),
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.scoringStrategy\.type: must be one of LeastAllocated, MostAllocated/,
      HEADER,
    ],
    [
      'a resource weight out of range',
      fitArgs('{scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 101}]}}'),
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.scoringStrategy\.resources\[0\]\.weight: must be between 1 and 100/,
      HEADER,
    ],
    [
      'RequestedToCapacityRatio without a shape',
      fitArgs('{scoringStrategy: {type: RequestedToCapacityRatio}}'),
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.scoringStrategy\.requestedToCapacityRatio: is required/,
      HEADER,
    ],
    [
      'a shape whose utilization goes down',
      fitArgs(
        '{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: ' +
          '{shape: [{utilization: 50, score: 1}, {utilization: 20, score: 2}]}}}',
      ),
      /requestedToCapacityRatio\.shape\[1\]\.utilization: must be greater/,
      HEADER,
    ],
    [
      'a shape score above 10',
      fitArgs(
        '{scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: ' +
          '{shape: [{utilization: 0, score: 11}]}}}',
      ),
      /shape\[0\]\.score: must be between 0 and 10/,
      HEADER,
    ],
    [
      'defaultConstraints with the System defaulting',
      spreadArgs('{defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}'),
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.defaultConstraints: must be empty when defaultingType is System/,
      HEADER,
    ],
    [
      'a default constraint with a selector',
      spreadArgs(
        '{defaultingType: List, defaultConstraints: [{maxSkew: 1, topologyKey: zone, ' +
          'whenUnsatisfiable: DoNotSchedule, labelSelector: {}}]}',
      ),
      /defaultConstraints\[0\]\.labelSelector: must not be set/,
      HEADER,
    ],
    [
      'a repeated pluginConfig',
      'profiles: [{pluginConfig: [{name: NodeResourcesFit, args: {}}, {name: NodeResourcesFit, args: {}}]}]',
      /^profiles\[0\]\.pluginConfig\[1\]\.name: repeated config for plugin NodeResourcesFit/,
      HEADER,
    ],
  ])('%s', (_name, body, message, header) => {
    expect(problemsOf(body, header)[0]).toMatch(message);
  });
});

describe('other settings', () => {
  it('reads InterPodAffinityArgs.hardPodAffinityWeight (0–100)', () => {
    const body = (w: number) =>
      `profiles: [{pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeight: ${w}}}]}]`;
    expect(profileOf(body(5)).hardPodAffinityWeight).toBe(5);
    expect(profileOf('').hardPodAffinityWeight).toBeUndefined();
    expect(problemsOf(body(101))[0]).toMatch(
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.hardPodAffinityWeight: must be between 0 and 100/,
    );
  });

  it('keeps percentageOfNodesToScore, global or the profile’s own (which wins)', () => {
    expect(profileOf('percentageOfNodesToScore: 30\n').percentageOfNodesToScore).toBe(30);
    expect(
      profileOf('percentageOfNodesToScore: 30\nprofiles: [{percentageOfNodesToScore: 70}]\n').percentageOfNodesToScore,
    ).toBe(70);
    expect(problemsOf('profiles: [{percentageOfNodesToScore: 101}]')[0]).toMatch(
      /^profiles\[0\]\.percentageOfNodesToScore: must be between 0 and 100/,
    );
  });
});

// Issue 29: every field of the file is modelled or refused by its path; none is read and dropped.
describe('fields modelled', () => {
  const args = (plugin: string, a: string): string =>
    `profiles:\n- pluginConfig:\n  - name: ${plugin}\n    args: ${a}\n`;

  it('NodeResourcesFit ignoredResources and ignoredResourceGroups', () => {
    expect(
      profileOf(args('NodeResourcesFit', '{ignoredResources: [example.com/foo], ignoredResourceGroups: [gpu.io]}')),
    ).toMatchObject({
      fitIgnored: { resources: ['example.com/foo'], groups: ['gpu.io'] },
      fitScoring: DEFAULT_PROFILE.fitScoring,
    });
    expect(problemsOf(args('NodeResourcesFit', '{ignoredResourceGroups: [gpu.io/x]}'))[0]).toMatch(
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.ignoredResourceGroups\[0\]: must not contain "\/"/,
    );
  });

  it('NodeResourcesBalancedAllocation resources (weight 1 only)', () => {
    expect(
      profileOf(
        args(
          'NodeResourcesBalancedAllocation',
          '{resources: [{name: cpu, weight: 1}, {name: example.com/gpu, weight: 1}]}',
        ),
      ).balancedResources,
    ).toEqual([
      { name: 'cpu', weight: 1 },
      { name: 'example.com/gpu', weight: 1 },
    ]);
    expect(problemsOf(args('NodeResourcesBalancedAllocation', '{resources: [{name: cpu, weight: 2}]}'))[0]).toMatch(
      /args\.resources\[0\]\.weight: must be between 1 and 1/,
    );
  });

  it('NodeAffinity addedAffinity, required and preferred', () => {
    const profile = profileOf(
      args(
        'NodeAffinity',
        '{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: ' +
          '[{key: pool, operator: In, values: [a]}]}]}, preferredDuringSchedulingIgnoredDuringExecution: ' +
          '[{weight: 5, preference: {matchExpressions: [{key: disk, operator: In, values: [ssd]}]}}]}}',
      ),
    );
    expect(profile.addedAffinity?.required?.text).toBe('affinity: pool=a');
    expect(profile.addedAffinity?.preferred.map((p) => p.weight)).toEqual([5]);
    expect(
      problemsOf(
        args(
          'NodeAffinity',
          '{addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 500, preference: {}}]}}',
        ),
      )[0],
    ).toMatch(
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.addedAffinity\.preferredDuringSchedulingIgnoredDuringExecution\[0\]\.weight/,
    );
  });

  it('InterPodAffinity ignorePreferredTermsOfExistingPods', () => {
    expect(
      profileOf(args('InterPodAffinity', '{ignorePreferredTermsOfExistingPods: true}'))
        .ignorePreferredTermsOfExistingPods,
    ).toBe(true);
    expect(
      profileOf(args('InterPodAffinity', '{ignorePreferredTermsOfExistingPods: false}'))
        .ignorePreferredTermsOfExistingPods,
    ).toBeUndefined();
  });

  it.each([
    ['filter.disabled', 'profiles: [{plugins: {filter: {disabled: [{name: NodePorts}]}}}]', ['NodePorts']],
    [
      'multiPoint.disabled',
      'profiles: [{plugins: {multiPoint: {disabled: [{name: TaintToleration}]}}}]',
      ['TaintToleration'],
    ],
    [
      'filter.disabled * with one enabled again',
      'profiles: [{plugins: {filter: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit}]}}}]',
      [
        'NodeUnschedulable',
        'NodeAffinity',
        'TaintToleration',
        'NodePorts',
        'VolumeRestrictions',
        'NodeVolumeLimits',
        'VolumeBinding',
        'PodTopologySpread',
        'InterPodAffinity',
      ],
    ],
    ['nothing disabled', '', undefined],
  ])('disabled filter plugins: %s', (_name, body, disabled) => {
    expect(profileOf(body).disabledFilters).toEqual(disabled);
  });
});

describe('fields refused, named by their path', () => {
  it.each([
    ['extenders', 'extenders: [{urlPrefix: "http://x"}]', /^extenders: are not modelled/],
    [
      'SelectorSpread enabled',
      'profiles: [{plugins: {score: {enabled: [{name: SelectorSpread}]}}}]',
      /^profiles\[0\]\.plugins: enables SelectorSpread/,
    ],
    [
      'args of a plugin without modelled args',
      'profiles: [{pluginConfig: [{name: ImageLocality, args: {foo: 1}}]}]',
      /^profiles\[0\]\.pluginConfig\[0\]\.args: args of ImageLocality are not modelled/,
    ],
    [
      'VolumeBinding’s scoring shape',
      'profiles: [{pluginConfig: [{name: VolumeBinding, args: {bindTimeoutSeconds: 60, shape: []}}]}]',
      /^profiles\[0\]\.pluginConfig\[0\]\.args\.shape: unknown field/,
    ],
    [
      'an unknown profile field',
      'profiles: [{schedulerName: default-scheduler, plugin: {}}]',
      /^profiles\[0\]\.plugin: unknown field/,
    ],
  ])('%s', (_name, body, message) => {
    expect(problemsOf(body)[0]).toMatch(message);
  });

  it('accepts the args of plugins that do not change where a pod lands', () => {
    expect(() =>
      profileOf('profiles: [{pluginConfig: [{name: DefaultPreemption, args: {minCandidateNodesAbsolute: 50}}]}]'),
    ).not.toThrow();
  });
});
