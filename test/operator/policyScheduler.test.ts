// One cron task per policy, following metadata.generation; no task for invalid or suspended policies; never two
// cycles of a policy at once (the late tick is counted as skipped_overlap); ticks ignored by non-leaders.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { PolicyEntry } from '../../src/operator/clusterCache.js';
import { PolicyScheduler } from '../../src/operator/policyScheduler.js';
import { ClusterCache } from '../../src/operator/clusterCache.js';
import { makePolicy } from '../builders.js';
import { captureLogger, flush, ManualCron, ManualClock } from './fakes.js';

function entry(name: string, generation: number, spec: Record<string, unknown>, uid = `uid-${name}`): PolicyEntry {
  const raw = makePolicy(name, spec);
  (raw['metadata'] as Record<string, unknown>)['generation'] = generation;
  (raw['metadata'] as Record<string, unknown>)['uid'] = uid;
  return new ClusterCache(new ManualClock()).convertPolicy(raw);
}

function setup(leader = true) {
  const cron = new ManualCron();
  const registry = new Registry();
  const metrics = createMetrics(registry);
  const started: string[] = [];
  const release: Array<() => void> = [];
  const changes: string[] = [];
  const scheduler = new PolicyScheduler({
    cron: cron.factory,
    logger: captureLogger().logger,
    metrics,
    isLeader: () => leader,
    runCycle: (name, trigger) => {
      started.push(trigger === 'schedule' ? name : `${name} (${trigger})`);
      return new Promise<void>((resolve) => release.push(resolve));
    },
    specChanged: (e, previous) => changes.push(`${e.name}@${e.generation} (was ${previous ?? 'new'})`),
    removed: (name) => changes.push(`${name} removed`),
  });
  return { cron, registry, scheduler, started, release, changes };
}

async function cycles(registry: Registry, result: string): Promise<number> {
  const metric = await registry.getSingleMetric('rebalancer_cycles_total')!.get();
  return metric.values.find((v) => v.labels['result'] === result)?.value ?? 0;
}

describe('policy scheduler', () => {
  it('tracks a policy by uid: deleted and recreated under the same name (seen as one update) is a new policy', () => {
    const { cron, scheduler, changes } = setup();
    scheduler.onPolicy('upsert', entry('nightly', 1, { schedule: '0 3 * * *' }, 'uid-old'));
    // A relist after a watch outage: same name, same generation, another object.
    scheduler.onPolicy('upsert', entry('nightly', 1, { schedule: '0 3 * * *' }, 'uid-new'));
    expect(changes).toEqual(['nightly@1 (was new)', 'nightly removed', 'nightly@1 (was new)']);
    expect(cron.tasks.map((t) => t.stopped)).toEqual([true, false]);
  });

  it('marks a tick the leader acts on as due (the staleness alert), and none on a follower', async () => {
    for (const leader of [true, false]) {
      const { registry, scheduler, release } = setup(leader);
      scheduler.onPolicy('upsert', entry('nightly', 1, { schedule: '0 3 * * *' }));
      void scheduler.tick('nightly');
      for (const r of release) r();
      const due = await registry.getSingleMetric('rebalancer_cycle_due_timestamp_seconds')!.get();
      expect(due.values.length).toBe(leader ? 1 : 0);
    }
  });

  it('schedules on the spec, reschedules when the generation moves, ignores status-only updates', () => {
    const { cron, scheduler, changes } = setup();
    scheduler.onPolicy('upsert', entry('nightly', 1, { schedule: '0 3 * * *' }));
    scheduler.onPolicy('upsert', entry('nightly', 1, { schedule: '0 3 * * *' }));
    scheduler.onPolicy('upsert', entry('nightly', 2, { schedule: '*/10 * * * *' }));
    expect(cron.tasks.map((t) => [t.expression, t.stopped])).toEqual([
      ['0 3 * * *', true],
      ['*/10 * * * *', false],
    ]);
    expect(scheduler.scheduleOf('nightly')).toBe('*/10 * * * *');
    expect(changes).toEqual(['nightly@1 (was new)', 'nightly@2 (was 1)']);
    scheduler.onPolicy('delete', entry('nightly', 2, {}));
    expect(cron.tasks.every((t) => t.stopped)).toBe(true);
    expect(changes.at(-1)).toBe('nightly removed');
  });

  it('gives invalid and suspended policies no task', () => {
    const { cron, scheduler } = setup();
    scheduler.onPolicy('upsert', entry('broken', 1, { mode: 'Sometimes' }));
    scheduler.onPolicy('upsert', entry('paused', 1, { suspend: true }));
    expect(cron.tasks).toEqual([]);
    expect(scheduler.scheduleOf('paused')).toBeUndefined();
  });

  it('skips and counts a tick while the previous cycle of the policy still runs', async () => {
    const { cron, registry, scheduler, started, release } = setup();
    scheduler.onPolicy('upsert', entry('balance', 1, {}));
    cron.fire('balance');
    cron.fire('balance');
    cron.fire('balance');
    expect(started).toEqual(['balance']);
    expect(await cycles(registry, 'skipped_overlap')).toBe(2);
    release.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
    // The cycle is over: the next tick starts one.
    cron.fire('balance');
    expect(started).toEqual(['balance', 'balance']);
    release.shift()!();
    await scheduler.stop();
  });

  it('ignores ticks while this replica is not the leader', () => {
    const { cron, scheduler, started } = setup(false);
    scheduler.onPolicy('upsert', entry('balance', 1, {}));
    cron.fire('balance');
    expect(started).toEqual([]);
  });

  it('a triggered cycle runs at once when idle, else once after the running one (coalesced)', async () => {
    const { scheduler, started, release } = setup();
    scheduler.onPolicy('upsert', entry('p', 1, {}));
    void scheduler.trigger('p', 'node', ['node n1 added']);
    expect(started).toEqual(['p (node)']);
    void scheduler.trigger('p', 'node', ['node n2 added']);
    void scheduler.trigger('p', 'policy', ['spec changed']);
    void scheduler.tick('p');
    expect(started).toEqual(['p (node)']);
    release.shift()!();
    await flush();
    // One follow-up for both queued triggers, labelled by the first; the tick was an overlap.
    expect(started).toEqual(['p (node)', 'p (node)']);
    release.shift()!();
    await flush();
    expect(started).toHaveLength(2);
  });

  it('drops a queued trigger of a policy deleted meanwhile, and triggers nothing when not leading', async () => {
    const { scheduler, started, release } = setup();
    scheduler.onPolicy('upsert', entry('p', 1, {}));
    void scheduler.trigger('p', 'node', ['a']);
    void scheduler.trigger('p', 'node', ['b']);
    scheduler.onPolicy('delete', entry('p', 1, {}));
    release.shift()!();
    await flush();
    expect(started).toEqual(['p (node)']);
    const follower = setup(false);
    follower.scheduler.onPolicy('upsert', entry('p', 1, {}));
    void follower.scheduler.trigger('p', 'node', ['a']);
    expect(follower.started).toEqual([]);
  });
});
