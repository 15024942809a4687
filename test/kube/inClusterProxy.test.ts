// In a pod behind an egress proxy, the service account's requests go through HTTPS_PROXY unless NO_PROXY names the
// service's address, as client-go's transport does (http.ProxyFromEnvironment). A real HTTPS server with a
// self-signed certificate stands in for the API server, and a real CONNECT proxy in front of it records each
// tunnel; the service account folder holds that certificate as its CA and a token that rotates.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { serviceAccountCredentials } from '../../src/kube/credentials.js';
import { createKubeClients } from '../../src/kube/kubeClient.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import { selfSignedCert } from '../../src/serving/selfSignedCert.js';
import { closeFakeServers, connectProxy, PROXIED_HOST } from './fakeServer.js';

describe('the in-cluster service account behind a proxy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sa-proxy-'));
  const seenTokens: string[] = [];
  let api: https.Server;
  let proxy: { readonly url: string; readonly tunnels: string[] };
  let apiPort = 0;

  beforeAll(async () => {
    const { cert, key } = selfSignedCert({ commonName: 'kubernetes', altNames: ['127.0.0.1', PROXIED_HOST] });
    writeFileSync(join(dir, 'ca.crt'), cert);
    writeFileSync(join(dir, 'token'), 'sa-token-1');
    api = https.createServer({ cert, key }, (req, res) => {
      seenTokens.push(req.headers.authorization ?? '');
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ kind: 'NodeList', apiVersion: 'v1', metadata: { resourceVersion: '7' }, items: [] }));
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    apiPort = (api.address() as AddressInfo).port;
    proxy = await connectProxy();
  });

  afterAll(async () => {
    await closeFakeServers();
    api.closeAllConnections();
    await new Promise((r) => api.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  // The service is named, not 127.0.0.1: loopback is never proxied from the environment (Go's rule).
  const env = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
    KUBERNETES_SERVICE_HOST: PROXIED_HOST,
    KUBERNETES_SERVICE_PORT: String(apiPort),
    HTTPS_PROXY: proxy.url,
    ...extra,
  });

  async function listNodes(e: NodeJS.ProcessEnv): Promise<string | undefined> {
    const { credentials, delegatedFor } = await serviceAccountCredentials(e, dir);
    const clients = createKubeClients(credentials, {
      limiter: createRateLimiter({ qps: 50, burst: 50, clock: systemClock }),
      clock: systemClock,
    });
    try {
      const list = await clients.core.listNode();
      expect(list.metadata?.resourceVersion).toBe('7');
    } finally {
      clients.close();
    }
    return delegatedFor;
  }

  it('tunnels through HTTPS_PROXY, verifying the server against the service account CA, with its token', async () => {
    proxy.tunnels.length = 0;
    seenTokens.length = 0;
    expect(await listNodes(env({}))).toBe('proxy (from the environment)');
    expect(proxy.tunnels).toEqual([`${PROXIED_HOST}:${apiPort}`]);
    expect(seenTokens).toEqual(['Bearer sa-token-1']);
  });

  it('goes direct to a loopback service address whatever HTTPS_PROXY says, as Go does', async () => {
    proxy.tunnels.length = 0;
    seenTokens.length = 0;
    writeFileSync(join(dir, 'token'), 'sa-token-3');
    expect(await listNodes(env({ KUBERNETES_SERVICE_HOST: '127.0.0.1' }))).toBeUndefined();
    expect(proxy.tunnels).toEqual([]);
    expect(seenTokens).toEqual(['Bearer sa-token-3']);
  });

  it('goes direct when NO_PROXY names the service address', async () => {
    proxy.tunnels.length = 0;
    seenTokens.length = 0;
    writeFileSync(join(dir, 'token'), 'sa-token-2');
    const { credentials, delegatedFor } = await serviceAccountCredentials(env({ NO_PROXY: '10.96.0.0/12,.test' }), dir);
    expect(delegatedFor).toBeUndefined();
    const clients = createKubeClients(credentials, {
      limiter: createRateLimiter({ qps: 50, burst: 50, clock: systemClock }),
      clock: systemClock,
    });
    try {
      // Direct, the made-up name has no address: the request fails before it reaches any server, and never the proxy.
      await expect(clients.core.listNode()).rejects.toThrow(/ENOTFOUND|getaddrinfo|EAI_AGAIN/);
    } finally {
      clients.close();
    }
    expect(proxy.tunnels).toEqual([]);
    expect(seenTokens).toEqual([]);
  });

  it('a proxied request to a server the CA does not vouch for fails: the tunnel does not skip verification', async () => {
    const other = mkdtempSync(join(tmpdir(), 'sa-proxy-other-'));
    try {
      writeFileSync(join(other, 'ca.crt'), selfSignedCert({ commonName: 'x', altNames: ['127.0.0.1'] }).cert);
      writeFileSync(join(other, 'token'), 't');
      const { credentials } = await serviceAccountCredentials(env({}), other);
      const clients = createKubeClients(credentials, {
        limiter: createRateLimiter({ qps: 50, burst: 50, clock: systemClock }),
        clock: systemClock,
      });
      try {
        await expect(clients.core.listNode()).rejects.toThrow(/certificate|self.signed|verify/i);
      } finally {
        clients.close();
      }
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
