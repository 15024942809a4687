// WATCH semantics with client-node's Watch and informer (ListWatch): resume from a resourceVersion, 410 Expired,
// relist after 410, bookmarks, timeouts and selector transitions. Also pins down how client-node 1.4's informer
// reacts to stream ends and errors.
import { CoreV1Api, makeInformer, Watch, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { startTestApiServer } from '../apiserver/index.js';
import { node, pod, sleep, waitFor } from './fixtures.js';

let server: TestApiServer;
let core: CoreV1Api;

beforeEach(async () => {
  server = await startTestApiServer({ bookmarkIntervalMs: 50 });
  core = server.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await server.close();
});

interface Seen {
  events: { type: string; name: string; rv: string; object: KubernetesObject }[];
  done: unknown[];
  controller: AbortController;
}

async function watchPods(
  query: Record<string, string | number | boolean | undefined>,
  path = '/api/v1/namespaces/default/pods',
): Promise<Seen> {
  const seen: Seen = { events: [], done: [], controller: new AbortController() };
  seen.controller = await new Watch(server.kubeConfig()).watch(
    path,
    query,
    (type, object: KubernetesObject) => {
      seen.events.push({ type, name: object.metadata?.name ?? '', rv: object.metadata?.resourceVersion ?? '', object });
    },
    (err) => seen.done.push(err ?? 'closed'),
  );
  return seen;
}

describe('watch', () => {
  it('from a resourceVersion replays the later events, then streams new ones', async () => {
    server.store.create(pod('a'));
    const rv = String(server.store.resourceVersion());
    server.store.create(pod('b'));
    server.store.patch('pods', 'b', 'default', { metadata: { labels: { x: '1' } } });
    server.store.delete('pods', 'a', 'default');
    const seen = await watchPods({ resourceVersion: rv });
    server.store.create(pod('c'));
    await waitFor(() => seen.events.length === 4);
    expect(seen.events.map((e) => `${e.type} ${e.name}`)).toEqual(['ADDED b', 'MODIFIED b', 'DELETED a', 'ADDED c']);
    const rvs = seen.events.map((e) => Number(e.rv));
    expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
    expect(rvs[2]).toBe(Number(rv) + 3);
    seen.controller.abort();
  });

  it('without a resourceVersion starts with synthetic ADDED events for the current state', async () => {
    server.store.createAll([pod('a'), pod('b')]);
    const seen = await watchPods({});
    await waitFor(() => seen.events.length === 2);
    expect(seen.events.map((e) => `${e.type} ${e.name}`).sort()).toEqual(['ADDED a', 'ADDED b']);
    seen.controller.abort();
  });

  it('from a compacted resourceVersion yields one ERROR event with a 410 Expired Status and ends the stream', async () => {
    server.store.create(pod('a'));
    const old = String(server.store.resourceVersion() - 1);
    server.store.create(pod('b'));
    server.store.compact();
    const seen = await watchPods({ resourceVersion: old });
    await waitFor(() => seen.done.length === 1);
    expect(seen.events).toHaveLength(1);
    expect(seen.events[0]?.type).toBe('ERROR');
    expect(seen.events[0]?.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
    expect(seen.done).toEqual(['closed']);
  });

  it('sends BOOKMARK events with the current resourceVersion when asked to', async () => {
    const seen = await watchPods({
      resourceVersion: String(server.store.resourceVersion()),
      allowWatchBookmarks: true,
    });
    server.store.create(node('n1'));
    await waitFor(() => seen.events.some((e) => e.type === 'BOOKMARK'));
    const bookmark = seen.events.find((e) => e.type === 'BOOKMARK')!;
    expect(bookmark.object).toEqual({
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: { resourceVersion: String(server.store.resourceVersion()) },
    });
    seen.controller.abort();
  });

  it('ends the stream cleanly after timeoutSeconds', async () => {
    const started = Date.now();
    const seen = await watchPods({ resourceVersion: String(server.store.resourceVersion()), timeoutSeconds: 1 });
    await waitFor(() => seen.done.length === 1, 3000);
    expect(seen.done).toEqual(['closed']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('filters by label selector, turning objects that leave or enter the selection into DELETED and ADDED', async () => {
    server.store.create(pod('a', { labels: { app: 'web' } }));
    const seen = await watchPods({ resourceVersion: String(server.store.resourceVersion()), labelSelector: 'app=web' });
    server.store.create(pod('other', { labels: { app: 'db' } }));
    server.store.patch('pods', 'a', 'default', { metadata: { labels: { app: 'db' } } });
    server.store.patch('pods', 'a', 'default', { metadata: { labels: { app: 'web' } } });
    server.store.patch('pods', 'a', 'default', { metadata: { labels: { app: 'web', v: '2' } } });
    await waitFor(() => seen.events.length === 3);
    expect(seen.events.map((e) => `${e.type} ${e.name}`)).toEqual(['DELETED a', 'ADDED a', 'MODIFIED a']);
    expect((seen.events[0]?.object as V1Pod).metadata?.labels).toEqual({ app: 'web' });
    seen.controller.abort();
  });

  it('watches a single object through GET .../{name}?watch=true', async () => {
    server.store.createAll([pod('a'), pod('b')]);
    const rv = String(server.store.resourceVersion());
    const seen = await watchPods({ resourceVersion: rv }, '/api/v1/namespaces/default/pods/b');
    server.store.patch('pods', 'a', 'default', { metadata: { labels: { x: '1' } } });
    server.store.patch('pods', 'b', 'default', { metadata: { labels: { x: '1' } } });
    await waitFor(() => seen.events.length === 1);
    expect(seen.events.map((e) => `${e.type} ${e.name}`)).toEqual(['MODIFIED b']);
    seen.controller.abort();
  });

  it('serves events.k8s.io/v1 watches in that API version', async () => {
    const seen = await watchPods(
      { resourceVersion: String(server.store.resourceVersion()) },
      '/apis/events.k8s.io/v1/namespaces/default/events',
    );
    server.store.create({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'a', namespace: 'default' },
      reason: 'Evicted',
      message: 'moved',
      type: 'Normal',
    });
    await waitFor(() => seen.events.length === 1);
    expect(seen.events[0]?.object).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      note: 'moved',
      regarding: { name: 'a' },
    });
    seen.controller.abort();
  });

  it('fans out by resource: a node write reaches node watchers only', async () => {
    const pods = await watchPods({ resourceVersion: String(server.store.resourceVersion()) });
    const nodes = await watchPods({ resourceVersion: String(server.store.resourceVersion()) }, '/api/v1/nodes');
    expect(server.openWatches({ resource: 'pods' })).toBe(1);
    server.store.create(node('n1'));
    await waitFor(() => nodes.events.length === 1);
    await sleep(20);
    expect(pods.events).toHaveLength(0);
    pods.controller.abort();
    nodes.controller.abort();
    await waitFor(() => server.openWatches() === 0);
  });
});

describe('client-node informer (ListWatch) against the server', () => {
  function podInformer() {
    const informer = makeInformer(server.kubeConfig(), '/api/v1/namespaces/default/pods', () =>
      core.listNamespacedPod({ namespace: 'default' }),
    );
    const log: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (p) => log.push(`add ${p.metadata?.name ?? ''}`));
    informer.on('update', (p) => log.push(`update ${p.metadata?.name ?? ''}`));
    informer.on('delete', (p) => log.push(`delete ${p.metadata?.name ?? ''}`));
    informer.on('error', (err) => errors.push(err));
    return { informer, log, errors };
  }

  it('relists and recovers after its watch resumes from a compacted resourceVersion (410)', async () => {
    server.store.createAll([pod('a'), pod('b')]);
    const { informer, log, errors } = podInformer();
    await informer.start();
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    expect(
      informer
        .list()
        .map((p) => p.metadata?.name)
        .sort(),
    ).toEqual(['a', 'b']);
    // Move the revision on elsewhere, compact, then change pods while the informer is disconnected.
    server.store.create(node('n1'));
    server.store.compact();
    const mark = server.stats.mark();
    server.faults.delay({ verb: 'watch', resource: 'pods', ms: 100, count: 1 });
    expect(server.faults.dropWatches({ resource: 'pods' })).toBe(1);
    server.store.delete('pods', 'a', 'default');
    server.store.create(pod('c'));
    await waitFor(
      () =>
        informer
          .list()
          .map((p) => p.metadata?.name)
          .sort()
          .join() === 'b,c',
      5000,
      'relist',
    );
    expect(log).toEqual(expect.arrayContaining(['delete a', 'add c']));
    expect(errors).toEqual([]);
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    // watch (answered with ERROR 410) → list → watch
    expect(server.stats.requests({}, mark).map((r) => r.verb)).toEqual(['watch', 'list', 'watch']);
    await informer.stop();
  });

  it('relists when a watch is answered with an injected 410', async () => {
    server.store.create(pod('a'));
    const { informer, errors } = podInformer();
    await informer.start();
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    const mark = server.stats.mark();
    server.faults.expireNextWatch({ resource: 'pods' });
    server.faults.dropWatches({ resource: 'pods' });
    await waitFor(() => server.stats.count({ verb: 'list', resource: 'pods' }, mark) === 1);
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    expect(errors).toEqual([]);
    await informer.stop();
  });

  it('re-watches from its resourceVersion (no relist) when the server ends the stream cleanly', async () => {
    const { informer, log } = podInformer();
    await informer.start();
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    const mark = server.stats.mark();
    server.faults.dropWatches({ resource: 'pods' }, 'end');
    server.store.create(pod('late'));
    await waitFor(() => log.includes('add late'));
    expect(server.stats.requests({}, mark).map((r) => r.verb)).toEqual(['watch']);
    await informer.stop();
  });

  it('emits error and stops for good when a re-watch fails with a non-410 status (client-node 1.4 behaviour)', async () => {
    const { informer, errors } = podInformer();
    await informer.start();
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    server.faults.failNext({ verb: 'watch', resource: 'pods', status: 500 });
    server.faults.dropWatches({ resource: 'pods' }, 'end');
    await waitFor(() => errors.length === 1);
    expect(errors[0]).toMatchObject({ statusCode: 500 });
    await sleep(100);
    expect(server.openWatches({ resource: 'pods' })).toBe(0);
    await informer.stop();
  });

  it('emits error and stops when the watch connection is reset mid-stream (client-node 1.4 behaviour)', async () => {
    const { informer, errors } = podInformer();
    await informer.start();
    await waitFor(() => server.openWatches({ resource: 'pods' }) === 1);
    server.faults.dropWatches({ resource: 'pods' }, 'destroy');
    await waitFor(() => errors.length === 1);
    await sleep(100);
    expect(server.openWatches({ resource: 'pods' })).toBe(0);
    await informer.stop();
  });

  it('resolves start() even when the initial LIST fails, reporting the failure only through the error event', async () => {
    server.faults.failNext({ verb: 'list', resource: 'pods', status: 503, retryAfterSeconds: 1 });
    const { informer, errors } = podInformer();
    await informer.start();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 503 });
    expect(server.openWatches({ resource: 'pods' })).toBe(0);
    await informer.stop();
  });
});
