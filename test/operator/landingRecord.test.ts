// How a policy keeps score of its predictions (status.landing) and when it stops trusting them: 3 of the last 10
// replacements elsewhere turn it Degraded (PredictionsUnreliable) until the spec or the scheduler configuration
// changes, and the verdict outlives a restart or a leader change through the status, as cooldowns do.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import type { LandingOutcome } from '../../src/metrics/names.js';
import type { NodeInfo, PodInfo } from '../../src/model/types.js';
import { ClusterCache, type PolicyEntry } from '../../src/operator/clusterCache.js';
import { PolicyController } from '../../src/operator/cycle.js';
import type { EventRecorder } from '../../src/operator/events.js';
import type { RunDeps } from '../../src/operator/eviction/runTypes.js';
import type { Landing } from '../../src/operator/eviction/landing.js';
import { classifyLanding } from '../../src/operator/eviction/landingWatch.js';
import {
  LandingRecord,
  readLanding,
  schedulerConfigFingerprint,
  type LandingStatus,
} from '../../src/operator/landingRecord.js';
import type { PolicyStatus } from '../../src/operator/status.js';
import type { Move } from '../../src/planner/move.js';
import { makePolicy } from '../builders.js';
import { captureLogger, ManualClock } from './fakes.js';

const node = (name: string) => ({ name }) as NodeInfo;

function landing(outcome: LandingOutcome, n: number): Landing {
  const move = {
    pod: { namespace: 'shop', name: `web-${n}` } as PodInfo,
    target: node('n-b1'),
    ties: [node('n-b2')],
    strategy: 'TopologySpread',
  } as unknown as Move;
  const actual = { target: 'n-b1', tied: 'n-b2', elsewhere: 'n-a', unscheduled: undefined }[outcome];
  return {
    move,
    outcome,
    node: actual,
    replacement: { namespace: 'shop', name: `web-new${n}` } as PodInfo,
  };
}

const at = (generation = 1, schedulerConfig = 'default') => ({
  time: '2026-01-01T00:00:00Z',
  generation,
  schedulerConfig,
});

describe('classifyLanding', () => {
  it.each([
    ['n-b1', 'target'],
    ['n-b2', 'tied'],
    ['n-a', 'elsewhere'],
    [undefined, 'unscheduled'],
  ])('a replacement on %s is %s (predicted n-b1, tied with n-b2)', (bound, expected) => {
    expect(classifyLanding({ target: node('n-b1'), ties: [node('n-b2')] }, bound)).toBe(expected);
  });
});

describe('LandingRecord', () => {
  it('two misses in ten are noted, the third makes predictions unreliable (said once)', () => {
    const record = new LandingRecord(undefined);
    const outcomes: LandingOutcome[] = ['target', 'elsewhere', 'tied', 'target', 'elsewhere', 'target'];
    for (const [i, o] of outcomes.entries()) expect(record.add(landing(o, i), at())).toBeUndefined();
    expect(record.status()).toMatchObject({ share: '4/6', lastMiss: { pod: 'shop/web-4', actual: 'n-a' } });
    const verdict = record.add(landing('elsewhere', 9), at());
    expect(verdict?.message).toMatch(
      /^3 of the last 7 replacements landed elsewhere than predicted \(last: shop\/web-new9 on n-a, predicted n-b1\)/,
    );
    expect(record.status()).toMatchObject({
      share: '4/7',
      lastMiss: { pod: 'shop/web-9', replacement: 'shop/web-new9', predicted: ['n-b1', 'n-b2'], actual: 'n-a' },
      unreliable: { generation: 1, schedulerConfig: 'default' },
    });
    expect(record.add(landing('elsewhere', 10), at())).toBeUndefined();
  });

  it('counts the last ten only: misses spread wider than that never add up to three', () => {
    const record = new LandingRecord(undefined);
    for (let i = 0; i < 40; i++)
      expect(record.add(landing(i % 5 === 0 ? 'elsewhere' : 'target', i), at())).toBeUndefined();
    expect(record.status()?.recent).toHaveLength(10);
    expect(record.status()?.share).toBe('8/10');
  });

  it('a miss on a node added or changed after the plan is not counted: three of them leave predictions trusted', () => {
    const record = new LandingRecord(undefined);
    for (let i = 0; i < 3; i++) {
      expect(record.add({ ...landing('elsewhere', i), nodeChangedSincePlan: true }, at())).toBeUndefined();
    }
    expect(record.status()).toBeUndefined();
    record.add(landing('elsewhere', 3), at());
    expect(record.status()).toMatchObject({ recent: ['elsewhere'], share: '0/1', lastMiss: { pod: 'shop/web-3' } });
  });

  it('an unscheduled replacement is not counted (the ReplacementPending pause covers it)', () => {
    const record = new LandingRecord(undefined);
    for (let i = 0; i < 5; i++) record.add(landing('unscheduled', i), at());
    expect(record.status()).toBeUndefined();
  });

  it.each([
    ['the spec changed (a new generation)', at(2)],
    ['the scheduler configuration changed', at(1, 'abc123')],
  ])('holds under the same spec and configuration, and is lifted when %s, with a fresh window', (_why, next) => {
    const record = new LandingRecord(undefined);
    for (let i = 0; i < 3; i++) record.add(landing('elsewhere', i), at());
    expect(record.unreliableFor(1, 'default')).toBeDefined();
    expect(record.unreliableFor(next.generation, next.schedulerConfig)).toBeUndefined();
    expect(record.status()).toMatchObject({ recent: [], share: '0/0', lastMiss: { pod: 'shop/web-2' } });
    expect(record.add(landing('elsewhere', 5), next)).toBeUndefined();
  });

  it('reads back what it wrote, and drops what is malformed', () => {
    const record = new LandingRecord(undefined);
    for (let i = 0; i < 3; i++) record.add(landing(i === 1 ? 'tied' : 'elsewhere', i), at());
    record.add(landing('elsewhere', 3), at());
    const written = JSON.parse(JSON.stringify(record.status())) as LandingStatus;
    expect(readLanding(written)).toEqual(written);
    expect(readLanding({ recent: ['target', 'sideways', 3], unreliable: { since: 'x' } })).toEqual({
      recent: ['target'],
      share: '1/1',
    });
    expect(readLanding('nonsense')).toBeUndefined();
  });

  it('tells scheduler configurations apart, and the default from any given one', () => {
    expect(schedulerConfigFingerprint(undefined)).toBe('default');
    const a = schedulerConfigFingerprint({ weights: new Map([['NodeResourcesFit', 1]]) });
    const b = schedulerConfigFingerprint({ weights: new Map([['NodeResourcesFit', 2]]) });
    expect(a).not.toBe(b);
    expect(a).toBe(schedulerConfigFingerprint({ weights: new Map([['NodeResourcesFit', 1]]) }));
  });
});

describe('PredictionsUnreliable in the policy status', () => {
  function policyObject(generation: number, status: Record<string, unknown>): Record<string, unknown> {
    const raw = makePolicy('balance', { mode: 'Evict' });
    Object.assign(raw['metadata'] as object, { uid: 'uid-1', resourceVersion: '7', generation });
    return { ...raw, status };
  }

  function controllerWith(live: () => Record<string, unknown>) {
    const clock = new ManualClock();
    const cache = new ClusterCache(clock);
    const put = (raw: Record<string, unknown>): PolicyEntry => cache.convertPolicy(raw);
    cache.policyHandlers.upsert({ metadata: { name: 'balance' }, value: put(live()) });
    const writes: PolicyStatus[] = [];
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
      writeStatus: (_, status, rv) => {
        writes.push(status);
        return Promise.resolve(String(Number(rv) + 1));
      },
      readPolicy: () => Promise.resolve(put(live())),
    });
    return { controller, writes, cache, put };
  }

  const verdict = {
    recent: ['elsewhere', 'elsewhere', 'elsewhere'],
    share: '0/3',
    unreliable: {
      since: '2026-01-01T00:00:00Z',
      generation: 4,
      schedulerConfig: 'default',
      message: '3 of the last 3',
    },
  };
  const degraded = (s: PolicyStatus | undefined) => s?.conditions.find((c) => c.type === 'Degraded');

  it('a new leader finds the verdict in the status and keeps the policy Degraded under the same spec', async () => {
    const live = policyObject(4, { landing: verdict });
    const { controller, writes } = controllerWith(() => live);
    await controller.startedLeading();
    expect(degraded(writes.at(-1))).toMatchObject({ status: 'True', reason: 'PredictionsUnreliable' });
    expect(writes.at(-1)?.landing).toMatchObject({ share: '0/3', unreliable: { generation: 4 } });
    expect(writes.at(-1)?.conditions.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False' });
  });

  it('a spec edit (a new generation) lifts it', async () => {
    let live = policyObject(4, { landing: verdict });
    const { controller, writes, cache, put } = controllerWith(() => live);
    await controller.startedLeading();
    live = policyObject(5, { landing: verdict });
    const entry = put(live);
    cache.policyHandlers.upsert({ metadata: { name: 'balance' }, value: entry });
    controller.specChanged(entry, 4);
    await controller.syncStatus('balance');
    expect(degraded(writes.at(-1))).toMatchObject({ status: 'False' });
    expect(writes.at(-1)?.landing?.unreliable).toBeUndefined();
  });
});
