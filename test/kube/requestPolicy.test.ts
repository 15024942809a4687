// The request policy (src/kube/requestPolicy.ts) as the transport applies it, against fake servers that misbehave
// on purpose: a 503 with Retry-After on a list is waited out; a GET whose reused keep-alive connection the server
// had closed is resent once and succeeds, a POST never is; a 429 on an eviction is handed to the executor (its
// only retry layer); the deadline counts the wait for a token. The rules themselves are tested as pure functions.
import { createServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { ApiError, createKubeClients, WatchStatusError, type KubeClientOptions } from '../../src/kube/kubeClient.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import { isIdempotent, priorityOf, retryWaitMs } from '../../src/kube/requestPolicy.js';
import { ManualClock } from '../operator/fakes.js';
import { closeFakeServers, credentialsFor, fakeServer, json, listening } from './fakeServer.js';

const cleanups: Array<() => void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await closeFakeServers();
});

function clientsFor(url: string, opts: Partial<KubeClientOptions> = {}) {
  const c = createKubeClients(credentialsFor(url), {
    limiter: createRateLimiter({ qps: 1000, burst: 1000, clock: systemClock }),
    clock: systemClock,
    random: () => 0,
    ...opts,
  });
  cleanups.push(() => c.close());
  return c;
}

const answer = (status: number, headers: Record<string, string> = {}, text = '') => ({ status, headers, text });

describe('request policy rules', () => {
  it.each([
    ['an Event', 'POST', '/api/v1/namespaces/a/events', 'low'],
    ['an Event patch', 'PATCH', '/api/v1/namespaces/a/events/e1', 'low'],
    ['a status write', 'PATCH', '/apis/rebalancer.dev/v1alpha1/rebalancepolicies/p/status', 'low'],
    ['an eviction', 'POST', '/api/v1/namespaces/a/pods/p/eviction', 'normal'],
    ['a list', 'GET', '/api/v1/pods', 'normal'],
    ['a Lease renewal', 'PUT', '/apis/coordination.k8s.io/v1/namespaces/a/leases/l', 'normal'],
  ])('%s (%s %s) goes at %s priority', (_, method, path, priority) => {
    expect(priorityOf(method, path)).toBe(priority);
  });

  it('retries a 429 with Retry-After for any verb but an eviction, a 5xx only for idempotent verbs', () => {
    const after2 = { 'retry-after': '2' };
    expect(retryWaitMs('POST', '/api/v1/namespaces/a/events', answer(429, after2), 0)).toBe(2000);
    expect(retryWaitMs('POST', '/api/v1/namespaces/a/pods/p/eviction', answer(429, after2), 0)).toBeUndefined();
    expect(retryWaitMs('GET', '/api/v1/pods', answer(503, after2), 0)).toBe(2000);
    expect(retryWaitMs('PUT', '/apis/coordination.k8s.io/v1/namespaces/a/leases/l', answer(500, after2), 0)).toBe(2000);
    expect(retryWaitMs('POST', '/api/v1/namespaces/a/events', answer(503, after2), 0)).toBeUndefined();
    expect(retryWaitMs('PATCH', '/apis/g/v1/things/t/status', answer(503, after2), 0)).toBeUndefined();
    expect(retryWaitMs('GET', '/api/v1/pods', answer(503), 0)).toBeUndefined();
    expect(['GET', 'PUT', 'DELETE', 'POST', 'PATCH'].filter(isIdempotent)).toEqual(['GET', 'PUT', 'DELETE']);
  });
});

describe('retries against a misbehaving server', () => {
  it('waits out a 503 with Retry-After on a list, then lists', async () => {
    let refused = 0;
    const server = await fakeServer((_req, res) => {
      if (refused++ === 0) {
        res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
        res.end(JSON.stringify({ kind: 'Status', code: 503 }));
        return;
      }
      json(res, 200, { items: [{ metadata: { name: 'n1' } }], metadata: { resourceVersion: '5' } });
    });
    const c = clientsFor(server.url);
    const list = await c.core.listNode({ limit: 10 });
    expect(list.items).toHaveLength(1);
    expect(server.seen).toHaveLength(2);
    expect(server.seen[1]!.at - server.seen[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('does not resend a POST answered 503 with Retry-After', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      res.end('{}');
    });
    const c = clientsFor(server.url);
    await expect(c.core.createNamespacedEvent({ namespace: 'a', body: {} })).rejects.toBeInstanceOf(ApiError);
    expect(server.seen).toHaveLength(1);
  });

  it('hands a throttled eviction to the executor: no retry in the transport', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      res.end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests' }));
    });
    const c = clientsFor(server.url);
    const evicting = c.core.createNamespacedPodEviction({ namespace: 'a', name: 'p', body: {} });
    await expect(evicting).rejects.toMatchObject({ code: 429 });
    expect(server.seen).toHaveLength(1);
  });

  /** A server that answers the first request on each connection and kills the connection on the second. */
  async function closingKeepAlive(): Promise<{ url: string; requests: string[] }> {
    const requests: string[] = [];
    const perSocket = new WeakMap<object, number>();
    const server = createServer((req, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        requests.push(`${req.method} ${req.url}`);
        const n = (perSocket.get(req.socket) ?? 0) + 1;
        perSocket.set(req.socket, n);
        if (n > 1) {
          req.socket.destroy();
          return;
        }
        json(res, 200, { items: [], metadata: { resourceVersion: '1' } });
      });
    });
    server.keepAliveTimeout = 60_000;
    return { url: await listening(server), requests };
  }

  it('resends a GET once when its reused keep-alive connection turns out closed, and it succeeds', async () => {
    const server = await closingKeepAlive();
    const c = clientsFor(server.url, { maxSockets: 1 });
    await c.core.listNode({ limit: 1 });
    // The pooled connection is reused, killed by the server, and the list sent again on a new one.
    const again = await c.core.listNode({ limit: 1 });
    expect(again.items).toEqual([]);
    expect(server.requests).toEqual([
      'GET /api/v1/nodes?limit=1',
      'GET /api/v1/nodes?limit=1',
      'GET /api/v1/nodes?limit=1',
    ]);
  });

  it('never resends a POST whose reused connection turned out closed', async () => {
    const server = await closingKeepAlive();
    const c = clientsFor(server.url, { maxSockets: 1 });
    await c.core.listNode({ limit: 1 });
    await expect(c.core.createNamespacedEvent({ namespace: 'a', body: {} })).rejects.toThrow(/reused connection/);
    expect(server.requests.filter((r) => r.startsWith('POST'))).toHaveLength(1);
  });
});

describe('the deadline counts from the call', () => {
  it('ends a request still waiting for a rate-limit token when its deadline passes', async () => {
    const server = await fakeServer((_req, res) => json(res, 200, { items: [] }));
    const clock = new ManualClock();
    const c = clientsFor(server.url, {
      clock,
      limiter: createRateLimiter({ qps: 0.1, burst: 1, clock }),
      requestTimeoutMs: 1000,
    });
    await c.core.listNode();
    let outcome: unknown;
    const waiting = c.core.listNode().then(
      () => (outcome = 'sent'),
      (err: unknown) => (outcome = err),
    );
    await clock.advance(999);
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    await waiting;
    expect(String(outcome)).toMatch(/no answer within 1 s/);
    expect(server.seen).toHaveLength(1);
  });
});

describe('a refused watch', () => {
  it('keeps the Status message and the Retry-After of a non-200 answer', async () => {
    const server = await fakeServer((_req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '7' });
      res.end(JSON.stringify({ kind: 'Status', code: 429, message: 'too many requests, please try again later' }));
    });
    const c = clientsFor(server.url);
    const watch = c.newWatch();
    cleanups.push(() => watch.close());
    const ended = new Promise<unknown>((resolve) => void watch.watch('/api/v1/pods', {}, () => undefined, resolve));
    const err = (await ended) as WatchStatusError;
    expect(err).toBeInstanceOf(WatchStatusError);
    expect(err.message).toBe('watch /api/v1/pods: HTTP 429: too many requests, please try again later');
    expect(err.retryAfterMs).toBe(7000);
  });
});
