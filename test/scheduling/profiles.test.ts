// Several scheduler profiles (issue 29): a pod's spec.schedulerName picks the profile its replacement is placed by;
// a pod of a scheduler the configuration does not describe is never evicted by prediction. Each profile is read and
// checked as the default one is, and a schedulerName given twice is refused as kube-scheduler refuses it.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { planCycle } from '../../src/planner/plan.js';
import { DEFAULT_POLICY, parsePolicy } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { placeReplacement } from '../../src/scheduling/placement.js';
import { DEFAULT_PROFILE, profileFor, type SchedulerSetting } from '../../src/scheduling/profile.js';
import { parseSchedulerConfig } from '../../src/scheduling/schedulerConfig.js';
import { HOSTNAME, buildSnapshot, makeNode, makePod, makePolicy, type PodBuilder } from '../builders.js';

const HEADER = 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n';
const SPEC = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };
const OTHER = 'which the scheduler configuration given to kube-rebalancer does not describe';

/**
 * default-scheduler spreads (LeastAllocated), bin-packer packs (MostAllocated), no-taints ignores NoSchedule taints,
 * dongles does not count example.com/dongle (NodeResourcesFit ignoredResources).
 */
const PROFILES =
  HEADER +
  'profiles:\n' +
  '- schedulerName: default-scheduler\n' +
  '- schedulerName: bin-packer\n' +
  '  pluginConfig:\n' +
  '  - name: NodeResourcesFit\n' +
  '    args: {scoringStrategy: {type: MostAllocated}}\n' +
  '- schedulerName: no-taints\n' +
  '  plugins: {filter: {disabled: [{name: TaintToleration}]}}\n' +
  '- schedulerName: dongles\n' +
  '  pluginConfig: [{name: NodeResourcesFit, args: {ignoredResources: [example.com/dongle]}}]\n';

function parsed(text: string) {
  const result = parseSchedulerConfig(text, 'sched.yaml');
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result;
}

function problemsOf(text: string): string[] {
  const result = parseSchedulerConfig(text, 'sched.yaml');
  if (result.ok) throw new Error('expected problems');
  return result.problems.map((p) => `${p.field}: ${p.problem}`);
}

const node = (name: string) => makeNode(name).zone('zone-a').allocatable({ cpu: '4', memory: '8Gi', pods: '110' });
const pod = (name: string) => makePod(name, 'shop').requests({ cpu: '1', memory: '1Gi' });

/** Where `incoming` lands (node and ties) or why not: a and c empty, b half full (cpu and memory alike), c tainted. */
function landing(incoming: PodBuilder, setting: SchedulerSetting): string {
  const nodes = [node('a'), node('b'), node('c').taint('dedicated', 'batch', 'NoSchedule')];
  const busy = [pod('busy').node('b').requests({ cpu: '2', memory: '4Gi' })];
  const snapshot = buildSnapshot([...nodes, ...busy, incoming]);
  const state = new ClusterState(analyze(snapshot, SPEC), setting);
  const placement = placeReplacement(state, snapshot.pods[snapshot.pods.length - 1]!, undefined);
  if (placement.node === undefined) return `none: ${placement.reason}`;
  return [placement.node, ...placement.ties].map((n) => n.name).join(',');
}

describe('every profile is read, by its schedulerName', () => {
  it('holds a profile per schedulerName; the single-profile view is default-scheduler’s', () => {
    const result = parsed(PROFILES);
    expect([...result.profiles.byName.keys()]).toEqual(['default-scheduler', 'bin-packer', 'no-taints', 'dongles']);
    expect(result.profile.fitScoring.type).toBe('LeastAllocated');
    expect(profileFor(result.profiles, undefined)).toBe(result.profile);
    expect(profileFor(result.profiles, 'bin-packer')?.fitScoring.type).toBe('MostAllocated');
    expect(profileFor(result.profiles, 'no-taints')?.disabledFilters).toEqual(['TaintToleration']);
    expect(profileFor(result.profiles, 'custom')).toBeUndefined();
  });

  it('a profile’s own percentageOfNodesToScore wins over the global one, for that profile only', () => {
    const result = parsed(
      HEADER + 'percentageOfNodesToScore: 30\nprofiles: [{}, {schedulerName: x, percentageOfNodesToScore: 70}]\n',
    );
    expect(profileFor(result.profiles, 'default-scheduler')?.percentageOfNodesToScore).toBe(30);
    expect(profileFor(result.profiles, 'x')?.percentageOfNodesToScore).toBe(70);
  });

  it.each([
    [
      'a schedulerName given twice',
      'profiles: [{schedulerName: default-scheduler}, {schedulerName: batch}, {schedulerName: batch}]',
      /^profiles\[2\]\.schedulerName: duplicate value "batch"/,
    ],
    [
      'an empty schedulerName is default-scheduler, so with default-scheduler it is a duplicate',
      'profiles: [{}, {schedulerName: default-scheduler}]',
      /^profiles\[1\]\.schedulerName: duplicate value "default-scheduler"/,
    ],
    [
      'an unknown field in another scheduler’s profile',
      'profiles: [{}, {schedulerName: batch, plugin: {}}]',
      /^profiles\[1\]\.plugin: unknown field/,
    ],
    [
      'unmodelled args in another scheduler’s profile',
      'profiles: [{}, {schedulerName: batch, pluginConfig: [{name: ImageLocality, args: {foo: 1}}]}]',
      /^profiles\[1\]\.pluginConfig\[0\]\.args: args of ImageLocality are not modelled/,
    ],
    [
      'profiles that differ in hardPodAffinityWeight',
      'profiles: [{}, {schedulerName: b, pluginConfig: [{name: InterPodAffinity, args: {hardPodAffinityWeight: 5}}]}]',
      /^profiles\[1\]\.pluginConfig: InterPodAffinity hardPodAffinityWeight differs from that of profiles\[0\]/,
    ],
  ])('refused: %s', (_scenario, body, expected) => {
    expect(problemsOf(HEADER + body)[0]).toMatch(expected);
  });
});

describe('a pod’s replacement is placed by its own scheduler’s profile', () => {
  const profiles = parsed(PROFILES).profiles;
  it.each([
    { scenario: 'default-scheduler (LeastAllocated): the empty node', pod: pod('new'), expected: 'a' },
    {
      scenario: 'default-scheduler named explicitly: the same',
      pod: pod('new').scheduler('default-scheduler'),
      expected: 'a',
    },
    {
      scenario: 'bin-packer (MostAllocated): the half-full node',
      pod: pod('new').scheduler('bin-packer'),
      expected: 'b',
    },
    {
      scenario: 'no-taints (TaintToleration filter off): the tainted empty node ties with the other empty one',
      pod: pod('new').scheduler('no-taints'),
      expected: 'a,c',
    },
    {
      scenario: 'default-scheduler, a pod requesting a resource no node offers: nowhere',
      pod: pod('new').requests({ cpu: '1', memory: '1Gi', 'example.com/dongle': '1' }),
      expected: 'none: no node can take a replacement (2 of 2 admitting nodes: node has no example.com/dongle)',
    },
    {
      scenario: 'dongles (the resource ignored by the fit filter): the empty untainted node',
      pod: pod('new').requests({ cpu: '1', memory: '1Gi', 'example.com/dongle': '1' }).scheduler('dongles'),
      expected: 'a',
    },
    {
      scenario: 'a scheduler the configuration does not describe: no landing predicted',
      pod: pod('new').scheduler('custom'),
      expected: `none: scheduled by custom, ${OTHER}`,
    },
  ])('$scenario', ({ pod: incoming, expected }) => {
    expect(landing(incoming, profiles)).toBe(expected);
  });

  it.each([
    { scenario: 'default-scheduler: v1.26 defaults', pod: pod('new'), expected: 'a' },
    {
      scenario: 'any other scheduler: no landing predicted',
      pod: pod('new').scheduler('bin-packer'),
      expected: `none: scheduled by bin-packer, ${OTHER}`,
    },
  ])('no configuration given, $scenario', ({ pod: incoming, expected }) => {
    expect(landing(incoming, DEFAULT_PROFILE)).toBe(expected);
  });
});

describe('a pod of a scheduler the configuration does not describe is never evicted by prediction', () => {
  const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100, minPodAge: '0s' };
  const policy = parsePolicy(makePolicy('p', { eviction: LARGE }), { file: 'p.yaml' });
  /** Hostname counts 3,0 with maxSkew 1 (DoNotSchedule): one move makes 2,1. */
  const cluster = (scheduler: string | undefined) =>
    buildSnapshot([
      node('n1'),
      node('n2'),
      ...[0, 1, 2].map((i) => {
        const p = makePod(`web-${i}`, 'shop')
          .deployment('web')
          .label('app', 'web')
          .node('n1')
          .spread({
            topologyKey: HOSTNAME,
            maxSkew: 1,
            whenUnsatisfiable: 'DoNotSchedule',
            labelSelector: { matchLabels: { app: 'web' } },
          });
        return scheduler === undefined ? p : p.scheduler(scheduler);
      }),
    ]);
  const configured = parsed(HEADER + 'profiles: [{}, {schedulerName: bin-packer}]').profiles;

  it.each([
    { scenario: 'default-scheduler pods, no configuration', scheduler: undefined, setting: undefined, moved: 1 },
    {
      scenario: 'bin-packer pods, a configuration with its profile',
      scheduler: 'bin-packer',
      setting: configured,
      moved: 1,
    },
    {
      scenario: 'custom pods, a configuration without its profile',
      scheduler: 'custom',
      setting: configured,
      moved: 0,
    },
    { scenario: 'bin-packer pods, no configuration', scheduler: 'bin-packer', setting: undefined, moved: 0 },
  ])('$scenario: $moved moved', ({ scheduler, setting, moved }) => {
    const { plan } = planCycle(cluster(scheduler), policy, setting === undefined ? {} : { schedulerProfile: setting });
    expect(plan.evictions.map((e) => `${e.node} → ${e.target}`)).toEqual(moved === 1 ? ['n1 → n2'] : []);
    if (moved === 0) {
      expect(plan.skipped.length).toBeGreaterThan(0);
      for (const s of plan.skipped) expect(s.reason).toBe(`scheduled by ${scheduler}, ${OTHER}`);
    }
  });
});
