// What a lane keeps of its plan (src/operator/eviction/evictionOutcomes.ts, skewNotes): the skew its plan reported for
// the group each move repairs, found by namespace, topology key and workload, as the Event and the log line say it.
import { describe, expect, it } from 'vitest';
import type { RebalancePlan, TopologyReport } from '../../../src/model/plan.js';
import { skewNotes } from '../../../src/operator/eviction/evictionOutcomes.js';
import type { Move } from '../../../src/planner/move.js';
import { buildSnapshot, makeNode, makePod } from '../../builders.js';

const snapshot = buildSnapshot([
  makeNode('n1').zone('zone-a'),
  makePod('web-1', 'shop').deployment('web').labels({ app: 'web' }).node('n1'),
  makePod('api-1', 'shop').deployment('api').labels({ app: 'api' }).node('n1'),
  makePod('web-1', 'other').deployment('web').labels({ app: 'web' }).node('n1'),
]);
const [web, api, otherWeb] = snapshot.pods as [Move['pod'], Move['pod'], Move['pod']];
const n1 = snapshot.nodes[0]!;
const move = (pod: Move['pod'], spreadKey?: string): Move => ({
  pod,
  from: n1,
  target: n1,
  ties: [],
  strategy: 'TopologySpread',
  reason: 'test',
  ...(spreadKey === undefined ? {} : { spreadKey }),
});
const group = (namespace: string, topologyKey: string, workloads: string[], skew: number, skewAfter: number) =>
  ({
    namespace,
    selector: 'app=x',
    topologyKey,
    whenUnsatisfiable: 'DoNotSchedule',
    maxSkew: 1,
    domains: {},
    skew,
    skewAfter,
    workloads,
  }) satisfies TopologyReport;
const plan = (topology: TopologyReport[]) => ({ topology }) as unknown as RebalancePlan;

describe('skewNotes: the skew each move repairs, by namespace, key and workload', () => {
  it('finds each move its own group, and none for a move that repairs no spread', () => {
    const zone = 'topology.kubernetes.io/zone';
    const host = 'kubernetes.io/hostname';
    const moves = [move(web, zone), move(api, host), move(otherWeb, zone), move(web)];
    const notes = skewNotes(
      plan([
        group('shop', host, ['Deployment/web'], 4, 2),
        group('shop', zone, ['Deployment/web', 'Deployment/api'], 3, 1),
        group('shop', host, ['Deployment/api'], 2, 1),
        group('other', zone, ['Deployment/web'], 5, 0),
        // A later group naming the same workload again: the first one stands.
        group('shop', zone, ['Deployment/web'], 9, 9),
      ]),
      moves,
    );
    expect(moves.map((m) => notes.get(m))).toEqual([
      `${zone} skew 3 → 1 planned`,
      `${host} skew 2 → 1 planned`,
      `${zone} skew 5 → 0 planned`,
      undefined,
    ]);
  });
});
