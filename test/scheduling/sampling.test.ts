// Sampling (issue 29): above 100 nodes kube-scheduler scores only a window of the feasible nodes, starting where its
// previous search stopped. The prediction is every node that has the top total in SOME window; these tests hold the
// sliding-window computation (framework/windows.ts) to the plain one — score each window on its own, as the
// scheduler would, and take the union of the winners — on random clusters of 101–180 nodes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { DEFAULT_POLICY } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { feasibleNodesToFind } from '../../src/scheduling/framework/sampling.js';
import { slidingExtremes } from '../../src/scheduling/framework/windows.js';
import { canPlaceOn, placeReplacement, staticallyAdmitting } from '../../src/scheduling/placement.js';
import { frameworkFor } from '../../src/scheduling/plugins/registry.js';
import { DEFAULT_PROFILE, type SchedulerProfile } from '../../src/scheduling/profile.js';
import { HOSTNAME, ZONE, buildSnapshot, makeNode, makePod, type NodeBuilder, type PodBuilder } from '../builders.js';

const SPEC = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

interface Shape {
  readonly nodes: number;
  readonly zones: number;
  /** Per node: pods of 500m already there (0–3), whether it carries disk=ssd, a PreferNoSchedule taint, is cordoned. */
  readonly load: ReadonlyArray<{ pods: number; ssd: boolean; prefer: boolean; cordoned: boolean }>;
  readonly preferSsd: boolean;
  readonly spread: boolean;
  readonly percentage: number;
}

function cluster(shape: Shape): { nodes: NodeBuilder[]; pods: PodBuilder[]; incoming: PodBuilder } {
  const nodes: NodeBuilder[] = [];
  const pods: PodBuilder[] = [];
  for (let i = 0; i < shape.nodes; i++) {
    const l = shape.load[i % shape.load.length]!;
    const name = `n${String(i).padStart(3, '0')}`;
    let node = makeNode(name)
      .zone(`zone-${i % shape.zones}`)
      .allocatable({ cpu: '4', memory: '8Gi', pods: '110' });
    if (l.ssd) node = node.label('disk', 'ssd');
    if (l.prefer) node = node.taint('batch', 'yes', 'PreferNoSchedule');
    if (l.cordoned) node = node.unschedulable();
    nodes.push(node);
    for (let p = 0; p < l.pods; p++) {
      pods.push(
        makePod(`${name}-p${p}`, 'shop').label('app', 'web').requests({ cpu: '500m', memory: '1Gi' }).node(name),
      );
    }
  }
  let incoming = makePod('new', 'shop').label('app', 'web').requests({ cpu: '500m', memory: '1Gi' });
  if (shape.preferSsd) {
    incoming = incoming.preferredNodeAffinity(10, {
      matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }],
    });
  }
  if (shape.spread) {
    incoming = incoming
      .spread({
        topologyKey: HOSTNAME,
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { app: 'web' } },
      })
      .spread({
        topologyKey: ZONE,
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: { app: 'web' } },
      });
  }
  return { nodes, pods, incoming };
}

/** The union of each window's top-scored nodes, every window scored on its own. */
function plainWinners(state: ClusterState, profile: SchedulerProfile): string[] {
  const pod = state.snapshotPods()[state.snapshotPods().length - 1]!;
  const feasible = staticallyAdmitting(state, pod).filter((i) => canPlaceOn(state, pod, undefined, state.nodeList[i]!));
  const k = feasibleNodesToFind(state.nodeList.length, profile.percentageOfNodesToScore);
  const framework = frameworkFor(profile);
  if (feasible.length <= k) return [];
  const winners = new Set<string>();
  for (let start = 0; start < feasible.length; start++) {
    const window = Int32Array.from({ length: k }, (_, j) => feasible[(start + j) % feasible.length]!);
    const totals = new Float64Array(k);
    framework.score(state, pod, { terminating: undefined, gone: undefined }, window, totals);
    const top = Math.max(...totals);
    window.forEach((index, j) => {
      if (totals[j] === top) winners.add(state.nodeList[index]!.name);
    });
  }
  return [...winners].sort();
}

const shapes = fc.record({
  nodes: fc.integer({ min: 101, max: 180 }),
  zones: fc.integer({ min: 1, max: 4 }),
  load: fc.array(
    fc.record({
      pods: fc.integer({ min: 0, max: 3 }),
      ssd: fc.boolean(),
      prefer: fc.boolean(),
      cordoned: fc.integer({ min: 0, max: 4 }).map((x) => x === 0),
    }),
    { minLength: 3, maxLength: 17 },
  ),
  preferSsd: fc.boolean(),
  spread: fc.boolean(),
  percentage: fc.constantFrom(0, 0, 30, 60, 100),
});

describe('sampling: the nodes that win in some window', () => {
  it('are what scoring every window on its own finds (random clusters of 101–180 nodes)', () => {
    let sampled = 0;
    fc.assert(
      fc.property(shapes, (shape) => {
        const { nodes, pods, incoming } = cluster(shape);
        const profile: SchedulerProfile =
          shape.percentage === 0 ? DEFAULT_PROFILE : { ...DEFAULT_PROFILE, percentageOfNodesToScore: shape.percentage };
        const state = new ClusterState(analyze(buildSnapshot([...nodes, ...pods, incoming]), SPEC), profile);
        const pod = state.snapshotPods()[state.snapshotPods().length - 1]!;
        const plain = plainWinners(state, profile);
        const placement = placeReplacement(state, pod, undefined);
        const predicted = [placement.node!, ...placement.ties].map((n) => n.name).sort();
        if (plain.length === 0) return; // every feasible node scored together: no sampling
        sampled++;
        expect(predicted).toEqual(plain);
      }),
      { numRuns: 40, seed: 2929 },
    );
    expect(sampled).toBeGreaterThan(10);
  });

  it('a window of 100 among 150 equal nodes but one cheaper: every node the cheaper one is not windowed with wins', () => {
    // 150 nodes alike, one emptier (n000): the windows that hold n000 choose it; the 50 windows without it tie on all
    // of theirs, so every node can land the pod.
    const nodes = Array.from({ length: 150 }, (_, i) =>
      makeNode(`n${String(i).padStart(3, '0')}`)
        .zone('zone-a')
        .allocatable({ cpu: '4', memory: '8Gi', pods: '110' }),
    );
    const pods = nodes.slice(1).map((_, i) =>
      makePod(`busy-${i}`, 'shop')
        .requests({ cpu: '1', memory: '2Gi' })
        .node(`n${String(i + 1).padStart(3, '0')}`),
    );
    const incoming = makePod('new', 'shop').requests({ cpu: '500m', memory: '1Gi' });
    const state = new ClusterState(analyze(buildSnapshot([...nodes, ...pods, incoming]), SPEC));
    const pod = state.snapshotPods()[state.snapshotPods().length - 1]!;
    const placement = placeReplacement(state, pod, undefined);
    expect(feasibleNodesToFind(150)).toBe(100);
    expect(placement.ties.length + 1).toBe(150);
  });
});

describe('slidingExtremes', () => {
  it('is the minimum and maximum of every cyclic run, NaN left out when asked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constant(Number.NaN)), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 30 }),
        (values, kRaw) => {
          const k = Math.min(kRaw, values.length);
          const input = Float64Array.from(values.map((v) => (Number.isNaN(v) ? 0 : v)));
          const withNaN = Float64Array.from(values);
          for (const max of [false, true]) {
            const got = slidingExtremes(input, k, max);
            const gotNaN = slidingExtremes(withNaN, k, max, true);
            for (let s = 0; s < values.length; s++) {
              const run = Array.from({ length: k }, (_, j) => input[(s + j) % values.length]!);
              const runNaN = Array.from({ length: k }, (_, j) => withNaN[(s + j) % values.length]!).filter(
                (v) => !Number.isNaN(v),
              );
              expect(got[s]).toBe(max ? Math.max(...run) : Math.min(...run));
              const want = runNaN.length === 0 ? NaN : max ? Math.max(...runNaN) : Math.min(...runNaN);
              expect(gotNaN[s]).toBe(want);
            }
          }
        },
      ),
      { seed: 29, numRuns: 200 },
    );
  });
});
