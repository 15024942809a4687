// /metrics authentication that a flood of tokens cannot starve (src/serving/delegatingAuth.ts): the caches are LRU,
// reviews pass a bounded gate where tokens seen authenticated go first and a full queue answers 503 at once, and a
// check that cannot finish within its deadline (shorter than Prometheus's 10 s scrape timeout) answers 503. The
// review API here is a fake behind the real token bucket the operator gives the reviews (5 qps, burst 10).
import { randomBytes, type X509Certificate } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import type { AuthReviewApi } from '../../src/kube/authReviews.js';
import { createDelegatingAuth } from '../../src/serving/delegatingAuth.js';
import { authenticatedHandler, createSecureServer } from '../../src/serving/secureServing.js';
import { connect } from 'node:tls';

const PROMETHEUS = 'system:serviceaccount:monitoring:prometheus';
const bearer = (token: string): IncomingMessage =>
  ({ headers: { authorization: `Bearer ${token}` }, method: 'GET' }) as unknown as IncomingMessage;

/** Reviews as the operator sends them: one token of a 5 qps bucket each, then a short round trip. */
function throttledReviews(): AuthReviewApi & { tokenReviews: () => number } {
  const limiter = createRateLimiter({ qps: 5, burst: 10, clock: systemClock });
  let tokenReviews = 0;
  const roundTrip = async (): Promise<void> => {
    await limiter.acquire();
    await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return {
    tokenReviews: () => tokenReviews,
    async createTokenReview({ body }) {
      tokenReviews++;
      await roundTrip();
      const token = (body as { spec: { token: string } }).spec.token;
      return token === 'prometheus-token'
        ? { status: { authenticated: true, user: { username: PROMETHEUS } } }
        : { status: { authenticated: false, error: 'invalid bearer token' } };
    },
    async createSubjectAccessReview({ body }) {
      await roundTrip();
      return { status: { allowed: (body as { spec: { user: string } }).spec.user === PROMETHEUS } };
    },
  };
}

const servers: Array<{ close: () => void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

describe('metrics authentication under a flood of random tokens', () => {
  it("answers Prometheus's scrape 200 while 10,000 random tokens arrive, its review ahead of theirs", async () => {
    let now = 0;
    const api = throttledReviews();
    const auth = createDelegatingAuth({ api, now: () => now });
    // Prometheus scraped before: its token is known (and its cached answer will have expired by the next scrape).
    expect((await auth.check(bearer('prometheus-token'), '/metrics')).status).toBe(200);
    now += 60_000;
    const flood: Array<Promise<{ status: number }>> = [];
    for (let i = 0; i < 10_000; i++) flood.push(auth.check(bearer(randomBytes(16).toString('hex')), '/metrics'));
    const scrape = await auth.check(bearer('prometheus-token'), '/metrics');
    expect(scrape.status).toBe(200);
    const answers = await Promise.all(flood);
    const byStatus = new Map<number, number>();
    for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    // The queue is bounded: most of the flood was refused at once, never sent for review.
    expect(byStatus.get(503)).toBeGreaterThan(9_000);
    expect(api.tokenReviews()).toBeLessThan(400);
  });

  it('keeps a scraper’s entry while random tokens pass through the cache (least recently used goes first)', async () => {
    let reviews = 0;
    const api: AuthReviewApi = {
      createTokenReview: ({ body }) => {
        reviews++;
        const token = (body as { spec: { token: string } }).spec.token;
        return Promise.resolve({ status: { authenticated: true, user: { username: token } } });
      },
      createSubjectAccessReview: () => Promise.resolve({ status: { allowed: true } }),
    };
    const auth = createDelegatingAuth({ api, maxEntries: 5 });
    await auth.check(bearer('prometheus'), '/metrics');
    for (let i = 0; i < 20; i++) {
      await auth.check(bearer(`random-${i}`), '/metrics');
      await auth.check(bearer('prometheus'), '/metrics');
    }
    expect(reviews).toBe(21);
  });

  it('answers 503 when a review does not finish within the deadline', async () => {
    const api: AuthReviewApi = {
      createTokenReview: () => new Promise(() => undefined),
      createSubjectAccessReview: () => new Promise(() => undefined),
    };
    let expire!: () => void;
    const auth = createDelegatingAuth({
      api,
      reviewTimeoutMs: 5_000,
      sleep: (_ms, signal) =>
        new Promise<void>((resolve) => {
          expire = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        }),
    });
    const pending = auth.check(bearer('slow'), '/metrics');
    await new Promise((resolve) => setImmediate(resolve));
    expire();
    expect(await pending).toMatchObject({ status: 503, reason: expect.stringMatching(/within 5 s/) });
  });

  it('answers 503 at once when the queue of unknown tokens is full', async () => {
    const api: AuthReviewApi = {
      createTokenReview: () => new Promise(() => undefined),
      createSubjectAccessReview: () => new Promise(() => undefined),
    };
    const auth = createDelegatingAuth({ api, maxInFlight: 1, maxQueuedUnknown: 2, reviewTimeoutMs: 60_000 });
    void auth.check(bearer('a'), '/metrics');
    void auth.check(bearer('b'), '/metrics');
    void auth.check(bearer('c'), '/metrics');
    expect(await auth.check(bearer('d'), '/metrics')).toMatchObject({ status: 503 });
  });

  it('a 401 names its scheme (WWW-Authenticate), a 503 says when to come back', async () => {
    const auth = createDelegatingAuth({
      api: {
        createTokenReview: () => Promise.resolve({ status: { authenticated: false } }),
        createSubjectAccessReview: () => Promise.resolve({ status: { allowed: false } }),
      },
    });
    const server = createServer(authenticatedHandler(auth, (_req, res) => res.end('ok'), pino({ level: 'silent' })));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const [status, headers] = await new Promise<[number, IncomingMessage['headers']]>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
        res.resume();
        resolve([res.statusCode ?? 0, res.headers]);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(401);
    expect(headers['www-authenticate']).toBe('Bearer realm="kube-rebalancer"');
  });
});

describe('the self-signed serving certificate', () => {
  it('is backdated an hour and made anew, while the server runs, once a third of its year is left', async () => {
    const start = Date.parse('2026-03-01T00:00:00Z');
    let now = start;
    const secure = createSecureServer({
      handler: (_req, res) => res.end('ok'),
      logger: pino({ level: 'silent' }),
      altNames: ['localhost'],
      now: () => now,
    });
    servers.push({ close: () => (secure.stopWatching(), secure.server.close()) });
    await new Promise<void>((resolve) => secure.server.listen(0, '127.0.0.1', resolve));
    const port = (secure.server.address() as AddressInfo).port;
    const served = (): Promise<X509Certificate> =>
      new Promise((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
          const x = socket.getPeerX509Certificate()!;
          socket.end();
          resolve(x);
        });
        socket.on('error', reject);
      });
    const first = await served();
    expect(Date.parse(first.validFrom)).toBe(start - 3_600_000);
    expect(Date.parse(first.validTo)).toBe(start + 365 * 86_400_000);
    now = start + 200 * 86_400_000;
    expect(secure.renewIfDue()).toBe(false);
    now = start + 250 * 86_400_000;
    expect(secure.renewIfDue()).toBe(true);
    const second = await served();
    expect(second.serialNumber).not.toBe(first.serialNumber);
    expect(Date.parse(second.validFrom)).toBe(now - 3_600_000);
  });
});
