// The operator's Prometheus reader (usage: Prometheus) against a local HTTP server standing in for Prometheus: the
// query and the Secret's token go out as the descheduler sends them; every failure is a reading that is unavailable
// with its reason (the Secret missing, refused or without its key; the server down, refusing the token, answering an
// error or something that is not one value in 0–1 per node), never an empty or older reading; a problem is told once.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { PrometheusReader } from '../../src/kube/prometheusReader.js';
import { ApiError } from '../../src/kube/transport.js';
import type { PrometheusSource } from '../../src/strategies/types.js';

let server: Server;
let url = '';
let seen: { path: string; headers: IncomingHttpHeaders } | undefined;
/** What the stand-in answers next: status and body. */
let reply: { status: number; body: string } = { status: 200, body: '' };

beforeAll(async () => {
  server = createServer((req, res) => {
    seen = { path: req.url ?? '', headers: req.headers };
    res.writeHead(reply.status, { 'Content-Type': 'application/json' });
    res.end(reply.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const vector = (values: Record<string, string>): string =>
  JSON.stringify({
    status: 'success',
    data: {
      resultType: 'vector',
      result: Object.entries(values).map(([instance, v]) => ({ metric: { instance }, value: [1, v] })),
    },
  });

const TOKEN_REF = { secretReference: { namespace: 'kube-rebalancer', name: 'prom' } };

/** A Secret store: name → the Secret's data, or an API error code. */
function reader(secrets: Record<string, Record<string, string> | number> = {}, told: string[] = []): PrometheusReader {
  return new PrometheusReader(
    {
      core: {
        readNamespacedSecret: async ({ namespace, name }) => {
          const s = secrets[`${namespace}/${name}`];
          if (s === undefined) throw new ApiError(404, '{}', {}, `GET secrets/${name}`);
          if (typeof s === 'number') throw new ApiError(s, '{}', {}, `GET secrets/${name}`);
          return {
            data: Object.fromEntries(Object.entries(s).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
          };
        },
      },
    },
    { clock: systemClock, onProblem: (m) => told.push(m) },
  );
}

const source = (extra: Partial<PrometheusSource> = {}): PrometheusSource => ({
  url,
  query: 'instance:node_cpu_utilisation:rate5m',
  ...extra,
});

describe('PrometheusReader', () => {
  it('sends the query and the Secret’s token, and reads one value per node', async () => {
    reply = { status: 200, body: vector({ n1: '0.9', n2: '0.1' }) };
    const r = await reader({ 'kube-rebalancer/prom': { prometheusAuthToken: 'sekret\n' } }).read(
      source({ authToken: TOKEN_REF }),
    );
    expect(r).toMatchObject({
      available: true,
      values: new Map([
        ['n1', 0.9],
        ['n2', 0.1],
      ]),
    });
    expect(seen?.path).toBe('/api/v1/query?query=instance%3Anode_cpu_utilisation%3Arate5m');
    expect(seen?.headers.authorization).toBe('Bearer sekret');
  });

  it('sends no token without authToken', async () => {
    reply = { status: 200, body: vector({ n1: '0.5' }) };
    expect((await reader().read(source())).available).toBe(true);
    expect(seen?.headers.authorization).toBeUndefined();
  });

  it.each<[string, Record<string, Record<string, string> | number>, { status: number; body: string }, string]>([
    [
      'the Secret missing',
      {},
      { status: 200, body: vector({ n1: '0.5' }) },
      'Secret kube-rebalancer/prom (the bearer token) does not exist',
    ],
    [
      'the Secret refused (another namespace than the operator’s)',
      { 'kube-rebalancer/prom': 403 },
      { status: 200, body: vector({ n1: '0.5' }) },
      'not allowed to get Secret kube-rebalancer/prom (the operator may read Secrets in its own namespace only',
    ],
    [
      'the Secret without prometheusAuthToken',
      { 'kube-rebalancer/prom': { token: 'x' } },
      { status: 200, body: vector({ n1: '0.5' }) },
      'Secret kube-rebalancer/prom has no prometheusAuthToken',
    ],
    [
      'the token refused',
      { 'kube-rebalancer/prom': { prometheusAuthToken: 'x' } },
      { status: 401, body: 'Unauthorized' },
      'HTTP 401: the server refused the token',
    ],
    [
      'a bad query',
      { 'kube-rebalancer/prom': { prometheusAuthToken: 'x' } },
      { status: 400, body: JSON.stringify({ status: 'error', errorType: 'bad_data', error: 'parse error' }) },
      'HTTP 400: status: the query failed (bad_data: parse error)',
    ],
    [
      'a query returning nothing',
      { 'kube-rebalancer/prom': { prometheusAuthToken: 'x' } },
      { status: 200, body: vector({}) },
      'data.result: the query returned no samples',
    ],
    [
      'not Prometheus',
      { 'kube-rebalancer/prom': { prometheusAuthToken: 'x' } },
      { status: 200, body: '<html>' },
      'HTTP 200: the answer is not JSON',
    ],
  ])('%s: unavailable, with the reason', async (_, secrets, answer, message) => {
    reply = answer;
    const r = await reader(secrets).read(source({ authToken: TOKEN_REF }));
    expect(r.available).toBe(false);
    expect(!r.available && r.message).toContain(`Prometheus ${url} query "instance:node_cpu_utilisation:rate5m": `);
    expect(!r.available && r.message).toContain(message);
  });

  it('an unreachable server: unavailable, told once while it lasts, and again after it answered', async () => {
    const told: string[] = [];
    const r = reader({}, told);
    const down = source({ url: 'http://127.0.0.1:9' });
    const first = await r.read(down);
    expect(!first.available && first.message).toContain('unreachable (ECONNREFUSED)');
    await r.read(down);
    expect(told).toHaveLength(1);
    reply = { status: 200, body: vector({ n1: '0.5' }) };
    expect((await r.read(source())).available).toBe(true);
    await r.read(down);
    expect(told).toHaveLength(2);
  });
});
