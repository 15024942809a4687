// A plan made in the middle of a run (PlanOptions.spent) never plans past what the run has left of maxPerCycle,
// maxPerNode and maxPerNamespace (DESIGN.md: those three count a cycle's evictions, not a plan's), over generated
// clusters (clusterArb.ts) and generated counts the run has spent, within the limits or already past them. The
// oracle counts the plan's evictions from the generated pods' facts, not through the planner's own counters.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SpentLimits } from '../../src/planner/budget.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { build, propertyParams, scenarioArb, type Built } from './clusterArb.js';

const RUNS = Number(process.env['FC_RUNS'] ?? 200);

/** Spent counts by position: the i-th node (namespace) of the built cluster, in name order, gets the i-th count. */
const spentArb = fc.record({
  total: fc.nat(8),
  perNode: fc.array(fc.nat(3), { maxLength: 12 }),
  perNamespace: fc.array(fc.nat(4), { maxLength: 4 }),
});
type SpentGen = typeof spentArb extends fc.Arbitrary<infer T> ? T : never;

function spentFor(built: Built, gen: SpentGen): SpentLimits {
  const nodes = [...built.nodes.keys()].sort();
  const namespaces = [...new Set([...built.pods.values()].map((p) => p.namespace))].sort();
  const byIndex = (names: readonly string[], counts: readonly number[]) =>
    new Map(names.flatMap((n, i) => ((counts[i] ?? 0) > 0 ? [[n, counts[i]!] as const] : [])));
  return {
    total: gen.total,
    perNode: byIndex(nodes, gen.perNode),
    perNamespace: byIndex(namespaces, gen.perNamespace),
  };
}

function planWith(built: Built, spent: SpentLimits): PlanOutcome {
  return planCycle(built.snapshot, built.policy, { heldWorkloads: built.held, spent });
}

/** The limits a plan goes past once the run's spent counts are added to its own, each named with where. */
function pastLimits(built: Built, spent: SpentLimits, plan: PlanOutcome['plan']): string[] {
  const perNode = new Map<string, number>();
  const perNamespace = new Map<string, number>();
  for (const e of plan.evictions) {
    const facts = built.pods.get(`${e.namespace}/${e.name}`);
    if (facts === undefined) throw new Error(`the plan names a pod that was not generated: ${e.namespace}/${e.name}`);
    perNode.set(facts.nodeName ?? '', (perNode.get(facts.nodeName ?? '') ?? 0) + 1);
    perNamespace.set(facts.namespace, (perNamespace.get(facts.namespace) ?? 0) + 1);
  }
  const p = built.policyGen;
  // Counts already past a limit leave nothing, not a negative allowance.
  const left = (limit: number, used: number): number => Math.max(0, limit - used);
  const past: string[] = [];
  if (plan.evictions.length > left(p.maxPerCycle, spent.total)) past.push('maxPerCycle');
  for (const [node, n] of perNode)
    if (n > left(p.maxPerNode, spent.perNode.get(node) ?? 0)) past.push(`maxPerNode on ${node}`);
  for (const [ns, n] of perNamespace)
    if (n > left(p.maxPerNamespace, spent.perNamespace.get(ns) ?? 0)) past.push(`maxPerNamespace in ${ns}`);
  return past;
}

describe('a re-plan within a run (fast-check, generated clusters and spent counts)', () => {
  // Guards against vacuity: the generated spent counts must often be ones a plan that ignored them would plan past.
  it('the generated spent counts often cut what a plan of its own would evict', () => {
    let cut = 0;
    for (const [s, gen] of fc.sample(fc.tuple(scenarioArb, spentArb), { numRuns: 150, seed: 0x5eed31 })) {
      const built = build(s);
      const fresh = planCycle(built.snapshot, built.policy, { heldWorkloads: built.held }).plan;
      if (pastLimits(built, spentFor(built, gen), fresh).length > 0) cut++;
    }
    expect(cut).toBeGreaterThan(15);
  });

  it('never plans past what the run has left of maxPerCycle, maxPerNode or maxPerNamespace', () => {
    fc.assert(
      fc.property(scenarioArb, spentArb, (s, gen) => {
        const built = build(s);
        const spent = spentFor(built, gen);
        const past = pastLimits(built, spent, planWith(built, spent).plan);
        expect(past, `--- spent ---\n${JSON.stringify(gen)}\n--- scenario ---\n${built.code}`).toEqual([]);
      }),
      propertyParams(0x5eed30, RUNS),
    );
  });
});
