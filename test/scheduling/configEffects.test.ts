// What each modelled KubeSchedulerConfiguration field changes in a landing (issue 29): the same cluster placed with
// the default profile and with the field set, the file parsed as kube-rebalancer reads `--scheduler-config`.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { DEFAULT_POLICY } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { placeReplacement } from '../../src/scheduling/placement.js';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../../src/scheduling/profile.js';
import { parseSchedulerConfig } from '../../src/scheduling/schedulerConfig.js';
import { buildSnapshot, makeNode, makePod, type NodeBuilder, type PodBuilder } from '../builders.js';

const SPEC = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

function profile(pluginConfig: string, plugins = ''): SchedulerProfile {
  const text =
    'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n' +
    (plugins === '' ? '' : `  plugins: ${plugins}\n`) +
    (pluginConfig === '' ? '' : `  pluginConfig: ${pluginConfig}\n`);
  const result = parseSchedulerConfig(text, 'sched.yaml');
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.profile;
}

/** Where `incoming` lands (node and ties, sorted), or `none`. */
function landing(nodes: NodeBuilder[], pods: PodBuilder[], incoming: PodBuilder, p: SchedulerProfile): string {
  const snapshot = buildSnapshot([...nodes, ...pods, incoming]);
  const state = new ClusterState(analyze(snapshot, SPEC), p);
  const placement = placeReplacement(state, snapshot.pods[snapshot.pods.length - 1]!, undefined);
  if (placement.node === undefined) return 'none';
  return [placement.node, ...placement.ties].map((n) => n.name).join(',');
}

const node = (name: string) => makeNode(name).zone('zone-a').allocatable({ cpu: '4', memory: '8Gi', pods: '110' });
const pod = (name: string) => makePod(name, 'shop').requests({ cpu: '1', memory: '1Gi' });

describe('a modelled field changes the landing as kube-scheduler would', () => {
  it('NodeAffinity addedAffinity: its required terms filter, its preferred terms score', () => {
    const nodes = [node('a').label('pool', 'x'), node('b').label('pool', 'y')];
    const busy = [pod('busy').node('b').requests({ cpu: '2', memory: '4Gi' })];
    // Default: a is empty and b half full, so a; an added preference for pool y turns it round.
    expect(landing(nodes, busy, pod('new'), DEFAULT_PROFILE)).toBe('a');
    const prefer = profile(
      '[{name: NodeAffinity, args: {addedAffinity: {preferredDuringSchedulingIgnoredDuringExecution: ' +
        '[{weight: 100, preference: {matchExpressions: [{key: pool, operator: In, values: [y]}]}}]}}}]',
    );
    expect(landing(nodes, busy, pod('new'), prefer)).toBe('b');
    const require = profile(
      '[{name: NodeAffinity, args: {addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: ' +
        '{nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [z]}]}]}}}}]',
    );
    expect(landing(nodes, busy, pod('new'), require)).toBe('none');
  });

  it('NodeResourcesFit ignoredResources and ignoredResourceGroups: the filter skips those extended resources', () => {
    const nodes = [node('a')];
    const wants = pod('new').requests({ cpu: '1', memory: '1Gi', 'example.com/dongle': '1' });
    expect(landing(nodes, [], wants, DEFAULT_PROFILE)).toBe('none');
    expect(
      landing(nodes, [], wants, profile('[{name: NodeResourcesFit, args: {ignoredResources: [example.com/dongle]}}]')),
    ).toBe('a');
    expect(
      landing(nodes, [], wants, profile('[{name: NodeResourcesFit, args: {ignoredResourceGroups: [example.com]}}]')),
    ).toBe('a');
  });

  it('NodeResourcesBalancedAllocation resources: balancing cpu alone ties nodes cpu and memory tell apart', () => {
    const nodes = [node('a'), node('b')];
    const busy = [
      pod('m').node('a').requests({ cpu: '1', memory: '6Gi' }),
      pod('c').node('b').requests({ cpu: '1', memory: '1Gi' }),
    ];
    const fitOff = '{score: {disabled: [{name: NodeResourcesFit}]}}';
    // The new pod requests cpu and memory: since 1.35 BalancedAllocation skips a pod that requests neither. From 1.36
    // (the default modelled here) it scores the change the pod makes, so the memory-heavy node a it evens out wins.
    const wants = pod('new').requests({ cpu: '1', memory: '1Gi' });
    expect(landing(nodes, busy, wants, profile('', fitOff))).toBe('a');
    expect(
      landing(
        nodes,
        busy,
        wants,
        profile('[{name: NodeResourcesBalancedAllocation, args: {resources: [{name: cpu, weight: 1}]}}]', fitOff),
      ),
    ).toBe('a,b');
  });

  it('InterPodAffinity ignorePreferredTermsOfExistingPods: existing pods’ preferences stop counting', () => {
    const nodes = [node('a'), node('b')];
    const friend = pod('friend').node('b').label('app', 'friend').requests({ cpu: '2', memory: '4Gi' });
    const likes = friend.preferredPodAffinity(100, {
      labelSelector: { matchLabels: { app: 'new' } },
      topologyKey: 'kubernetes.io/hostname',
    });
    const incoming = pod('new').label('app', 'new');
    expect(landing(nodes, [likes], incoming, DEFAULT_PROFILE)).toBe('b');
    expect(
      landing(
        nodes,
        [likes],
        incoming,
        profile('[{name: InterPodAffinity, args: {ignorePreferredTermsOfExistingPods: true}}]'),
      ),
    ).toBe('a');
  });

  it('a disabled filter is not applied', () => {
    const nodes = [node('a').taint('dedicated', 'infra', 'NoSchedule')];
    expect(landing(nodes, [], pod('new'), DEFAULT_PROFILE)).toBe('none');
    expect(landing(nodes, [], pod('new'), profile('', '{filter: {disabled: [{name: TaintToleration}]}}'))).toBe('a');
    const full = [node('a').allocatable({ cpu: '1', memory: '8Gi', pods: '110' })];
    expect(landing(full, [], pod('new').requests({ cpu: '2' }), DEFAULT_PROFILE)).toBe('none');
    expect(
      landing(
        full,
        [],
        pod('new').requests({ cpu: '2' }),
        profile('', '{multiPoint: {disabled: [{name: NodeResourcesFit}]}}'),
      ),
    ).toBe('a');
  });
});
