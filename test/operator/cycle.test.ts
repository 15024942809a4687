// The state a leader keeps per policy and how it reaches the status: rebuilt from the live object when leadership
// starts (never from a follower's stale cache), written on condition of the resourceVersion, and merged with the
// live status on a conflict (totals add what was not written yet, cooldowns are the union).
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { ClusterCache, type PolicyEntry } from '../../src/operator/clusterCache.js';
import { PolicyController } from '../../src/operator/cycle.js';
import type { EventRecorder } from '../../src/operator/events.js';
import type { RunDeps } from '../../src/operator/eviction/runTypes.js';
import { StatusConflictError, type PolicyStatus } from '../../src/operator/status.js';
import { makePolicy } from '../builders.js';
import { captureLogger, ManualClock } from './fakes.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function policyObject(rv: string, status: Record<string, unknown>): Record<string, unknown> {
  const raw = makePolicy('balance', { mode: 'Evict' });
  Object.assign(raw['metadata'] as object, { uid: 'uid-1', resourceVersion: rv });
  return { ...raw, status };
}

interface Write {
  readonly status: PolicyStatus;
  readonly resourceVersion: string;
}

/** How the API server answers the n-th status write (0-based): the new resourceVersion, or a rejection. */
type WriteAnswer = (n: number, resourceVersion: string) => Promise<string>;

function setup(
  cached: Record<string, unknown>,
  live: () => Record<string, unknown>,
  conflicts = 0,
  start = NOW,
  answer?: WriteAnswer,
) {
  const clock = new ManualClock(start);
  const cache = new ClusterCache(clock);
  const put = (raw: Record<string, unknown>): PolicyEntry => cache.convertPolicy(raw);
  cache.policyHandlers.upsert({ metadata: { name: 'balance' }, value: put(cached) });
  const writes: Write[] = [];
  let refuse = conflicts;
  const events: EventRecorder = { record: () => undefined, flush: () => Promise.resolve() };
  const controller = new PolicyController({
    cache,
    clock,
    logger: captureLogger().logger,
    metrics: createMetrics(new Registry()),
    events,
    isLeader: () => true,
    run: {} as RunDeps,
    stopSignal: new AbortController().signal,
    writeStatus: (_, status, resourceVersion) => {
      writes.push({ status, resourceVersion });
      if (answer !== undefined) return answer(writes.length - 1, resourceVersion);
      if (refuse-- > 0) return Promise.reject(new StatusConflictError('balance'));
      return Promise.resolve(String(Number(resourceVersion) + 1));
    },
    readPolicy: () => Promise.resolve(put(live())),
  });
  return { controller, writes, clock };
}

const until = '2026-01-01T00:30:00Z';

describe('policy state', () => {
  it('a new leader rebuilds from the live status, not from the stale copy its cache had as a follower', async () => {
    const stale = policyObject('5', { totals: { evicted: 0, failed: 0 } });
    const live = policyObject('8', {
      totals: { evicted: 3, failed: 1 },
      cooldowns: [{ workload: 'shop/Deployment/web', until, reason: 'landed back' }],
      pause: {
        pod: 'shop/web-x',
        podUid: 'p1',
        workload: 'shop/Deployment/api',
        since: '2026-01-01T00:00:00Z',
        reason: 'ReplacementPending',
        message: 'still Pending',
      },
    });
    const { controller, writes } = setup(stale, () => live);
    // As a follower it saw the policy (and, before this fix, built its state from that copy).
    expect(controller.state('balance')?.totals).toEqual({ evicted: 0, failed: 0 });
    await controller.startedLeading();
    const written = writes.at(-1)!;
    expect(written.resourceVersion).toBe('8');
    expect(written.status.totals).toEqual({ evicted: 3, failed: 1 });
    expect(written.status.cooldowns).toEqual([{ workload: 'shop/Deployment/web', until, reason: 'landed back' }]);
    expect(written.status.pause).toMatchObject({ pod: 'shop/web-x', podUid: 'p1', workload: 'shop/Deployment/api' });
    expect(written.status.conditions.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'ReplacementPending',
    });
  });

  it('a conflicting write is merged with the live status: unwritten counts added, cooldowns united', async () => {
    const cached = policyObject('5', { totals: { evicted: 3, failed: 0 } });
    const live = policyObject('9', {
      totals: { evicted: 10, failed: 2 },
      cooldowns: [{ workload: 'ops/Deployment/api', until, reason: 'theirs' }],
    });
    const { controller, writes } = setup(cached, () => live, 1);
    const state = controller.state('balance')!;
    // Two evictions counted by this replica, not written yet.
    state.totals.evicted += 2;
    state.unwritten.evicted += 2;
    await controller.syncStatus('balance');
    expect(writes.map((w) => w.resourceVersion)).toEqual(['5', '9']);
    expect(writes[1]!.status.totals).toEqual({ evicted: 12, failed: 2 });
    expect(writes[1]!.status.cooldowns.map((c) => c.workload)).toEqual(['ops/Deployment/api']);
    expect(state.unwritten).toEqual({ evicted: 0, failed: 0 });
    expect(state.resourceVersion).toBe('10');
  });

  it('an eviction counted while a write is on the wire is still unwritten after it: a later conflict keeps it', async () => {
    // The spec edit of test/e2e/promises.test.ts: a status write is in flight when the run counts its eviction; the
    // write succeeds without it; the edit moves the resourceVersion, so the next write conflicts and is merged with
    // the live status, which never had the eviction.
    const cached = policyObject('5', { totals: { evicted: 0, failed: 0 } });
    const live = policyObject('7', { totals: { evicted: 0, failed: 0 } });
    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const answer: WriteAnswer = async (n, resourceVersion) => {
      if (n === 0) {
        await held;
        return String(Number(resourceVersion) + 1);
      }
      if (resourceVersion !== '7') throw new StatusConflictError('balance');
      return '8';
    };
    const { controller, writes } = setup(cached, () => live, 0, NOW, answer);
    const state = controller.state('balance')!;
    const first = controller.syncStatus('balance');
    await Promise.resolve();
    expect(writes).toHaveLength(1);
    // Counted as the cycle counts an outcome, after the status on the wire was composed.
    state.totals.evicted += 1;
    state.unwritten.evicted += 1;
    release!();
    await first;
    expect(writes[0]!.status.totals).toEqual({ evicted: 0, failed: 0 });
    expect(state.unwritten).toEqual({ evicted: 1, failed: 0 });
    await controller.syncStatus('balance');
    expect(writes.map((w) => w.resourceVersion)).toEqual(['5', '6', '7']);
    expect(writes.at(-1)!.status.totals).toEqual({ evicted: 1, failed: 0 });
    expect(state.unwritten).toEqual({ evicted: 0, failed: 0 });
  });

  it('a Lease lost before the status was written: what this replica did is merged back and written as it leads again', async () => {
    // It led, counted two evictions and a cooldown, and lost the Lease before any write went through.
    const before = policyObject('5', { totals: { evicted: 1, failed: 0 } });
    // Meanwhile another leader wrote its own eviction: the live status says 2.
    let live = before;
    const { controller, writes } = setup(before, () => live);
    await controller.startedLeading();
    const state = controller.state('balance')!;
    state.totals.evicted += 2;
    state.unwritten.evicted += 2;
    state.cooldowns.set('shop/Deployment/web', {
      until: Number.MAX_SAFE_INTEGER,
      untilWall: Date.parse(until),
      reason: 'mine',
    });
    controller.stoppedLeading();
    live = policyObject('9', { totals: { evicted: 2, failed: 0 } });
    const writesBefore = writes.length;
    await controller.startedLeading();
    expect(writes.length).toBe(writesBefore + 1);
    const written = writes.at(-1)!;
    expect(written.resourceVersion).toBe('9');
    expect(written.status.totals).toEqual({ evicted: 4, failed: 0 });
    expect(written.status.cooldowns.map((c) => c.workload)).toEqual(['shop/Deployment/web']);
    // Merged once: leading a third time adds nothing more.
    controller.stoppedLeading();
    live = policyObject('10', { totals: { evicted: 4, failed: 0 } });
    await controller.startedLeading();
    expect(writes.at(-1)!.status.totals).toEqual({ evicted: 4, failed: 0 });
  });

  it('a cooldown read back keeps its wall-clock end, measured from then on by the monotonic clock', async () => {
    const live = policyObject('3', { cooldowns: [{ workload: 'shop/Deployment/web', until, reason: 'x' }] });
    const { controller, writes, clock } = setup(live, () => live);
    await controller.startedLeading();
    clock.jumpWall(3_600_000); // the wall clock jumps an hour ahead: the cooldown is not over
    await clock.advance(29 * 60_000);
    await controller.syncStatus('balance');
    expect(writes.at(-1)!.status.cooldowns.map((c) => c.workload)).toEqual(['shop/Deployment/web']);
    await clock.advance(2 * 60_000);
    await controller.syncStatus('balance');
    expect(writes.at(-1)!.status.cooldowns).toEqual([]);
  });
});

describe('the OutsideWindow condition after a window closed during a run', () => {
  const windowed = (): Record<string, unknown> => {
    const raw = makePolicy('balance', { mode: 'Evict', windows: [{ schedule: '0 22 * * *', duration: '2h' }] });
    Object.assign(raw['metadata'] as object, { uid: 'uid-1', resourceVersion: '1' });
    return raw;
  };
  const outside = (w: Write | undefined) => w?.status.conditions.find((c) => c.type === 'OutsideWindow');
  const end = Date.parse('2026-01-02T00:00:00Z');

  it('says WindowClosed once its own window reads closed, even when the run ended a moment before that', async () => {
    const raw = windowed();
    // The run's gate fired; the status is written while the wall clock still reads inside the window.
    const { controller, writes, clock } = setup(raw, () => raw, 0, end - 1_005);
    const state = controller.state('balance')!;
    state.windowClosed = { at: end - 1_005, evicted: 2, windowEnd: end };
    await controller.syncStatus('balance');
    expect(outside(writes.at(-1))).toMatchObject({ status: 'False', reason: 'InsideWindow' });
    // The boundary timer rewrites the status when the window reads closed; the note of the run is still there.
    await clock.advance(100);
    await controller.syncStatus('balance');
    expect(outside(writes.at(-1))).toMatchObject({ status: 'True', reason: 'WindowClosed' });
    expect(outside(writes.at(-1))?.message).toContain('stopped evicting after 2 evictions');
  });

  it('forgets it when the next window opens', async () => {
    const raw = windowed();
    const { controller, writes, clock } = setup(raw, () => raw, 0, end + 60_000);
    const state = controller.state('balance')!;
    state.windowClosed = { at: end - 1_000, evicted: 2, windowEnd: end };
    await controller.syncStatus('balance');
    expect(outside(writes.at(-1))).toMatchObject({ reason: 'WindowClosed' });
    await clock.advance(22 * 3_600_000); // inside the next night's window
    await controller.syncStatus('balance');
    expect(outside(writes.at(-1))).toMatchObject({ reason: 'InsideWindow' });
    expect(state.windowClosed).toBeUndefined();
    await clock.advance(2 * 3_600_000); // and after it, without a run
    await controller.syncStatus('balance');
    expect(outside(writes.at(-1))).toMatchObject({ status: 'True', reason: 'OutsideWindow' });
  });
});
