// The HTTP endpoints (through a real listener) and --metrics-addr parsing.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createHttpHandler, ListenAddressError, parseListenAddress } from '../../src/operator/httpServer.js';

describe('parseListenAddress', () => {
  it.each([
    [':8080', { host: undefined, port: 8080 }],
    ['127.0.0.1:9090', { host: '127.0.0.1', port: 9090 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['0.0.0.0:0', { host: '0.0.0.0', port: 0 }],
  ])('%s', (address, expected) => {
    expect(parseListenAddress(address)).toEqual(expected);
  });

  it.each(['8080', 'localhost', ':99999', 'host:port', ''])('rejects %j', (address) => {
    expect(() => parseListenAddress(address)).toThrow(ListenAddressError);
  });
});

describe('endpoints', () => {
  it('answer /healthz, /readyz (503 until ready) and /metrics from the injected registry', async () => {
    const registry = new Registry();
    new Counter({ name: 'demo_total', help: 'demo', registers: [registry] }).inc(2);
    let ready = false;
    const server = createServer(
      createHttpHandler({
        registry,
        health: () => ({ ok: true, detail: 'fine' }),
        readiness: () => ({ ok: ready, detail: 'pods: syncing' }),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      const notReady = await fetch(`${base}/readyz`);
      expect(notReady.status).toBe(503);
      expect(await notReady.text()).toContain('pods: syncing');
      ready = true;
      expect((await fetch(`${base}/readyz`)).status).toBe(200);
      const metrics = await fetch(`${base}/metrics`);
      expect(metrics.headers.get('content-type')).toContain('text/plain');
      expect(await metrics.text()).toContain('demo_total 2');
      expect((await fetch(`${base}/nope`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
