// `convert --descheduler-policy`: every output is a valid RebalancePolicy in DryRun mode, the settings with a
// counterpart map to it, and every setting without one is a comment saying why.
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/program.js';
import { convertDeschedulerPolicy } from '../../src/convert/descheduler.js';
import { parsePolicy } from '../../src/policy/parse.js';

async function convert(file: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['convert', '--descheduler-policy', `test/fixtures/descheduler/${file}`], {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
  });
  return { code, out, err };
}

/** The output's documents, each with its leading comment lines. */
function documents(out: string): { comments: string[]; raw: Record<string, unknown> }[] {
  return out.split(/^---$/m).map((text) => ({
    comments: text
      .split('\n')
      .filter((l) => l.startsWith('# '))
      .map((l) => l.slice(2)),
    raw: parseAllDocuments(text)[0]!.toJS() as Record<string, unknown>,
  }));
}

describe('convert --descheduler-policy', () => {
  it.each([
    // v1alpha1: the spread strategy's namespaces, priority threshold and nodeFit differ from the others'.
    ['v1alpha1.yaml', 2],
    // Topology spread and node taints filter namespaces (spread a label too), the others look at every pod.
    ['v1alpha2-full.yaml', 3],
    ['v1alpha2-not-carried.yaml', 2],
    ['configmap.yaml', 1],
  ])('%s gives %i valid DryRun policies', async (file, count) => {
    const r = await convert(file);
    expect(r.code).toBe(0);
    // What was not carried over is said on stderr too, one note a line.
    for (const line of r.err.split('\n').filter((l) => l !== '')) expect(line).toMatch(/^note: [a-z0-9-]+: /);
    const docs = documents(r.out);
    expect(docs).toHaveLength(count);
    for (const doc of docs) {
      const policy = parsePolicy(doc.raw, { file });
      expect(policy.spec.mode).toBe('DryRun');
      expect(doc.comments.some((c) => c.includes('DryRun'))).toBe(true);
    }
  });

  it.each<readonly [string, number, string, unknown]>([
    // [fixture, document, field path, value]
    ['v1alpha2-full.yaml', 0, 'namespaces', { include: ['shop', 'payments'], exclude: [] }],
    ['v1alpha2-full.yaml', 0, 'podSelector.matchLabels', { tier: 'web' }],
    ['v1alpha2-full.yaml', 0, 'strategies.topologySpread.includeSoftConstraints', true],
    // What a policy names is what runs: a plugin not enabled is no section at all.
    ['v1alpha2-full.yaml', 0, 'strategies.nodeTaints', undefined],
    ['v1alpha2-full.yaml', 2, 'namespaces', { include: ['shop', 'payments'], exclude: [] }],
    ['v1alpha2-full.yaml', 2, 'podSelector', undefined],
    ['v1alpha2-full.yaml', 2, 'strategies.nodeTaints.excludedTaints', ['dedicated=special-user', 'reserved']],
    ['v1alpha2-full.yaml', 2, 'strategies.nodeTaints.includePreferNoSchedule', true],
    ['v1alpha2-full.yaml', 2, 'strategies.topologySpread.enabled', false],
    // No namespaces in the plugin: ours excludes kube-system, written out (and noted).
    ['v1alpha2-full.yaml', 1, 'namespaces', { include: [], exclude: ['kube-system'] }],
    ['v1alpha2-full.yaml', 1, 'strategies.nodeAffinity', { enabled: true, required: true, preferred: true }],
    ['v1alpha2-full.yaml', 1, 'strategies.podAntiAffinity.enabled', true],
    ['v1alpha2-full.yaml', 1, 'strategies.podLifeTime', { enabled: true, maxPodLifeTime: '24h' }],
    ...[0, 1, 2].flatMap((i) =>
      (
        [
          // evictSystemCriticalPods: the descheduler then applies no priority threshold at all (its 10000 is unused).
          ['eviction.evictSystemCriticalPods', true],
          ['eviction.priorityThreshold', { value: 2_000_001_001 }],
          ['eviction.noEvictionPolicy', 'Preferred'],
          ['eviction.nodeFit', true],
          ['eviction.evictLocalStoragePods', true],
          ['eviction.evictPodsWithPVC', false],
          ['eviction.maxPerNode', 5],
          ['eviction.maxPerNamespace', 3],
          ['eviction.maxPerCycle', 20],
          // Failed bare pods only: evictBarePods (Running ones) stays unset.
          ['eviction.evictFailedBarePods', true],
          ['eviction.evictBarePods', undefined],
        ] as const
      ).map(([path, value]) => ['v1alpha2-full.yaml', i, path, value] as const),
    ),
    [
      'v1alpha2-not-carried.yaml',
      0,
      'strategies.tooManyRestarts',
      { enabled: true, podRestartThreshold: 100, includingInitContainers: true },
    ],
    [
      'v1alpha2-not-carried.yaml',
      0,
      'strategies.failedPods',
      {
        enabled: true,
        reasons: ['NodeAffinity'],
        minPodLifetime: '1h',
        includingInitContainers: true,
        excludeOwnerKinds: ['Job'],
      },
    ],
    ['v1alpha2-not-carried.yaml', 1, 'eviction.priorityThreshold', undefined],
    ['v1alpha2-not-carried.yaml', 1, 'strategies.topologySpread.includeSoftConstraints', false],
    ['v1alpha1.yaml', 0, 'strategies.podLifeTime', { enabled: true, maxPodLifeTime: '24h' }],
    ['v1alpha1.yaml', 0, 'strategies.tooManyRestarts', { enabled: true, podRestartThreshold: 100 }],
    ['v1alpha1.yaml', 0, 'strategies.failedPods', { enabled: true, minPodLifetime: '0s', excludeOwnerKinds: [] }],
    ['v1alpha1.yaml', 0, 'strategies.topologySpread.enabled', false],
    ['v1alpha1.yaml', 0, 'eviction.priorityThreshold', undefined],
    ['v1alpha1.yaml', 1, 'namespaces', { include: [], exclude: ['kube-system', 'monitoring'] }],
    ['v1alpha1.yaml', 1, 'eviction.priorityThreshold', { className: 'priorityclass1' }],
    ['v1alpha1.yaml', 1, 'eviction.nodeFit', false],
    ['v1alpha1.yaml', 1, 'strategies.topologySpread', { enabled: true, includeSoftConstraints: true }],
    ['v1alpha1.yaml', 1, 'strategies.podAntiAffinity', undefined],
    ...[0, 1].flatMap((i) =>
      (
        [
          ['eviction.maxPerNode', 40],
          ['eviction.evictPodsWithPVC', true],
          ['strategies.nodeAffinity', undefined],
        ] as const
      ).map(([path, value]) => ['v1alpha1.yaml', i, path, value] as const),
    ),
    // The utilization and duplicates plugins, one to one, in both versions (v1alpha1 nests them under params).
    [
      'v1alpha2-full.yaml',
      1,
      'strategies.lowNodeUtilization',
      {
        enabled: true,
        thresholds: { cpu: 20, memory: 20, pods: 20 },
        targetThresholds: { cpu: 50, memory: 50, pods: 50 },
      },
    ],
    [
      'v1alpha1.yaml',
      0,
      'strategies.lowNodeUtilization',
      {
        enabled: true,
        thresholds: { cpu: 20, memory: 20, pods: 20 },
        targetThresholds: { cpu: 50, memory: 50, pods: 50 },
      },
    ],
    ['v1alpha1.yaml', 0, 'strategies.removeDuplicates', { enabled: true, excludeOwnerKinds: [] }],
    [
      'v1alpha2-not-carried.yaml',
      0,
      'strategies.removeDuplicates',
      { enabled: true, excludeOwnerKinds: ['ReplicaSet'] },
    ],
    [
      'v1alpha2-not-carried.yaml',
      0,
      'strategies.highNodeUtilization',
      { enabled: true, thresholds: { cpu: 20, memory: 20, pods: 20 } },
    ],
  ])('%s [%i]: spec.%s', async (file, index, path, value) => {
    const spec = documents((await convert(file)).out)[index]!.raw['spec'];
    let node: unknown = spec;
    for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
    expect(node).toEqual(value);
  });

  it.each([
    // LowNodeUtilization, HighNodeUtilization and RemoveDuplicates are issue 20's strategies: until they are merged,
    // they are named here as not carried over (the README examples' test below checks them by name).
    ['v1alpha2-full.yaml', 0, ['priorityThreshold', 'nodeSelector', 'scope', 'maxNoOfPodsToEvictTotal', 'schedule']],
    ['v1alpha2-not-carried.yaml', 1, ['priorityThreshold.name']],
    ['v1alpha1.yaml', 0, ['nodeSelector', 'scope']],
  ])('%s [%i]: what does not carry over is a comment with a reason', async (file, index, settings) => {
    const comments = documents((await convert(file)).out)[index]!.comments;
    for (const setting of settings) {
      const line = comments.find((c) => c.startsWith(setting));
      expect(line, setting).toBeDefined();
      // A reason, not just the name: "X: not carried over: because …".
      expect(line!.length, setting).toBeGreaterThan(setting.length + 40);
    }
  });

  it("the descheduler chart's default policy: LowNodeUtilization and RemoveDuplicates carry over, one to one", async () => {
    const r = await convert('chart-default-v1alpha2.yaml');
    expect(r.code).toBe(0);
    const [doc] = documents(r.out);
    const strategies = (doc!.raw['spec'] as { strategies: Record<string, unknown> }).strategies;
    expect(strategies['lowNodeUtilization']).toEqual({
      enabled: true,
      thresholds: { cpu: 20, memory: 20, pods: 20 },
      targetThresholds: { cpu: 50, memory: 50, pods: 50 },
    });
    expect(strategies['removeDuplicates']).toEqual({ enabled: true, excludeOwnerKinds: [] });
    const notCarried = doc!.comments.filter((c) => c.includes('not carried over'));
    for (const plugin of ['LowNodeUtilization', 'RemoveDuplicates', 'RemovePodsViolating']) {
      expect(notCarried.filter((c) => c.startsWith(plugin))).toEqual([]);
    }
    expect(
      parsePolicy(doc!.raw, { file: 'chart-default-v1alpha2.yaml' }).spec.strategies.lowNodeUtilization,
    ).toBeDefined();
  });

  it('names the policies after the profiles (DNS-1123)', async () => {
    const names = documents((await convert('v1alpha2-not-carried.yaml')).out).map(
      (d) => (d.raw['metadata'] as { name: string }).name,
    );
    expect(names).toEqual(['cleanup', 'spread']);
  });

  it.each([
    ['not a DeschedulerPolicy', { kind: 'ConfigMap' }, /kind: must be DeschedulerPolicy/],
    [
      'an unknown version',
      { kind: 'DeschedulerPolicy', apiVersion: 'descheduler/v9' },
      /apiVersion: must be descheduler\/v1alpha1 or/,
    ],
    [
      'no profiles',
      { kind: 'DeschedulerPolicy', apiVersion: 'descheduler/v1alpha2', profiles: [] },
      /profiles: must list/,
    ],
  ])('%s is bad input naming the file and field', (_name, raw, message) => {
    expect(() => convertDeschedulerPolicy(raw, 'p.yaml')).toThrow(message);
    expect(() => convertDeschedulerPolicy(raw, 'p.yaml')).toThrow(/^p\.yaml: /);
  });

  it('a missing file is exit 2 with one error line', async () => {
    let err = '';
    const code = await main(['convert', '--descheduler-policy', '/nonexistent.yaml'], {
      stdout: () => undefined,
      stderr: (s) => (err += s),
    });
    expect(code).toBe(2);
    expect(err).toBe('error: /nonexistent.yaml: cannot read file: no such file\n');
  });
});
