// The client-side rate limiters, measured on the server: the operator's requests share one token bucket and its
// Events have one of their own (ADR 0019), so over a burst of 500 evictions (with their Events) neither stream
// arrives faster than the configured QPS; a 429 carrying Retry-After delays the throttled request for that long
// (capped) and sends it again, while other requests go on (for an eviction the executor does, the only retry layer
// evictions have). Only upper bounds are asserted: a loaded machine makes the operator slower, never faster, and the
// exact rate on a manual clock is test/kube/rateLimiter.test.ts's.
import { afterEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import {
  createDeployment,
  createPolicy,
  evictionRequests,
  skewOf,
  startCluster,
  startOperator,
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

/** `count` Deployments of 3 replicas, 2 in zone-a and 1 in zone-b: one move each. */
async function cluster(count: number): Promise<TestApiServer> {
  const s = (server = await startCluster({ nodesPerZone: 6, readyDelayMs: 10, scheduler: { scope: 'workload' } }));
  for (let w = 0; w < count; w++) {
    createDeployment(s, {
      namespace: `team-${w % 5}`,
      name: `app-${w}`,
      placement: [`zone-a-node-${(w % 6) + 1}`, `zone-a-node-${((w + 1) % 6) + 1}`, `zone-b-node-${(w % 6) + 1}`],
    });
  }
  await s.settle();
  createPolicy(s, 'paced', {
    mode: 'Evict',
    eviction: { maxPerCycle: 1000, maxPerNode: 1000, maxPerNamespace: 1000, maxPerWorkload: 1 },
  });
  return s;
}

describe('client-side rate limiting', () => {
  it('never sends faster than the configured QPS over a burst of 500 evictions', { timeout: 60_000 }, async () => {
    const qps = 100;
    const burst = 40;
    const s = await cluster(500);
    // All 500 evictions come from the first plan; no re-plan (a synchronous CPU burst that would share this
    // process with the test API server) happens while they are sent.
    const op = startOperator(s, {
      kubeApiQps: qps,
      kubeApiBurst: burst,
      logLevel: 'info',
      minReplanIntervalMs: 30_000,
      // This measures the client's pacing of a burst; the closed loop would send one eviction per landing instead.
      landingChecks: false,
    });
    operators.push(op);
    await op.operator.waitForSync();
    // Let the bucket refill after the initial lists and watches.
    await new Promise((resolve) => setTimeout(resolve, (burst / qps) * 1000 + 50));
    const mark = s.stats.mark();
    // The bucket holds at most `burst` tokens now: the k-th request from here cannot be sent, nor arrive, sooner than
    // (k − burst) / qps seconds after this instant, however loaded the machine (load only delays requests).
    const start = Date.now();
    await op.operator.tick('paced');
    const evictions = evictionRequests(s, mark);
    expect(evictions).toHaveLength(500);
    expect(evictions.every((r) => r.code === 201)).toBe(true);
    // Every request in the window of the evictions, after the initial burst: the Events through their own client and
    // bucket, the rest (evictions, status, lists) through the operator's.
    const all = s.stats.requests({}, mark).sort((a, b) => a.time - b.time || a.seq - b.seq);
    const events = all.filter((r) => r.resource === 'events');
    const main = all.filter((r) => r.resource !== 'events');
    expect(events.length).toBeGreaterThan(0);
    expect(events.every((r) => r.userAgent?.endsWith(' events'))).toBe(true);
    expect(main.some((r) => r.userAgent?.endsWith(' events'))).toBe(false);
    // Each request's arrival against the earliest its bucket lets it go out. The server stamps whole milliseconds,
    // so 2 ms of slack; one request more for one that was already on its way at `start`.
    const ahead = (stream: typeof all): number =>
      stream.filter((r, k) => r.time - start < ((k - burst) / qps) * 1000 - 2).length;
    const first = evictions[0]!.time;
    const last = evictions[evictions.length - 1]!.time;
    const seconds = (last - first) / 1000;
    console.log(
      `rate limiter: configured ${qps} QPS (burst ${burst}); ${main.length} requests and ${events.length} Events, the evictions' in ${seconds.toFixed(2)} s, ${ahead(main)} and ${ahead(events)} ahead of their budgets`,
    );
    expect(ahead(main)).toBe(0);
    expect(ahead(events)).toBe(0);
    // No one-second window holds more than qps + burst requests of one bucket (10% slack: requests granted just
    // before a pause of this shared event loop reach the server together with those granted after it).
    const busiest = (stream: typeof all): number => {
      let most = 0;
      for (const r of stream)
        most = Math.max(most, stream.filter((o) => o.time >= r.time && o.time < r.time + 1000).length);
      return most;
    };
    console.log(
      `rate limiter: busiest one-second windows ${busiest(main)} and ${busiest(events)} (qps + burst = ${qps + burst})`,
    );
    expect(busiest(main)).toBeLessThanOrEqual((qps + burst) * 1.1);
    expect(busiest(events)).toBeLessThanOrEqual((qps + burst) * 1.1);
    for (let w = 0; w < 500; w += 50) expect(skewOf(zoneCounts(s, `team-${w % 5}`, `app-${w}`))).toBeLessThanOrEqual(1);
  });

  it('honours Retry-After on a throttling 429: the request waits, then it is sent again', async () => {
    const s = await cluster(3);
    // The executor caps a Retry-After at its backoff ceiling: 2 s here, so the server's 1 s is honoured whole.
    const op = startOperator(s, {
      evictionRetry: { initialMs: 20, maxMs: 2000, maxAttempts: 4, maxRetriesPerRun: 20 },
    });
    operators.push(op);
    await op.operator.waitForSync();
    const mark = s.stats.mark();
    s.faults.failNext({ verb: 'create', resource: 'pods/eviction', status: 429, retryAfterSeconds: 1, count: 1 });
    await op.operator.tick('paced');
    const requests = s.stats.requests({}, mark);
    const throttled = requests.find((r) => r.code === 429)!;
    expect(throttled).toBeDefined();
    // The executor, the evictions' one retry layer, holds the throttled pod's eviction for the server's Retry-After
    // (other evictions of the run may go on meanwhile); the same pod's eviction comes back after the pause and succeeds.
    const during = requests.filter(
      (r) => r.name === throttled.name && r.time > throttled.time && r.time < throttled.time + 1000,
    );
    expect(during).toEqual([]);
    const retried = requests.find(
      (r) => r.seq > throttled.seq && r.resource === 'pods/eviction' && r.name === throttled.name,
    );
    expect(retried?.code).toBe(201);
    expect(retried!.time - throttled.time).toBeGreaterThanOrEqual(1000);
    expect(evictionRequests(s, mark).filter((r) => r.code === 201)).toHaveLength(3);
    const metrics = await op.scrape();
    expect(metrics).toMatch(/rebalancer_evictions_total\{[^}]*result="evicted"[^}]*\} 3/);
    // One retry layer for evictions: the executor's, not the transport's as well.
    expect(op.logs.some((l) => l.msg === 'eviction failed, retrying')).toBe(true);
    expect(op.logs.some((l) => l.msg === 'API server throttled a request')).toBe(false);
  });

  it('a Retry-After 429 on another request (an Event) delays and resends that request', async () => {
    const s = await cluster(1);
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    const mark = s.stats.mark();
    s.faults.failNext({ verb: 'create', resource: 'events', status: 429, retryAfterSeconds: 1, count: 1 });
    await op.operator.tick('paced');
    await op.stop();
    operators.splice(0);
    const events = s.stats.requests({ verb: 'create', resource: 'events' }, mark);
    expect(events[0]!.code).toBe(429);
    expect(events.slice(1).map((r) => r.code)).toEqual(events.slice(1).map(() => 201));
    // The throttled Event alone waits (other Events may go out meanwhile): the next create after the pause.
    expect(events.some((r) => r.time - events[0]!.time >= 1000)).toBe(true);
    expect(events.length).toBeGreaterThanOrEqual(2);
  });
});
