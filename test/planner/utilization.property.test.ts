// lowNodeUtilization over small generated clusters (nodes of 2 or 4 CPU in two pools, some tainted; Deployments
// with cpu requests, priorities, a pool nodeSelector, a toleration, and sometimes a soft hostname spread the policy
// acts on). Properties, per cluster (planCycle with large limits):
//  (a) every kept utilization move lands on an underutilized node, not above its target, on every node the
//      scheduler might choose: the plan's moves are replayed one at a time on a fresh ClusterState, and for each
//      LowNodeUtilization move the simulated placement (node and ties, as placeReplacement gives them) must be the
//      move's target, and every one of [node, ...ties] must be classified under and stay at or below targetThresholds
//      once the replacement is there; its pod must come from an overutilized node;
//  (b) no enabled rule is broken: no acted-on spread group ends above max(its skew, its maxSkew), and there are no
//      more acted-on violations after the plan's replacements than before;
//  (c) the eviction count is at most the exhaustive-search minimum: an independent search over every sequence of at
//      most CAP evictions (pods alike on a node tried once, each placed by the same simulation, kept only where
//      (a) holds) finds the fewest that bring every overutilized node to its target; when it finds one, the plan
//      reaches the targets too, with no more evictions. Clusters without spread constraints.
// FC_RUNS=<n> for more cases, FC_SEED=<seed> FC_PATH=<path> to replay one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import type { ClusterSnapshot, NodeInfo, PodInfo } from '../../src/model/types.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { applyMoves } from '../../src/planner/simulate.js';
import { parsePolicy } from '../../src/policy/parse.js';
import type { Policy } from '../../src/policy/types.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { placeReplacement } from '../../src/scheduling/placement.js';
import { HOSTNAME, buildSnapshot, makeNode, makePod, makePolicy } from '../builders.js';
import { propertyParams } from './clusterArb.js';

const RUNS = Number(process.env['FC_RUNS'] ?? 150);
/** The search's deepest plan. */
const CAP = 4;

interface NodeGen {
  readonly cpu: 2 | 4;
  readonly pool: 'a' | 'b';
  readonly tainted: boolean;
}

interface WorkloadGen {
  readonly cpuM: number;
  readonly priority: number;
  readonly pool: 'a' | 'b' | undefined;
  readonly tolerates: boolean;
  readonly soft: boolean;
  /** Node indices (mod the node count) its pods are put on, while they fit. */
  readonly placement: readonly number[];
}

interface ClusterGen {
  readonly nodes: readonly NodeGen[];
  readonly workloads: readonly WorkloadGen[];
  readonly low: number;
  readonly high: number;
  readonly softSpread: boolean;
}

const clusterArb = (spread: boolean): fc.Arbitrary<ClusterGen> =>
  fc.record({
    nodes: fc.array(
      fc.record({
        cpu: fc.constantFrom(2 as const, 4 as const),
        pool: fc.constantFrom('a' as const, 'b' as const),
        tainted: fc.boolean(),
      }),
      { minLength: 2, maxLength: 5 },
    ),
    workloads: fc.array(
      fc.record({
        cpuM: fc.constantFrom(200, 300, 500, 800),
        priority: fc.constantFrom(0, 10),
        pool: fc.constantFrom(undefined, undefined, 'a' as const, 'b' as const),
        tolerates: fc.boolean(),
        soft: spread ? fc.boolean() : fc.constant(false),
        // Node 0 often: a loaded node beside emptier ones is the case the strategy is for.
        placement: fc.array(fc.oneof(fc.constant(0), fc.nat(4)), { maxLength: 8 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    low: fc.constantFrom(20, 30),
    high: fc.constantFrom(40, 50, 60),
    softSpread: spread ? fc.boolean() : fc.constant(false),
  });

function build(c: ClusterGen): { snapshot: ClusterSnapshot; policy: Policy } {
  const objects: Array<{ obj(): Record<string, unknown> }> = [];
  const used = c.nodes.map(() => 0);
  c.nodes.forEach((n, i) => {
    const node = makeNode(`n${i}`)
      .allocatable({ cpu: String(n.cpu), memory: '16Gi', pods: '110' })
      .label('pool', n.pool);
    if (n.tainted) node.taint('dedicated', 'x', 'NoSchedule');
    objects.push(node);
  });
  c.workloads.forEach((w, wi) => {
    w.placement.forEach((raw, k) => {
      const i = raw % c.nodes.length;
      const n = c.nodes[i]!;
      // Only where the scheduler could have put it, and while it fits.
      if ((w.pool !== undefined && n.pool !== w.pool) || (n.tainted && !w.tolerates)) return;
      if (used[i]! + w.cpuM > n.cpu * 1000) return;
      used[i]! += w.cpuM;
      const pod = makePod(`w${wi}-${k}`, 'shop')
        .deployment(`w${wi}`)
        .label('app', `w${wi}`)
        .node(`n${i}`)
        .requests({ cpu: `${w.cpuM}m` })
        .priority(w.priority);
      if (w.pool !== undefined) pod.nodeSelector({ pool: w.pool });
      if (w.tolerates) pod.toleration({ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' });
      if (w.soft) {
        pod.spread({
          topologyKey: HOSTNAME,
          maxSkew: 1,
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: { app: `w${wi}` } },
        });
      }
      objects.push(pod);
    });
  });
  const policy = parsePolicy(
    makePolicy('test', {
      strategies: {
        lowNodeUtilization: { enabled: true, thresholds: { cpu: c.low }, targetThresholds: { cpu: c.high } },
        topologySpread: { includeSoftConstraints: c.softSpread },
      },
      eviction: { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 },
    }),
    { file: 'generated' },
  );
  return { snapshot: buildSnapshot(objects), policy };
}

/** cpu requested on a node in a state, in millicores. */
const cpuOn = (state: ClusterState, node: NodeInfo): number => state.usageOf(node.name).requested['cpu'] ?? 0;
const cpuOf = (pod: PodInfo): number => pod.requests['cpu'] ?? 0;
const limit = (node: NodeInfo, percent: number): number => ((node.allocatable['cpu'] ?? 0) * percent) / 100;

/** Why landing `pod` on every node of `landing` is not a utilization move as DESIGN.md promises (undefined: it is). */
function landingProblem(
  state: ClusterState,
  pod: PodInfo,
  landing: readonly NodeInfo[],
  under: ReadonlySet<string>,
  high: number,
): string | undefined {
  for (const t of landing) {
    if (!under.has(t.name)) return `${t.name} is not underutilized`;
    if (cpuOn(state, t) + cpuOf(pod) > limit(t, high) + 1e-6) return `${t.name} would be above its target`;
  }
  return undefined;
}

function classesOf(snapshot: ClusterSnapshot, c: ClusterGen): { under: Set<string>; over: Set<string> } {
  const under = new Set<string>();
  const over = new Set<string>();
  const used = new Map<string, number>();
  for (const p of snapshot.pods) used.set(p.nodeName!, (used.get(p.nodeName!) ?? 0) + cpuOf(p));
  for (const n of snapshot.nodes) {
    const share = ((used.get(n.name) ?? 0) / n.allocatable['cpu']!) * 100;
    if (share <= c.low + 1e-9 && !n.unschedulable) under.add(n.name);
    else if (share > c.high + 1e-9) over.add(n.name);
  }
  return { under, over };
}

/**
 * The fewest evictions (≤ CAP) that bring every overutilized node to its target, undefined when none does, or
 * 'idle' where the descheduler's stop conditions (which the strategy keeps) leave nothing to do.
 */
function exhaustiveMinimum(snapshot: ClusterSnapshot, policy: Policy, c: ClusterGen): number | 'idle' | undefined {
  const { under, over } = classesOf(snapshot, c);
  if (under.size === 0 || under.size === snapshot.nodes.length || over.size === 0) return 'idle';
  const state = new ClusterState(analyze(snapshot, policy.spec));
  const overNodes = snapshot.nodes.filter((n) => over.has(n.name));
  const done = (): boolean => overNodes.every((n) => cpuOn(state, n) <= limit(n, c.high) + 1e-6);
  if (done()) return 0;
  const candidates = snapshot.pods.filter((p) => over.has(p.nodeName!));
  const search = (left: number, start: number): boolean => {
    if (done()) return true;
    if (left === 0) return false;
    const tried = new Set<string>();
    for (let i = start; i < candidates.length; i++) {
      const pod = candidates[i]!;
      const key = `${pod.workload.name}\u0000${pod.nodeName}`;
      if (tried.has(key) || !state.isLive(pod)) continue;
      tried.add(key);
      const from = state.nodeOf(pod)!;
      const placed = placeReplacement(state, pod, { pod, node: from });
      if (placed.node === undefined) continue;
      if (landingProblem(state, pod, [placed.node, ...placed.ties], under, c.high) !== undefined) continue;
      state.commit(pod, placed.node);
      const found = search(left - 1, i + 1);
      state.uncommit(pod, from, placed.node);
      if (found) return true;
    }
    return false;
  };
  for (let k = 1; k <= CAP; k++) if (search(k, 0)) return k;
  return undefined;
}

function run(c: ClusterGen): { snapshot: ClusterSnapshot; policy: Policy; outcome: PlanOutcome } {
  const { snapshot, policy } = build(c);
  return { snapshot, policy, outcome: planCycle(snapshot, policy) };
}

describe('lowNodeUtilization over generated clusters', () => {
  it('(a) every kept move lands, for every tie, on an underutilized node not above its target; (b) breaks no enabled rule', () => {
    fc.assert(
      fc.property(clusterArb(true), (c) => {
        const { snapshot, policy, outcome } = run(c);
        const classes = new Map((outcome.plan.nodes ?? []).map((n) => [n.name, n.class]));
        const under = new Set([...classes].filter(([, k]) => k === 'under').map(([n]) => n));
        const state = new ClusterState(analyze(snapshot, policy.spec));
        for (const m of outcome.moves) {
          if (m.strategy === 'LowNodeUtilization') {
            expect(classes.get(m.from.name), `${m.pod.name} comes from an overutilized node`).toBe('over');
            const placed = placeReplacement(state, m.pod, { pod: m.pod, node: m.from });
            expect(placed.node?.name, `${m.pod.name}: the simulation's choice is the move's target`).toBe(
              m.target?.name,
            );
            expect(landingProblem(state, m.pod, [placed.node!, ...placed.ties], under, c.high)).toBeUndefined();
          }
          state.commit(m.pod, m.target);
        }
        // (b) acted-on spread groups (the hard ones, and the soft ones when the policy acts on them) and violations.
        for (const t of outcome.plan.topology) {
          if (t.whenUnsatisfiable === 'ScheduleAnyway' && !c.softSpread) continue;
          expect(t.skewAfter, `${t.selector} ${t.topologyKey}`).toBeLessThanOrEqual(Math.max(t.skew, t.maxSkew));
        }
        const acted = (s: ClusterSnapshot): number => analyze(s, policy.spec).violations.filter((v) => !v.soft).length;
        expect(acted(applyMoves(snapshot, outcome.moves, 1000))).toBeLessThanOrEqual(acted(snapshot));
      }),
      propertyParams(0x10ad01, RUNS),
    );
  });

  it('(c) plans no more evictions than the exhaustive-search minimum, and reaches the targets when it exists', () => {
    let compared = 0;
    fc.assert(
      fc.property(clusterArb(false), (c) => {
        const { snapshot, policy, outcome } = run(c);
        const minimum = exhaustiveMinimum(snapshot, policy, c);
        const moves = outcome.moves.filter((m) => m.strategy === 'LowNodeUtilization');
        if (minimum === 'idle') {
          expect(moves).toEqual([]);
          return;
        }
        if (minimum === undefined) return;
        compared++;
        expect(moves.length).toBeLessThanOrEqual(minimum);
        const { over } = classesOf(snapshot, c);
        const after = applyMoves(snapshot, outcome.moves, 1000);
        for (const n of after.nodes) {
          if (!over.has(n.name)) continue;
          const used = after.pods.filter((p) => p.nodeName === n.name).reduce((s, p) => s + cpuOf(p), 0);
          expect(used, `${n.name} at or below its target`).toBeLessThanOrEqual(limit(n, c.high) + 1e-6);
        }
      }),
      propertyParams(0x10ad02, RUNS),
    );
    // The judge compared something: a good share of the generated clusters have a reachable minimum.
    expect(compared).toBeGreaterThan(RUNS / 10);
  });

  it('the judge rejects a plan that stops short (a planner that evicts one pod fewer fails (c))', () => {
    // n0 at 80% (4 × 800m of 4 CPU), n1 empty, target 50%: two evictions are the fewest.
    const c: ClusterGen = {
      nodes: [
        { cpu: 4, pool: 'a', tainted: false },
        { cpu: 4, pool: 'a', tainted: false },
      ],
      workloads: [{ cpuM: 800, priority: 0, pool: undefined, tolerates: false, soft: false, placement: [0, 0, 0, 0] }],
      low: 30,
      high: 50,
      softSpread: false,
    };
    const { snapshot, policy, outcome } = run(c);
    expect(exhaustiveMinimum(snapshot, policy, c)).toBe(2);
    expect(outcome.moves).toHaveLength(2);
    // One eviction fewer leaves n0 at 60%, above its 50% target.
    const short = applyMoves(snapshot, outcome.moves.slice(0, 1), 1000);
    const used = short.pods.filter((p) => p.nodeName === 'n0').reduce((s, p) => s + cpuOf(p), 0);
    expect(used).toBeGreaterThan(limit(snapshot.nodes[0]!, c.high));
  });
});
