// `convert` of the descheduler chart's default policy and of every example policy in its README at its newest tag
// (verbatim copies, read by test/fixtures/descheduler/examples.ts): each gives RebalancePolicies our parser accepts,
// read as kubectl reads YAML (1.1), every plugin is carried over, and the notes are exactly those a table here says
// are warranted. The real API server's verdict on the same output is test/integration/convertRoundTrip.test.ts.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/program.js';
import { convertDeschedulerPolicy, renderConverted } from '../../src/convert/descheduler.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { STRATEGIES } from '../../src/strategies/registry.js';
import { CHART_DEFAULT, README_EXAMPLES, readmeExample } from '../fixtures/descheduler/examples.js';

type Json = Record<string, unknown>;

/** The output as kubectl reads it (YAML 1.1): the policies, each parsed by our parser, and their comment lines. */
function converted(policy: Json): { specs: Json[]; comments: string[]; names: string[]; notes: string[] } {
  const policies = convertDeschedulerPolicy(policy, 'policy.yaml');
  const text = renderConverted(policies, 'policy.yaml');
  const docs = parseAllDocuments(text, { version: '1.1' }).map((d) => d.toJS() as Json);
  const specs = docs.map((d) => parsePolicy(d, { file: 'out.yaml' }) && (d['spec'] as Json));
  const comments = text.split('\n').filter((l) => l.startsWith('# '));
  const notes = policies.flatMap((p) => p.notes);
  return { specs, comments, notes, names: docs.map((d) => (d['metadata'] as { name: string }).name) };
}

/** The plugins whose whole configuration a comment says was not carried over. */
function notCarried(comments: readonly string[]): string[] {
  return [...new Set(comments.flatMap((c) => /^# (\w+): not carried over/.exec(c)?.[1] ?? []))].filter(
    (p) => STRATEGIES.byDeschedulerPlugin(p) !== undefined,
  );
}

/** The plugins each example enables. */
function enabledPlugins(policy: Json): string[] {
  if (policy['apiVersion'] === 'descheduler/v1alpha1')
    return Object.entries(policy['strategies'] as Json)
      .filter(([, s]) => (s as Json)['enabled'] === true)
      .map(([name]) => name);
  const profiles = policy['profiles'] as Json[];
  return profiles.flatMap((p) =>
    Object.values((p['plugins'] ?? {}) as Json).flatMap((set) => ((set as Json)['enabled'] ?? []) as string[]),
  );
}

/** The subjects of the notes every conversion of a v1alpha2 profile named ProfileName may write: defaults of ours. */
const INTRODUCED = [
  'name',
  'namespaces.exclude',
  'eviction.maxPerCycle',
  'eviction.maxPerNode',
  'eviction.maxPerNamespace',
  'eviction.maxPerWorkload',
  'eviction.minPodAge',
  'eviction.waitForReplacement',
  'eviction.nodeFit',
  'schedule',
];

/** The other notes of each README example, by subject, and why each is warranted. */
const NOTED: Readonly<Record<string, readonly string[]>> = {
  // The example configures the evictor only: no plugin runs, in the descheduler either.
  '01-protected-storage-classes': ['nothing in this profile carries over'],
  // spec.nodeSelector differs in what it measures; no LowNodeUtilization reads the Prometheus provider.
  '02-example-policy': ['nodeSelector', 'metricsProviders[0]'],
  // "priorityClassName1" cannot be a PriorityClass's name.
  '18-priority-class-name': ['priorityThreshold.name'],
};

describe('convert: the descheduler documentation examples', () => {
  it("the chart's default policy carries over every plugin", () => {
    const { comments, specs } = converted(CHART_DEFAULT);
    expect(notCarried(comments)).toEqual([]);
    expect(specs).toHaveLength(1);
    expect(specs[0]!['strategies']).toMatchObject({
      tooManyRestarts: { enabled: true, podRestartThreshold: 100, includingInitContainers: true },
      nodeAffinity: { enabled: true, required: true, preferred: false },
      nodeTaints: { enabled: true },
      podAntiAffinity: { enabled: true },
      topologySpread: { enabled: true },
    });
    expect(specs[0]!['eviction']).toMatchObject({ evictLocalStoragePods: true, evictPodsWithPVC: false });
  });

  it('the chart default the tests convert is what the v0.36.0 chart renders from its values (the fixture file)', () => {
    const rendered = parse(readFileSync('test/fixtures/descheduler/chart-values-v0.36.yaml', 'utf8')) as Json;
    expect(rendered).toEqual(CHART_DEFAULT);
  });

  it('takes every policy example of the README (20 at v0.36.0)', () => {
    expect(README_EXAMPLES.map((e) => e.name)).toHaveLength(20);
  });

  it.each(README_EXAMPLES.map((e) => [e.name, e] as const))('%s', (_name, example) => {
    const { specs, comments, notes } = converted(example.policy);
    expect(specs.length).toBeGreaterThan(0);
    expect(notCarried(comments)).toEqual([]);
    // Every plugin enabled is enabled in one of the policies.
    for (const plugin of enabledPlugins(example.policy)) {
      const strategy = STRATEGIES.byDeschedulerPlugin(plugin)!;
      const on = specs.some((s) => ((s['strategies'] as Json)[strategy.key] as Json | undefined)?.['enabled'] === true);
      expect(on, plugin).toBe(true);
    }
    // Notes only where warranted: besides the defaults every conversion writes out, exactly these.
    const subjects = notes.map((n) => n.slice(0, n.indexOf(':'))).filter((s) => !INTRODUCED.includes(s));
    expect(subjects).toEqual(NOTED[example.name] ?? []);
  });

  it('the transition-based PodLifeTime example carries its conditions, transition time included', () => {
    const example = readmeExample('12-pod-lifetime-transition');
    const { comments, specs } = converted(example.policy);
    expect((specs[0]!['strategies'] as Json)['podLifeTime']).toEqual({
      enabled: true,
      // No maxPodLifeTimeSeconds: the plugin selects by state and condition at any age.
      maxPodLifeTime: '0s',
      states: ['Succeeded'],
      ownerKinds: { include: [], exclude: ['Job'] },
      conditions: [{ reason: 'PodCompleted', status: 'True', minTimeSinceLastTransition: '4h' }],
    });
    expect(comments.filter((c) => c.includes('PodLifeTime'))).toEqual([]);
  });
});

describe('convert: scopes, selectors and quoting', () => {
  const twoScopes: Json = {
    apiVersion: 'descheduler/v1alpha2',
    kind: 'DeschedulerPolicy',
    maxNoOfPodsToEvictTotal: 7,
    profiles: [
      {
        name: 'Mixed',
        pluginConfig: [
          { name: 'DefaultEvictor', args: { labelSelector: { matchLabels: { team: 'a' } } } },
          { name: 'PodLifeTime', args: { maxPodLifeTimeSeconds: 3600, namespaces: { include: ['batch'] } } },
          { name: 'RemovePodsViolatingNodeTaints', args: { labelSelector: { matchLabels: { rebalance: 'off' } } } },
          { name: 'RemoveFailedPods' },
        ],
        plugins: { deschedule: { enabled: ['PodLifeTime', 'RemovePodsViolatingNodeTaints', 'RemoveFailedPods'] } },
      },
    ],
  };

  it('plugins that look at different pods become one policy each, none narrowed by another', () => {
    const { specs, names, comments } = converted(twoScopes);
    expect(names).toEqual(['mixed', 'mixed-2', 'mixed-3']);
    const on = (s: Json): string[] =>
      Object.entries(s['strategies'] as Json)
        .filter(([, v]) => (v as Json)['enabled'] === true)
        .map(([k]) => k);
    expect(specs.map(on)).toEqual([['podLifeTime'], ['nodeTaints'], ['failedPods']]);
    expect(specs[0]!['namespaces']).toEqual({ include: ['batch'], exclude: [] });
    // A plugin without namespaces gets ours, kube-system excluded, written out with a note.
    expect(specs[1]!['namespaces']).toEqual({ include: [], exclude: ['kube-system'] });
    expect(specs[2]!['namespaces']).toEqual({ include: [], exclude: ['kube-system'] });
    expect(comments.some((c) => c.startsWith('# namespaces.exclude: kube-system, '))).toBe(true);
    // "Mixed" is not an object name: lower-cased, and said.
    expect(comments.some((c) => c.startsWith('# name: "mixed" for the profile "Mixed"'))).toBe(true);
    // The evictor's selector and the plugin's both hold.
    expect(specs[0]!['podSelector']).toEqual({ matchLabels: { team: 'a' } });
    expect(specs[1]!['podSelector']).toEqual({ matchLabels: { team: 'a', rebalance: 'off' } });
    expect(comments.some((c) => c.includes('first was kept'))).toBe(false);
    expect(
      comments.some((c) => c.startsWith('# scope: ') && c.includes('mixed-2: RemovePodsViolatingNodeTaints')),
    ).toBe(true);
    expect(comments.some((c) => c.startsWith('# maxNoOfPodsToEvictTotal: each of the 3 policies'))).toBe(true);
  });

  it('quotes every string YAML 1.1 or 1.2 would read as another type', () => {
    // Valid label values only ("~", "12:30" and ".inf" are not: convert refuses them as the API server would).
    const tricky = ['off', 'on', 'yes', 'no', 'y', 'n', 'null', '0755', '1e3', 'true', '0o17', '1_000', '0x1F'];
    const policy: Json = {
      apiVersion: 'descheduler/v1alpha2',
      kind: 'DeschedulerPolicy',
      profiles: [
        {
          name: 'Quote',
          pluginConfig: [
            {
              name: 'RemovePodsViolatingNodeTaints',
              args: {
                labelSelector: { matchExpressions: [{ key: 'rebalance', operator: 'NotIn', values: tricky }] },
              },
            },
          ],
          plugins: { deschedule: { enabled: ['RemovePodsViolatingNodeTaints'] } },
        },
      ],
    };
    const text = renderConverted(convertDeschedulerPolicy(policy, 'p.yaml'), 'p.yaml');
    for (const version of ['1.1', '1.2'] as const) {
      const spec = (parseAllDocuments(text, { version })[0]!.toJS() as Json)['spec'] as Json;
      const values = ((spec['podSelector'] as Json)['matchExpressions'] as Json[])[0]!['values'];
      expect(values, version).toEqual(tricky);
    }
    expect(text).toContain('- "off"');
  });

  it('an unknown plugin is exit 2 naming it, in pluginConfig, plugins or v1alpha1 strategies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convert-'));
    const cases: Array<[Json, RegExp]> = [
      [
        {
          apiVersion: 'descheduler/v1alpha2',
          kind: 'DeschedulerPolicy',
          profiles: [{ name: 'p', plugins: { balance: { enabled: ['RemovePodsViolatingTopologySpread'] } } }],
        },
        /profile p: profiles\[0\]\.plugins\.balance\.enabled\[0\]: unknown plugin "RemovePodsViolatingTopologySpread"/,
      ],
      [
        {
          apiVersion: 'descheduler/v1alpha2',
          kind: 'DeschedulerPolicy',
          profiles: [{ name: 'p', pluginConfig: [{ name: 'MyPlugin' }], plugins: {} }],
        },
        /pluginConfig\[0\]\.name: unknown plugin "MyPlugin"/,
      ],
      [
        {
          apiVersion: 'descheduler/v1alpha1',
          kind: 'DeschedulerPolicy',
          strategies: { PodLifetime: { enabled: true } },
        },
        /strategies\.PodLifetime: unknown plugin "PodLifetime"/,
      ],
    ];
    for (const [i, [policy, message]] of cases.entries()) {
      const file = join(dir, `p${i}.json`);
      writeFileSync(file, JSON.stringify(policy));
      let err = '';
      let out = '';
      const code = await main(['convert', '--descheduler-policy', file], {
        stdout: (s) => (out += s),
        stderr: (s) => (err += s),
      });
      expect(code).toBe(2);
      expect(out).toBe('');
      expect(err).toMatch(message);
    }
  });

  it('what was not carried over is on stderr too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'convert-'));
    const file = join(dir, 'chart.json');
    writeFileSync(file, JSON.stringify(readmeExample('02-example-policy').policy));
    let err = '';
    const code = await main(['convert', '--descheduler-policy', file], {
      stdout: () => undefined,
      stderr: (s) => (err += s),
    });
    expect(code).toBe(0);
    expect(err).toContain('note: profilename: metricsProviders[0]: not carried over: ');
    expect(err).toContain('note: profilename: name: "profilename" for the profile "ProfileName": ');
    expect(err).toContain("note: profilename: eviction.maxPerWorkload: 1, kube-rebalancer's default: ");
    expect(err).not.toMatch(/minReplicas: not carried over|gracePeriodSeconds: not carried over/);
  });
});

describe('convert: evictableNamespaces', () => {
  it("LowNodeUtilization's and HighNodeUtilization's evictableNamespaces are the policy's namespaces", () => {
    const example = readmeExample('05-high-node-utilization');
    const docs = renderConverted(convertDeschedulerPolicy(example.policy, 'p.yaml'), 'p.yaml');
    // Whether or not this build has the strategy, the scope is carried: once merged, the policy acts there only.
    if (STRATEGIES.byDeschedulerPlugin('HighNodeUtilization') !== undefined) {
      const spec = (parseAllDocuments(docs)[0]!.toJS() as Json)['spec'] as Json;
      expect(spec['namespaces']).toEqual({ include: [], exclude: ['kube-system', 'namespace1'] });
    } else {
      expect(docs).toContain('# HighNodeUtilization: not carried over');
    }
  });
});
