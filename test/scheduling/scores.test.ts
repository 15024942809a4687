// Table cases of the landing prediction's scores, read like the scheduler documentation ("Scheduling Framework",
// "Resource Bin Packing", "Pod Topology Spread Constraints", "Taints and Tolerations"): which node kube-scheduler
// v1.26's default profile prefers, and which nodes tie. Every case was also seen on the real scheduler by
// test/integration/schedulerParity.test.ts's kind of cluster; here the cluster is built by hand.
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { DEFAULT_POLICY } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { feasibleNodesToFind } from '../../src/scheduling/framework/sampling.js';
import { explainScores, placeReplacement } from '../../src/scheduling/placement.js';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../../src/scheduling/profile.js';
import { HOSTNAME, ZONE, buildSnapshot, makeNode, makePod, type NodeBuilder, type PodBuilder } from '../builders.js';

const SPEC = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

/** Where the scheduler would put `incoming` (the last pod), and the nodes tied with it. */
function landing(
  nodes: readonly NodeBuilder[],
  pods: readonly PodBuilder[],
  incoming: PodBuilder,
  profile: SchedulerProfile = DEFAULT_PROFILE,
): { node: string | undefined; ties: string[]; scores: ReturnType<typeof explainScores> } {
  const snapshot = buildSnapshot([...nodes, ...pods, incoming]);
  const pod = snapshot.pods[snapshot.pods.length - 1]!;
  const state = new ClusterState(analyze(snapshot, SPEC), profile);
  const placement = placeReplacement(state, pod, undefined);
  return {
    node: placement.node?.name,
    ties: placement.ties.map((n) => n.name),
    scores: explainScores(state, pod, undefined),
  };
}

const node = (name: string, cpu = '4', memory = '8Gi') =>
  makeNode(name).zone('zone-a').allocatable({ cpu, memory, pods: '110' });
const pod = (name: string) => makePod(name, 'shop').label('app', name.replace(/-\d+$/, ''));

describe('NodeResourcesFit and BalancedAllocation', () => {
  it('LeastAllocated (default) prefers the emptier node', () => {
    const r = landing(
      [node('a'), node('b')],
      [pod('x-1').requests({ cpu: '2', memory: '4Gi' }).node('a')],
      pod('new').requests({ cpu: '1', memory: '1Gi' }),
    );
    expect(r).toMatchObject({ node: 'b', ties: [] });
  });

  it('MostAllocated packs onto the fuller node', () => {
    const profile: SchedulerProfile = {
      ...DEFAULT_PROFILE,
      fitScoring: { type: 'MostAllocated', resources: DEFAULT_PROFILE.fitScoring.resources },
    };
    const r = landing(
      [node('a'), node('b')],
      [pod('x-1').requests({ cpu: '2', memory: '4Gi' }).node('a')],
      pod('new').requests({ cpu: '1', memory: '1Gi' }),
      profile,
    );
    expect(r.node).toBe('a');
  });

  it('counts a container without requests as 100m cpu and 200Mi memory: equal nodes tie, one more such pod breaks it', () => {
    const nodes = [node('a', '1', '1Gi'), node('b', '1', '1Gi')];
    expect(landing(nodes, [], pod('new'))).toMatchObject({ node: 'a', ties: ['b'] });
    // 100m of 1 cpu is 10 points of LeastAllocated on its own.
    expect(landing(nodes, [pod('x-1').node('a')], pod('new')).node).toBe('b');
  });

  it('BalancedAllocation prefers the node where cpu and memory end up equally used', () => {
    // Both nodes end at 50% cpu; memory ends at 50% on a, 12.5% on b.
    const r = landing(
      [node('a'), node('b')],
      [
        pod('x-1').requests({ cpu: '1', memory: '3Gi' }).node('a'),
        pod('y-1').requests({ cpu: '1', memory: '0' }).node('b'),
      ],
      pod('new').requests({ cpu: '1', memory: '1Gi' }),
    );
    const balanced = Object.fromEntries(r.scores.map((s) => [s.node, s.plugins['NodeResourcesBalancedAllocation']]));
    expect(balanced).toEqual({ a: 100, b: 81 });
  });
});

describe('TaintToleration, NodeAffinity and ImageLocality', () => {
  it('avoids an untolerated PreferNoSchedule taint (weight 3, reversed)', () => {
    const r = landing([node('a').taint('spot', 'true', 'PreferNoSchedule'), node('b')], [], pod('new'));
    expect(r).toMatchObject({ node: 'b', ties: [] });
    const t = Object.fromEntries(r.scores.map((s) => [s.node, s.plugins['TaintToleration']]));
    expect(t).toEqual({ a: 0, b: 300 });
  });

  it('prefers the node matching preferred node affinity (scaled to the best node, weight 2)', () => {
    const incoming = pod('new').set('spec.affinity', {
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          { weight: 10, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } },
        ],
      },
    });
    const r = landing([node('a'), node('b').label('disk', 'ssd')], [], incoming);
    expect(r.node).toBe('b');
    expect(r.scores.find((s) => s.node === 'b')!.plugins['NodeAffinity']).toBe(200);
  });

  it('prefers the node that already has the image, less so when every node has it', () => {
    const image = (n: NodeBuilder) => n.image(['registry.example/app:1.0'], 500 * 2 ** 20);
    const one = landing([image(node('a')), node('b'), node('c'), node('d')], [], pod('new'));
    expect(one.node).toBe('a');
    // 500 MiB × 1/4 of the nodes: (125 − 23) / (1000 − 23) of 100.
    expect(one.scores.find((s) => s.node === 'a')!.plugins['ImageLocality']).toBe(10);
    const all = landing([image(node('a')), image(node('b'))], [], pod('new'));
    expect(all).toMatchObject({ node: 'a', ties: ['b'] });
  });
});

describe('InterPodAffinity and PodTopologySpread', () => {
  it('preferred pod affinity pulls towards the zone of the matching pods; existing pods’ preferred anti-affinity pushes away', () => {
    const zoned = [node('a1'), node('b1').label(ZONE, 'zone-b')];
    const towards = pod('new').preferredPodAffinity(50, {
      topologyKey: ZONE,
      labelSelector: { matchLabels: { app: 'cache' } },
    });
    expect(landing(zoned, [pod('cache-1').node('b1')], towards).node).toBe('b1');
    const repelled = pod('web-1');
    const repeller = pod('batch-1')
      .node('a1')
      .preferredPodAntiAffinity(80, { topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } });
    expect(landing(zoned, [repeller], repelled).node).toBe('b1');
  });

  it('an existing pod’s required affinity to the incoming pod scores its domain (hardPodAffinityWeight 1)', () => {
    const zoned = [node('a1'), node('b1').label(ZONE, 'zone-b')];
    const needsWeb = pod('api-1')
      .node('b1')
      .podAffinity({ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } });
    expect(landing(zoned, [needsWeb], pod('web-1')).node).toBe('b1');
  });

  it('a ScheduleAnyway hostname constraint steers to the node with fewest matching pods', () => {
    const soft = (b: PodBuilder) =>
      b.spread({
        topologyKey: HOSTNAME,
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { app: 'web' } },
      });
    const r = landing(
      [node('a'), node('b'), node('c')],
      [soft(pod('web-1')).node('a'), soft(pod('web-2')).node('b')],
      soft(pod('web-3')),
    );
    expect(r).toMatchObject({ node: 'c', ties: [] });
  });

  it('System default spreading applies to a ReplicaSet’s pod without constraints, not to a bare pod', () => {
    const nodes = [node('a'), node('b')];
    const replica = (name: string) => makePod(name, 'shop').deployment('web').label('app', 'web');
    const r = landing(nodes, [replica('web-1').node('a')], replica('web-2'));
    expect(r.scores.find((s) => s.node === 'b')!.plugins['PodTopologySpread']).toBeGreaterThan(
      r.scores.find((s) => s.node === 'a')!.plugins['PodTopologySpread']!,
    );
    const bare = landing(nodes, [pod('web-1').node('a')], pod('web-2'));
    expect(new Set(bare.scores.map((s) => s.plugins['PodTopologySpread'])).size).toBe(1);
  });
});

describe('feasibleNodesToFind: how many feasible nodes kube-scheduler looks for before it scores', () => {
  it.each([
    // [nodes, percentageOfNodesToScore, found]
    [50, 0, 50], // small clusters: every node
    [100, 0, 100],
    [300, 0, 144], // adaptive: 50% - 300/125 = 48%
    [1000, 0, 420], // 42%
    [6000, 0, 300], // floored at 5%
    [300, 10, 100], // a configured percentage, never below 100 nodes
    [1000, 30, 300],
    [1000, 100, 1000],
  ])('%i nodes, percentageOfNodesToScore %i: %i', (nodes, percentage, found) => {
    expect(feasibleNodesToFind(nodes, percentage)).toBe(found);
  });
});
