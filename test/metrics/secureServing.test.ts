// Secure serving of /metrics: the self-signed certificate (checked by Node's X509Certificate and a TLS handshake),
// delegated authentication and authorization with their caches (a fake review API and an injected clock), and the
// reload of a --metrics-cert-dir pair when its files change.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { AuthReviewApi } from '../../src/kube/authReviews.js';
import { createDelegatingAuth } from '../../src/serving/delegatingAuth.js';
import { authenticatedHandler, createSecureServer, loadCertDir } from '../../src/serving/secureServing.js';
import { selfSignedCert } from '../../src/serving/selfSignedCert.js';
import { getText } from '../integration/operatorProcess.js';
import { waitFor } from '../e2e/harness.js';

const silent = pino({ level: 'silent' });
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('selfSignedCert', () => {
  it('is a v3 certificate for the given names, signed by its own key, valid for a year', () => {
    const notBefore = new Date('2026-01-01T00:00:00Z');
    const { cert, key } = selfSignedCert({
      commonName: 'kube-rebalancer',
      altNames: ['localhost', 'kube-rebalancer.kube-rebalancer.svc', '127.0.0.1', '::1', 'fd00::1:2'],
      notBefore,
    });
    const x = new X509Certificate(cert);
    expect(x.subject).toBe('CN=kube-rebalancer');
    expect(x.issuer).toBe('CN=kube-rebalancer');
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.ca).toBe(false);
    expect(x.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(x.checkHost('kube-rebalancer.kube-rebalancer.svc')).toBe('kube-rebalancer.kube-rebalancer.svc');
    expect(x.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x.checkIP('::1')).toBe('::1');
    expect(x.checkIP('fd00::1:2')).toBe('fd00::1:2');
    expect(x.checkHost('elsewhere.example')).toBeUndefined();
    expect(new Date(x.validFrom).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(new Date(x.validTo).toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(key).toContain('BEGIN PRIVATE KEY');
    // Two certificates never share a serial or a key.
    expect(new X509Certificate(selfSignedCert({ commonName: 'a', altNames: ['a'] }).cert).serialNumber).not.toBe(
      x.serialNumber,
    );
  });
});

/** A fake review API: tokens → users, users allowed /metrics; counts the calls, may fail. */
function fakeReviews(users: Record<string, string>, allowed: readonly string[]) {
  const calls = { token: 0, access: 0, bodies: [] as unknown[] };
  let failing = false;
  let gate: Promise<void> = Promise.resolve();
  const api: AuthReviewApi = {
    async createTokenReview({ body }) {
      calls.token++;
      await gate;
      if (failing) throw new Error('connection refused');
      const token = (body as { spec: { token: string } }).spec.token;
      const user = users[token];
      return user === undefined
        ? { status: { authenticated: false, error: 'token expired' } }
        : { status: { authenticated: true, user: { username: user, uid: `${user}-uid`, groups: ['g'] } } };
    },
    async createSubjectAccessReview({ body }) {
      calls.access++;
      calls.bodies.push(body);
      if (failing) throw new Error('connection refused');
      const spec = (body as { spec: { user: string } }).spec;
      return { status: { allowed: allowed.includes(spec.user), reason: allowed.includes(spec.user) ? '' : 'no RBAC' } };
    },
  };
  return {
    api,
    calls,
    fail: (v: boolean) => (failing = v),
    hold: () => {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return release;
    },
  };
}

const request = (headers: Record<string, string> = {}, method = 'GET'): IncomingMessage =>
  ({ headers, method }) as unknown as IncomingMessage;
const bearer = (token: string) => request({ authorization: `Bearer ${token}` });

describe('delegated authentication and authorization', () => {
  it('401 without a token or with one the API server rejects, 403 without the grant, 200 with it', async () => {
    const f = fakeReviews({ good: 'system:serviceaccount:monitoring:prometheus', other: 'alice' }, [
      'system:serviceaccount:monitoring:prometheus',
    ]);
    const auth = createDelegatingAuth({ api: f.api });
    expect((await auth.check(request(), '/metrics')).status).toBe(401);
    expect((await auth.check(request({ authorization: 'Basic abc' }), '/metrics')).status).toBe(401);
    expect(await auth.check(bearer('bad'), '/metrics')).toMatchObject({ status: 401, reason: 'token expired' });
    expect(await auth.check(bearer('other'), '/metrics')).toMatchObject({
      status: 403,
      reason: 'alice may not get /metrics: no RBAC',
    });
    expect(await auth.check(bearer('good'), '/metrics')).toMatchObject({ status: 200 });
    // The SubjectAccessReview asks for the verb on the non-resource URL, for the user with uid and groups.
    expect(f.calls.bodies.at(-1)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'system:serviceaccount:monitoring:prometheus',
        uid: 'system:serviceaccount:monitoring:prometheus-uid',
        groups: ['g'],
        nonResourceAttributes: { path: '/metrics', verb: 'get' },
      },
    });
  });

  it('reuses answers until their TTL, then asks again; keys the cache by a hash, never the token', async () => {
    let now = 0;
    const f = fakeReviews({ good: 'prom' }, ['prom']);
    const auth = createDelegatingAuth({ api: f.api, now: () => now, tokenTtlMs: 10_000, allowTtlMs: 10_000 });
    for (let i = 0; i < 5; i++) expect((await auth.check(bearer('good'), '/metrics')).status).toBe(200);
    expect(f.calls).toMatchObject({ token: 1, access: 1 });
    now = 9_999;
    await auth.check(bearer('good'), '/metrics');
    expect(f.calls).toMatchObject({ token: 1, access: 1 });
    now = 10_000;
    await auth.check(bearer('good'), '/metrics');
    expect(f.calls).toMatchObject({ token: 2, access: 2 });
    // A rejected token is cached too (the apiserver's token cache keeps failures for the same TTL).
    await auth.check(bearer('bad'), '/metrics');
    await auth.check(bearer('bad'), '/metrics');
    expect(f.calls.token).toBe(3);
  });

  it('denials have their own TTL', async () => {
    let now = 0;
    const f = fakeReviews({ t: 'alice' }, []);
    const auth = createDelegatingAuth({ api: f.api, now: () => now, allowTtlMs: 60_000, denyTtlMs: 1_000 });
    await auth.check(bearer('t'), '/metrics');
    now = 999;
    await auth.check(bearer('t'), '/metrics');
    expect(f.calls.access).toBe(1);
    now = 1_000;
    await auth.check(bearer('t'), '/metrics');
    expect(f.calls.access).toBe(2);
  });

  it('an API server that does not answer gives 500 and leaves nothing cached', async () => {
    const f = fakeReviews({ good: 'prom' }, ['prom']);
    const auth = createDelegatingAuth({ api: f.api });
    f.fail(true);
    expect(await auth.check(bearer('good'), '/metrics')).toMatchObject({ status: 500 });
    f.fail(false);
    expect((await auth.check(bearer('good'), '/metrics')).status).toBe(200);
    expect(f.calls.token).toBe(2);
  });

  it('concurrent requests with one token share one review', async () => {
    const f = fakeReviews({ good: 'prom' }, ['prom']);
    const auth = createDelegatingAuth({ api: f.api });
    const release = f.hold();
    const pending = [1, 2, 3].map(() => auth.check(bearer('good'), '/metrics'));
    release();
    expect((await Promise.all(pending)).map((d) => d.status)).toEqual([200, 200, 200]);
    expect(f.calls).toMatchObject({ token: 1, access: 1 });
  });

  it('bounds each cache (the oldest answer goes first)', async () => {
    const users = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`t${i}`, `u${i}`]));
    const f = fakeReviews(users, []);
    const auth = createDelegatingAuth({ api: f.api, maxEntries: 5 });
    for (let i = 0; i < 20; i++) await auth.check(bearer(`t${i}`), '/metrics');
    expect(auth.cached()).toEqual({ tokens: 5, access: 5 });
    await auth.check(bearer('t0'), '/metrics');
    expect(f.calls.token).toBe(21);
  });
});

function certDir(pair: { cert: string; key: string }): string {
  const dir = mkdtempSync(join(tmpdir(), 'metrics-cert-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key);
  return dir;
}

/** The certificate a TLS client is shown. */
function servedCert(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber ?? '';
      socket.end();
      resolve(serial);
    });
    socket.on('error', reject);
  });
}

describe('the HTTPS server', () => {
  it('serves the --metrics-cert-dir pair and swaps in a new one when the files change; a broken pair is kept out', async () => {
    const first = selfSignedCert({ commonName: 'first', altNames: ['localhost'] });
    const second = selfSignedCert({ commonName: 'second', altNames: ['localhost'] });
    const dir = certDir(first);
    const f = fakeReviews({ good: 'prom' }, ['prom']);
    const { server, stopWatching } = createSecureServer({
      handler: authenticatedHandler(createDelegatingAuth({ api: f.api }), (_req, res) => res.end('metrics\n'), silent),
      logger: silent,
      certDir: dir,
      altNames: [],
      reloadIntervalMs: 20,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await servedCert(port)).toBe(new X509Certificate(first.cert).serialNumber);
      expect(await getText(true, port, '/metrics')).toEqual({ status: 401, text: 'Unauthorized\n' });
      expect(await getText(true, port, '/metrics', 'good')).toEqual({ status: 200, text: 'metrics\n' });
      // Half a rotation (a new certificate, the old key): not loaded.
      writeFileSync(join(dir, 'tls.crt'), second.cert);
      await new Promise((r) => setTimeout(r, 100));
      expect(await servedCert(port)).toBe(new X509Certificate(first.cert).serialNumber);
      writeFileSync(join(dir, 'tls.key'), second.key);
      await waitFor(
        async () => (await servedCert(port)) === new X509Certificate(second.cert).serialNumber,
        5_000,
        'the new certificate',
      );
    } finally {
      stopWatching();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('names the file when the folder holds no usable pair', () => {
    const a = selfSignedCert({ commonName: 'a', altNames: ['a'] });
    const b = selfSignedCert({ commonName: 'b', altNames: ['b'] });
    const mismatched = certDir({ cert: a.cert, key: b.key });
    expect(() => loadCertDir(mismatched)).toThrow(join(mismatched, 'tls.crt'));
    const empty = mkdtempSync(join(tmpdir(), 'metrics-cert-'));
    dirs.push(empty);
    expect(() => loadCertDir(empty)).toThrow(
      `${join(empty, 'tls.crt')}: cannot read the metrics serving certificate: ENOENT`,
    );
  });
});
