// Predictions with replacements on their way (src/scheduling/pending.ts): an unrelated replacement that may land on
// one of several nodes bounds the scores of those nodes, so the prediction of the next pod holds wherever it lands,
// or while it has not landed yet. Table cases read like the scheduler's examples; the property checks the bound
// against every way the pending replacements can land, each placed for real in the state.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import type { ClusterSnapshot, PodInfo } from '../../src/model/types.js';
import { DEFAULT_POLICY } from '../../src/policy/parse.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { relatedLandings } from '../../src/scheduling/pending.js';
import { placeReplacement } from '../../src/scheduling/placement.js';
import { buildSnapshot, makeNode, makePod, type NodeBuilder, type PodBuilder } from '../builders.js';

const SPEC = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

const node = (name: string, cpu = '4', memory = '8Gi') =>
  makeNode(name).zone('zone-a').allocatable({ cpu, memory, pods: '110' });
const pod = (name: string, app: string, cpu = '1', memory = '1Gi') =>
  makePod(name, 'shop').deployment(app).labels({ app }).requests({ cpu, memory });

interface Pending {
  /** The pending pod: `name` of deployment `app`, one cpu and 1Gi. */
  readonly name: string;
  readonly app: string;
  readonly nodes: readonly string[];
  /** Where the plan's state has it (a move planned earlier in the plan); absent: in flight, on no node yet. */
  readonly at?: string;
}

/** The snapshot, with the pending pods (unbound) and the incoming one last. */
function snapshotOf(nodes: NodeBuilder[], pods: PodBuilder[], pending: readonly Pending[], incoming: PodBuilder) {
  return buildSnapshot([...nodes, ...pods, ...pending.map((p) => pod(p.name, p.app)), incoming]);
}

function podNamed(snapshot: ClusterSnapshot, name: string): PodInfo {
  return snapshot.pods.find((p) => p.name === name)!;
}

/** The incoming pod's possible landings (sorted) with `pending` on their way. */
function landings(nodes: NodeBuilder[], pods: PodBuilder[], pending: readonly Pending[], incoming: PodBuilder): string {
  const snapshot = snapshotOf(nodes, pods, pending, incoming);
  const state = new ClusterState(analyze(snapshot, SPEC));
  for (const p of pending) {
    const info = podNamed(snapshot, p.name);
    if (p.at !== undefined) state.place(info, state.nodes.get(p.at)!);
    state.addPending({
      pod: info,
      nodes: p.nodes.map((n) => state.nodeIndex.get(n)!),
      at: p.at === undefined ? undefined : state.nodeIndex.get(p.at)!,
    });
  }
  const placement = placeReplacement(state, snapshot.pods[snapshot.pods.length - 1]!, undefined);
  if (placement.node === undefined) return 'none';
  return [placement.node, ...placement.ties]
    .map((n) => n.name)
    .sort()
    .join(',');
}

describe('a prediction allows for the replacements on their way', () => {
  const nodes = () => [node('a'), node('b'), node('c')];
  // c is busier than a and b: with nothing pending, the incoming pod ties between a and b.
  const busy = () => [pod('busy', 'other', '2', '4Gi').node('c')];

  it.each<[string, Pending[], string]>([
    ['nothing pending: the two emptiest nodes tie', [], 'a,b'],
    ['one in flight to a or b: either may still be emptier', [{ name: 'w-1', app: 'web', nodes: ['a', 'b'] }], 'a,b'],
    [
      'planned earlier onto a, tied with b: the state has it on a, yet a stays possible (it may go to b)',
      [{ name: 'w-1', app: 'web', nodes: ['a', 'b'], at: 'a' }],
      'a,b',
    ],
    [
      'planned onto a with no tie: a stays possible (this pod may be scheduled before it), c does not',
      [{ name: 'w-1', app: 'web', nodes: ['a'], at: 'a' }],
      'a,b',
    ],
    [
      'two in flight to a or b: c never wins, but the bound (each node alone, and the third best without them) keeps it',
      [
        { name: 'w-1', app: 'web', nodes: ['a', 'b'] },
        { name: 'w-2', app: 'web2', nodes: ['a', 'b'] },
      ],
      'a,b,c',
    ],
    [
      'three in flight over a, b and c: every node may be the emptiest',
      [
        { name: 'w-1', app: 'web', nodes: ['a', 'b'] },
        { name: 'w-2', app: 'web2', nodes: ['a', 'b'] },
        { name: 'w-3', app: 'web3', nodes: ['a'] },
      ],
      'a,b,c',
    ],
    [
      'in flight to a only: a may or may not have it yet, b may still lose to nothing',
      [{ name: 'w-1', app: 'web', nodes: ['a'] }],
      'a,b',
    ],
    [
      'in flight to c only (the busy node): it cannot make c the emptiest',
      [{ name: 'w-1', app: 'web', nodes: ['c'] }],
      'a,b',
    ],
  ])('%s', (_name, pending, expected) => {
    expect(landings(nodes(), busy(), pending, pod('api-new', 'api'))).toBe(expected);
  });

  it('a related replacement (the same workload) is assumed on its target, as the plan placed it', () => {
    const pending = [{ name: 'api-1', app: 'api', nodes: ['a', 'b'], at: 'a' }];
    expect(landings(nodes(), busy(), pending, pod('api-new', 'api'))).toBe('b');
  });

  it('a node that fits the pod only if the pending replacement goes elsewhere is possible, and so is every feasible one', () => {
    // Two one-cpu nodes; the replacement planned onto a (tied with b) leaves the incoming pod room on one of them only.
    const small = [node('a', '1', '4Gi'), node('b', '1', '4Gi')];
    expect(landings(small, [], [{ name: 'w-1', app: 'web', nodes: ['a', 'b'], at: 'a' }], pod('api-new', 'api'))).toBe(
      'a,b',
    );
  });

  it('relatedness: the same workload, a spread selector or an inter-pod term selecting the other; not different apps', () => {
    const s = buildSnapshot([
      pod('w1', 'web'),
      pod('w2', 'web'),
      pod('a1', 'api'),
      pod('s1', 'shop').spread({
        topologyKey: 'kubernetes.io/hostname',
        maxSkew: 1,
        labelSelector: { matchLabels: { app: 'web' } },
      }),
      pod('t1', 'tools').podAntiAffinity({
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: { app: 'api' } },
      }),
      pod('t2', 'tools2').podAntiAffinity({
        topologyKey: 'kubernetes.io/hostname',
        labelSelector: { matchLabels: { app: 'nothing' } },
      }),
    ]);
    const p = (name: string) => podNamed(s, name);
    expect(relatedLandings(p('w1'), p('w2'))).toBe(true);
    expect(relatedLandings(p('w1'), p('a1'))).toBe(false);
    expect(relatedLandings(p('s1'), p('w1'))).toBe(true);
    expect(relatedLandings(p('w1'), p('s1'))).toBe(true);
    expect(relatedLandings(p('t1'), p('a1'))).toBe(true);
    expect(relatedLandings(p('a1'), p('t1'))).toBe(true);
    expect(relatedLandings(p('t2'), p('a1'))).toBe(false); // its term selects no such pod
    expect(relatedLandings(p('t1'), p('w1'))).toBe(false);
  });
});

// ---- the bound holds for every way the pending replacements can land ---------------------------------------------

interface Gen {
  readonly nodes: ReadonlyArray<{ cpu: number; memGi: number; usedCpu: number; usedMemGi: number }>;
  readonly pending: ReadonlyArray<{ cpu: number; memGi: number; nodes: readonly number[]; at: number | undefined }>;
  readonly incoming: { cpu: number; memGi: number };
}

const genArb = (nodeCount: fc.Arbitrary<number>): fc.Arbitrary<Gen> =>
  nodeCount.chain((n) =>
    fc.record({
      nodes: fc.array(
        fc.record({
          cpu: fc.constantFrom(2, 4, 8),
          memGi: fc.constantFrom(4, 8, 16),
          usedCpu: fc.integer({ min: 0, max: 2 }),
          usedMemGi: fc.integer({ min: 0, max: 3 }),
        }),
        { minLength: n, maxLength: n },
      ),
      pending: fc.array(
        fc
          .record({
            cpu: fc.integer({ min: 1, max: 3 }),
            memGi: fc.integer({ min: 1, max: 4 }),
            nodes: fc.uniqueArray(fc.integer({ min: 0, max: n - 1 }), { minLength: 1, maxLength: Math.min(n, 4) }),
            planned: fc.boolean(),
          })
          .map(({ planned, nodes, ...rest }) => ({ ...rest, nodes, at: planned ? nodes[0] : undefined })),
        { minLength: 1, maxLength: 3 },
      ),
      incoming: fc.record({ cpu: fc.integer({ min: 1, max: 3 }), memGi: fc.integer({ min: 1, max: 4 }) }),
    }),
  );

function objectsOf(g: Gen): { nodes: NodeBuilder[]; pods: PodBuilder[]; pending: PodBuilder[]; incoming: PodBuilder } {
  const nodes = g.nodes.map((n, i) => node(`n${i}`, String(n.cpu), `${n.memGi}Gi`));
  const pods = g.nodes.flatMap((n, i) =>
    n.usedCpu + n.usedMemGi === 0
      ? []
      : [pod(`used-${i}`, `used-${i}`, `${n.usedCpu * 500}m`, `${n.usedMemGi}Gi`).node(`n${i}`)],
  );
  const pending = g.pending.map((p, i) => pod(`p-${i}`, `p-${i}`, `${p.cpu * 500}m`, `${p.memGi}Gi`));
  return { nodes, pods, pending, incoming: pod('in', 'in', `${g.incoming.cpu * 500}m`, `${g.incoming.memGi}Gi`) };
}

/** Every landing of each pending replacement: one of its nodes, or none yet. */
function* realisations(g: Gen): Generator<Array<number | undefined>> {
  const walk = function* (i: number, acc: Array<number | undefined>): Generator<Array<number | undefined>> {
    if (i === g.pending.length) {
      yield acc;
      return;
    }
    for (const choice of [undefined, ...g.pending[i]!.nodes]) yield* walk(i + 1, [...acc, choice]);
  };
  yield* walk(0, []);
}

function names(result: ReturnType<typeof placeReplacement>): Set<string> {
  return new Set(result.node === undefined ? [] : [result.node, ...result.ties].map((n) => n.name));
}

function check(g: Gen): void {
  const o = objectsOf(g);
  const snapshot = buildSnapshot([...o.nodes, ...o.pods, ...o.pending, o.incoming]);
  const analysis = analyze(snapshot, SPEC);
  const incoming = podNamed(snapshot, 'in');
  const pendingPods = g.pending.map((_, i) => podNamed(snapshot, `p-${i}`));
  const bounded = new ClusterState(analysis);
  g.pending.forEach((p, i) => {
    if (p.at !== undefined) bounded.place(pendingPods[i]!, bounded.nodeList[p.at]!);
    bounded.addPending({ pod: pendingPods[i]!, nodes: p.nodes, at: p.at });
  });
  const predicted = names(placeReplacement(bounded, incoming, undefined));
  for (const where of realisations(g)) {
    const real = new ClusterState(analysis);
    where.forEach((w, i) => {
      if (w !== undefined) real.place(pendingPods[i]!, real.nodeList[w]!);
    });
    const landed = names(placeReplacement(real, incoming, undefined));
    for (const n of landed) {
      if (!predicted.has(n)) {
        throw new Error(
          `landed on ${n} with pending at ${JSON.stringify(where)}, predicted ${[...predicted].join(',')} in ${JSON.stringify(g)}`,
        );
      }
    }
  }
}

/**
 * The slack the prediction claims (PlacementResult.slack): wherever the pending replacements land, up to that many
 * more (the shapes of the pending ones, sent later and scheduled first) landing on the predicted nodes leave the pod
 * among them. Checked with at most two extra landings, every way.
 */
function checkSlack(g: Gen, extraShape: number): void {
  const o = objectsOf(g);
  const extras = [0, 1].map((i) => {
    const shape = g.pending[extraShape % g.pending.length]!;
    return pod(`x-${i}`, `x-${i}`, `${shape.cpu * 500}m`, `${shape.memGi}Gi`);
  });
  const snapshot = buildSnapshot([...o.nodes, ...o.pods, ...o.pending, ...extras, o.incoming]);
  const analysis = analyze(snapshot, SPEC);
  const incoming = podNamed(snapshot, 'in');
  const pendingPods = g.pending.map((_, i) => podNamed(snapshot, `p-${i}`));
  const extraPods = [0, 1].map((i) => podNamed(snapshot, `x-${i}`));
  const bounded = new ClusterState(analysis);
  g.pending.forEach((p, i) => {
    if (p.at !== undefined) bounded.place(pendingPods[i]!, bounded.nodeList[p.at]!);
    bounded.addPending({ pod: pendingPods[i]!, nodes: p.nodes, at: p.at });
  });
  const placement = placeReplacement(bounded, incoming, undefined);
  if (placement.slack === undefined || placement.node === undefined) return;
  const predicted = names(placement);
  const onPredicted = [...predicted].map((n) => bounded.nodeIndex.get(n)!);
  const extraWays: number[][] = [[]];
  if (placement.slack >= 1) for (const a of onPredicted) extraWays.push([a]);
  if (placement.slack >= 2) for (const a of onPredicted) for (const b of onPredicted) extraWays.push([a, b]);
  for (const where of realisations(g)) {
    for (const extra of extraWays) {
      const real = new ClusterState(analysis);
      where.forEach((w, i) => {
        if (w !== undefined) real.place(pendingPods[i]!, real.nodeList[w]!);
      });
      extra.forEach((e, i) => real.place(extraPods[i]!, real.nodeList[e]!));
      for (const n of names(placeReplacement(real, incoming, undefined))) {
        if (!predicted.has(n)) {
          throw new Error(
            `landed on ${n} with pending at ${JSON.stringify(where)} and ${extra.length} more at ${JSON.stringify(extra)} (slack ${placement.slack}), predicted ${[...predicted].join(',')} in ${JSON.stringify(g)}`,
          );
        }
      }
    }
  }
}

describe('the slack of a prediction: how many replacements sent later may land first', () => {
  /** The incoming pod's possible landings and slack, with `pending` on their way. */
  function slackOf(nodes: NodeBuilder[], pods: PodBuilder[], pending: readonly Pending[]): string {
    const snapshot = snapshotOf(nodes, pods, pending, pod('api-new', 'api'));
    const state = new ClusterState(analyze(snapshot, SPEC));
    for (const p of pending) {
      state.addPending({
        pod: podNamed(snapshot, p.name),
        nodes: p.nodes.map((n) => state.nodeIndex.get(n)!),
        at: undefined,
      });
    }
    const placement = placeReplacement(state, snapshot.pods[snapshot.pods.length - 1]!, undefined);
    const landed = [placement.node!, ...placement.ties]
      .map((n) => n.name)
      .sort()
      .join(',');
    return `${landed} slack ${placement.slack}`;
  }
  // Five nodes; d and e are busier, so a, b and c hold the top score.
  const five = () => [node('a'), node('b'), node('c'), node('d'), node('e')];
  const busier = () => [pod('busy-d', 'other', '2', '4Gi').node('d'), pod('busy-e', 'other2', '2', '4Gi').node('e')];

  it.each<[string, Pending[], string]>([
    // Each of two more landing first takes a top node; the third is left.
    ['nothing pending, three nodes at the top: two may be taken first', [], 'a,b,c slack 2'],
    // One is pending over a or b: of the three top nodes without it, two are left whichever it takes, so one more.
    [
      'one pending over a or b: one more may land first',
      [{ name: 'w-1', app: 'web', nodes: ['a', 'b'] }],
      'a,b,c slack 1',
    ],
    // Three pending, over a, b and c: any of them may take two, and then d or e may be the best: every node is
    // named, and nothing landing first can send the pod to a node left out.
    [
      'three pending over a, b and c: every node is named, so any number may land first',
      [
        { name: 'w-1', app: 'web', nodes: ['a', 'b'] },
        { name: 'w-2', app: 'web2', nodes: ['b', 'c'] },
        { name: 'w-3', app: 'web3', nodes: ['a', 'c'] },
      ],
      'a,b,c,d,e slack Infinity',
    ],
  ])('%s', (_name, pending, expected) => {
    expect(slackOf(five(), busier(), pending)).toBe(expected);
  });

  it('property: with up to the slack more landing on the predicted nodes first, the pod still lands among them', () => {
    fc.assert(
      fc.property(genArb(fc.integer({ min: 2, max: 6 })), fc.nat(), (g, extraShape) => checkSlack(g, extraShape)),
      { numRuns: 200 },
    );
  });
});

describe('property: wherever the pending replacements land, the pod lands among the predicted nodes', () => {
  it('small clusters (every node scored)', () => {
    fc.assert(
      fc.property(genArb(fc.integer({ min: 2, max: 6 })), (g) => check(g)),
      { numRuns: 300 },
    );
  });

  it('above 100 nodes (the scheduler scores a window of them)', () => {
    fc.assert(
      fc.property(genArb(fc.constant(104)), (g) => check(g)),
      { numRuns: 15 },
    );
  });
});
