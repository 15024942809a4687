// Events: created with the object reference and the reporting component; a repeat within the window patches the
// existing Event (count, lastTimestamp) instead of creating another; an Event that expired is created afresh;
// failures are logged, never thrown.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createEventRecorder, type EventApi } from '../../src/operator/events.js';
import { captureLogger, flush, ManualClock } from './fakes.js';

class FakeEventApi {
  readonly created: Array<{ namespace: string; body: Record<string, unknown> }> = [];
  readonly patched: Array<{ namespace: string; name: string; body: unknown }> = [];
  failPatchWith: number | undefined;
  failCreate = false;

  readonly api = {
    createNamespacedEvent: (param: { namespace: string; body: Record<string, unknown> }) => {
      if (this.failCreate) return Promise.reject(new ApiException(500, 'boom', '{}', {}));
      this.created.push(param);
      return Promise.resolve(param.body);
    },
    patchNamespacedEvent: (param: { namespace: string; name: string; body: unknown }) => {
      if (this.failPatchWith !== undefined) return Promise.reject(new ApiException(this.failPatchWith, 'x', '{}', {}));
      this.patched.push(param);
      return Promise.resolve({});
    },
  } as unknown as EventApi;
}

const pod = { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'u1' };
const policy = { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', name: 'balance', uid: 'p1' };

function recorder(fake: FakeEventApi, clock: ManualClock) {
  const { logger, lines } = captureLogger();
  const events = createEventRecorder({
    api: fake.api,
    clock,
    logger,
    component: 'kube-rebalancer',
    instance: 'replica-0',
  });
  return { events, lines };
}

describe('event recorder', () => {
  it('creates an Event on the object, in its namespace (default for cluster-scoped objects)', async () => {
    const fake = new FakeEventApi();
    const { events } = recorder(fake, new ManualClock());
    events.record(pod, 'Normal', 'RebalanceEviction', 'Evicted by RebalancePolicy balance');
    events.record(policy, 'Warning', 'ReplacementPending', 'paused');
    await events.flush(1000);
    expect(fake.created.map((c) => c.namespace)).toEqual(['shop', 'default']);
    expect(fake.created[0]!.body).toMatchObject({
      involvedObject: { kind: 'Pod', namespace: 'shop', name: 'web-1', uid: 'u1', apiVersion: 'v1' },
      reason: 'RebalanceEviction',
      type: 'Normal',
      count: 1,
      source: { component: 'kube-rebalancer' },
      reportingComponent: 'kube-rebalancer',
      reportingInstance: 'replica-0',
    });
    expect(fake.created[1]!.body['involvedObject']).not.toHaveProperty('namespace');
  });

  it('aggregates a repeat within the window into a patch of count and lastTimestamp', async () => {
    const fake = new FakeEventApi();
    const clock = new ManualClock();
    const { events } = recorder(fake, clock);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    await clock.advance(60_000);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    expect(fake.created).toHaveLength(1);
    expect(fake.patched).toEqual([
      {
        namespace: 'shop',
        name: fake.created[0]!.body['metadata'] && (fake.created[0]!.body['metadata'] as { name: string }).name,
        body: [
          { op: 'replace', path: '/count', value: 2 },
          { op: 'replace', path: '/lastTimestamp', value: new Date(clock.now()).toISOString() },
        ],
      },
    ]);
    // A different message is a different Event; after the window, a repeat starts a new one.
    events.record(pod, 'Warning', 'RebalanceBlocked', 'something else');
    await clock.advance(11 * 60_000);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    expect(fake.created).toHaveLength(3);
  });

  it('aggregates two identical Events recorded back to back, while the first is still being created', async () => {
    const fake = new FakeEventApi();
    const clock = new ManualClock();
    const { events } = recorder(fake, clock);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    expect(fake.created).toHaveLength(1);
    expect(fake.patched.map((p) => (p.body as Array<{ value: unknown }>)[0]!.value)).toEqual([2, 3]);
  });

  it.each([
    ['forward', 3_600_000],
    ['backward', -3_600_000],
  ])('a wall-clock step of 1 h %s neither ends nor stretches the aggregation window', async (_, step) => {
    const fake = new FakeEventApi();
    const clock = new ManualClock();
    const { events } = recorder(fake, clock);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    clock.jumpWall(step);
    await clock.advance(60_000);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    expect(fake.created).toHaveLength(1);
    // The timestamp people read is wall time, step included.
    expect((fake.patched[0]!.body as Array<{ value: unknown }>)[1]!.value).toBe(new Date(clock.wall()).toISOString());
    await clock.advance(10 * 60_000);
    events.record(pod, 'Warning', 'RebalanceBlocked', 'budget spent');
    await events.flush(1000);
    expect(fake.created).toHaveLength(2);
  });

  it('creates the Event afresh when the one it would patch is gone (404), and only logs other failures', async () => {
    const fake = new FakeEventApi();
    const clock = new ManualClock();
    const { events, lines } = recorder(fake, clock);
    events.record(pod, 'Normal', 'RebalanceDryRun', 'would evict');
    await events.flush(1000);
    fake.failPatchWith = 404;
    events.record(pod, 'Normal', 'RebalanceDryRun', 'would evict');
    await events.flush(1000);
    expect(fake.created).toHaveLength(2);
    fake.failCreate = true;
    events.record(policy, 'Normal', 'RebalanceCompleted', 'done');
    await events.flush(1000);
    expect(lines.some((l) => l.msg === 'could not record an Event' && l['reason'] === 'RebalanceCompleted')).toBe(true);
  });

  describe('while the API budget is spent on evictions', () => {
    /** An Event API whose creations wait until released, as low-priority requests wait behind evictions. */
    function gatedApi() {
      const created: Array<{ namespace: string; body: Record<string, unknown> }> = [];
      const gates: Array<() => void> = [];
      const api = {
        createNamespacedEvent: (param: { namespace: string; body: Record<string, unknown> }) =>
          new Promise((resolve) =>
            gates.push(() => {
              created.push(param);
              resolve(param.body);
            }),
          ),
        patchNamespacedEvent: () => Promise.resolve({}),
      } as unknown as EventApi;
      return { api, created, gates, release: () => gates.splice(0).forEach((open) => open()) };
    }
    const podOf = (name: string) => ({ ...pod, name, uid: name });
    /** A recorder on a gated API, with the queue options under test. */
    function gatedRecorder(options: { concurrency: number; maxQueued?: number; onDropped?: () => void }) {
      const gated = gatedApi();
      const { logger, lines } = captureLogger();
      const events = createEventRecorder({
        api: gated.api,
        clock: new ManualClock(),
        logger,
        component: 'c',
        instance: 'i',
        ...options,
      });
      return { gated, events, lines };
    }
    const web = { key: 'balance/RebalanceEviction/shop/Deployment/web', label: 'Deployment shop/web' };
    const api2 = { key: 'balance/RebalanceEviction/shop/Deployment/api', label: 'Deployment shop/api' };

    it('hands the client a few at a time, and a queued Event absorbs the rest of its group', async () => {
      const { gated, events } = gatedRecorder({ concurrency: 1 });
      for (const name of ['web-1', 'web-2', 'web-3', 'web-4'])
        events.record(podOf(name), 'Normal', 'RebalanceEviction', `Evicted ${name}`, web);
      events.record(podOf('api-1'), 'Normal', 'RebalanceEviction', 'Evicted api-1', api2);
      events.record(podOf('api-2'), 'Normal', 'RebalanceEviction', 'Evicted api-2', api2);
      // web-1 is with the client; web-2 waits in the queue and took web-3 and web-4 in; api-1 took api-2.
      expect(gated.gates).toHaveLength(1);
      for (let i = 0; i < 5 && gated.created.length < 3; i++) {
        gated.release();
        await flush();
      }
      await events.flush(1000);
      expect(gated.created.map((c) => c.body['message'])).toEqual([
        'Evicted web-1',
        'Evicted web-2 (also 2 more pods of Deployment shop/web in this run: web-3, web-4)',
        'Evicted api-1 (also 1 more pod of Deployment shop/api in this run: api-2)',
      ]);
      expect(gated.created.map((c) => (c.body['involvedObject'] as { name: string }).name)).toEqual([
        'web-1',
        'web-2',
        'api-1',
      ]);
    });

    it('keeps at most maxQueued waiting and counts what it drops', async () => {
      let dropped = 0;
      const { gated, events, lines } = gatedRecorder({ concurrency: 2, maxQueued: 3, onDropped: () => dropped++ });
      for (let i = 1; i <= 10; i++) events.record(policy, 'Normal', 'RebalanceCompleted', `run ${i}`);
      expect(gated.gates).toHaveLength(2);
      expect(dropped).toBe(5);
      expect(lines.filter((l) => l.msg === 'Event queue full; Event dropped')).toHaveLength(1);
      for (let i = 0; i < 5 && gated.created.length < 5; i++) {
        gated.release();
        await flush();
      }
      await events.flush(1000);
      expect(gated.created.map((c) => c.body['message'])).toEqual(['run 1', 'run 2', 'run 3', 'run 4', 'run 5']);
    });
  });
});
