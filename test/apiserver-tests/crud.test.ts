// CRUD semantics over HTTP with the real client-node: create/get/update/patch/delete, optimistic concurrency,
// preconditions, admission and defaulting, discovery, authentication and events.
import {
  CoreV1Api,
  EventsV1Api,
  PatchStrategy,
  SchedulingV1Api,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { startTestApiServer } from '../apiserver/index.js';
import { apiError, node, pod } from './fixtures.js';

let server: TestApiServer;
let core: CoreV1Api;

beforeEach(async () => {
  server = await startTestApiServer();
  core = server.kubeConfig().makeApiClient(CoreV1Api);
});

afterEach(async () => {
  await server.close();
});

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategicPatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

function newPod(name: string, labels: Record<string, string> = {}): V1Pod {
  return { metadata: { name, labels }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } };
}

describe('create', () => {
  it('assigns uid, resourceVersion and creationTimestamp, applies pod defaults and resets status to Pending', async () => {
    const before = server.store.resourceVersion();
    const created = await core.createNamespacedPod({
      namespace: 'default',
      body: { ...newPod('web-1'), status: { phase: 'Running' } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(created.metadata?.resourceVersion)).toBe(before + 1);
    expect(created.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(created.status?.phase).toBe('Pending');
    expect(created.status?.qosClass).toBe('BestEffort');
    expect(created.spec?.schedulerName).toBe('default-scheduler');
    expect(created.spec?.priority).toBe(0);
    expect(created.spec?.tolerations?.map((t) => t.key)).toEqual([
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
    ]);
  });

  it('answers 409 AlreadyExists for a duplicate name', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const err = await apiError(core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') }));
    expect(err.code).toBe(409);
    expect(err.status).toMatchObject({
      reason: 'AlreadyExists',
      message: 'pods "web-1" already exists',
      details: { name: 'web-1', kind: 'pods' },
    });
  });

  it('generates a name from generateName', async () => {
    const created = await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { generateName: 'web-' }, spec: newPod('x').spec },
    });
    expect(created.metadata?.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('answers 422 Invalid with field causes when required fields are missing', async () => {
    const err = await apiError(
      core.createNamespacedPod({ namespace: 'default', body: { metadata: { name: 'x' }, spec: { containers: [] } } }),
    );
    expect(err.code).toBe(422);
    expect(err.status.reason).toBe('Invalid');
    expect(err.status.message).toBe('Pod "x" is invalid: spec.containers: Required value');
    expect(err.status.details?.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers' },
    ]);
  });

  it('answers 404 for a namespace that does not exist (NamespaceLifecycle)', async () => {
    const err = await apiError(core.createNamespacedPod({ namespace: 'nope', body: newPod('x') }));
    expect(err.code).toBe(404);
    expect(err.status.message).toBe('namespaces "nope" not found');
  });

  it('resolves priority from the PriorityClass and rejects unknown classes with 403', async () => {
    const scheduling = server.kubeConfig().makeApiClient(SchedulingV1Api);
    await scheduling.createPriorityClass({ body: { metadata: { name: 'high' }, value: 1000 } });
    const created = await core.createNamespacedPod({
      namespace: 'default',
      body: { ...newPod('p'), spec: { ...newPod('p').spec!, priorityClassName: 'high' } },
    });
    expect(created.spec?.priority).toBe(1000);
    const err = await apiError(
      core.createNamespacedPod({
        namespace: 'default',
        body: { ...newPod('q'), spec: { ...newPod('q').spec!, priorityClassName: 'missing' } },
      }),
    );
    expect(err.code).toBe(403);
    expect(err.status.message).toBe('pods "q" is forbidden: no PriorityClass with name missing was found');
  });

  it('serves the seeded system priority classes and namespaces', async () => {
    const scheduling = server.kubeConfig().makeApiClient(SchedulingV1Api);
    const pc = await scheduling.readPriorityClass({ name: 'system-cluster-critical' });
    expect(pc.value).toBe(2_000_000_000);
    const namespaces = await core.listNamespace();
    expect(namespaces.items.map((n) => n.metadata?.name)).toEqual([
      'default',
      'kube-node-lease',
      'kube-public',
      'kube-system',
    ]);
  });
});

describe('update', () => {
  it('rejects a stale resourceVersion with 409 Conflict and accepts the current one', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const first = await core.replaceNamespacedPod({
      name: 'web-1',
      namespace: 'default',
      body: { ...created, metadata: { ...created.metadata, labels: { v: '1' } } },
    });
    expect(Number(first.metadata?.resourceVersion)).toBeGreaterThan(Number(created.metadata?.resourceVersion));
    const err = await apiError(
      core.replaceNamespacedPod({
        name: 'web-1',
        namespace: 'default',
        body: { ...created, metadata: { ...created.metadata, labels: { v: '2' } } },
      }),
    );
    expect(err.code).toBe(409);
    expect(err.status).toMatchObject({
      reason: 'Conflict',
      message:
        'Operation cannot be fulfilled on pods "web-1": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('does not write (no new resourceVersion) when nothing changes', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const same = await core.replaceNamespacedPod({ name: 'web-1', namespace: 'default', body: created });
    expect(same.metadata?.resourceVersion).toBe(created.metadata?.resourceVersion);
  });

  it('ignores status on the main resource and rejects changes to immutable pod spec fields', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const updated = await core.replaceNamespacedPod({
      name: 'web-1',
      namespace: 'default',
      body: { ...created, status: { phase: 'Running' } },
    });
    expect(updated.status?.phase).toBe('Pending');
    const err = await apiError(
      core.patchNamespacedPod({ name: 'web-1', namespace: 'default', body: { spec: { nodeName: 'n1' } } }, mergePatch),
    );
    expect(err.code).toBe(422);
    expect(err.status.message).toContain('pod updates may not change fields other than');
  });

  it('updates pod status through /status only', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const patched = await core.patchNamespacedPodStatus(
      { name: 'web-1', namespace: 'default', body: { status: { phase: 'Running' }, spec: { nodeName: 'ignored' } } },
      mergePatch,
    );
    expect(patched.status?.phase).toBe('Running');
    expect(patched.spec?.nodeName).toBeUndefined();
  });

  it('answers 404 when updating a missing object', async () => {
    const err = await apiError(
      core.replaceNamespacedPod({ name: 'ghost', namespace: 'default', body: newPod('ghost') }),
    );
    expect(err.code).toBe(404);
  });
});

describe('patch', () => {
  it('applies JSON patch (client-node default), merge patch and strategic merge patch', async () => {
    server.store.create(node('n1'));
    const json = await core.patchNode({
      name: 'n1',
      body: [{ op: 'add', path: '/metadata/labels/zone', value: 'a' }],
    });
    expect(json.metadata?.labels?.zone).toBe('a');
    const merged = await core.patchNode(
      { name: 'n1', body: { metadata: { labels: { zone: null, rack: 'r1' } } } },
      mergePatch,
    );
    expect(merged.metadata?.labels).toEqual({ 'kubernetes.io/hostname': 'n1', rack: 'r1' });
    const tainted = await core.patchNode(
      { name: 'n1', body: { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }] } } },
      strategicPatch,
    );
    const twice = await core.patchNode(
      { name: 'n1', body: { spec: { taints: [{ key: 'b', effect: 'NoSchedule' }] } } },
      strategicPatch,
    );
    expect(tainted.spec?.taints?.map((t) => t.key)).toEqual(['a']);
    expect(twice.spec?.taints?.map((t) => t.key)).toEqual(['a', 'b']);
  });

  it('answers 422 when a JSON patch test operation fails and 409 when the patch carries a stale resourceVersion', async () => {
    const n = server.store.create(node('n1'));
    const failed = await apiError(
      core.patchNode({ name: 'n1', body: [{ op: 'test', path: '/metadata/labels/zone', value: 'x' }] }),
    );
    expect(failed.code).toBe(422);
    server.store.patch('nodes', 'n1', undefined, { metadata: { labels: { changed: 'yes' } } });
    const conflict = await apiError(
      core.patchNode(
        { name: 'n1', body: { metadata: { resourceVersion: n.metadata.resourceVersion, labels: { x: 'y' } } } },
        mergePatch,
      ),
    );
    expect(conflict.code).toBe(409);
  });
});

describe('delete', () => {
  it('deletes a pod and answers with the object; then 404', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const deleted = await core.deleteNamespacedPod({ name: 'web-1', namespace: 'default' });
    expect(deleted.metadata?.name).toBe('web-1');
    expect(server.store.get('pods', 'web-1', 'default')).toBeUndefined();
    const err = await apiError(core.deleteNamespacedPod({ name: 'web-1', namespace: 'default' }));
    expect(err.code).toBe(404);
  });

  it('honours uid and resourceVersion preconditions (409 on mismatch)', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const byUid = await apiError(
      core.deleteNamespacedPod({ name: 'web-1', namespace: 'default', body: { preconditions: { uid: 'other' } } }),
    );
    expect(byUid.code).toBe(409);
    expect(byUid.status.message).toContain('Precondition failed: UID in precondition: other');
    const byRv = await apiError(
      core.deleteNamespacedPod({
        name: 'web-1',
        namespace: 'default',
        body: { preconditions: { resourceVersion: '1' } },
      }),
    );
    expect(byRv.code).toBe(409);
    await core.deleteNamespacedPod({
      name: 'web-1',
      namespace: 'default',
      body: { preconditions: { uid: created.metadata!.uid!, resourceVersion: created.metadata!.resourceVersion! } },
    });
    expect(server.store.count('pods')).toBe(0);
  });

  it('leaves everything in place on dryRun=All', async () => {
    await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const rv = server.store.resourceVersion();
    await core.deleteNamespacedPod({ name: 'web-1', namespace: 'default', dryRun: 'All' });
    expect(server.store.get('pods', 'web-1', 'default')).toBeDefined();
    expect(server.store.resourceVersion()).toBe(rv);
  });

  it('keeps a pod Terminating for podTerminationDelayMs when a delay is configured', async () => {
    await server.close();
    server = await startTestApiServer({ podTerminationDelayMs: 150 });
    core = server.kubeConfig().makeApiClient(CoreV1Api);
    server.store.create(node('n1'));
    server.store.create(pod('web-1', { nodeName: 'n1' }));
    const terminating = await core.deleteNamespacedPod({ name: 'web-1', namespace: 'default' });
    expect(terminating.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(terminating.metadata?.deletionGracePeriodSeconds).toBe(30);
    expect(server.store.get('pods', 'web-1', 'default')).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(server.store.get('pods', 'web-1', 'default')).toBeUndefined();
  });

  it('waits for finalizers before removing an object', async () => {
    server.store.create({ ...node('n1'), metadata: { ...node('n1').metadata, finalizers: ['example.com/hold'] } });
    // While finalizers hold the object, DELETE answers with the object itself rather than a Status.
    const pending = await core.deleteNode({ name: 'n1' });
    expect(pending.kind).toBe('Node');
    const held = await core.readNode({ name: 'n1' });
    expect(held.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    await core.patchNode({ name: 'n1', body: [{ op: 'remove', path: '/metadata/finalizers' }] });
    expect(server.store.get('nodes', 'n1')).toBeUndefined();
  });
});

describe('pods/binding', () => {
  it('binds an unscheduled pod (201, PodScheduled=True) and refuses to bind it twice (409)', async () => {
    server.store.create(node('n1'));
    await core.createNamespacedPod({ namespace: 'default', body: newPod('web-1') });
    const target = { apiVersion: 'v1', kind: 'Node', name: 'n1' };
    const status = await core.createNamespacedPodBinding({
      name: 'web-1',
      namespace: 'default',
      body: { metadata: { name: 'web-1' }, target },
    });
    // The server answers a Status; client-node deserialises it as a V1Binding, keeping only kind/apiVersion.
    expect(status.kind).toBe('Status');
    const bound = await core.readNamespacedPod({ name: 'web-1', namespace: 'default' });
    expect(bound.spec?.nodeName).toBe('n1');
    expect(bound.status?.conditions).toContainEqual(expect.objectContaining({ type: 'PodScheduled', status: 'True' }));
    const again = await apiError(
      core.createNamespacedBinding({ namespace: 'default', body: { metadata: { name: 'web-1' }, target } }),
    );
    expect(again.code).toBe(409);
    expect(again.status.message).toContain('pod web-1 is already assigned to node "n1"');
  });
});

describe('namespaces', () => {
  it('deleting a namespace removes its objects and the namespace', async () => {
    await core.createNamespace({ body: { metadata: { name: 'shop' } } });
    await core.createNamespacedPod({ namespace: 'shop', body: newPod('web-1') });
    const deleted = await core.deleteNamespace({ name: 'shop' });
    expect(deleted.kind).toBe('Namespace');
    expect(server.store.count('pods', 'shop')).toBe(0);
    expect(server.store.get('namespaces', 'shop')).toBeUndefined();
  });
});

describe('discovery, authentication and errors', () => {
  it('serves /api, /apis, group and resource lists including pods/eviction', async () => {
    const headers = { Authorization: 'Bearer test-token' };
    const api = (await (await fetch(`${server.url}/api`, { headers })).json()) as { versions: string[] };
    expect(api.versions).toEqual(['v1']);
    const groups = (await (await fetch(`${server.url}/apis`, { headers })).json()) as { groups: { name: string }[] };
    expect(groups.groups.map((g) => g.name)).toEqual(
      expect.arrayContaining([
        'policy',
        'scheduling.k8s.io',
        'coordination.k8s.io',
        'events.k8s.io',
        'rebalancer.dev',
        'apps',
      ]),
    );
    const v1 = (await (await fetch(`${server.url}/api/v1`, { headers })).json()) as {
      resources: { name: string; kind: string }[];
    };
    expect(v1.resources).toContainEqual(expect.objectContaining({ name: 'pods/eviction', kind: 'Eviction' }));
    const custom = (await (await fetch(`${server.url}/apis/rebalancer.dev/v1alpha1`, { headers })).json()) as {
      resources: { name: string; namespaced: boolean }[];
    };
    expect(custom.resources).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'rebalancepolicies', namespaced: false }),
        expect.objectContaining({ name: 'rebalancepolicies/status' }),
      ]),
    );
  });

  it('answers 401 without the bearer token', async () => {
    const response = await fetch(`${server.url}/api/v1/pods`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ kind: 'Status', reason: 'Unauthorized', code: 401 });
  });

  it('answers 404 NotFound for unknown resources', async () => {
    const response = await fetch(`${server.url}/api/v1/widgets`, { headers: { Authorization: 'Bearer test-token' } });
    expect(response.status).toBe(404);
  });
});

describe('events', () => {
  it('creates core/v1 and events.k8s.io/v1 events in one storage, each readable through both APIs', async () => {
    const eventsApi = server.kubeConfig().makeApiClient(EventsV1Api);
    const eventTime = new Date('2025-01-01T00:00:00.000Z');
    await eventsApi.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'web-1.evicted' },
        eventTime,
        reportingController: 'rebalancer.dev/controller',
        reportingInstance: 'rebalancer-0',
        action: 'Evict',
        reason: 'Rebalanced',
        type: 'Normal',
        note: 'evicted to restore zone spread',
        regarding: { kind: 'Pod', namespace: 'default', name: 'web-1' },
      },
    });
    await core.createNamespacedEvent({
      namespace: 'default',
      body: {
        metadata: { name: 'legacy' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-2' },
        reason: 'Old',
        message: 'core event',
        type: 'Warning',
      },
    });
    const coreList = await core.listNamespacedEvent({ namespace: 'default', fieldSelector: 'reason=Rebalanced' });
    expect(coreList.items).toHaveLength(1);
    expect(coreList.items[0]).toMatchObject({
      message: 'evicted to restore zone spread',
      reportingComponent: 'rebalancer.dev/controller',
    });
    const v1List = await eventsApi.listNamespacedEvent({ namespace: 'default' });
    expect(v1List.items.map((e) => e.note).sort()).toEqual(['core event', 'evicted to restore zone spread']);
  });

  it('rejects an events.k8s.io/v1 event without the required fields', async () => {
    const eventsApi = server.kubeConfig().makeApiClient(EventsV1Api);
    const err = await apiError(
      eventsApi.createNamespacedEvent({
        namespace: 'default',
        body: { metadata: { name: 'bad' }, eventTime: new Date(), type: 'Normal', reason: 'X' },
      }),
    );
    expect(err.code).toBe(422);
    expect(err.status.details?.causes?.map((c) => c.field)).toEqual([
      'reportingController',
      'reportingInstance',
      'action',
    ]);
  });
});
