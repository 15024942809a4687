// LIST semantics: label selectors (every operator), field selectors, limit/continue pagination and the list
// resourceVersion.
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { startTestApiServer } from '../apiserver/index.js';
import { apiError, node, pod } from './fixtures.js';

let server: TestApiServer;
let core: CoreV1Api;

beforeAll(async () => {
  server = await startTestApiServer();
  core = server.kubeConfig().makeApiClient(CoreV1Api);
  server.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
  server.store.createAll([node('n1'), node('n2')]);
  server.store.createAll([
    pod('web-1', { namespace: 'shop', labels: { app: 'web', tier: 'front' }, nodeName: 'n1' }),
    pod('web-2', { namespace: 'shop', labels: { app: 'web', tier: 'front', canary: 'true' }, nodeName: 'n2' }),
    pod('api-1', { namespace: 'shop', labels: { app: 'api', tier: 'back' }, nodeName: 'n1' }),
    pod('db-1', { namespace: 'shop', labels: { app: 'db' } }),
    pod('job-1', { namespace: 'default', labels: { app: 'job', prio: '7' }, nodeName: 'n2', phase: 'Succeeded' }),
  ]);
});

afterAll(async () => {
  await server.close();
});

async function names(labelSelector?: string, fieldSelector?: string): Promise<string[]> {
  const list = await core.listPodForAllNamespaces({ labelSelector, fieldSelector });
  return list.items.map((p) => p.metadata!.name!).sort();
}

describe('label selectors', () => {
  it.each([
    ['app=web', ['web-1', 'web-2']],
    ['app==web', ['web-1', 'web-2']],
    ['app!=web', ['api-1', 'db-1', 'job-1']],
    ['app in (api, db)', ['api-1', 'db-1']],
    ['app notin (web,api)', ['db-1', 'job-1']],
    ['tier', ['api-1', 'web-1', 'web-2']],
    ['!tier', ['db-1', 'job-1']],
    ['app=web,!canary', ['web-1']],
    ['tier notin (front)', ['api-1', 'db-1', 'job-1']],
    ['prio>5', ['job-1']],
    ['', ['api-1', 'db-1', 'job-1', 'web-1', 'web-2']],
  ])('%s selects %j', async (selector, expected) => {
    expect(await names(selector)).toEqual(expected);
  });

  it('answers 400 BadRequest for a malformed selector', async () => {
    const err = await apiError(core.listPodForAllNamespaces({ labelSelector: 'app in web' }));
    expect(err.code).toBe(400);
    expect(err.status.reason).toBe('BadRequest');
  });
});

describe('field selectors', () => {
  it.each([
    ['metadata.name=web-1', ['web-1']],
    ['metadata.namespace=default', ['job-1']],
    ['spec.nodeName=n1', ['api-1', 'web-1']],
    ['spec.nodeName=', ['db-1']],
    ['status.phase=Running', ['api-1', 'web-1', 'web-2']],
    ['status.phase!=Running,status.phase!=Succeeded', ['db-1']],
    ['spec.nodeName==n2,status.phase=Running', ['web-2']],
  ])('%s selects %j', async (selector, expected) => {
    expect(await names(undefined, selector)).toEqual(expected);
  });

  it('combines with a label selector and a namespace', async () => {
    const list = await core.listNamespacedPod({
      namespace: 'shop',
      labelSelector: 'app=web',
      fieldSelector: 'spec.nodeName=n2',
    });
    expect(list.items.map((p) => p.metadata?.name)).toEqual(['web-2']);
  });

  it('answers 400 for an unsupported field', async () => {
    const err = await apiError(core.listPodForAllNamespaces({ fieldSelector: 'spec.priority=3' }));
    expect(err.code).toBe(400);
    expect(err.status.message).toBe('field label not supported: spec.priority');
  });
});

describe('pagination', () => {
  it('pages with limit/continue over a consistent snapshot, with remainingItemCount', async () => {
    const first = await core.listPodForAllNamespaces({ limit: 2 });
    expect(first.items.map((p) => p.metadata?.name)).toEqual(['job-1', 'api-1']);
    expect(first.metadata?.remainingItemCount).toBe(3);
    expect(first.metadata?._continue).toBeTruthy();
    // A write between pages does not show up: later pages come from the first page's snapshot.
    server.store.create(pod('aaa-new', { namespace: 'shop' }));
    const second = await core.listPodForAllNamespaces({ limit: 2, _continue: first.metadata!._continue! });
    expect(second.items.map((p) => p.metadata?.name)).toEqual(['db-1', 'web-1']);
    expect(second.metadata?.resourceVersion).toBe(first.metadata?.resourceVersion);
    const third = await core.listPodForAllNamespaces({ limit: 2, _continue: second.metadata!._continue! });
    expect(third.items.map((p) => p.metadata?.name)).toEqual(['web-2']);
    expect(third.metadata?._continue).toBeUndefined();
    server.store.delete('pods', 'aaa-new', 'shop');
  });

  it('answers 410 Expired for a continue token older than a compaction', async () => {
    const first = await core.listPodForAllNamespaces({ limit: 1 });
    server.store.create(pod('compacted', { namespace: 'shop' }));
    server.store.compact();
    const err = await apiError(core.listPodForAllNamespaces({ limit: 1, _continue: first.metadata!._continue! }));
    expect(err.code).toBe(410);
    expect(err.status.reason).toBe('Expired');
    server.store.delete('pods', 'compacted', 'shop');
  });

  it('returns the current resourceVersion in list metadata', async () => {
    const list = await core.listNode();
    expect(list.metadata?.resourceVersion).toBe(String(server.store.resourceVersion()));
  });
});
