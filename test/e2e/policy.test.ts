// Policy lifecycle end to end: an edit reschedules (metadata.generation), suspend and invalid specs never run, a
// late tick is skipped and counted while the previous cycle runs, and a replacement that stays Pending pauses the
// policy with Degraded until it is scheduled.
import { afterEach, describe, expect, it } from 'vitest';
import type { RawPod, TestApiServer } from '../apiserver/index.js';
import { ClusterCache } from '../../src/operator/clusterCache.js';
import { nodeCronFactory } from '../../src/operator/policyScheduler.js';
import { captureLogger } from '../operator/fakes.js';
import { projectScheduler } from './scheduling.js';
import {
  condition,
  createDeployment,
  createPolicy,
  evictionRequests,
  policyStatus,
  sample,
  skewOf,
  startCluster,
  startOperator,
  updatePolicySpec,
  waitFor,
  zoneCounts,
  type OperatorHandle,
} from './harness.js';

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  await server?.close();
  server = undefined;
});

async function skewedCluster(readyDelayMs = 20): Promise<TestApiServer> {
  const s = (server = await startCluster({ readyDelayMs }));
  createDeployment(s, {
    namespace: 'shop',
    name: 'web',
    placement: ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1'],
    pdb: { maxUnavailable: 1 },
  });
  await s.settle();
  return s;
}

function policyEvents(s: TestApiServer, reason: string): Array<Record<string, unknown>> {
  return s.store
    .list('events', { namespace: 'default' })
    .filter((e) => (e['involvedObject'] as { kind?: string }).kind === 'RebalancePolicy' && e['reason'] === reason);
}

describe('scheduling policies', () => {
  it('an edit of the schedule replaces the cron task; suspend removes it; status follows the generation', async () => {
    const s = await skewedCluster();
    createPolicy(s, 'nightly', { schedule: '*/5 * * * *' });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    await waitFor(() => op.cron.active('nightly'), 5000, 'the schedule');
    expect(op.cron.active('nightly')?.expression).toBe('*/5 * * * *');
    await waitFor(() => policyStatus(s, 'nightly').observedGeneration === 1, 5000, 'status of generation 1');

    updatePolicySpec(s, 'nightly', (spec) => {
      spec['schedule'] = '*/1 * * * *';
    });
    await waitFor(() => op.cron.active('nightly')?.expression === '*/1 * * * *', 5000, 'the new schedule');
    expect(op.cron.tasks.filter((t) => t.name === 'nightly').map((t) => [t.expression, t.stopped])).toEqual([
      ['*/5 * * * *', true],
      ['*/1 * * * *', false],
    ]);
    expect(op.operator.scheduleOf('nightly')).toBe('*/1 * * * *');
    await waitFor(() => policyStatus(s, 'nightly').observedGeneration === 2, 5000, 'status of generation 2');
    expect(condition(s, 'nightly', 'Ready')).toMatchObject({ status: 'True', reason: 'Ready' });

    // Our own status writes do not reschedule (the generation does not move).
    const tasks = op.cron.tasks.length;
    await op.operator.tick('nightly');
    expect(op.cron.tasks.length).toBe(tasks);

    updatePolicySpec(s, 'nightly', (spec) => {
      spec['suspend'] = true;
    });
    await waitFor(() => condition(s, 'nightly', 'Suspended')?.status === 'True', 5000, 'Suspended');
    expect(op.cron.active('nightly')).toBeUndefined();
    expect(condition(s, 'nightly', 'Ready')).toMatchObject({ status: 'False', reason: 'Suspended' });
    const before = policyStatus(s, 'nightly').lastRunTime;
    const mark = s.stats.mark();
    await op.operator.tick('nightly');
    expect(policyStatus(s, 'nightly').lastRunTime).toBe(before);
    expect(evictionRequests(s, mark)).toHaveLength(0);
  });

  it('an invalid policy gets Invalid with every problem and never runs', async () => {
    const s = await skewedCluster();
    // Written to storage directly, past the CRD's validation (as an older CRD version might have let it in).
    s.store.create({
      apiVersion: 'rebalancer.dev/v1alpha1',
      kind: 'RebalancePolicy',
      metadata: { name: 'broken' },
      spec: { mode: 'Sometimes', eviction: { maxPerCycle: -1, minPodAge: '0s' } },
    });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    const invalid = await waitFor(() => condition(s, 'broken', 'Invalid'), 5000, 'the Invalid condition');
    expect(invalid.status).toBe('True');
    expect(invalid.message).toContain('spec.mode');
    expect(invalid.message).toContain('spec.eviction.maxPerCycle');
    expect(condition(s, 'broken', 'Ready')).toMatchObject({ status: 'False', reason: 'Invalid' });
    expect(op.cron.active('broken')).toBeUndefined();
    const mark = s.stats.mark();
    await op.operator.tick('broken');
    expect(evictionRequests(s, mark)).toHaveLength(0);
    expect(policyStatus(s, 'broken').lastRunTime).toBeUndefined();
    await waitFor(() => policyEvents(s, 'InvalidPolicy').length === 1, 5000, 'the InvalidPolicy Event');
  });

  it('node-cron runs the edited schedule, and a tick that finds the last cycle running is skipped and counted', async () => {
    const s = await skewedCluster(20);
    createPolicy(s, 'every-second', { mode: 'Evict', schedule: '0 0 1 1 *' });
    const { logger } = captureLogger('warn');
    const op = startOperator(s, { cron: nodeCronFactory(logger) });
    operators.push(op);
    await op.operator.waitForSync();
    // Each eviction takes 1.6 s on the server, so a cycle outlives the next tick.
    s.faults.delay({ verb: 'create', resource: 'pods/eviction', ms: 1600 });
    updatePolicySpec(s, 'every-second', (spec) => {
      spec['schedule'] = '* * * * * *';
    });
    // A cycle now runs until its workload is balanced (two 1.6 s evictions, each paced), then writes lastRunTime.
    await waitFor(() => policyStatus(s, 'every-second').lastRunTime, 10_000, 'a cycle on the new schedule');
    const text = await waitFor(
      async () => {
        const metrics = await op.scrape();
        return (sample(metrics, 'rebalancer_cycles_total', { policy: 'every-second', result: 'skipped_overlap' }) ??
          0) >= 1
          ? metrics
          : undefined;
      },
      5000,
      'a skipped overlapping tick',
    );
    expect(
      sample(text, 'rebalancer_cycles_total', { policy: 'every-second', result: 'skipped_overlap' }),
    ).toBeGreaterThan(0);
    // Never two cycles at once: the evictions never overlap in time.
    const evictions = evictionRequests(s);
    for (let i = 1; i < evictions.length; i++) {
      expect(evictions[i]!.time).toBeGreaterThanOrEqual(evictions[i - 1]!.time + evictions[i - 1]!.durationMs - 5);
    }
  });
});

describe('a replacement that stays Pending', () => {
  it('pauses the policy with Degraded and an Event, and it resumes once the replacement is scheduled', async () => {
    const s = await skewedCluster();
    createPolicy(s, 'balance', { mode: 'Evict', eviction: { maxPerWorkload: 3, replacementTimeout: '1s' } });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    // From now on the scheduler finds no node for any new pod.
    s.controllers.scheduler.setScheduleFunction(() => undefined);
    await op.operator.tick('balance');
    expect(evictionRequests(s)).toHaveLength(1);
    const degraded = condition(s, 'balance', 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'ReplacementPending' });
    expect(degraded?.message).toMatch(/still Pending after 1s; evictions paused/);
    expect(condition(s, 'balance', 'Ready')).toMatchObject({ status: 'False', reason: 'Degraded' });
    await waitFor(() => policyEvents(s, 'ReplacementPending').length === 1, 5000, 'the ReplacementPending Event');
    const pending = s.store
      .list<RawPod>('pods', { namespace: 'shop' })
      .filter((p) => p.status?.phase === 'Pending' && p.spec.nodeName === undefined);
    expect(pending).toHaveLength(1);

    // Paused: the next tick evicts nothing.
    await op.operator.tick('balance');
    expect(evictionRequests(s)).toHaveLength(1);
    expect(op.logs.some((l) => l.msg.includes('policy paused (Degraded); cycle skipped'))).toBe(true);

    // The replacement gets scheduled: the next tick lifts the pause and finishes the job.
    s.controllers.scheduler.setScheduleFunction(projectScheduler());
    await waitFor(() => op.operator.cache.readyCount('shop/Deployment/web') === 6, 5000, 'the replacement to run');
    // The budget's status follows the Ready count through the disruption controller; a cycle that reads it before
    // then plans nothing (allowed 0) and leaves the work to the next one.
    await waitFor(
      () => {
        const budget = op.operator.cache.pdb('shop/web');
        return budget !== undefined && ClusterCache.allowance(budget, 0) === 1;
      },
      5000,
      'the budget to allow a disruption again',
    );
    await op.operator.tick('balance');
    expect(condition(s, 'balance', 'Degraded')).toMatchObject({ status: 'False' });
    expect(condition(s, 'balance', 'Ready')).toMatchObject({ status: 'True' });
    expect(skewOf(zoneCounts(s, 'shop', 'web'))).toBeLessThanOrEqual(1);
    await waitFor(() => policyEvents(s, 'Resumed').length === 1, 5000, 'the Resumed Event');
  });
});

describe('cooldown', () => {
  it('a replacement that lands back where its pod was evicted from holds the workload and reports the loop', async () => {
    const s = await skewedCluster();
    createPolicy(s, 'balance', { mode: 'Evict', eviction: { maxPerWorkload: 3, cooldown: '1h' } });
    // The scheduler cannot use zone-c (say its nodes are full for new pods): a replacement goes back to the zone
    // with fewer pods, which is the one its pod was just evicted from.
    const place = projectScheduler();
    s.controllers.scheduler.setScheduleFunction((pod, state) =>
      place(pod, {
        ...state,
        nodes: state.nodes.filter((n) => n.metadata.labels?.['topology.kubernetes.io/zone'] !== 'zone-c'),
      }),
    );
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    await op.operator.tick('balance');
    expect(evictionRequests(s)).toHaveLength(1);
    const loop = await waitFor(() => policyEvents(s, 'RebalanceLoop')[0], 5000, 'the RebalanceLoop Event');
    expect(String(loop['message'])).toMatch(
      /evict\/reschedule loop: shop\/web-\S+ was evicted, and its replacement shop\/web-\S+ landed back on (node zone-[ab]-node-[12]|topology\.kubernetes\.io\/zone=zone-[ab]); shop\/Deployment\/web is left alone for 3600s/,
    );
    expect(op.logs.some((l) => l.level === 40 && String(l.msg).startsWith('evict/reschedule loop'))).toBe(true);
    // Held for the cooldown: the next cycle does not touch it, and says why.
    await op.operator.tick('balance');
    expect(evictionRequests(s)).toHaveLength(1);
    expect(op.logs.some((l) => String(l.msg).includes('cycle finished: 0 evicted'))).toBe(true);
    expect(skewOf(zoneCounts(s, 'shop', 'web'))).toBe(3);
  });
});
