// Fault injection and the request log, seen from client-node.
import { CoreV1Api, makeInformer } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { startTestApiServer } from '../apiserver/index.js';
import { apiError, node, pod, waitFor } from './fixtures.js';

let server: TestApiServer;
let core: CoreV1Api;

beforeEach(async () => {
  server = await startTestApiServer();
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  server.store.createAll([node('n1'), pod('web-1', { labels: { app: 'web' }, nodeName: 'n1' })]);
});

afterEach(async () => {
  await server.close();
});

describe('faults', () => {
  it('fails the next N matching requests with the given status, then recovers', async () => {
    const handle = server.faults.failNext({ verb: 'get', resource: 'pods', name: 'web-1', status: 500, count: 2 });
    expect((await apiError(core.readNamespacedPod({ name: 'web-1', namespace: 'default' }))).code).toBe(500);
    // Other requests are not affected.
    await core.readNode({ name: 'n1' });
    const second = await apiError(core.readNamespacedPod({ name: 'web-1', namespace: 'default' }));
    expect(second.status).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
    expect(handle.remaining()).toBe(0);
    await core.readNamespacedPod({ name: 'web-1', namespace: 'default' });
  });

  it('answers 429 and 503 with Retry-After', async () => {
    server.faults.failNext({ verb: 'create', resource: 'pods/eviction', status: 429, retryAfterSeconds: 3 });
    server.faults.failNext({
      verb: 'list',
      resource: 'nodes',
      status: 503,
      retryAfterSeconds: 5,
      message: 'apiserver overloaded',
    });
    const throttled = await apiError(
      core.createNamespacedPodEviction({ name: 'web-1', namespace: 'default', body: { metadata: { name: 'web-1' } } }),
    );
    expect(throttled.code).toBe(429);
    expect(throttled.headers['retry-after']).toBe('3');
    expect(throttled.status).toMatchObject({ reason: 'TooManyRequests', details: { retryAfterSeconds: 3 } });
    const unavailable = await apiError(core.listNode());
    expect(unavailable.code).toBe(503);
    expect(unavailable.status.message).toBe('apiserver overloaded');
    expect(server.store.get('pods', 'web-1')).toBeDefined();
  });

  it('adds latency to matching requests', async () => {
    server.faults.delay({ verb: 'list', resource: 'pods', ms: 150, count: 1 });
    const started = Date.now();
    await core.listPodForAllNamespaces();
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const again = Date.now();
    await core.listPodForAllNamespaces();
    expect(Date.now() - again).toBeLessThan(140);
  });

  it('can fail a watch request itself, which client-node reports as an error with statusCode', async () => {
    server.faults.failNext({ verb: 'watch', resource: 'pods', status: 503 });
    const informer = makeInformer(server.kubeConfig(), '/api/v1/pods', () => core.listPodForAllNamespaces());
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    await waitFor(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ statusCode: 503 });
    await informer.stop();
  });
});

describe('request log', () => {
  it('counts requests by verb and resource, and supports marks to scope assertions', async () => {
    await core.listPodForAllNamespaces();
    await core.listNamespacedPod({ namespace: 'default' });
    const mark = server.stats.mark();
    await core.readNamespacedPod({ name: 'web-1', namespace: 'default' });
    await core.patchNamespacedPodStatus({
      name: 'web-1',
      namespace: 'default',
      body: [{ op: 'add', path: '/status/reason', value: 'x' }],
    });
    expect(server.stats.count({ verb: 'list', resource: 'pods' })).toBe(2);
    expect(server.stats.count({ verb: 'list' }, mark)).toBe(0);
    expect(server.stats.counters(mark)).toEqual({ 'get /pods': 1, 'patch /pods/status': 1 });
    const [get] = server.stats.requests({ verb: 'get' }, mark);
    expect(get).toMatchObject({ namespace: 'default', name: 'web-1', code: 200, injected: false, group: '' });
    expect(server.stats.count({ code: 429 })).toBe(0);
  });

  it('records injected failures as such', async () => {
    server.faults.failNext({ verb: 'list', resource: 'nodes', status: 500 });
    await apiError(core.listNode());
    expect(server.stats.requests({ verb: 'list', resource: 'nodes' })).toEqual([
      expect.objectContaining({ code: 500, injected: true }),
    ]);
  });
});
