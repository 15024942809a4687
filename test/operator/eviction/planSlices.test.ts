// A paced run's plan in slices (src/operator/eviction/planSlices.ts, src/planner/steps.ts): the same plan as made at
// once, with the event loop given back between the steps, so timers and answers are served while it is made.
import { describe, expect, it } from 'vitest';
import { runInSlices } from '../../../src/operator/eviction/planSlices.js';
import { planCycle, planCycleSteps } from '../../../src/planner/plan.js';
import type { PlanSteps } from '../../../src/planner/steps.js';
import { parsePolicy } from '../../../src/policy/parse.js';
import { buildSnapshot, makeNode, makePod, makePolicy, ZONE } from '../../builders.js';

/** `units` steps of about `ms` of busy work each; returns how many ran. */
function* busySteps(units: number, ms: number): PlanSteps<number> {
  for (let i = 0; i < units; i++) {
    const end = performance.now() + ms;
    while (performance.now() < end);
    yield;
  }
  return units;
}

describe('a plan in slices', () => {
  it('gives the event loop back between slices: a timer due meanwhile runs before the plan ends', async () => {
    let fired = 0;
    const timer = setInterval(() => fired++, 1);
    try {
      expect(await runInSlices(busySteps(20, 5), (work) => work(), 10)).toBe(20);
    } finally {
      clearInterval(timer);
    }
    // 100 ms of work in slices of 10 ms: the timer ran between them (at once, it would not have run at all).
    expect(fired).toBeGreaterThan(2);
  });

  it('runs each slice inside the wrapper it is given', async () => {
    let wrapped = 0;
    const result = await runInSlices(
      busySteps(6, 4),
      (work) => {
        wrapped++;
        return work();
      },
      5,
    );
    expect(result).toBe(6);
    expect(wrapped).toBeGreaterThan(1);
  });

  it('plans in steps exactly what it plans at once, yielding once per spread group at least', async () => {
    // Three Deployments, each 4/0 over two zones (hard spread, maxSkew 1): a group each to repair.
    const nodes = ['a', 'b'].flatMap((z) => [1, 2].map((i) => makeNode(`${z}-${i}`).zone(`zone-${z}`)));
    const pods = ['web', 'api', 'db'].flatMap((app) =>
      [1, 2, 3, 4].map((i) =>
        makePod(`${app}-${i}`, 'shop')
          .deployment(app)
          .labels({ app })
          .node(`a-${(i % 2) + 1}`)
          .spread({ topologyKey: ZONE, labelSelector: { matchLabels: { app } } }),
      ),
    );
    const snapshot = buildSnapshot([...nodes, ...pods]);
    const limits = { maxPerCycle: 100, maxPerNode: 100, maxPerNamespace: 100, maxPerWorkload: 100 };
    const policy = parsePolicy(makePolicy('slices', { eviction: limits }), { file: 'slices.yaml' });
    const steps = planCycleSteps(snapshot, policy);
    let yields = 0;
    let next = steps.next();
    for (; next.done !== true; next = steps.next()) yields++;
    const atOnce = planCycle(snapshot, policy);
    expect(next.value.moves.map((m) => [m.pod.name, m.target?.name])).toEqual(
      atOnce.moves.map((m) => [m.pod.name, m.target?.name]),
    );
    expect(atOnce.moves.length).toBeGreaterThanOrEqual(6);
    expect(yields).toBeGreaterThanOrEqual(2 + 3);
    expect(await runInSlices(planCycleSteps(snapshot, policy), (w) => w(), 0)).toMatchObject({
      moves: atOnce.moves.map((m) => expect.objectContaining({ pod: m.pod, target: m.target })),
    });
  });
});
