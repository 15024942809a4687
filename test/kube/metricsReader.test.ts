// The metrics.k8s.io reader (src/kube/metricsReader.ts) against the in-process test API server (test/apiserver),
// which serves a stand-in metrics API (METRICS_API: NodeMetrics and PodMetrics as custom resources) and injects the
// faults a real aggregated API gives on demand only with difficulty: 404 (no APIService), 503 (APIService
// unavailable), 429 with Retry-After. The reader goes through the operator's real client (rate limiter, transport's
// Retry-After handling); the clock's sleeps return at once and are recorded, and its monotonic time can be advanced.
import { afterEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { createKubeClients, type KubeClients } from '../../src/kube/kubeClient.js';
import { MetricsReader, metricsApiProblem, STALE_READING_MS } from '../../src/kube/metricsReader.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import { METRICS_API, REBALANCE_POLICY, startTestApiServer, type TestApiServer } from '../apiserver/index.js';

interface TestClock extends Clock {
  readonly slept: number[];
  advance(ms: number): void;
}

function testClock(): TestClock {
  let offset = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => performance.now() + offset,
    wall: () => Date.now() + offset,
    sleep: (ms) => {
      slept.push(ms);
      return Promise.resolve();
    },
    advance: (ms) => (offset += ms),
  };
}

let server: TestApiServer | undefined;
let clients: KubeClients | undefined;

afterEach(async () => {
  clients?.close();
  clients = undefined;
  await server?.close();
  server = undefined;
});

async function setUp(): Promise<{ s: TestApiServer; reader: MetricsReader; clock: TestClock; problems: string[] }> {
  const s = (server = await startTestApiServer({ customResources: [REBALANCE_POLICY, ...METRICS_API] }));
  s.store.create({
    apiVersion: 'metrics.k8s.io/v1beta1',
    kind: 'NodeMetrics',
    metadata: { name: 'node-1' },
    timestamp: '2024-06-01T12:00:00Z',
    window: '20s',
    usage: { cpu: '1500m', memory: '2Gi' },
  });
  s.store.create({
    apiVersion: 'metrics.k8s.io/v1beta1',
    kind: 'PodMetrics',
    metadata: { name: 'web-1', namespace: 'default' },
    timestamp: '2024-06-01T12:00:00Z',
    window: '20s',
    containers: [
      { name: 'app', usage: { cpu: '250000000n', memory: '100Mi' } },
      { name: 'sidecar', usage: { cpu: '50m', memory: '28Mi' } },
    ],
  });
  const clock = testClock();
  clients = createKubeClients(s.kubeConfig(), {
    limiter: createRateLimiter({ qps: 1000, burst: 1000, clock }),
    clock,
    random: () => 0,
  });
  const problems: string[] = [];
  const reader = new MetricsReader(clients, { clock, onProblem: (m) => problems.push(m) });
  return { s, reader, clock, problems };
}

const onNode1 = (): string => 'node-1';

describe('MetricsReader', () => {
  it('lists NodeMetrics and PodMetrics once each, in the model’s units, pods summed over containers', async () => {
    const { s, reader } = await setUp();
    const mark = s.stats.mark();
    const reading = await reader.read(onNode1);
    expect(reading.available).toBe(true);
    if (!reading.available) return;
    expect(reading.nodes.get('node-1')).toEqual({ cpu: 1500, memory: 2 * 2 ** 30 });
    expect(reading.pods.get('default/web-1')).toEqual({ usage: { cpu: 300, memory: 128 * 2 ** 20 }, node: 'node-1' });
    expect(reading.readAt).toBe(Date.parse('2024-06-01T12:00:00Z'));
    const requests = s.stats.requests({ group: 'metrics.k8s.io' }, mark).map((r) => `${r.verb} ${r.resource}`);
    expect(requests).toEqual(['list nodes', 'list pods']);
  });

  it('404 (no APIService): unavailable, the message names metrics.k8s.io and the status', async () => {
    const { s, reader } = await setUp();
    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 404 });
    const reading = await reader.read(onNode1);
    expect(reading).toEqual({
      available: false,
      message: expect.stringContaining('metrics.k8s.io/v1beta1 nodes: HTTP 404'),
    });
    if (!reading.available) expect(reading.message).toContain('not served');
  });

  it('503 (APIService unavailable): unavailable at once, even with a recent good reading', async () => {
    const { s, reader } = await setUp();
    expect((await reader.read(onNode1)).available).toBe(true);
    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'pods', status: 503 });
    const reading = await reader.read(onNode1);
    expect(reading.available).toBe(false);
    if (!reading.available) expect(reading.message).toMatch(/metrics\.k8s\.io\/v1beta1 pods: HTTP 503.*unavailable/);
  });

  it('429 with Retry-After: waits as told (through the client) and reads', async () => {
    const { s, reader, clock } = await setUp();
    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 429, retryAfterSeconds: 2, count: 2 });
    const reading = await reader.read(onNode1);
    expect(reading.available).toBe(true);
    expect(clock.slept).toEqual([2000, 2000]);
  });

  it('still throttled after the retries: the last reading stands in while younger than 2 minutes, then unavailable', async () => {
    const { s, reader, clock, problems } = await setUp();
    const good = await reader.read(onNode1);
    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 429, retryAfterSeconds: 1, count: 6 });
    clock.advance(60_000);
    expect(await reader.read(onNode1)).toBe(good);
    expect(problems.at(-1)).toMatch(/HTTP 429 \(still throttled.*\); using the reading of 60s ago/);

    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 429, retryAfterSeconds: 1, count: 6 });
    clock.advance(STALE_READING_MS);
    const stale = await reader.read(onNode1);
    expect(stale.available).toBe(false);
    if (!stale.available) expect(stale.message).toMatch(/HTTP 429.*too old to use/);
  });

  it('a missing metrics API is told once, not every cycle, and its return once', async () => {
    const { s, problems } = await setUp();
    const recovered: number[] = [];
    const told = new MetricsReader(clients!, {
      clock: testClock(),
      onProblem: (m) => problems.push(m),
      onRecovered: () => recovered.push(problems.length),
    });
    for (let cycle = 0; cycle < 3; cycle++) {
      s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 404 });
      expect((await told.read(onNode1)).available).toBe(false);
    }
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('HTTP 404');
    expect((await told.read(onNode1)).available).toBe(true);
    expect((await told.read(onNode1)).available).toBe(true);
    expect(recovered).toEqual([1]);
    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 404 });
    expect((await told.read(onNode1)).available).toBe(false);
    expect(problems).toHaveLength(2);
  });

  it('without any reading yet, a throttled read is unavailable', async () => {
    const { s, reader } = await setUp();
    s.faults.failNext({ group: 'metrics.k8s.io', resource: 'nodes', status: 429, retryAfterSeconds: 1, count: 6 });
    const reading = await reader.read(onNode1);
    expect(reading.available).toBe(false);
  });

  it('a bad quantity from the API: the object and field are named, and it counts as a failed read', async () => {
    const { s, reader } = await setUp();
    s.store.create({
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'NodeMetrics',
      metadata: { name: 'node-2' },
      usage: { cpu: 'lots', memory: '1Gi' },
    });
    const reading = await reader.read(onNode1);
    expect(reading.available).toBe(false);
    if (!reading.available)
      expect(reading.message).toContain('NodeMetrics node-2: usage.cpu: must be a non-negative quantity');
  });
});

describe('metricsApiProblem', () => {
  it('a 401 is about credentials, not a missing ClusterRole grant; a 403 is the grant', () => {
    expect(metricsApiProblem(401, 'nodes')).toBe(
      "metrics.k8s.io/v1beta1 nodes: HTTP 401: the API server did not accept this client's credentials",
    );
    expect(metricsApiProblem(403, 'nodes')).toMatch(/ClusterRole needs get\/list/);
  });
});
