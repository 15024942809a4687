// Leader election against an in-memory Lease API with optimistic concurrency (a fake of coordination.k8s.io/v1),
// on a manual clock: acquisition, renewal, expiry judged by local observation, the renew deadline applied at the
// instant of the check, conflicts between candidates, and release on shutdown.
import { ApiException } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  createLeaderElector,
  type LeaderElectionOptions,
  type Lease as V1Lease,
} from '../../src/kube/leaderElection.js';
import { captureLogger, flush, ManualClock } from '../operator/fakes.js';

class FakeLeases {
  lease: V1Lease | undefined;
  private rv = 1;
  /** Identities whose calls fail (a partitioned replica). */
  readonly partitioned = new Set<string>();
  /** Identities whose calls never answer (until their signal aborts them). */
  readonly hung = new Set<string>();
  writes = 0;

  api(identity: string): LeaderElectionOptions['api'] {
    const check = (): void => {
      if (this.partitioned.has(identity)) throw new Error('connect ETIMEDOUT');
    };
    const hang = (signal: AbortSignal | undefined): Promise<never> | undefined =>
      this.hung.has(identity)
        ? new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted'))))
        : undefined;
    const copy = (l: V1Lease): V1Lease => JSON.parse(JSON.stringify(l)) as V1Lease;
    const store = (l: V1Lease): V1Lease => {
      this.writes++;
      this.lease = { ...copy(l), metadata: { ...l.metadata, resourceVersion: String(++this.rv) } };
      return copy(this.lease);
    };
    return {
      readNamespacedLease: async ({ signal }) => {
        await hang(signal);
        check();
        if (this.lease === undefined) throw new ApiException(404, 'not found', '', {});
        return copy(this.lease);
      },
      createNamespacedLease: async ({ body }) => {
        check();
        if (this.lease !== undefined) throw new ApiException(409, 'exists', '', {});
        return store(body);
      },
      replaceNamespacedLease: async ({ body }) => {
        check();
        if (body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) {
          throw new ApiException(409, 'conflict', '', {});
        }
        return store(body);
      },
    };
  }

  get holder(): string | undefined {
    return this.lease?.spec?.holderIdentity;
  }
}

function elector(leases: FakeLeases, clock: ManualClock, identity: string) {
  return createLeaderElector({
    api: leases.api(identity),
    namespace: 'kube-rebalancer',
    name: 'kube-rebalancer',
    identity,
    clock,
    logger: captureLogger().logger,
    leaseDurationMs: 3000,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
  });
}

/** Replica a with client-go's default timings (15 s Lease, 10 s renew deadline, 2 s retry; 5 s per request). */
function withDefaultTimings(api: LeaderElectionOptions['api'], clock: ManualClock, logger: Logger) {
  return createLeaderElector({
    api,
    namespace: 'kube-rebalancer',
    name: 'kube-rebalancer',
    identity: 'a',
    clock,
    logger,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
}

/** Replicas a and b on one Lease, a started first (so it creates the Lease and leads), b started after. */
async function twoReplicas() {
  const clock = new ManualClock();
  const leases = new FakeLeases();
  const a = elector(leases, clock, 'a');
  const b = elector(leases, clock, 'b');
  a.start();
  await flush();
  b.start();
  return { clock, leases, a, b };
}

describe('leader election', () => {
  it('the first candidate creates the Lease and leads; the other follows while it is renewed', async () => {
    const { clock, leases, a, b } = await twoReplicas();
    await clock.advance(10_000);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    expect(leases.holder).toBe('a');
    expect(leases.lease?.spec?.leaseDurationSeconds).toBe(3);
    await a.stop(false);
    await b.stop(false);
  });

  it('a leader that cannot renew stops leading at its renew deadline, before anyone may take over', async () => {
    const { clock, leases, a, b } = await twoReplicas();
    await clock.advance(1000);
    expect(a.isLeader()).toBe(true);
    leases.partitioned.add('a');
    const partitionedAt = clock.now();
    // The deadline is applied when asked, even between two renew attempts.
    await clock.advance(1900);
    expect(a.isLeader()).toBe(true);
    await clock.advance(200);
    expect(a.isLeader()).toBe(false);
    expect(b.isLeader()).toBe(false);
    // b takes over only once the Lease has not changed for its whole duration, as b observed it.
    await clock.advance(2000);
    expect(b.isLeader()).toBe(true);
    expect(clock.now() - partitionedAt).toBeGreaterThanOrEqual(3000);
    expect(leases.holder).toBe('b');
    expect(leases.lease?.spec?.leaseTransitions).toBe(1);
    await a.stop(false);
    await b.stop(false);
  });

  it('stops leading at the renew deadline itself while the renew loop waits on a hung request', async () => {
    const clock = new ManualClock();
    const leases = new FakeLeases();
    const stoppedAt: number[] = [];
    const renewStarts: number[] = [];
    const api = leases.api('a');
    const a = createLeaderElector({
      api: {
        ...api,
        readNamespacedLease: (p) => {
          renewStarts.push(clock.now());
          return api.readNamespacedLease(p);
        },
      },
      namespace: 'kube-rebalancer',
      name: 'kube-rebalancer',
      identity: 'a',
      clock,
      logger: captureLogger().logger,
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
      onStoppedLeading: () => stoppedAt.push(clock.now()),
    });
    a.start();
    await clock.advance(1000);
    expect(a.isLeader()).toBe(true);
    const lastRenew = renewStarts[renewStarts.length - 1]!;
    // Every Lease call hangs from now on, each until its 1 s timeout aborts it.
    leases.hung.add('a');
    for (let t = 0; t < 4000; t += 50) await clock.advance(50);
    expect(stoppedAt).toEqual([lastRenew + 2000]);
    await a.stop(false);
  });

  it('counts a takeover of a released Lease as a transition, as client-go does', async () => {
    const clock = new ManualClock();
    const leases = new FakeLeases();
    leases.lease = {
      metadata: { name: 'kube-rebalancer', namespace: 'kube-rebalancer', resourceVersion: '1' },
      spec: { holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 3 },
    };
    const a = elector(leases, clock, 'a');
    a.start();
    await clock.advance(100);
    expect(a.isLeader()).toBe(true);
    expect(leases.lease?.spec?.leaseTransitions).toBe(4);
    // Renewals by the same holder are not transitions.
    await clock.advance(2000);
    expect(leases.lease?.spec?.leaseTransitions).toBe(4);
    await a.stop(false);
  });

  it('two candidates racing for an expired Lease: one wins, the other gets a conflict', async () => {
    const clock = new ManualClock();
    const leases = new FakeLeases();
    leases.lease = {
      metadata: { name: 'kube-rebalancer', namespace: 'kube-rebalancer', resourceVersion: '1' },
      spec: { holderIdentity: 'gone', leaseDurationSeconds: 1, renewTime: new Date(0) },
    };
    const b = elector(leases, clock, 'b');
    const c = elector(leases, clock, 'c');
    b.start();
    c.start();
    await clock.advance(5000);
    expect([b.isLeader(), c.isLeader()].filter(Boolean)).toHaveLength(1);
    await b.stop(false);
    await c.stop(false);
  });

  it('release on shutdown empties the holder so the follower takes over at its next retry', async () => {
    const { clock, leases, a, b } = await twoReplicas();
    await clock.advance(1000);
    await a.stop(true);
    expect(a.isLeader()).toBe(false);
    expect(leases.holder).toBe('');
    await clock.advance(600);
    expect(b.isLeader()).toBe(true);
    await b.stop(false);
  });

  it.each([
    ['forward', 3_600_000],
    ['backward', -3_600_000],
  ])('a wall-clock step of 1 h %s changes neither who leads nor when a follower may take over', async (_, step) => {
    const { clock, leases, a, b } = await twoReplicas();
    await clock.advance(1000);
    clock.jumpWall(step);
    await clock.advance(10_000);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    // Partitioned, a stops at exactly its renew deadline and b takes over no earlier than the Lease duration.
    leases.partitioned.add('a');
    const partitionedAt = clock.now();
    clock.jumpWall(-step);
    await clock.advance(1400);
    expect(a.isLeader()).toBe(true);
    expect(b.isLeader()).toBe(false);
    await clock.advance(2600);
    expect(a.isLeader()).toBe(false);
    expect(b.isLeader()).toBe(true);
    expect(clock.now() - partitionedAt).toBeGreaterThanOrEqual(3000);
    // The times written to the Lease are wall time.
    const renew = leases.lease?.spec?.renewTime;
    expect(new Date(String(renew instanceof Date ? renew.toISOString() : renew)).getTime()).toBeCloseTo(
      clock.wall(),
      -4,
    );
    await a.stop(false);
    await b.stop(false);
  });

  it('a Lease GET that never answers times out, and the leader steps down at its renew deadline', async () => {
    const clock = new ManualClock();
    const leases = new FakeLeases();
    let hang = false;
    const api = leases.api('a');
    const hanging: LeaderElectionOptions['api'] = {
      ...api,
      readNamespacedLease: (p) => (hang ? new Promise<V1Lease>(() => undefined) : api.readNamespacedLease(p)),
    };
    const a = createLeaderElector({
      api: hanging,
      namespace: 'kube-rebalancer',
      name: 'kube-rebalancer',
      identity: 'a',
      clock,
      logger: captureLogger().logger,
      leaseDurationMs: 3000,
      renewDeadlineMs: 2000,
      retryPeriodMs: 500,
    });
    a.start();
    await clock.advance(1000);
    expect(a.isLeader()).toBe(true);
    hang = true;
    const before = a.lastActivity()!;
    await clock.advance(2500);
    expect(a.isLeader()).toBe(false);
    // The loop is not wedged by the hung request: it keeps attempting (each attempt ends at the 1 s timeout).
    expect(a.lastActivity()!).toBeGreaterThan(before + 1000);
    await a.stop(false);
  });

  it('a renewal answered while the thread was busy counts: its timeout fired late, so it gets one more free turn', async () => {
    const clock = new ManualClock();
    const leases = new FakeLeases();
    const api = leases.api('a');
    // While `held`, a GET's answer has arrived but is read only when the test releases it (the loop is free again).
    let held: (() => void) | undefined;
    const capture = captureLogger();
    const a = withDefaultTimings(
      {
        ...api,
        readNamespacedLease: async (p) => {
          if (gate) await new Promise<void>((resolve) => (held = resolve));
          return api.readNamespacedLease(p);
        },
      },
      clock,
      capture.logger,
    );
    let gate = false;
    a.start();
    await clock.advance(1_000);
    expect(a.isLeader()).toBe(true);
    gate = true;
    // The next attempt starts at 2 s and its GET is in flight; then a 7 s plan holds the thread.
    await clock.advance(1_100);
    expect(held).toBeDefined();
    clock.stall(7_000);
    // Timers run before sockets are read: the 5 s request timeout fires first, 2 s late.
    await clock.advance(0);
    gate = false;
    held!();
    await clock.advance(0);
    expect(a.isLeader()).toBe(true);
    expect(capture.lines.filter((e) => e.msg === 'lease update failed')).toEqual([]);
    // Renewed: still leading past the first attempt's deadline.
    await clock.advance(4_000);
    expect(a.isLeader()).toBe(true);
    await a.stop(false);
  });

  it('a timeout that fires on time still fails the attempt, late or not; only the grace differs', async () => {
    const clock = new ManualClock();
    const leases = new FakeLeases();
    const api = leases.api('a');
    let hang = false;
    const capture = captureLogger();
    const a = withDefaultTimings(
      {
        ...api,
        readNamespacedLease: (p) => (hang ? new Promise<V1Lease>(() => undefined) : api.readNamespacedLease(p)),
      },
      clock,
      capture.logger,
    );
    a.start();
    await clock.advance(1_000);
    hang = true;
    await clock.advance(1_100);
    clock.stall(7_000);
    await clock.advance(0);
    // Late: one more second of free loop, and no answer in it.
    expect(capture.lines.filter((e) => e.msg === 'lease update failed')).toEqual([]);
    await clock.advance(1_000);
    expect(capture.lines.filter((e) => e.msg === 'lease update failed')).toHaveLength(1);
    await a.stop(false);
  });
});
