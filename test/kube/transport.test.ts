// The client's transport (src/kube/kubeClient.ts, httpRequest.ts) against small fake servers (node:http on a
// loopback port): faults a real API server cannot make on demand — answers held for as long as the test wants, a
// server that never answers, a body without end.
//
//   defect 1  an eviction queued behind 32 slow GETs is checked against the fence when it would be written, and is
//             withdrawn at once when leadership is lost; zero eviction requests reach the server afterwards
//   defect 4  a Lease request that outlives its timeout is aborted and frees its socket: with both Lease sockets
//             hung, the replica leads within leaseDuration + retryPeriod once the server answers again
//   smaller   every request has a deadline from the call (queueing included); answers are size-limited; a 429's
//             Retry-After delays that request only, capped
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadKubeconfig } from '../../src/kube/credentials.js';
import { createKubeClients, FencedError, type KubeClientOptions } from '../../src/kube/kubeClient.js';
import { createLeaderElector } from '../../src/kube/leaderElection.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import {
  closeFakeServers,
  connectProxy,
  credentialsFor,
  fakeServer,
  json,
  PROXIED_HOST,
  type FakeServer,
} from './fakeServer.js';

const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await closeFakeServers();
});

function clients(server: FakeServer, opts: Partial<KubeClientOptions> = {}) {
  const c = createKubeClients(credentialsFor(server.url), {
    limiter: createRateLimiter({ qps: 1000, burst: 1000, clock: systemClock }),
    clock: systemClock,
    ...opts,
  });
  cleanups.push(() => c.close());
  return c;
}

async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A fencing controller as the operator makes one (operator.ts): every queued request listens on its signal. */
function fence(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const evictions = (s: FakeServer): number => s.seen.filter((r) => r.path.endsWith('/eviction')).length;
const evict = (c: ReturnType<typeof clients>, name: string) =>
  c.core.createNamespacedPodEviction({ namespace: 'default', name, body: { metadata: { name } } });

describe('fencing at write time (defect 1)', () => {
  /** 32 GETs held by the server until release() — every socket of the pool. */
  async function heldPool() {
    const held: ServerResponse[] = [];
    const server = await fakeServer((req, res) => {
      if (req.url?.startsWith('/api/v1/pods')) held.push(res);
      else json(res, 201, { kind: 'Status', status: 'Success' });
    });
    return {
      server,
      held,
      release: () => {
        for (const res of held.splice(0)) json(res, 200, { items: [] });
      },
    };
  }

  it('does not write an eviction that was queued behind 32 slow GETs once leadership is lost', async () => {
    const { server, held, release } = await heldPool();
    let leading = true;
    const c = clients(server, { fence: () => leading });
    const lists = Array.from({ length: 32 }, () => c.core.listPodForAllNamespaces({ limit: 500 }));
    await until('32 held GETs', () => held.length === 32);
    const eviction = evict(c, 'p1');
    const outcome = eviction.then(
      () => 'sent',
      (err: unknown) => err,
    );
    await sleep(50); // past the limiter and the first fence check: queued in the agent for a socket
    leading = false; // the renew deadline passes while it waits
    release();
    await Promise.all(lists);
    expect(await outcome).toBeInstanceOf(FencedError);
    await sleep(50);
    expect(evictions(server)).toBe(0);
  });

  it('withdraws a queued eviction as soon as leadership is lost, without waiting for a socket', async () => {
    const { server, held, release } = await heldPool();
    let leading = true;
    const fencing = fence();
    const c = clients(server, { fence: () => leading, fenceSignal: () => fencing.signal });
    const lists = Array.from({ length: 32 }, () => c.core.listPodForAllNamespaces({ limit: 500 }));
    await until('32 held GETs', () => held.length === 32);
    const outcome = evict(c, 'p1').then(
      () => 'sent',
      (err: unknown) => err,
    );
    await sleep(50);
    leading = false;
    fencing.abort();
    // The sockets are still held: the eviction fails now, not when one frees.
    expect(await outcome).toBeInstanceOf(FencedError);
    release();
    await Promise.all(lists);
    await sleep(50);
    expect(evictions(server)).toBe(0);
  });

  it('sends an eviction queued behind slow GETs while this replica still leads', async () => {
    const { server, held, release } = await heldPool();
    const c = clients(server, { fence: () => true });
    const lists = Array.from({ length: 32 }, () => c.core.listPodForAllNamespaces({ limit: 500 }));
    await until('32 held GETs', () => held.length === 32);
    const eviction = evict(c, 'p1');
    await sleep(50);
    expect(evictions(server)).toBe(0);
    release();
    await Promise.all([...lists, eviction]);
    expect(evictions(server)).toBe(1);
  });
});

describe('Lease lost while 32 slow GETs hold the sockets (defect 1, with the elector)', () => {
  it('sends zero evictions after the renew deadline', async () => {
    const held: ServerResponse[] = [];
    const server = await fakeServer((req, res) => {
      if (req.url?.startsWith('/api/v1/pods')) held.push(res);
      else json(res, 201, { kind: 'Status', status: 'Success' });
    });
    // The Lease lives in memory; `partitioned` makes every Lease call fail, as a replica cut off from the server.
    let lease: Record<string, unknown> | undefined;
    let partitioned = false;
    const call = <T>(fn: () => T): Promise<T> =>
      partitioned ? Promise.reject(new Error('connect ETIMEDOUT')) : Promise.resolve(fn());
    const leases = {
      readNamespacedLease: () =>
        call(() => {
          if (lease === undefined) throw Object.assign(new Error('not found'), { code: 404 });
          return lease;
        }),
      createNamespacedLease: (p: { body: unknown }) => call(() => (lease = { ...(p.body as object) })),
      replaceNamespacedLease: (p: { body: unknown }) => call(() => (lease = { ...(p.body as object) })),
    };
    let fencing = fence();
    let lostAt: number | undefined;
    const elector = createLeaderElector({
      api: leases,
      namespace: 'default',
      name: 'kube-rebalancer',
      identity: 'a',
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      leaseDurationMs: 1_500,
      renewDeadlineMs: 1_000,
      retryPeriodMs: 100,
      onStartedLeading: () => (fencing = fence()),
      onStoppedLeading: () => {
        lostAt = performance.now();
        fencing.abort();
      },
    });
    elector.start();
    cleanups.push(() => void elector.stop(false));
    await until('leading', () => elector.isLeader());
    const c = clients(server, { fence: () => elector.isLeader(), fenceSignal: () => fencing.signal });
    const lists = Array.from({ length: 32 }, () => c.core.listPodForAllNamespaces({ limit: 500 }));
    await until('32 held GETs', () => held.length === 32);
    // Evictions keep coming while the sockets are held; then the Lease can no longer be renewed.
    const outcomes: Array<Promise<unknown>> = [];
    const sending = setInterval(() => {
      outcomes.push(
        evict(c, `p${outcomes.length}`).then(
          () => 'sent',
          (err: unknown) => err,
        ),
      );
    }, 20);
    cleanups.push(() => clearInterval(sending));
    await sleep(100);
    partitioned = true;
    await until('the renew deadline', () => lostAt !== undefined, 5_000);
    clearInterval(sending);
    await sleep(100);
    for (const res of held.splice(0)) json(res, 200, { items: [] });
    await Promise.all(lists);
    const results = await Promise.all(outcomes);
    expect(results.length).toBeGreaterThan(10);
    expect(results.every((r) => r instanceof FencedError)).toBe(true);
    expect(server.seen.filter((r) => r.path.endsWith('/eviction') && r.at >= lostAt!)).toEqual([]);
    expect(evictions(server)).toBe(0);
  });
});

describe('deadlines abort their request and free its socket (defect 4)', () => {
  it('counts the deadline from the call, queueing for a socket included', async () => {
    const server = await fakeServer(() => undefined); // never answers
    const c = clients(server, { maxSockets: 1, requestTimeoutMs: 300 });
    const started = performance.now();
    const results = await Promise.allSettled([
      c.core.listNode({ limit: 1 }),
      c.core.listNode({ limit: 1 }),
      c.core.listNode({ limit: 1 }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    // Each was bounded by its own deadline from the call: not one deadline after another (3 × 300 ms).
    expect(performance.now() - started).toBeLessThan(850);
  });

  it('leads within leaseDuration + retryPeriod once the server answers again after two hung Lease requests', async () => {
    let hang = true;
    let lease: Record<string, unknown> | undefined;
    let version = 0;
    const server = await fakeServer((req, res, body) => {
      if (hang) return; // held, never answered: the connection stays open until the client closes it
      if (req.method === 'GET') {
        if (lease === undefined) json(res, 404, { kind: 'Status', code: 404 });
        else json(res, 200, lease);
        return;
      }
      const sent = JSON.parse(body) as { metadata?: Record<string, unknown> };
      lease = { ...sent, metadata: { ...sent.metadata, resourceVersion: String(++version) } };
      json(res, req.method === 'POST' ? 201 : 200, lease);
    });
    // The elector's own client, as operator.ts builds it: two sockets, a 60 s transport deadline.
    const c = clients(server, { maxSockets: 2 });
    const timings = { leaseDurationMs: 1_500, renewDeadlineMs: 1_000, retryPeriodMs: 200, requestTimeoutMs: 300 };
    let ledAt: number | undefined;
    const elector = createLeaderElector({
      api: c.coordination,
      namespace: 'default',
      name: 'kube-rebalancer',
      identity: 'replica-a',
      clock: systemClock,
      logger: pino({ level: 'silent' }),
      ...timings,
      onStartedLeading: () => (ledAt = performance.now()),
    });
    elector.start();
    cleanups.push(() => void elector.stop(false));
    // Two Lease GETs hang (one per socket), and time out at the elector.
    await until('two hung Lease requests', () => server.seen.length >= 2);
    await sleep(timings.requestTimeoutMs * 2 + timings.retryPeriodMs);
    hang = false;
    const answering = performance.now();
    await until('leading', () => ledAt !== undefined, 10_000);
    expect(ledAt! - answering).toBeLessThan(timings.leaseDurationMs + timings.retryPeriodMs);
    expect(elector.isLeader()).toBe(true);
  });
});

describe('answers', () => {
  it('fails an answer larger than the limit instead of reading it whole', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"items":[');
      const chunk = `${'"x",'.repeat(1024)}`;
      const pump = (): void => {
        if (res.destroyed) return;
        if (res.write(chunk)) setImmediate(pump);
        else res.once('drain', pump);
      };
      pump(); // never ends
    });
    const c = clients(server, { maxResponseBytes: 64 * 1024 });
    await expect(c.core.listNode({ limit: 1 })).rejects.toThrow(/larger than 65536 bytes/);
  });

  it('delays only the throttled request, for its capped Retry-After, and sends it again', async () => {
    let throttled = 0;
    const server = await fakeServer((req, res) => {
      if (req.url?.startsWith('/api/v1/nodes') && throttled++ === 0) {
        res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '3600' });
        res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests' }));
        return;
      }
      json(res, 200, { items: [] });
    });
    const waits: number[] = [];
    const c = clients(server, {
      maxRetryAfterMs: 200,
      random: () => 0.5,
      onThrottle: (info) => waits.push(info.retryAfterMs),
    });
    const nodes = c.core.listNode({ limit: 1 });
    await until('the 429', () => throttled === 1);
    // Another request is not held by the throttled one's pause.
    await c.core.listNamespace({ limit: 1 });
    await nodes;
    expect(waits).toEqual([220]); // capped at 200 ms, plus 10% jitter (0.2 × 0.5)
    expect(server.seen.filter((r) => r.path.startsWith('/api/v1/nodes')).length).toBe(2);
  });
});

describe('proxies (defect 6)', () => {
  it('sends requests through HTTP_PROXY: the kubeconfig is delegated with the proxy and the agent kept', async () => {
    const api = await fakeServer((_req, res) => json(res, 200, { items: [], metadata: { resourceVersion: '1' } }));
    const proxy = await connectProxy();
    // Named, not 127.0.0.1: loopback is never proxied from the environment.
    const server = api.url.replace('127.0.0.1', PROXIED_HOST);
    const dir = mkdtempSync(join(tmpdir(), 'kr-proxy-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'config');
    writeFileSync(
      path,
      [
        `clusters: [{name: c, cluster: {server: "${server}"}}]`,
        // No token: a plain-http server that is not loopback is refused one (it would travel in clear text).
        'users: [{name: u, user: {}}]',
        'contexts: [{name: ctx, context: {cluster: c, user: u}}]',
        'current-context: ctx',
      ].join('\n'),
    );
    const loaded = await loadKubeconfig([path], undefined, 'test', { HTTP_PROXY: proxy.url });
    expect(loaded.delegatedFor).toBe('proxy (from the environment)');
    const c = createKubeClients(loaded.credentials, {
      limiter: createRateLimiter({ qps: 1000, burst: 1000, clock: systemClock }),
      clock: systemClock,
    });
    cleanups.push(() => c.close());
    await c.core.listNode({ limit: 1 });
    expect(proxy.tunnels).toEqual([server.replace('http://', '')]);
    expect(api.seen.map((r) => r.path)).toEqual(['/api/v1/nodes?limit=1']);
    // client-node builds a new proxy agent per call; the transport keeps one pooled agent per proxy, so the next
    // requests reuse the tunnel instead of a CONNECT each.
    await c.core.listNode({ limit: 1 });
    await c.core.listNamespace({ limit: 1 });
    expect(proxy.tunnels).toHaveLength(1);
    expect(api.seen).toHaveLength(3);
  });
});
