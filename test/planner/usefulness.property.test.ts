// Usefulness properties of plans (issue 11), over generated clusters:
//  - every planned spread eviction lowers some constraint's skew in the rescheduled cluster, or belongs to a set of
//    the plan's moves that brings that skew to its maxSkew (for a workload the plan stopped at a limit that only
//    paces the work, maxPerWorkload or a budget it spent, the set goes on with the next cycles' moves);
//  - a protected pod never blocks an unprotected replica on the same node: whenever the movable pods can balance a
//    workload, the plan (and `simulate`) does, and `simulate` never says converged while they could;
//  - no pod is evicted whose bound volume could not be reached from where its replacement goes.
// Oracles restate the rules from the generated data (re-analysis of the rescheduled cluster, counting, volume zones);
// they do not call the planner's own predicates. Re-run one with FC_SEED=<seed> FC_PATH=<path>; FC_RUNS=<n> for more.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyze } from '../../src/analysis/analyze.js';
import { planCycle } from '../../src/planner/plan.js';
import { applyMoves, simulate } from '../../src/planner/simulate.js';
import { parsePolicy } from '../../src/policy/parse.js';
import {
  HOSTNAME,
  ZONE,
  buildSnapshot,
  makeNode,
  makePdb,
  makePersistentVolume,
  makePod,
  makePolicy,
  makePvc,
  makeStorageClass,
} from '../builders.js';
import { build, propertyParams, scenarioArb } from './clusterArb.js';

type Json = Record<string, unknown>;
type Buildable = Json | { obj(): Json };

const RUNS = Number(process.env['FC_RUNS'] ?? 200);
const LARGE = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };

function params<T>(seed: number): fc.Parameters<T> {
  return propertyParams<T>(seed, RUNS);
}

// ---- 1. every spread eviction lowers a skew, alone or as part of the plan's set ------------------------------------

describe('plan usefulness properties (fast-check)', () => {
  it('1. every planned spread eviction lowers some constraint skew, or belongs to a set that reaches maxSkew', () => {
    let checked = 0;
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const built = build(s);
        const { moves, plan } = planCycle(built.snapshot, built.policy, { heldWorkloads: built.held });
        if (!moves.some((m) => m.strategy === 'TopologySpread')) return;
        // skews[k]: group id → skew once the first k moves' replacements run where the plan put them.
        const skews = moves.map((_m, k) => skewsAfter(built.snapshot, moves.slice(0, k), built.policy));
        skews.push(skewsAfter(built.snapshot, moves, built.policy));
        // A set cut short by a limit that only paces the work (maxPerWorkload, a budget this plan spent) is completed
        // by the next steps (the executor's, or `simulate`'s next cycles): for such a workload the sequence goes on
        // with the next cycles' moves.
        const paced = pacedWorkloads(built, moves, plan);
        const later = paced.size > 0 ? laterSkews(built, moves) : [];
        moves.forEach((m, i) => {
          if (m.strategy !== 'TopologySpread') return;
          checked++;
          const following = paced.has(workloadOf(m.pod)) ? [...skews.slice(i + 1), ...later] : skews.slice(i + 1);
          const lowered = [...skews[i]!].some(([id, before]) => {
            const alone = (skews[i + 1]!.get(id)?.skew ?? before.skew) < before.skew;
            // Moves i..j together: the skew is above maxSkew before move i and at most maxSkew after move j.
            const set =
              before.skew > before.maxSkew &&
              following.some((after) => (after.get(id)?.skew ?? Infinity) <= before.maxSkew);
            return alone || set;
          });
          expect(lowered, `${m.pod.namespace}/${m.pod.name} (move ${i}) lowers no skew\n${built.code}`).toBe(true);
        });
      }),
      params(0x11a001),
    );
    expect(checked).toBeGreaterThan(0);
  });

  it('2. a protected pod never blocks an unprotected replica: what the movable pods can balance gets balanced', () => {
    let feasibleSkewed = 0;
    fc.assert(
      fc.property(protectedArb, (g) => {
        const snapshot = buildSnapshot(protectedCluster(g));
        const policy = parsePolicy(makePolicy('p', { eviction: LARGE }), { file: 'p.yaml' });
        const outcome = planCycle(snapshot, policy);
        const group = outcome.plan.topology[0]!;
        const feasible = balanceable(g);
        if (feasible && group.skew > 1) feasibleSkewed++;
        const evicted = new Set(outcome.plan.evictions.map((e) => e.name));
        for (const name of g.protectedNames) expect(evicted.has(name), name).toBe(false);
        if (feasible) expect(group.skewAfter, JSON.stringify(g)).toBeLessThanOrEqual(1);
        const sim = simulate(snapshot, policy, { cycles: 6 });
        const final = sim.final.topology[0]!;
        // simulate never says converged while the movable pods could still balance the workload.
        if (sim.converged && final.skew > 1) expect(feasible, JSON.stringify(g)).toBe(false);
        if (feasible) expect(final.skew, JSON.stringify(g)).toBeLessThanOrEqual(1);
      }),
      params(0x11a002),
    );
    expect(feasibleSkewed).toBeGreaterThan(RUNS / 10);
  });

  it('3. no eviction of a pod whose bound volume cannot be reached from its target', () => {
    let pinned = 0;
    fc.assert(
      fc.property(volumeArb, (g) => {
        const snapshot = buildSnapshot(volumeCluster(g));
        const policy = parsePolicy(makePolicy('p', { eviction: { ...LARGE, nodeFit: g.nodeFit } }), { file: 'p.yaml' });
        const { plan } = planCycle(snapshot, policy);
        for (const e of plan.evictions) {
          const i = Number(e.name.slice('db-'.length));
          const reach = reachable(g, i);
          if (reach === undefined) continue;
          pinned++;
          expect(e.target, `${e.name} evicted without a target, ${JSON.stringify(g)}`).toBeDefined();
          expect(reach(e.target!), `${e.name} → ${e.target}, ${JSON.stringify(g)}`).toBe(true);
        }
        for (const s of plan.skipped) if (/its volume/.test(s.reason)) pinned++;
      }),
      params(0x11a003),
    );
    expect(pinned).toBeGreaterThan(RUNS / 5);
  });

  it('4. simulate never reports converged while a hard constraint it could repair stays above maxSkew', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const built = build(s);
        const result = simulate(built.snapshot, built.policy, { cycles: 4 });
        if (!result.converged) return;
        const last = result.cycles[result.cycles.length - 1]!;
        expect(last.evictions).toEqual([]);
        // The last cycle planned nothing, so it analysed the final cluster: its reports are the final ones, in order
        // (two groups may share namespace, selector and key, and differ in minDomains or eligible nodes).
        expect(last.topology.length).toBe(result.final.topology.length);
        result.final.topology.forEach((t, i) => {
          const reported = last.topology[i]!;
          expect([reported.namespace, reported.selector, reported.topologyKey, reported.skew]).toEqual([
            t.namespace,
            t.selector,
            t.topologyKey,
            t.skew,
          ]);
          if (t.whenUnsatisfiable !== 'DoNotSchedule' || t.skew <= t.maxSkew) return;
          expect(reported.unrepairable, `${t.namespace} ${t.selector} ${t.topologyKey}\n${built.code}`).toEqual(
            expect.any(String),
          );
        });
      }),
      { ...params(0x11a004), numRuns: Math.min(RUNS, 100) },
    );
  });
});

type Built = ReturnType<typeof build>;
type Moves = ReturnType<typeof planCycle>['moves'];

function workloadOf(pod: Moves[number]['pod']): string {
  return `${pod.namespace}/${pod.workload.kind}/${pod.workload.name}`;
}

/** Workloads whose moves this plan stopped at maxPerWorkload, or at a budget the plan itself spent. */
function pacedWorkloads(built: Built, moves: Moves, plan: ReturnType<typeof planCycle>['plan']): Set<string> {
  const perWorkload = new Map<string, number>();
  for (const m of moves) perWorkload.set(workloadOf(m.pod), (perWorkload.get(workloadOf(m.pod)) ?? 0) + 1);
  const out = new Set<string>();
  for (const [w, n] of perWorkload) if (n >= built.policy.spec.eviction.maxPerWorkload) out.add(w);
  const pods = new Map(built.snapshot.pods.map((p) => [`${p.namespace}/${p.name}`, p]));
  for (const skipped of plan.skipped) {
    const pod = pods.get(`${skipped.namespace}/${skipped.name}`);
    if (pod !== undefined && /budget used by this plan/.test(skipped.reason)) out.add(workloadOf(pod));
  }
  return out;
}

/** The skews after each move of the next cycles (up to 4), each planned on the cluster the previous ones left. */
function laterSkews(built: Built, first: Moves): Array<Map<string, { skew: number; maxSkew: number }>> {
  const out: Array<Map<string, { skew: number; maxSkew: number }>> = [];
  let current = applyMoves(built.snapshot, first, 1000);
  for (let cycle = 2; cycle <= 5; cycle++) {
    const { moves } = planCycle(current, built.policy, { heldWorkloads: built.held });
    if (moves.length === 0) break;
    moves.forEach((_m, k) => out.push(skewsAfter(current, moves.slice(0, k + 1), built.policy, 1000 * cycle)));
    current = applyMoves(current, moves, 1000 * cycle);
  }
  return out;
}

function skewsAfter(
  snapshot: Parameters<typeof applyMoves>[0],
  moves: Parameters<typeof applyMoves>[1],
  policy: ReturnType<typeof parsePolicy>,
  seedBase = 1000,
): Map<string, { skew: number; maxSkew: number }> {
  const analysis = analyze(applyMoves(snapshot, moves, seedBase), policy.spec);
  return new Map(analysis.groups.map((g) => [g.id, { skew: g.skew, maxSkew: g.constraint.maxSkew }]));
}

// ---- 1b. with maxPerWorkload 1 or a budget of 1: a move may open a set that later steps complete -----------------

/** One Deployment spread over one node per domain with these counts (zone or hostname key), maxSkew 1. */
function spreadCluster(counts: readonly number[], key: 'zone' | 'hostname', pdb: boolean): Buildable[] {
  const topologyKey = key === 'zone' ? ZONE : HOSTNAME;
  const out: Buildable[] = [];
  counts.forEach((count, i) => {
    out.push(makeNode(`node-${i}`).zone(`zone-${i}`));
    for (let k = 0; k < count; k++) {
      out.push(
        makePod(`web-${i}-${k}`, 'shop')
          .deployment('web')
          .label('app', 'web')
          .node(`node-${i}`)
          .spread({ topologyKey, labelSelector: { matchLabels: { app: 'web' } } }),
      );
    }
  });
  if (pdb) out.push(makePdb('web', 'shop').maxUnavailable(1).selector({ app: 'web' }));
  return out;
}

describe('plan usefulness with pacing (fast-check)', () => {
  it('1b. paced by maxPerWorkload 1 or a budget of 1, an eviction that lowers no skew alone starts a sequence that reaches maxSkew', () => {
    let sets = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 3, maxLength: 6 }),
        fc.constantFrom('zone' as const, 'hostname' as const),
        fc.boolean(),
        (counts, key, pdb) => {
          const snapshot0 = buildSnapshot(spreadCluster(counts, key, pdb));
          const eviction = { ...LARGE, maxPerWorkload: pdb ? 100 : 1 };
          const policy = parsePolicy(makePolicy('p', { eviction }), { file: 'p.yaml' });
          const { moves } = planCycle(snapshot0, policy);
          const before = [...skewsAfter(snapshot0, [], policy).values()][0];
          if (before === undefined || moves.length === 0) return;
          const after = [...skewsAfter(snapshot0, moves, policy).values()][0]!;
          if (after.skew < before.skew) return;
          sets++;
          // Step on as the operator does: each step re-planned from the cluster the previous one left.
          let snapshot = snapshot0;
          for (let step = 0; step < 40; step++) {
            const next = planCycle(snapshot, policy).moves;
            if (next.length === 0) break;
            snapshot = applyMoves(snapshot, next, 1000 * (step + 1));
          }
          const final = [...skewsAfter(snapshot, [], policy).values()][0]!;
          expect(final.skew, `counts ${counts.join('/')} by ${key}, pdb ${pdb}`).toBeLessThanOrEqual(final.maxSkew);
        },
      ),
      { ...params(0x11a1b0), numRuns: Math.min(RUNS, 300) },
    );
    // The generator makes such sets often (e.g. 3/3/1/1); the property must have met some.
    expect(sets).toBeGreaterThan(0);
  });
});

// ---- 2. protected replicas ----------------------------------------------------------------------------------------

interface ProtectedGen {
  readonly key: 'zone' | 'hostname';
  /** Pods per node; for the zone key, node i is in zone i % zones. */
  readonly counts: readonly number[];
  readonly zones: number;
  /** Per pod (in node order): protected, and its age rank (later = younger, tried first). */
  readonly pods: ReadonlyArray<{ readonly protect: boolean; readonly age: number }>;
  readonly protectedNames: readonly string[];
}

const protectedArb: fc.Arbitrary<ProtectedGen> = fc
  .record({
    key: fc.constantFrom<'zone' | 'hostname'>('zone', 'hostname'),
    counts: fc
      .array(fc.integer({ min: 0, max: 6 }), { minLength: 2, maxLength: 4 })
      .filter((c) => c.some((n) => n > 0)),
    zones: fc.integer({ min: 2, max: 3 }),
    seed: fc.array(fc.record({ protect: fc.boolean(), age: fc.integer({ min: 0, max: 50 }) }), {
      minLength: 24,
      maxLength: 24,
    }),
  })
  .map(({ key, counts, zones, seed }) => {
    const pods: Array<{ protect: boolean; age: number }> = [];
    const protectedNames: string[] = [];
    let k = 0;
    counts.forEach((count, node) => {
      for (let j = 0; j < count; j++, k++) {
        const p = seed[k % seed.length]!;
        pods.push(p);
        if (p.protect) protectedNames.push(`web-${node}-${j}`);
      }
    });
    return { key, counts, zones: key === 'zone' ? Math.min(zones, counts.length) : 1, pods, protectedNames };
  });

function protectedCluster(g: ProtectedGen): Buildable[] {
  const out: Buildable[] = [];
  let k = 0;
  g.counts.forEach((count, node) => {
    out.push(makeNode(`node-${node}`).zone(`zone-${node % g.zones}`));
    for (let j = 0; j < count; j++, k++) {
      const facts = g.pods[k]!;
      let pod = makePod(`web-${node}-${j}`, 'shop')
        .deployment('web')
        .label('app', 'web')
        .node(`node-${node}`)
        .createdAt(Date.parse('2024-06-01T10:00:00Z') + facts.age * 60_000)
        .spread({ topologyKey: g.key === 'zone' ? ZONE : HOSTNAME, labelSelector: { matchLabels: { app: 'web' } } });
      if (facts.protect) pod = pod.annotation('rebalancer.dev/evict', 'never');
      out.push(pod);
    }
  });
  return out;
}

/**
 * Whether some spread with skew ≤ 1 is reachable by moving unprotected pods only: every domain keeps at least its
 * protected pods (and any domain can receive pods: nodes are empty of other work and uncordoned).
 */
function balanceable(g: ProtectedGen): boolean {
  const total = new Map<string, number>();
  const pinned = new Map<string, number>();
  let k = 0;
  g.counts.forEach((count, node) => {
    const domain = g.key === 'zone' ? `zone-${node % g.zones}` : `node-${node}`;
    total.set(domain, (total.get(domain) ?? 0) + count);
    for (let j = 0; j < count; j++, k++) {
      if (g.pods[k]!.protect) pinned.set(domain, (pinned.get(domain) ?? 0) + 1);
    }
  });
  const domains = [...total.keys()];
  const n = [...total.values()].reduce((a, b) => a + b, 0);
  for (let m = 0; m <= n; m++) {
    let low = 0;
    let high = 0;
    let ok = true;
    for (const d of domains) {
      const lo = Math.max(m, pinned.get(d) ?? 0);
      if (lo > m + 1) ok = false;
      low += lo;
      high += m + 1;
    }
    if (ok && low <= n && n <= high) return true;
  }
  return false;
}

// ---- 3. volume topology -------------------------------------------------------------------------------------------

type ClaimKind = 'zonalPv' | 'otherZonePv' | 'localPv' | 'plainPv' | 'classTopology' | 'wffc' | 'immediate' | 'none';

interface VolumeGen {
  readonly nodeFit: boolean;
  /** Nodes per zone (zones a, b, c). */
  readonly nodesPerZone: readonly number[];
  /** A NoSchedule taint on the first node of zone a, so rule violations (and nodeFit off) come up too. */
  readonly taintA: boolean;
  /** Pod i: its node index (mod the node count) and its claim. */
  readonly pods: ReadonlyArray<{ readonly node: number; readonly claim: ClaimKind; readonly zone: number }>;
}

const ZONES = ['zone-a', 'zone-b', 'zone-c'];

const volumeArb: fc.Arbitrary<VolumeGen> = fc.record({
  nodeFit: fc.boolean(),
  nodesPerZone: fc.array(fc.integer({ min: 1, max: 2 }), { minLength: 3, maxLength: 3 }),
  taintA: fc.boolean(),
  pods: fc.array(
    fc.record({
      node: fc.integer({ min: 0, max: 1 }),
      claim: fc.constantFrom<ClaimKind>(
        'zonalPv',
        'otherZonePv',
        'localPv',
        'plainPv',
        'classTopology',
        'wffc',
        'immediate',
        'none',
      ),
      zone: fc.integer({ min: 0, max: 2 }),
    }),
    { minLength: 2, maxLength: 8 },
  ),
});

function nodesOf(g: VolumeGen): Array<{ name: string; zone: string }> {
  return ZONES.flatMap((zone, z) =>
    Array.from({ length: g.nodesPerZone[z]! }, (_, i) => ({ name: `${zone}-${i}`, zone })),
  );
}

/** Most pods sit in zone a (so the zone spread wants to move them); the generator picks the node within it. */
function nodeOfPod(g: VolumeGen, i: number): { name: string; zone: string } {
  const p = g.pods[i]!;
  const zone = i % 4 === 3 ? ZONES[p.zone]! : 'zone-a';
  const inZone = nodesOf(g).filter((n) => n.zone === zone);
  return inZone[p.node % inZone.length]!;
}

function volumeCluster(g: VolumeGen): Buildable[] {
  const out: Buildable[] = nodesOf(g).map((n, i) => {
    const node = makeNode(n.name).zone(n.zone);
    return g.taintA && i === 0 ? node.taint('maintenance', 'true', 'NoSchedule') : node;
  });
  out.push(makeStorageClass('wffc'), makeStorageClass('zonal', { binding: 'Immediate', zones: ['zone-b'] }));
  g.pods.forEach((p, i) => {
    const node = nodeOfPod(g, i);
    const claim = `data-db-${i}`;
    out.push(
      makePod(`db-${i}`, 'shop')
        .owner('StatefulSet', 'db')
        .label('app', 'db')
        .node(node.name)
        .pvc(claim)
        .spread({ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'db' } } }),
    );
    const pv = `pv-${i}`;
    switch (p.claim) {
      case 'zonalPv':
        out.push(makePvc(claim, 'shop').boundTo(pv), makePersistentVolume(pv).zone(node.zone));
        break;
      case 'otherZonePv':
        out.push(makePvc(claim, 'shop').boundTo(pv), makePersistentVolume(pv).zone(ZONES[p.zone]!));
        break;
      case 'localPv':
        out.push(makePvc(claim, 'shop').boundTo(pv), makePersistentVolume(pv).nodeAffinityIn(HOSTNAME, [node.name]));
        break;
      case 'plainPv':
        out.push(makePvc(claim, 'shop').boundTo(pv), makePersistentVolume(pv));
        break;
      case 'classTopology':
        out.push(
          makePvc(claim, 'shop').boundTo(pv).storageClass('zonal'),
          makePersistentVolume(pv).storageClass('zonal'),
        );
        break;
      case 'wffc':
        out.push(makePvc(claim, 'shop').storageClass('wffc'));
        break;
      case 'immediate':
        out.push(makePvc(claim, 'shop').storageClass('zonal'));
        break;
      case 'none':
        break;
    }
  });
  return out;
}

/** The nodes pod i's volume can be reached from, restated from the generated data; undefined: any node. */
function reachable(g: VolumeGen, i: number): ((node: string) => boolean) | undefined {
  const p = g.pods[i]!;
  const zoneOf = (name: string): string => nodesOf(g).find((n) => n.name === name)!.zone;
  switch (p.claim) {
    case 'zonalPv': {
      const zone = nodeOfPod(g, i).zone;
      return (node) => zoneOf(node) === zone;
    }
    case 'otherZonePv':
      return (node) => zoneOf(node) === ZONES[p.zone];
    case 'localPv': {
      const name = nodeOfPod(g, i).name;
      return (node) => node === name;
    }
    case 'classTopology':
    case 'immediate':
      return (node) => zoneOf(node) === 'zone-b';
    case 'plainPv':
    case 'wffc':
    case 'none':
      return undefined;
  }
}
