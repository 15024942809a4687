// convert, one table row per DeschedulerPolicy field of the descheduler v0.36 (pkg/api/v1alpha2/types.go and each
// plugin's types.go): where it lands in the RebalancePolicy, or the note that says why it does not; values the CRD
// would refuse are exit 2 naming the DeschedulerPolicy field. Policies are the fixtures under
// test/fixtures/descheduler (the chart's default values, a policy with every field) and small ones built here.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { main } from '../../src/cli/program.js';
import { parsePolicy } from '../../src/policy/parse.js';

type Json = Record<string, unknown>;

interface Result {
  readonly code: number;
  readonly err: string;
  readonly docs: { readonly raw: Json; readonly comments: string[] }[];
}

async function convertFile(file: string): Promise<Result> {
  let out = '';
  let err = '';
  const code = await main(['convert', '--descheduler-policy', file], {
    stdout: (s) => (out += s),
    stderr: (s) => (err += s),
  });
  const docs =
    out === ''
      ? []
      : out.split(/^---$/m).map((text) => ({
          raw: parseAllDocuments(text, { version: '1.1' })[0]!.toJS() as Json,
          comments: text
            .split('\n')
            .filter((l) => l.startsWith('# '))
            .map((l) => l.slice(2)),
        }));
  return { code, err, docs };
}

const dir = mkdtempSync(join(tmpdir(), 'convert-fields-'));
let written = 0;

async function convert(policy: Json): Promise<Result> {
  const file = join(dir, `p${written++}.json`);
  writeFileSync(file, JSON.stringify(policy));
  return convertFile(file);
}

/** One profile "p" with DefaultEvictor args, one plugin with args, and optional top-level fields. */
function policy(plugin: string, args: Json = {}, evictor: Json = {}, top: Json = {}): Json {
  const point = ['LowNodeUtilization', 'HighNodeUtilization', 'RemoveDuplicates'].includes(plugin)
    ? 'balance'
    : 'deschedule';
  return {
    apiVersion: 'descheduler/v1alpha2',
    kind: 'DeschedulerPolicy',
    ...top,
    profiles: [
      {
        name: 'p',
        pluginConfig: [
          { name: 'DefaultEvictor', args: evictor },
          { name: plugin, args },
        ],
        plugins: { [point]: { enabled: [plugin] } },
      },
    ],
  };
}

function at(raw: Json, path: string): unknown {
  let node: unknown = raw;
  for (const part of path.split('.')) node = (node as Json | undefined)?.[part];
  return node;
}

const LNU = { thresholds: { cpu: 20 }, targetThresholds: { cpu: 50 } };
const PROM_LNU = { thresholds: { MetricResource: 20 }, targetThresholds: { MetricResource: 50 } };

describe('convert: values the CRD (or the descheduler) would refuse are exit 2 naming the field', () => {
  it.each<readonly [string, Json, RegExp]>([
    [
      'thresholds cpu "twenty"',
      policy('LowNodeUtilization', { thresholds: { cpu: 'twenty' }, targetThresholds: { cpu: 50 } }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.thresholds\.cpu: must be a number, a percentage \(got "twenty"\)/,
    ],
    [
      'targetThresholds cpu -5',
      policy('LowNodeUtilization', { thresholds: { cpu: 20 }, targetThresholds: { cpu: -5 } }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.targetThresholds\.cpu: must be a number from 0 to 100 \(got number -5\)/,
    ],
    [
      'a threshold above 100',
      policy('HighNodeUtilization', { thresholds: { memory: 120 } }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.thresholds\.memory: /,
    ],
    [
      'maxNoOfPodsToEvictTotal -1',
      policy('RemoveDuplicates', {}, {}, { maxNoOfPodsToEvictTotal: -1 }),
      /: maxNoOfPodsToEvictTotal: must be an integer ≥ 0 \(got -1\)/,
    ],
    [
      'gracePeriodSeconds "30s"',
      policy('RemoveDuplicates', {}, {}, { gracePeriodSeconds: '30s' }),
      /: gracePeriodSeconds: must be an integer/,
    ],
    [
      'minReplicas -2',
      policy('RemoveDuplicates', {}, { minReplicas: -2 }),
      /profiles\[0\]\.pluginConfig\[0\]\.args\.minReplicas: must be an integer ≥ 0/,
    ],
    [
      'minPodAge "ten minutes"',
      policy('RemoveDuplicates', {}, { minPodAge: 'ten minutes' }),
      /profiles\[0\]\.pluginConfig\[0\]\.args\.minPodAge: /,
    ],
    [
      'podRestartThreshold "many"',
      policy('RemovePodsHavingTooManyRestarts', { podRestartThreshold: 'many' }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.podRestartThreshold: must be an integer/,
    ],
    [
      'maxPodLifeTimeSeconds -60',
      policy('PodLifeTime', { maxPodLifeTimeSeconds: -60 }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.maxPodLifeTimeSeconds: must be an integer ≥ 0/,
    ],
    [
      'a nodeSelector that is not a selector',
      policy('RemoveDuplicates', {}, {}, { nodeSelector: 'pool in a' }),
      /: nodeSelector: "pool in a" is not a label selector term/,
    ],
    [
      'noEvictionPolicy "Sometimes"',
      policy('RemoveDuplicates', {}, { noEvictionPolicy: 'Sometimes' }),
      /profiles\[0\]\.pluginConfig\[0\]\.args\.noEvictionPolicy: must be one of Mandatory, Preferred/,
    ],
    [
      'a protected storage class name no StorageClass can have',
      policy(
        'RemoveDuplicates',
        {},
        {
          podProtections: {
            extraEnabled: ['PodsWithPVC'],
            config: { PodsWithPVC: { protectedStorageClasses: [{ name: 'Fast SSD' }] } },
          },
        },
      ),
      /pluginConfig\[0\]\.args\.podProtections\.config\.PodsWithPVC\.protectedStorageClasses\[0\]: /,
    ],
    [
      'evictionLimits.node -1',
      policy('LowNodeUtilization', { ...LNU, evictionLimits: { node: -1 } }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.evictionLimits\.node: must be an integer ≥ 0/,
    ],
    [
      'a Prometheus metricsUtilization with cpu thresholds (the descheduler takes MetricResource only)',
      policy(
        'LowNodeUtilization',
        { ...LNU, metricsUtilization: { source: 'Prometheus', prometheus: { query: 'q' } } },
        {},
        { metricsProviders: [{ source: 'Prometheus', prometheus: { url: 'http://prometheus:9090' } }] },
      ),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.thresholds: must name only MetricResource with usage: Prometheus/,
    ],
    [
      'a Prometheus metricsUtilization without a Prometheus metrics provider',
      policy('LowNodeUtilization', {
        ...PROM_LNU,
        metricsUtilization: { source: 'Prometheus', prometheus: { query: 'q' } },
      }),
      /: metricsProviders: is required with usage: Prometheus/,
    ],
    [
      'an evictionModes value the descheduler does not know',
      policy('HighNodeUtilization', { thresholds: { cpu: 20 }, evictionModes: ['OnlyThresholding'] }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.evictionModes\[0\]: must be one of OnlyThresholdingResources/,
    ],
    // The descheduler refuses a PodLifeTime that selects by nothing (v0.35.1 on: validation.go; before, one without
    // maxPodLifeTimeSeconds): it is not given a meaning here either.
    [
      'a PodLifeTime that sets no filter field (ownerKinds and namespaces only narrow)',
      policy('PodLifeTime', { ownerKinds: { exclude: ['Job'] }, namespaces: { include: ['batch'] } }),
      /profiles\[0\]\.pluginConfig\[1\]\.args: PodLifeTime must set at least one of maxPodLifeTimeSeconds, states, conditions, exitCodes: the descheduler refuses it/,
    ],
    [
      'a PodLifeTime whose filter lists are empty',
      policy('PodLifeTime', { states: [], exitCodes: [], conditions: [] }),
      /profiles\[0\]\.pluginConfig\[1\]\.args: PodLifeTime must set at least one of/,
    ],
    [
      'a PodLifeTime enabled without a pluginConfig entry',
      {
        apiVersion: 'descheduler/v1alpha2',
        kind: 'DeschedulerPolicy',
        profiles: [{ name: 'p', pluginConfig: [], plugins: { deschedule: { enabled: ['PodLifeTime'] } } }],
      },
      /profile p: profiles\[0\]\.pluginConfig: PodLifeTime must set at least one of/,
    ],
    [
      'a PodLifeTime configured but not enabled (the descheduler validates every pluginConfig entry)',
      {
        apiVersion: 'descheduler/v1alpha2',
        kind: 'DeschedulerPolicy',
        profiles: [
          {
            name: 'p',
            pluginConfig: [{ name: 'PodLifeTime', args: {} }, { name: 'RemoveDuplicates' }],
            plugins: { balance: { enabled: ['RemoveDuplicates'] } },
          },
        ],
      },
      /profiles\[0\]\.pluginConfig\[0\]\.args: PodLifeTime must set at least one of/,
    ],
    [
      'a v1alpha1 PodLifeTime without maxPodLifeTimeSeconds',
      {
        apiVersion: 'descheduler/v1alpha1',
        kind: 'DeschedulerPolicy',
        strategies: { PodLifeTime: { enabled: true, params: { podLifeTime: { podStatusPhases: ['Pending'] } } } },
      },
      /strategies\.PodLifeTime\.params\.podLifeTime\.maxPodLifeTimeSeconds: must be set: the descheduler refuses/,
    ],
    [
      'a RemovePodsHavingTooManyRestarts state the descheduler does not allow',
      policy('RemovePodsHavingTooManyRestarts', { states: ['Running', 'OOMKilled'] }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.states\[1\]: must be one of Running, CrashLoopBackOff \(got "OOMKilled"\)/,
    ],
    [
      'a namespace name the API would refuse',
      policy('RemoveDuplicates', { namespaces: { include: ['Shop_1'] } }),
      /profiles\[0\]\.pluginConfig\[1\]\.args\.namespaces\.include\[0\]: /,
    ],
  ])('%s', async (_name, raw, message) => {
    const r = await convert(raw);
    expect(r.code).toBe(2);
    expect(r.docs).toEqual([]);
    expect(r.err).toMatch(message);
    // One paragraph: every problem on one line.
    expect(r.err.split('\n').filter((l) => l !== '')).toHaveLength(1);
  });

  it('both bad thresholds of the issue are named in one error', async () => {
    const r = await convert(
      policy('LowNodeUtilization', { thresholds: { cpu: 'twenty' }, targetThresholds: { cpu: -5 } }),
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain('args.thresholds.cpu');
  });
});

describe('convert: each field carried over', () => {
  it.each<readonly [string, Json, string, unknown]>([
    // [field, policy, RebalancePolicy path, value]
    [
      'maxNoOfPodsToEvictPerNode',
      policy('RemoveDuplicates', {}, {}, { maxNoOfPodsToEvictPerNode: 4 }),
      'spec.eviction.maxPerNode',
      4,
    ],
    [
      'maxNoOfPodsToEvictPerNamespace',
      policy('RemoveDuplicates', {}, {}, { maxNoOfPodsToEvictPerNamespace: 3 }),
      'spec.eviction.maxPerNamespace',
      3,
    ],
    [
      'maxNoOfPodsToEvictTotal',
      policy('RemoveDuplicates', {}, {}, { maxNoOfPodsToEvictTotal: 12 }),
      'spec.eviction.maxPerCycle',
      12,
    ],
    [
      'nodeSelector',
      policy('RemoveDuplicates', {}, {}, { nodeSelector: 'pool=a,zone in (x, y),zone!=z,!spot,gpu' }),
      'spec.nodeSelector',
      {
        matchLabels: { pool: 'a' },
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['x', 'y'] },
          { key: 'zone', operator: 'NotIn', values: ['z'] },
          { key: 'spot', operator: 'DoesNotExist' },
          { key: 'gpu', operator: 'Exists' },
        ],
      },
    ],
    [
      'gracePeriodSeconds',
      policy('RemoveDuplicates', {}, {}, { gracePeriodSeconds: 20 }),
      'spec.eviction.gracePeriodSeconds',
      20,
    ],
    [
      'DefaultEvictor.labelSelector',
      policy('RemoveDuplicates', {}, { labelSelector: { matchLabels: { a: 'b' } } }),
      'spec.podSelector',
      { matchLabels: { a: 'b' } },
    ],
    [
      'DefaultEvictor.namespaceLabelSelector',
      policy('RemoveDuplicates', {}, { namespaceLabelSelector: { matchLabels: { env: 'prod' } } }),
      'spec.namespaces.labelSelector',
      { matchLabels: { env: 'prod' } },
    ],
    [
      'DefaultEvictor.priorityThreshold.value',
      policy('RemoveDuplicates', {}, { priorityThreshold: { value: 100 } }),
      'spec.eviction.priorityThreshold',
      { value: 100 },
    ],
    [
      'DefaultEvictor.priorityThreshold.name',
      policy('RemoveDuplicates', {}, { priorityThreshold: { name: 'high' } }),
      'spec.eviction.priorityThreshold',
      { className: 'high' },
    ],
    ['DefaultEvictor.nodeFit', policy('RemoveDuplicates', {}, { nodeFit: false }), 'spec.eviction.nodeFit', false],
    // Unset is Preferred in the descheduler (its filter drops only Mandatory's annotated pods).
    [
      'DefaultEvictor.noEvictionPolicy unset',
      policy('RemoveDuplicates'),
      'spec.eviction.noEvictionPolicy',
      'Preferred',
    ],
    [
      'DefaultEvictor.noEvictionPolicy Mandatory',
      policy('RemoveDuplicates', {}, { noEvictionPolicy: 'Mandatory' }),
      'spec.eviction.noEvictionPolicy',
      'Mandatory',
    ],
    [
      'DefaultEvictor.evictSystemCriticalPods',
      policy('RemoveDuplicates', {}, { evictSystemCriticalPods: true }),
      'spec.eviction',
      expect.objectContaining({ evictSystemCriticalPods: true, priorityThreshold: { value: 2_000_001_001 } }),
    ],
    [
      'podProtections.defaultDisabled SystemCriticalPods',
      policy('RemoveDuplicates', {}, { podProtections: { defaultDisabled: ['SystemCriticalPods'] } }),
      'spec.eviction',
      expect.objectContaining({ evictSystemCriticalPods: true, priorityThreshold: { value: 2_000_001_001 } }),
    ],
    [
      'podProtections.config.PodsWithPVC.protectedStorageClasses',
      policy(
        'RemoveDuplicates',
        {},
        {
          podProtections: {
            extraEnabled: ['PodsWithPVC'],
            config: { PodsWithPVC: { protectedStorageClasses: [{ name: 'fast-ssd' }, { name: 'local' }] } },
          },
        },
      ),
      'spec.eviction',
      expect.objectContaining({ evictPodsWithPVC: false, protectedStorageClasses: ['fast-ssd', 'local'] }),
    ],
    ['DefaultEvictor.minReplicas', policy('RemoveDuplicates', {}, { minReplicas: 3 }), 'spec.eviction.minReplicas', 3],
    [
      'DefaultEvictor.minPodAge',
      policy('RemoveDuplicates', {}, { minPodAge: '90s' }),
      'spec.eviction.minPodAge',
      '90s',
    ],
    [
      'DefaultEvictor.evictLocalStoragePods',
      policy('RemoveDuplicates', {}, { evictLocalStoragePods: true }),
      'spec.eviction.evictLocalStoragePods',
      true,
    ],
    [
      'DefaultEvictor.ignorePvcPods',
      policy('RemoveDuplicates', {}, { ignorePvcPods: true }),
      'spec.eviction.evictPodsWithPVC',
      false,
    ],
    [
      'DefaultEvictor.ignorePodsWithoutPDB',
      policy('RemoveDuplicates', {}, { ignorePodsWithoutPDB: true }),
      'spec.eviction.evictPodsWithoutPDB',
      false,
    ],
    [
      'DefaultEvictor.evictFailedBarePods',
      policy('RemoveDuplicates', {}, { evictFailedBarePods: true }),
      'spec.eviction.evictFailedBarePods',
      true,
    ],
    // ... without lifting the Running-bare-pod protection.
    [
      'DefaultEvictor.evictFailedBarePods keeps evictBarePods',
      policy('RemoveDuplicates', {}, { evictFailedBarePods: true }),
      'spec.eviction.evictBarePods',
      undefined,
    ],
    [
      'podProtections.defaultDisabled PodsWithLocalStorage',
      policy('RemoveDuplicates', {}, { podProtections: { defaultDisabled: ['PodsWithLocalStorage'] } }),
      'spec.eviction.evictLocalStoragePods',
      true,
    ],
    [
      'podProtections.defaultDisabled FailedBarePods',
      policy('RemoveDuplicates', {}, { podProtections: { defaultDisabled: ['FailedBarePods'] } }),
      'spec.eviction.evictFailedBarePods',
      true,
    ],
    [
      'podProtections.extraEnabled PodsWithPVC',
      policy('RemoveDuplicates', {}, { podProtections: { extraEnabled: ['PodsWithPVC'] } }),
      'spec.eviction.evictPodsWithPVC',
      false,
    ],
    [
      'podProtections.extraEnabled PodsWithoutPDB',
      policy('RemoveDuplicates', {}, { podProtections: { extraEnabled: ['PodsWithoutPDB'] } }),
      'spec.eviction.evictPodsWithoutPDB',
      false,
    ],
    [
      'LowNodeUtilization thresholds',
      policy('LowNodeUtilization', LNU),
      'spec.strategies.lowNodeUtilization.thresholds',
      { cpu: 20 },
    ],
    [
      'LowNodeUtilization useDeviationThresholds',
      policy('LowNodeUtilization', { ...LNU, useDeviationThresholds: true }),
      'spec.strategies.lowNodeUtilization.useDeviationThresholds',
      true,
    ],
    [
      'LowNodeUtilization numberOfNodes',
      policy('LowNodeUtilization', { ...LNU, numberOfNodes: 2 }),
      'spec.strategies.lowNodeUtilization.numberOfNodes',
      2,
    ],
    [
      'LowNodeUtilization metricsUtilization.metricsServer',
      policy('LowNodeUtilization', { ...LNU, metricsUtilization: { metricsServer: true } }),
      'spec.strategies.lowNodeUtilization.usage',
      'Metrics',
    ],
    [
      'LowNodeUtilization metricsUtilization Prometheus, with metricsProviders',
      policy(
        'LowNodeUtilization',
        { ...PROM_LNU, metricsUtilization: { source: 'Prometheus', prometheus: { query: 'instance:cpu:rate5m' } } },
        {},
        {
          metricsProviders: [
            { source: 'KubernetesMetrics' },
            {
              source: 'Prometheus',
              prometheus: {
                url: 'https://prometheus-k8s.monitoring.svc:9091',
                authToken: { secretReference: { namespace: 'kube-rebalancer', name: 'prom-token' } },
              },
            },
          ],
        },
      ),
      'spec.strategies.lowNodeUtilization',
      {
        enabled: true,
        ...PROM_LNU,
        usage: 'Prometheus',
        prometheus: {
          query: 'instance:cpu:rate5m',
          url: 'https://prometheus-k8s.monitoring.svc:9091',
          authToken: { secretReference: { namespace: 'kube-rebalancer', name: 'prom-token' } },
        },
      },
    ],
    [
      'LowNodeUtilization evictableNamespaces',
      policy('LowNodeUtilization', { ...LNU, evictableNamespaces: { exclude: ['batch'] } }),
      'spec.namespaces',
      { include: [], exclude: ['batch'] },
    ],
    [
      'LowNodeUtilization evictionLimits.node',
      policy('LowNodeUtilization', { ...LNU, evictionLimits: { node: 2 } }),
      'spec.eviction.maxPerNode',
      2,
    ],
    [
      'LowNodeUtilization evictionLimits.node under a smaller maxNoOfPodsToEvictPerNode: the smaller',
      policy('LowNodeUtilization', { ...LNU, evictionLimits: { node: 4 } }, {}, { maxNoOfPodsToEvictPerNode: 1 }),
      'spec.eviction.maxPerNode',
      1,
    ],
    [
      'HighNodeUtilization thresholds',
      policy('HighNodeUtilization', { thresholds: { memory: 30 } }),
      'spec.strategies.highNodeUtilization.thresholds',
      { memory: 30 },
    ],
    [
      'RemoveDuplicates excludeOwnerKinds',
      policy('RemoveDuplicates', { excludeOwnerKinds: ['Job'] }),
      'spec.strategies.removeDuplicates.excludeOwnerKinds',
      ['Job'],
    ],
    [
      'RemovePodsViolatingNodeTaints excludedTaints',
      policy('RemovePodsViolatingNodeTaints', { excludedTaints: ['a=b'] }),
      'spec.strategies.nodeTaints.excludedTaints',
      ['a=b'],
    ],
    [
      'RemovePodsViolatingNodeTaints includedTaints',
      policy('RemovePodsViolatingNodeTaints', { includedTaints: ['decommissioned=end-of-life', 'reserved'] }),
      'spec.strategies.nodeTaints.includedTaints',
      ['decommissioned=end-of-life', 'reserved'],
    ],
    [
      'RemovePodsViolatingNodeTaints includePreferNoSchedule',
      policy('RemovePodsViolatingNodeTaints', { includePreferNoSchedule: true }),
      'spec.strategies.nodeTaints.includePreferNoSchedule',
      true,
    ],
    [
      'RemovePodsViolatingTopologySpreadConstraint constraints',
      policy('RemovePodsViolatingTopologySpreadConstraint', { constraints: ['DoNotSchedule', 'ScheduleAnyway'] }),
      'spec.strategies.topologySpread.includeSoftConstraints',
      true,
    ],
    [
      'RemovePodsHavingTooManyRestarts podRestartThreshold',
      policy('RemovePodsHavingTooManyRestarts', { podRestartThreshold: 7 }),
      'spec.strategies.tooManyRestarts.podRestartThreshold',
      7,
    ],
    [
      'RemovePodsHavingTooManyRestarts states',
      policy('RemovePodsHavingTooManyRestarts', { podRestartThreshold: 7, states: ['CrashLoopBackOff'] }),
      'spec.strategies.tooManyRestarts.states',
      ['CrashLoopBackOff'],
    ],
    [
      'PodLifeTime maxPodLifeTimeSeconds',
      policy('PodLifeTime', { maxPodLifeTimeSeconds: 7200 }),
      'spec.strategies.podLifeTime.maxPodLifeTime',
      '2h',
    ],
    [
      'PodLifeTime states Succeeded, Failed',
      policy('PodLifeTime', { maxPodLifeTimeSeconds: 3600, states: ['Succeeded', 'Failed'] }),
      'spec.strategies.podLifeTime.states',
      ['Succeeded', 'Failed'],
    ],
    [
      'PodLifeTime exitCodes',
      policy('PodLifeTime', { exitCodes: [1, 2] }),
      'spec.strategies.podLifeTime.exitCodes',
      [1, 2],
    ],
    // Unset, the plugin selects by its other filters at any age: "0s", not the section's default of 168h.
    [
      'PodLifeTime without maxPodLifeTimeSeconds',
      policy('PodLifeTime', { exitCodes: [1, 2] }),
      'spec.strategies.podLifeTime.maxPodLifeTime',
      '0s',
    ],
    [
      'PodLifeTime includingInitContainers',
      policy('PodLifeTime', { states: ['CrashLoopBackOff'], includingInitContainers: true }),
      'spec.strategies.podLifeTime.includingInitContainers',
      true,
    ],
    [
      'PodLifeTime includingEphemeralContainers',
      policy('PodLifeTime', { states: ['Error'], includingEphemeralContainers: true }),
      'spec.strategies.podLifeTime.includingEphemeralContainers',
      true,
    ],
    [
      'PodLifeTime ownerKinds',
      policy('PodLifeTime', { states: ['Running'], ownerKinds: { exclude: ['Job'] } }),
      'spec.strategies.podLifeTime.ownerKinds',
      { include: [], exclude: ['Job'] },
    ],
    [
      'HighNodeUtilization evictionModes',
      policy('HighNodeUtilization', { thresholds: { cpu: 20 }, evictionModes: ['OnlyThresholdingResources'] }),
      'spec.strategies.highNodeUtilization.evictionModes',
      ['OnlyThresholdingResources'],
    ],
    [
      'PodLifeTime conditions (minTimeSinceLastTransitionSeconds as a duration)',
      policy('PodLifeTime', {
        states: ['Running'],
        conditions: [
          { type: 'Ready', status: 'False', minTimeSinceLastTransitionSeconds: 5400 },
          { reason: 'PodCompleted' },
        ],
      }),
      'spec.strategies.podLifeTime.conditions',
      [{ type: 'Ready', status: 'False', minTimeSinceLastTransition: '1h30m' }, { reason: 'PodCompleted' }],
    ],
    [
      'RemoveFailedPods minPodLifetimeSeconds',
      policy('RemoveFailedPods', { minPodLifetimeSeconds: 600 }),
      'spec.strategies.failedPods.minPodLifetime',
      '10m',
    ],
    [
      'RemoveFailedPods exitCodes',
      policy('RemoveFailedPods', { exitCodes: [137] }),
      'spec.strategies.failedPods.exitCodes',
      [137],
    ],
    [
      'RemoveFailedPods reasons',
      policy('RemoveFailedPods', { reasons: ['OOMKilled'] }),
      'spec.strategies.failedPods.reasons',
      ['OOMKilled'],
    ],
  ])('%s → %s', async (_field, raw, path, value) => {
    const r = await convert(raw);
    expect(r.code, r.err).toBe(0);
    expect(at(r.docs[0]!.raw, path)).toEqual(value);
    parsePolicy(r.docs[0]!.raw, { file: 'out.yaml' });
  });
});

describe("convert: LowNodeUtilization's evictionLimits.node", () => {
  it('is its own policy beside a plugin without it, so the other plugin keeps the policy-wide limit', async () => {
    const raw = {
      apiVersion: 'descheduler/v1alpha2',
      kind: 'DeschedulerPolicy',
      maxNoOfPodsToEvictPerNode: 5,
      profiles: [
        {
          name: 'p',
          pluginConfig: [
            { name: 'DefaultEvictor', args: {} },
            { name: 'LowNodeUtilization', args: { ...LNU, evictionLimits: { node: 2 } } },
            { name: 'RemoveDuplicates', args: {} },
          ],
          plugins: { balance: { enabled: ['LowNodeUtilization', 'RemoveDuplicates'] } },
        },
      ],
    };
    const r = await convert(raw);
    expect(r.code, r.err).toBe(0);
    const byStrategy = Object.fromEntries(
      r.docs.map((d) => [
        Object.keys(at(d.raw, 'spec.strategies') as Json)
          .filter((k) => k !== 'topologySpread')
          .join(','),
        at(d.raw, 'spec.eviction.maxPerNode'),
      ]),
    );
    expect(byStrategy).toEqual({ lowNodeUtilization: 2, removeDuplicates: 5 });
    for (const d of r.docs) parsePolicy(d.raw, { file: 'out.yaml' });
  });
});

describe('convert: protections that need no field', () => {
  it("topologyBalanceNodeFit: true (the plugin's default) is what the planner does: no note", async () => {
    const r = await convert(policy('RemovePodsViolatingTopologySpreadConstraint', { topologyBalanceNodeFit: true }));
    expect(r.code, r.err).toBe(0);
    expect(r.docs[0]!.comments.filter((c) => c.includes('topologyBalanceNodeFit'))).toEqual([]);
  });

  it('podProtections.extraEnabled PodsWithResourceClaims: always in force here, so no note and no field', async () => {
    const r = await convert(
      policy('RemoveDuplicates', {}, { podProtections: { extraEnabled: ['PodsWithResourceClaims'] } }),
    );
    expect(r.code, r.err).toBe(0);
    expect(r.docs[0]!.comments.filter((c) => c.includes('PodsWithResourceClaims'))).toEqual([]);
    expect(r.err).not.toContain('PodsWithResourceClaims');
  });
});

describe('convert: each field noted where it cannot carry over', () => {
  it.each<readonly [string, Json, string]>([
    // Carried (see the carried table), and said where the descheduler looked at those nodes only.
    [
      'nodeSelector (what differs)',
      policy('RemoveDuplicates', {}, {}, { nodeSelector: 'a=b' }),
      'nodeSelector: carried as spec.nodeSelector: only pods on matching nodes are evicted',
    ],
    [
      'DefaultEvictor.nodeSelector with nodeFit (the nodes a pod must fit on)',
      policy('RemoveDuplicates', {}, { nodeSelector: 'pool=a', nodeFit: true }),
      'DefaultEvictor.nodeSelector: not carried over: with nodeFit the descheduler keeps a pod unless it fits another ready node matching "pool=a"; ',
    ],
    [
      'DefaultEvictor.nodeSelector without nodeFit (the descheduler does not read it)',
      policy('RemoveDuplicates', {}, { nodeSelector: 'pool=a' }),
      'DefaultEvictor.nodeSelector: no counterpart needed: the descheduler reads it only for nodeFit',
    ],
    [
      'evictionFailureEventNotification',
      policy('RemoveDuplicates', {}, {}, { evictionFailureEventNotification: true }),
      'evictionFailureEventNotification: no counterpart needed: ',
    ],
    [
      'metricsProviders Prometheus without a LowNodeUtilization reading it',
      policy(
        'RemoveDuplicates',
        {},
        {},
        { metricsProviders: [{ source: 'Prometheus', prometheus: { url: 'http://p' } }] },
      ),
      'metricsProviders[0]: not carried over: ',
    ],
    [
      'metricsCollector',
      policy('RemoveDuplicates', {}, {}, { metricsCollector: { enabled: true } }),
      'metricsCollector: no counterpart needed: ',
    ],
    [
      'metricsProviders Prometheus without authToken',
      policy(
        'LowNodeUtilization',
        { ...PROM_LNU, metricsUtilization: { source: 'Prometheus', prometheus: { query: 'q' } } },
        {},
        { metricsProviders: [{ source: 'Prometheus', prometheus: { url: 'http://p:9090' } }] },
      ),
      "metricsProviders[0].prometheus: without authToken the descheduler sends its service account's token",
    ],
    [
      'metricsProviders Prometheus authToken',
      policy(
        'LowNodeUtilization',
        { ...PROM_LNU, metricsUtilization: { source: 'Prometheus', prometheus: { query: 'q' } } },
        {},
        {
          metricsProviders: [
            {
              source: 'Prometheus',
              prometheus: { url: 'http://p:9090', authToken: { secretReference: { namespace: 'x', name: 'y' } } },
            },
          ],
        },
      ),
      "metricsProviders[0].prometheus.authToken: the Secret (key prometheusAuthToken) must be in kube-rebalancer's namespace",
    ],
    [
      'DefaultEvictor.evictDaemonSetPods',
      policy('RemoveDuplicates', {}, { evictDaemonSetPods: true }),
      'evictDaemonSetPods: not carried over: ',
    ],
    [
      'podProtections.config protectedStorageClasses without PodsWithPVC enabled (no effect there either)',
      policy(
        'RemoveDuplicates',
        {},
        { podProtections: { config: { PodsWithPVC: { protectedStorageClasses: [{ name: 'x' }] } } } },
      ),
      'podProtections.config.PodsWithPVC: not carried over: it has no effect without PodsWithPVC',
    ],
    [
      'DefaultEvictor.priorityThreshold with evictSystemCriticalPods (the descheduler ignores it then)',
      policy('RemoveDuplicates', {}, { evictSystemCriticalPods: true, priorityThreshold: { value: 100 } }),
      'priorityThreshold: not carried over: with the SystemCriticalPods protection off',
    ],
    [
      'topologyBalanceNodeFit',
      policy('RemovePodsViolatingTopologySpreadConstraint', { topologyBalanceNodeFit: false }),
      'RemovePodsViolatingTopologySpreadConstraint.topologyBalanceNodeFit: false: stricter here: ',
    ],
    [
      'RemovePodsViolatingNodeTaints includedTaints: [] (no taint counts): the section is left off',
      policy('RemovePodsViolatingNodeTaints', { includedTaints: [] }),
      'RemovePodsViolatingNodeTaints.includedTaints: [] lets no taint count, so the plugin evicts nothing',
    ],
    [
      'PodLifeTime conditions with a status no condition has: the section is left off (it would select more pods)',
      policy('PodLifeTime', { conditions: [{ type: 'Ready', status: 'Maybe' }] }),
      'PodLifeTime.conditions[0] status "Maybe" is not True, False or Unknown: not carried over, so the section is left disabled',
    ],
    [
      'an argument the plugin does not have',
      policy('RemoveDuplicates', { frobnicate: 1 }),
      'RemoveDuplicates.frobnicate: not carried over: not an argument',
    ],
  ])('%s', async (_field, raw, note) => {
    const r = await convert(raw);
    expect(r.code, r.err).toBe(0);
    expect(
      r.docs[0]!.comments.some((c) => c.startsWith(note)),
      r.docs[0]!.comments.join('\n'),
    ).toBe(true);
    expect(r.err).toContain(`note: p: ${note}`);
  });
});

describe('convert: defaults, names and plugin sets', () => {
  it('every default of ours the descheduler does not have is written out with a note', async () => {
    const r = await convert(policy('RemoveDuplicates'));
    const { raw, comments } = r.docs[0]!;
    expect(at(raw, 'spec.namespaces')).toEqual({ include: [], exclude: ['kube-system'] });
    expect(at(raw, 'spec.eviction')).toMatchObject({
      maxPerCycle: 10,
      maxPerNode: 2,
      maxPerNamespace: 5,
      maxPerWorkload: 1,
      minPodAge: '5m',
      nodeFit: true,
      waitForReplacement: true,
      replacementTimeout: '5m',
      cooldown: '30m',
    });
    for (const field of [
      'namespaces.exclude',
      'eviction.maxPerCycle',
      'eviction.maxPerNode',
      'eviction.maxPerNamespace',
      'eviction.maxPerWorkload',
      'eviction.minPodAge',
      'eviction.nodeFit',
      'eviction.waitForReplacement',
    ])
      expect(
        comments.some((c) => c.startsWith(`${field}: `)),
        field,
      ).toBe(true);
  });

  it('a default the descheduler sets explicitly is not noted', async () => {
    const r = await convert(
      policy(
        'RemoveDuplicates',
        { namespaces: { exclude: [] } },
        { minPodAge: '1m', nodeFit: false },
        {
          maxNoOfPodsToEvictPerNode: 1,
          maxNoOfPodsToEvictPerNamespace: 1,
          maxNoOfPodsToEvictTotal: 1,
        },
      ),
    );
    const notes = r.docs[0]!.comments.filter((c) =>
      /^(namespaces|eviction\.(maxPerCycle|maxPerNode|maxPerNamespace|minPodAge|nodeFit))/.test(c),
    );
    expect(notes).toEqual([]);
  });

  it.each([
    ['shop-balance', 'shop-balance', false],
    ['shop.balance.v2', 'shop.balance.v2', false],
    ['ProfileName', 'profilename', true],
    ['my_profile', 'my-profile', true],
  ])('profile %s is policy %s (noted: %s)', async (profile, name, noted) => {
    const raw = policy('RemoveDuplicates');
    (raw['profiles'] as Json[])[0]!['name'] = profile;
    const r = await convert(raw);
    expect(at(r.docs[0]!.raw, 'metadata.name')).toBe(name);
    expect(r.docs[0]!.comments.some((c) => c.startsWith('name: '))).toBe(noted);
  });

  it('disabled: ["*"] disables every plugin of the point, and says so', async () => {
    const raw = policy('RemoveDuplicates');
    (raw['profiles'] as Json[])[0]!['plugins'] = {
      balance: { enabled: ['RemoveDuplicates'], disabled: ['*'] },
      deschedule: { enabled: ['RemovePodsViolatingNodeTaints'] },
    };
    const r = await convert(raw);
    expect(r.code).toBe(0);
    expect(Object.keys(at(r.docs[0]!.raw, 'spec.strategies') as Json).sort()).toEqual(['nodeTaints', 'topologySpread']);
    expect(at(r.docs[0]!.raw, 'spec.strategies')).toMatchObject({
      nodeTaints: { enabled: true },
      topologySpread: { enabled: false },
    });
    expect(r.docs[0]!.comments).toContain(
      'balance.RemoveDuplicates: not carried over: profiles[0].plugins.balance.disabled lists "*"',
    );
  });

  it('a strategy plugin under filter or preevictionfilter is noted, never dropped silently', async () => {
    const raw = policy('RemoveDuplicates');
    (raw['profiles'] as Json[])[0]!['plugins'] = {
      balance: { enabled: ['RemoveDuplicates'] },
      filter: { enabled: ['DefaultEvictor', 'RemovePodsViolatingNodeTaints'] },
      preevictionfilter: { enabled: ['PodLifeTime'] },
    };
    const r = await convert(raw);
    const comments = r.docs[0]!.comments;
    expect(comments.some((c) => c.startsWith('plugins.filter.RemovePodsViolatingNodeTaints: not carried over: '))).toBe(
      true,
    );
    expect(comments.some((c) => c.startsWith('plugins.preevictionfilter.PodLifeTime: not carried over: '))).toBe(true);
    expect(at(r.docs[0]!.raw, 'spec.strategies.nodeTaints')).toBeUndefined();
  });

  it('a policy names exactly the strategies of the plugins enabled; topologySpread off unless enabled', async () => {
    const r = await convert(policy('RemovePodsViolatingNodeTaints'));
    expect(Object.keys(at(r.docs[0]!.raw, 'spec.strategies') as Json).sort()).toEqual(['nodeTaints', 'topologySpread']);
    expect(at(r.docs[0]!.raw, 'spec.strategies.topologySpread')).toEqual({ enabled: false });
    const spread = await convert(policy('RemovePodsViolatingTopologySpreadConstraint'));
    expect(Object.keys(at(spread.docs[0]!.raw, 'spec.strategies') as Json)).toEqual(['topologySpread']);
  });
});

describe('convert: the fixtures', () => {
  it("the descheduler chart's default values (v0.36) convert with exit 0, every plugin carried", async () => {
    const r = await convertFile('test/fixtures/descheduler/chart-values-v0.36.yaml');
    expect(r.code, r.err).toBe(0);
    expect(r.docs).toHaveLength(1);
    const { raw, comments } = r.docs[0]!;
    expect(at(raw, 'metadata.name')).toBe('default');
    expect(Object.keys(at(raw, 'spec.strategies') as Json).sort()).toEqual([
      'lowNodeUtilization',
      'nodeAffinity',
      'nodeTaints',
      'podAntiAffinity',
      'removeDuplicates',
      'tooManyRestarts',
      'topologySpread',
    ]);
    expect(comments.filter((c) => c.includes('not carried over'))).toEqual([]);
    parsePolicy(raw, { file: 'out.yaml' });
  });

  it('a policy with every field converts with exit 0, one policy per profile', async () => {
    const r = await convertFile('test/fixtures/descheduler/every-field-v1alpha2.yaml');
    expect(r.code, r.err).toBe(0);
    // LowNodeUtilization's evictionLimits.node is a per-node cap of its own: its own policy (everything).
    expect(r.docs.map((d) => at(d.raw, 'metadata.name'))).toEqual(['everything', 'everything-2', 'bin-pack']);
    for (const d of r.docs) parsePolicy(d.raw, { file: 'out.yaml' });
    expect(r.docs[0]!.comments.some((c) => c.startsWith('maxNoOfPodsToEvictTotal: each of the 3 policies'))).toBe(true);
    expect(at(r.docs[1]!.raw, 'spec.strategies.podLifeTime')).toMatchObject({
      maxPodLifeTime: '24h',
      states: ['Running', 'CrashLoopBackOff'],
      exitCodes: [1],
      ownerKinds: { include: [], exclude: ['Job'] },
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', minTimeSinceLastTransition: '10m' }],
      includingInitContainers: true,
      includingEphemeralContainers: true,
    });
    expect(at(r.docs[1]!.raw, 'spec.strategies.tooManyRestarts.states')).toEqual(['CrashLoopBackOff']);
    expect(at(r.docs[1]!.raw, 'spec.strategies.nodeTaints.includedTaints')).toEqual(['dedicated']);
    // Notes only where warranted: besides our defaults written out, exactly these settings (each with its reason).
    const introduced = /^(name|namespaces\.exclude|eviction\.\w+|schedule)$/;
    const subjects = r.err
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => /^note: [a-z0-9-]+: ([^:]+):/.exec(l)![1]!)
      .filter((subject) => !introduced.test(subject));
    expect([...new Set(subjects)].sort()).toEqual([
      'DefaultEvictor.nodeSelector', // with nodeFit: the nodes a pod must fit on, which no eviction field limits
      'HighNodeUtilization', // configured in the first profile but not enabled there
      'RemovePodsViolatingTopologySpreadConstraint.topologyBalanceNodeFit', // false: stricter here
      'evictionFailureEventNotification', // no counterpart needed
      'maxNoOfPodsToEvictPerNamespace', // one per policy now, one for all profiles there
      'maxNoOfPodsToEvictPerNode',
      'maxNoOfPodsToEvictTotal',
      'metricsCollector', // no counterpart needed
      'metricsProviders[0].prometheus.authToken', // the Secret's namespace
      'nodeSelector', // carried, and what it measures differs
      'scope', // one policy per scope
    ]);
  });
});
