// RebalancePolicy parsing: defaults, validation of every field (all problems reported at once, with paths),
// priority thresholds and --policy files.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { matchesSelector, selectorText } from '../../src/model/labels.js';
import { applyDefaults, DEFAULT_SPEC } from '../../src/policy/defaults.js';
import {
  checkPolicy,
  DEFAULT_POLICY,
  loadPolicyFile,
  parsePolicy,
  resolvePriorityThreshold,
} from '../../src/policy/parse.js';
import type { Policy } from '../../src/policy/types.js';
import { STRATEGIES } from '../../src/strategies/registry.js';
import { convertPriorityClass } from '../../src/snapshot/convert.js';
import { makePolicy, makePriorityClass } from '../builders.js';

const fixture = (name: string): string => join(import.meta.dirname, '..', 'fixtures', name);
const where = { file: 'policy.yaml' };

function problemsOf(spec: Record<string, unknown>): Array<{ field: string; problem: string }> {
  return checkPolicy(makePolicy('p', spec)).problems;
}

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error('expected an InputError');
}

describe('defaults', () => {
  it('an empty spec gets every default of DESIGN.md', () => {
    const policy = parsePolicy(makePolicy('default'), where);
    expect(policy.name).toBe('default');
    expect(policy.generation).toBe(1);
    const { podSelector, strategies, ...rest } = policy.spec;
    expect(selectorText(podSelector)).toBe('');
    expect(matchesSelector(podSelector, { any: 'pod' })).toBe(true);
    // Each strategy's section has its strategy's defaults; test/policy/crdMirror.test.ts holds those to the CRD's,
    // and test/manifests/crd.test.ts the CRD's to DESIGN.md.
    // No spec.strategies: topologySpread alone runs, every other section is off (what a policy names is what runs).
    expect(strategies).toEqual(
      Object.fromEntries(
        STRATEGIES.all.map((s) => [s.key, { ...s.policy.defaults, enabled: s.key === 'topologySpread' }]),
      ),
    );
    expect(rest).toEqual({
      schedule: '*/5 * * * *',
      suspend: false,
      mode: 'DryRun',
      namespaces: { include: [], exclude: ['kube-system'] },
      eviction: {
        priorityThreshold: { className: 'system-cluster-critical' },
        maxPerCycle: 10,
        maxPerNode: 2,
        maxPerNamespace: 5,
        maxPerWorkload: 1,
        minPodAgeMs: 300_000,
        evictLocalStoragePods: false,
        evictBarePods: false,
        evictPodsWithPVC: true,
        nodeFit: true,
        waitForReplacement: true,
        replacementTimeoutMs: 300_000,
        cooldownMs: 1_800_000,
      },
      triggers: { nodeChanges: true, debounceMs: 2_000 },
      windows: [],
      timeZone: 'UTC',
    });
  });

  it('DEFAULT_POLICY is the defaults, named "default", and cannot be changed by accident', () => {
    expect(DEFAULT_POLICY.name).toBe('default');
    expect(DEFAULT_POLICY.spec).toEqual(applyDefaults({}));
    expect(Object.isFrozen(DEFAULT_SPEC.namespaces.exclude)).toBe(true);
    expect(Object.isFrozen(DEFAULT_SPEC.eviction)).toBe(true);
  });

  it.each([
    ['no spec', { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', metadata: { name: 'x' } }],
    ['null spec', { kind: 'RebalancePolicy', metadata: { name: 'x' }, spec: null }],
    [
      'null sections (YAML keys with nothing after them)',
      makePolicy('x', { namespaces: null, strategies: { topologySpread: null }, eviction: null }),
    ],
  ])('%s ⇒ defaults', (_name, raw) => {
    expect(parsePolicy(raw, where).spec).toEqual(DEFAULT_POLICY.spec);
  });

  it('a nameless hand-written policy is called "default"', () => {
    expect(parsePolicy({ spec: { mode: 'Evict' } }, where).name).toBe('default');
  });

  it('given values replace defaults one by one', () => {
    const policy = parsePolicy(
      makePolicy('p', {
        namespaces: { include: ['shop'] },
        strategies: { nodeAffinity: { preferred: true } },
        eviction: { maxPerCycle: 3 },
      }),
      where,
    );
    expect(policy.spec.namespaces).toEqual({ include: ['shop'], exclude: ['kube-system'] });
    expect(policy.spec.strategies.nodeAffinity).toEqual({ enabled: true, required: true, preferred: true });
    expect(policy.spec.eviction).toMatchObject({ maxPerCycle: 3, maxPerNode: 2 });
  });
});

describe('what a policy names is what runs', () => {
  const running = (spec: Record<string, unknown>): string[] => {
    const { strategies } = parsePolicy(makePolicy('p', spec), where).spec;
    return STRATEGIES.all.filter((s) => strategies[s.key]?.enabled === true).map((s) => s.key);
  };

  it.each<{ name: string; spec: Record<string, unknown>; runs: string[] }>([
    { name: 'no strategies at all: topologySpread alone', spec: {}, runs: ['topologySpread'] },
    { name: 'strategies: {} names none: topologySpread alone', spec: { strategies: {} }, runs: ['topologySpread'] },
    { name: 'strategies: null is no strategies', spec: { strategies: null }, runs: ['topologySpread'] },
    {
      name: 'a node-utilization policy balances utilization and nothing else',
      spec: { strategies: { lowNodeUtilization: {}, removeDuplicates: { excludeOwnerKinds: ['Job'] } } },
      runs: ['lowNodeUtilization', 'removeDuplicates'],
    },
    {
      name: 'a section present runs without enabled',
      spec: { strategies: { nodeTaints: { includePreferNoSchedule: true } } },
      runs: ['nodeTaints'],
    },
    {
      name: 'enabled: false turns a present section off',
      spec: { strategies: { topologySpread: { enabled: false }, podAffinity: {} } },
      runs: ['podAffinity'],
    },
    {
      name: 'a null section is absent (as the API server prunes it)',
      spec: { strategies: { nodeTaints: null } },
      runs: ['topologySpread'],
    },
    {
      name: 'every section turned off: nothing runs',
      spec: { strategies: { topologySpread: { enabled: false } } },
      runs: [],
    },
  ])('$name', ({ spec, runs }) => {
    expect(running(spec)).toEqual(runs);
  });

  it('a present section keeps its other defaults', () => {
    const { strategies } = parsePolicy(makePolicy('p', { strategies: { lowNodeUtilization: {} } }), where).spec;
    expect(strategies.lowNodeUtilization).toEqual({
      ...STRATEGIES.byName('LowNodeUtilization')!.policy.defaults,
      enabled: true,
    });
    expect(strategies.nodeTaints.enabled).toBe(false);
  });
});

describe('valid values', () => {
  it('reads the fixture policy file (first RebalancePolicy of a List)', () => {
    const policy = loadPolicyFile(fixture('policy.yaml'));
    expect(policy.name).toBe('zones');
    expect(policy.generation).toBe(2);
    expect(policy.spec).toMatchObject({
      mode: 'Evict',
      schedule: '0 */2 * * * *',
      namespaces: { include: ['shop', 'payments'], exclude: ['kube-system'] },
      strategies: {
        topologySpread: {
          enabled: true,
          includeSoftConstraints: true,
          defaultConstraints: [
            {
              maxSkew: 1,
              topologyKey: 'topology.kubernetes.io/zone',
              whenUnsatisfiable: 'ScheduleAnyway',
              minDomains: 1,
              nodeAffinityPolicy: 'Honor',
              nodeTaintsPolicy: 'Ignore',
            },
            {
              maxSkew: 2,
              topologyKey: 'kubernetes.io/hostname',
              whenUnsatisfiable: 'DoNotSchedule',
              minDomains: 3,
              nodeAffinityPolicy: 'Honor',
              nodeTaintsPolicy: 'Ignore',
            },
          ],
        },
        nodeTaints: {
          excludedTaints: [
            { key: 'spot', value: undefined },
            { key: 'dedicated', value: 'batch' },
          ],
        },
      },
      eviction: {
        priorityThreshold: { value: 10000 },
        maxPerCycle: 0,
        minPodAgeMs: 5_400_000,
        replacementTimeoutMs: 90_000,
        cooldownMs: 5_400_000,
      },
    });
    expect(selectorText(policy.spec.podSelector)).toBe('tier!=batch');
  });

  it.each([
    ['5-field cron', { schedule: '*/10 * * * *' }],
    ['6-field cron with seconds', { schedule: '30 */5 * * * *' }],
    ['named days', { schedule: '0 3 * * MON-FRI' }],
    ['Evict', { mode: 'Evict' }],
    ['suspend', { suspend: true }],
    ['include kube-system by clearing exclude', { namespaces: { include: ['kube-system'], exclude: [] } }],
    ['matchLabels podSelector', { podSelector: { matchLabels: { team: 'a' } } }],
    ['className threshold', { eviction: { priorityThreshold: { className: 'business-critical' } } }],
    ['negative value threshold', { eviction: { priorityThreshold: { value: -10 } } }],
    ['zero limits', { eviction: { maxPerCycle: 0, maxPerNode: 0, maxPerNamespace: 0, maxPerWorkload: 0 } }],
    ['durations 0 and 0s', { eviction: { minPodAge: '0', cooldown: '0s', replacementTimeout: '1m30s' } }],
    [
      'excluded taint with empty value',
      { strategies: { nodeTaints: { excludedTaints: ['example.com/maintenance='] } } },
    ],
    [
      'every boolean',
      {
        strategies: { podAffinity: { enabled: true }, podAntiAffinity: { enabled: false } },
        eviction: { nodeFit: false, evictBarePods: true },
      },
    ],
  ])('accepts %s', (_name, spec) => {
    expect(problemsOf(spec)).toEqual([]);
  });

  it('an empty podSelector means every pod; an absent one too', () => {
    expect(selectorText(parsePolicy(makePolicy('p', { podSelector: {} }), where).spec.podSelector)).toBe('');
  });
});

describe('triggers, windows and time zone', () => {
  it('reads them with durations in milliseconds', () => {
    const policy = parsePolicy(
      makePolicy('w', {
        triggers: { nodeChanges: false, debounce: '500ms' },
        windows: [
          { schedule: '0 22 * * 1-5', duration: '6h' },
          { schedule: '0 0 * * 6', duration: '48h' },
        ],
        timeZone: 'Europe/Berlin',
      }),
      where,
    );
    expect(policy.spec.triggers).toEqual({ nodeChanges: false, debounceMs: 500 });
    expect(policy.spec.windows).toEqual([
      { schedule: '0 22 * * 1-5', durationMs: 6 * 3_600_000 },
      { schedule: '0 0 * * 6', durationMs: 48 * 3_600_000 },
    ]);
    expect(policy.spec.timeZone).toBe('Europe/Berlin');
  });

  it('keeps the other trigger default when one is given', () => {
    expect(parsePolicy(makePolicy('t', { triggers: { debounce: '0s' } }), where).spec.triggers).toEqual({
      nodeChanges: true,
      debounceMs: 0,
    });
  });
});

describe('invalid values: each problem names its field', () => {
  it.each([
    ['a 4-field cron', { schedule: '*/5 * * *' }, 'spec.schedule', /5 fields, or 6 with seconds/],
    ['a 7-field cron', { schedule: '0 0 */5 * * * *' }, 'spec.schedule', /5 fields, or 6/],
    ['an out-of-range cron field', { schedule: '61 * * * *' }, 'spec.schedule', /minute "61" is out of range 0-59/],
    // node-cron would expand these ranges into arrays of 2e8 elements (and die): bounded before it sees them.
    ['a huge cron range', { schedule: '0-200000000 * * * *' }, 'spec.schedule', /minute "200000000" is out of range/],
    ['a huge hour range', { schedule: '0 0-100000000 * * *' }, 'spec.schedule', /hour "100000000" is out of range/],
    ['a huge step', { schedule: '*/1000000 * * * *' }, 'spec.schedule', /minute step "1000000" must be/],
    ['a day of month 0', { schedule: '0 0 0 * *' }, 'spec.schedule', /day of month "0" is out of range 1-31/],
    ['a huge seconds range', { schedule: '0-99999999 * * * * *' }, 'spec.schedule', /second "99999999"/],
    ['a cron macro', { schedule: '@daily' }, 'spec.schedule', /5 fields/],
    ['a non-string schedule', { schedule: 5 }, 'spec.schedule', /must be a string/],
    ['mode in lower case', { mode: 'evict' }, 'spec.mode', /one of DryRun, Evict/],
    ['suspend as a string', { suspend: 'true' }, 'spec.suspend', /true or false/],
    ['include not a list', { namespaces: { include: 'shop' } }, 'spec.namespaces.include', /list of strings/],
    [
      'an invalid namespace name',
      { namespaces: { exclude: ['Kube-System'] } },
      'spec.namespaces.exclude[0]',
      /not a valid namespace name/,
    ],
    [
      'a namespace both included and excluded',
      { namespaces: { include: ['shop'], exclude: ['shop'] } },
      'spec.namespaces',
      /must not share/,
    ],
    ['a duplicate namespace', { namespaces: { include: ['a', 'a'] } }, 'spec.namespaces.include[1]', /duplicate/],
    [
      'podSelector operator Inn',
      { podSelector: { matchExpressions: [{ key: 'a', operator: 'Inn', values: ['x'] }] } },
      'spec.podSelector.matchExpressions[0].operator',
      /one of In, NotIn/,
    ],
    [
      'podSelector In without values',
      { podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      'spec.podSelector.matchExpressions[0].values',
      /non-empty/,
    ],
    [
      'podSelector typo',
      { podSelector: { matchLabel: { app: 'web' } } },
      'spec.podSelector.matchLabel',
      /unknown field \(did you mean matchLabels\?\)/,
    ],
    [
      'podSelector expression typo',
      { podSelector: { matchExpressions: [{ key: 'a', operator: 'Exists', value: [] }] } },
      'spec.podSelector.matchExpressions[0].value',
      /did you mean values/,
    ],
    [
      'maxSkew 0 in a default constraint',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [{ maxSkew: 0, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' }],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].maxSkew',
      /integer ≥ 1/,
    ],
    [
      'a default constraint with a labelSelector',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', labelSelector: {} },
            ],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].labelSelector',
      /must not be set/,
    ],
    [
      'a default constraint without topologyKey',
      { strategies: { topologySpread: { defaultConstraints: [{ maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' }] } } },
      'spec.strategies.topologySpread.defaultConstraints[0].topologyKey',
      /is required/,
    ],
    [
      'a default constraint with an invalid topologyKey',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [{ maxSkew: 1, topologyKey: 'a b', whenUnsatisfiable: 'DoNotSchedule' }],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].topologyKey',
      /invalid/,
    ],
    [
      'a default constraint without whenUnsatisfiable',
      { strategies: { topologySpread: { defaultConstraints: [{ maxSkew: 1, topologyKey: 'zone' }] } } },
      'spec.strategies.topologySpread.defaultConstraints[0].whenUnsatisfiable',
      /is required/,
    ],
    [
      'minDomains with ScheduleAnyway',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', minDomains: 2 },
            ],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].minDomains',
      /only be set when whenUnsatisfiable is DoNotSchedule/,
    ],
    [
      'minDomains 0',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', minDomains: 0 },
            ],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].minDomains',
      /integer ≥ 1/,
    ],
    [
      'an unknown nodeTaintsPolicy',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', nodeTaintsPolicy: 'Always' },
            ],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].nodeTaintsPolicy',
      /one of Honor, Ignore/,
    ],
    [
      'matchLabelKeys in a default constraint',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule', matchLabelKeys: ['a'] },
            ],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[0].matchLabelKeys',
      /unknown field/,
    ],
    [
      'two default constraints for one key and mode',
      {
        strategies: {
          topologySpread: {
            defaultConstraints: [
              { maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
              { maxSkew: 2, topologyKey: 'zone', whenUnsatisfiable: 'DoNotSchedule' },
            ],
          },
        },
      },
      'spec.strategies.topologySpread.defaultConstraints[1]',
      /duplicate constraint/,
    ],
    [
      'an excluded taint with an effect',
      { strategies: { nodeTaints: { excludedTaints: ['spot:NoSchedule'] } } },
      'spec.strategies.nodeTaints.excludedTaints[0]',
      /"key" or "key=value"/,
    ],
    [
      'an excluded taint with a bad value',
      { strategies: { nodeTaints: { excludedTaints: ['a=b c'] } } },
      'spec.strategies.nodeTaints.excludedTaints[0]',
      /taint value/,
    ],
    [
      'an unknown strategy',
      { strategies: { topologySpreed: {} } },
      'spec.strategies.topologySpreed',
      /did you mean topologySpread/,
    ],
    [
      'a strategy flag typo',
      { strategies: { nodeAffinity: { prefered: true } } },
      'spec.strategies.nodeAffinity.prefered',
      /did you mean preferred/,
    ],
    [
      'both value and className',
      { eviction: { priorityThreshold: { value: 5, className: 'x' } } },
      'spec.eviction.priorityThreshold',
      /exactly one of value and className/,
    ],
    [
      'neither value nor className',
      { eviction: { priorityThreshold: {} } },
      'spec.eviction.priorityThreshold',
      /exactly one/,
    ],
    [
      'a fractional threshold',
      { eviction: { priorityThreshold: { value: 1.5 } } },
      'spec.eviction.priorityThreshold.value',
      /integer/,
    ],
    [
      'an invalid class name',
      { eviction: { priorityThreshold: { className: 'High Priority' } } },
      'spec.eviction.priorityThreshold.className',
      /not a valid PriorityClass name/,
    ],
    [
      'a negative maxPerCycle',
      { eviction: { maxPerCycle: -1 } },
      'spec.eviction.maxPerCycle',
      /must be an integer ≥ 0/,
    ],
    ['a fractional maxPerNode', { eviction: { maxPerNode: 1.5 } }, 'spec.eviction.maxPerNode', /integer ≥ 0/],
    [
      'a string maxPerNamespace',
      { eviction: { maxPerNamespace: '5' } },
      'spec.eviction.maxPerNamespace',
      /integer ≥ 0/,
    ],
    ['minPodAge in days', { eviction: { minPodAge: '1d' } }, 'spec.eviction.minPodAge', /unknown unit "d"/],
    ['minPodAge without unit', { eviction: { minPodAge: '300' } }, 'spec.eviction.minPodAge', /missing unit/],
    ['minPodAge as a number', { eviction: { minPodAge: 300 } }, 'spec.eviction.minPodAge', /duration string/],
    ['a negative cooldown', { eviction: { cooldown: '-5m' } }, 'spec.eviction.cooldown', /must not be negative/],
    ['nodeFit as a string', { eviction: { nodeFit: 'yes' } }, 'spec.eviction.nodeFit', /true or false/],
    ['an eviction typo', { eviction: { maxPerCycel: 3 } }, 'spec.eviction.maxPerCycel', /did you mean maxPerCycle/],
    ['an unknown spec field', { dryRun: true }, 'spec.dryRun', /unknown field/],
    ['debounce without unit', { triggers: { debounce: '2' } }, 'spec.triggers.debounce', /missing unit/],
    ['a negative debounce', { triggers: { debounce: '-1s' } }, 'spec.triggers.debounce', /must not be negative/],
    ['nodeChanges as a string', { triggers: { nodeChanges: 'yes' } }, 'spec.triggers.nodeChanges', /true or false/],
    ['a triggers typo', { triggers: { debounse: '1s' } }, 'spec.triggers.debounse', /did you mean debounce/],
    ['windows not a list', { windows: { schedule: '0 22 * * *' } }, 'spec.windows', /must be a list/],
    ['a window without duration', { windows: [{ schedule: '0 22 * * *' }] }, 'spec.windows[0].duration', /required/],
    ['a window without schedule', { windows: [{ duration: '1h' }] }, 'spec.windows[0].schedule', /required/],
    [
      'a window with a bad cron',
      { windows: [{ schedule: '0 25 * * *', duration: '1h' }] },
      'spec.windows[0].schedule',
      /hour "25" is out of range 0-23/,
    ],
    [
      'a window with an unsupported cron special',
      { windows: [{ schedule: '0 0 15W * *', duration: '1h' }] },
      'spec.windows[0].schedule',
      /not supported in a window/,
    ],
    [
      'a zero-length window',
      { windows: [{ schedule: '0 22 * * *', duration: '0s' }] },
      'spec.windows[0].duration',
      /must be positive/,
    ],
    [
      'a window typo',
      { windows: [{ schedule: '0 22 * * *', duration: '1h', timezone: 'UTC' }] },
      'spec.windows[0].timezone',
      /unknown field/,
    ],
    ['an unknown time zone', { timeZone: 'Mars/Olympus_Mons' }, 'spec.timeZone', /not a known IANA time zone/],
    ['a time zone that is not a zone name', { timeZone: 'CET +1' }, 'spec.timeZone', /not an IANA time zone name/],
    ['a section that is not an object', { eviction: [] }, 'spec.eviction', /must be an object/],
  ])('%s', (_name, spec, field, problem) => {
    const problems = problemsOf(spec);
    expect(problems.map((p) => p.field)).toContain(field);
    expect(problems.find((p) => p.field === field)!.problem).toMatch(problem);
  });

  it.each([
    ['wrong apiVersion', { apiVersion: 'rebalancer.dev/v1', kind: 'RebalancePolicy' }, 'apiVersion'],
    ['wrong kind', { kind: 'Policy' }, 'kind'],
    ['an unknown top-level field', { kind: 'RebalancePolicy', specs: {} }, 'specs'],
    ['metadata not an object', { kind: 'RebalancePolicy', metadata: 'x' }, 'metadata'],
  ])('rejects %s', (_name, raw, field) => {
    expect(checkPolicy(raw).problems.map((p) => p.field)).toEqual([field]);
  });

  it('metadata fields set by the API server are allowed', () => {
    const raw = {
      ...makePolicy('p'),
      metadata: { name: 'p', uid: 'u', managedFields: [{}], resourceVersion: '5' },
      status: { x: 1 },
    };
    expect(checkPolicy(raw).problems).toEqual([]);
  });

  it('a non-object is rejected', () => {
    expect(checkPolicy('policy').problems).toEqual([
      { field: '', problem: 'must be a RebalancePolicy object (got string "policy")' },
    ]);
  });
});

describe('parsePolicy errors', () => {
  it('reports every problem of the typo fixture in one InputError', () => {
    const error = inputError(() => loadPolicyFile(fixture('policy-typos.yaml')));
    expect(error).toMatchObject({
      file: fixture('policy-typos.yaml'),
      object: 'RebalancePolicy typos',
      field: undefined,
    });
    for (const expected of [
      'spec.mode: must be one of DryRun, Evict',
      'spec.schedule: must be a cron expression',
      'spec.strategies.topologySpread.defaultConstraints[0].labelSelector: must not be set',
      'spec.strategies.topologySpread.defaultConstraints[0].maxSkew: must be an integer ≥ 1',
      'spec.strategies.topologySpread.defaultConstraints[0].minDomains: can only be set',
      'spec.eviction.maxPerCycel: unknown field (did you mean maxPerCycle?)',
      'spec.eviction.maxPerNode: must be an integer ≥ 0',
      'spec.eviction.minPodAge: unknown unit "d"',
      'spec.eviction.priorityThreshold: must set exactly one of value and className',
    ]) {
      expect(error.problem).toContain(expected);
    }
    expect(error.problem).toMatch(/^9 problems: /);
  });

  it('a single problem names its field in the InputError', () => {
    const error = inputError(() => parsePolicy(makePolicy('p', { eviction: { maxPerCycle: -1 } }), { file: 'f.yaml' }));
    expect(error).toMatchObject({
      file: 'f.yaml',
      object: 'RebalancePolicy p',
      field: 'spec.eviction.maxPerCycle',
      problem: 'must be an integer ≥ 0 (got number -1)',
    });
    expect(error.message).toBe(
      'f.yaml: RebalancePolicy p: spec.eviction.maxPerCycle: must be an integer ≥ 0 (got number -1)',
    );
  });

  it('uses the object name given by the caller', () => {
    const error = inputError(() =>
      parsePolicy(makePolicy('p', { mode: 'x' }), { file: 'snap.yaml', object: 'document 3' }),
    );
    expect(error.object).toBe('document 3');
  });

  it.each([
    ['a file without a RebalancePolicy', 'no-policy.yaml', /contains no RebalancePolicy \(found Node\)/],
    ['an empty file', 'empty.yaml', /contains no RebalancePolicy$/],
    ['a missing file', 'nope.yaml', /cannot read file/],
    ['broken YAML', 'broken-yaml.txt', /invalid YAML/],
  ])('loadPolicyFile: %s', (_name, file, problem) => {
    const error = inputError(() => loadPolicyFile(fixture(file)));
    expect(error.file).toBe(fixture(file));
    expect(error.problem).toMatch(problem);
  });
});

describe('resolvePriorityThreshold', () => {
  const classes = [
    makePriorityClass('business-critical', 1000),
    makePriorityClass('system-cluster-critical', 2000000000),
  ].map(convertPriorityClass);
  const withThreshold = (priorityThreshold: unknown): Policy =>
    parsePolicy(makePolicy('p', { eviction: { priorityThreshold } }), where);

  it.each([
    ['the default (system-cluster-critical)', DEFAULT_POLICY, 2_000_000_000],
    [
      'system-node-critical even when the snapshot lacks it',
      withThreshold({ className: 'system-node-critical' }),
      2_000_001_000,
    ],
    ['a class from the snapshot', withThreshold({ className: 'business-critical' }), 1000],
    ['an explicit value', withThreshold({ value: 500 }), 500],
  ])('%s', (_name, policy, expected) => {
    expect(resolvePriorityThreshold(policy, classes)).toBe(expected);
  });

  it('system-cluster-critical needs no PriorityClass in the snapshot', () => {
    expect(resolvePriorityThreshold(DEFAULT_POLICY, [])).toBe(2_000_000_000);
  });

  it('an unknown class is an InputError naming the field', () => {
    const error = inputError(() =>
      resolvePriorityThreshold(withThreshold({ className: 'gold' }), classes, { file: 'policy.yaml' }),
    );
    expect(error).toMatchObject({
      file: 'policy.yaml',
      object: 'RebalancePolicy p',
      field: 'spec.eviction.priorityThreshold.className',
    });
    expect(error.problem).toContain(
      'PriorityClass "gold" does not exist (known: business-critical, system-cluster-critical)',
    );
  });
});
