// Events: created with the object reference and the reporting component; a repeat within the window patches the
// existing Event (count, lastTimestamp) instead of creating another; an Event that expired is created afresh;
// failures are logged, never thrown.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createEventRecorder, type EventApi } from '../../src/operator/events.js';
import { captureLogger, ManualClock } from './fakes.js';

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
});
