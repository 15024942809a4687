// One plan per cluster state: the plan does not depend on the order in which the objects were listed (issue 29: the
// same cluster read live and from a file gave different plans in 3 of 16 cases). Over generated clusters and
// policies (clusterArb.ts), the snapshot's nodes, pods, budgets, priority classes and namespaces are shuffled, and the
// plan must be the same: the same evictions in the same order, with the same targets, ties and reasons, and the same
// skipped pods. FC_SEED=<seed> FC_PATH=<path> replays a case.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClusterSnapshot } from '../../src/model/types.js';
import { planCycle } from '../../src/planner/plan.js';
import { build, propertyParams, scenarioArb } from './clusterArb.js';

/** `items` in the order of `keys` (one random number per item). */
function permute<T>(items: readonly T[], keys: readonly number[]): T[] {
  return items
    .map((item, i) => ({ item, key: keys[i % Math.max(1, keys.length)] ?? 0, i }))
    .sort((a, b) => a.key - b.key || b.i - a.i)
    .map((e) => e.item);
}

function shuffled(snapshot: ClusterSnapshot, keys: readonly number[]): ClusterSnapshot {
  return {
    ...snapshot,
    nodes: permute(snapshot.nodes, keys),
    pods: permute(snapshot.pods, [...keys].reverse()),
    pdbs: permute(snapshot.pdbs, keys),
    priorityClasses: permute(snapshot.priorityClasses, keys),
    namespaces: permute(snapshot.namespaces, keys),
  };
}

function planOf(snapshot: ClusterSnapshot, built: ReturnType<typeof build>) {
  const { plan } = planCycle(snapshot, built.policy, { heldWorkloads: built.held });
  return {
    evictions: plan.evictions,
    skipped: [...plan.skipped].sort((a, b) =>
      `${a.namespace}/${a.name}/${a.strategy}`.localeCompare(`${b.namespace}/${b.name}/${b.strategy}`),
    ),
    topology: plan.topology.map((t) => ({ ...t, workloads: [...(t.workloads ?? [])].sort() })),
    violations: plan.violations,
  };
}

describe('the plan does not depend on the order objects were listed', () => {
  it('a shuffled snapshot gives the identical plan (evictions, targets, ties, reasons, skipped)', () => {
    const runs = Number(process.env['FC_RUNS'] ?? 150);
    fc.assert(
      fc.property(scenarioArb, fc.array(fc.integer(), { minLength: 1, maxLength: 64 }), (scenario, keys) => {
        const built = build(scenario);
        const listed = planOf(built.snapshot, built);
        const reordered = planOf(shuffled(built.snapshot, keys), built);
        try {
          expect(reordered).toEqual(listed);
        } catch (err) {
          throw new Error(`${(err as Error).message}\n\nscenario:\n${built.code}`);
        }
      }),
      propertyParams(0x5eed_29, runs),
    );
  });
});
