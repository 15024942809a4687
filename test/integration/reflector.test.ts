// The reflector (src/kube/informers.ts) and the client (src/kube/kubeClient.ts) against the real kube-apiserver, where
// the server's behaviour is the point: a watch from a resourceVersion etcd has compacted away is refused with 410
// Gone (as the server sends it: an ERROR event in the stream), and the informer lists again and catches up.
// The API server runs with its watch cache off and compaction every second, so the 410 comes within seconds (with
// the watch cache on, v1.26 kept serving a watch from resourceVersion 1 on a fresh cluster). Credentials are the
// control plane's admin kubeconfig, read by src/kube/credentials.ts (client certificate and CA files). Lean: no
// controller manager, no scheduler.
import * as k8s from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { loadKubeconfig } from '../../src/kube/credentials.js';
import { SupervisedInformer, type RawList } from '../../src/kube/informers.js';
import { createKubeClients, type KubeClients } from '../../src/kube/kubeClient.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import { controlPlaneAvailable, startControlPlane, type ControlPlane } from '../controlplane/index.js';
import { captureLogger } from '../operator/fakes.js';
import { waitFor } from './cluster.js';

describe.skipIf(!controlPlaneAvailable())('the reflector against the real API server', () => {
  let cp: ControlPlane;
  let clients: KubeClients;

  beforeAll(async () => {
    // The API server compacts etcd every second (default 5 min), so an old version is gone within seconds, and
    // serves watches from etcd (no watch cache), which answers a compacted version with 410.
    cp = await startControlPlane({
      controllerManager: false,
      scheduler: false,
      apiServerArgs: ['--etcd-compaction-interval=1s', '--watch-cache=false'],
    });
    const { credentials, delegatedFor } = await loadKubeconfig([cp.kubeconfigPath], undefined, 'control plane', {});
    expect(delegatedFor).toBeUndefined();
    clients = createKubeClients(credentials, {
      limiter: createRateLimiter({ qps: 50, burst: 100, clock: systemClock }),
      clock: systemClock,
    });
  }, 120_000);

  afterAll(async () => {
    clients?.close();
    await cp?.stop();
  });

  it('lists again after the server answers 410 for a compacted version, and catches up', async () => {
    const core = cp.kubeConfig().makeApiClient(k8s.CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: 'before' } } });
    // Two compaction intervals: the versions up to now are compacted away.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const { logger, lines } = captureLogger();
    let lists = 0;
    const names = new Set<string>();
    const informer = new SupervisedInformer<string>(
      {
        resource: 'namespaces',
        path: '/api/v1/namespaces',
        list: async (page): Promise<RawList> => {
          const answer = await clients.core.listNamespace({ limit: page?.limit, _continue: page?.continue });
          // The first list claims a version far older than the watch cache's window: its watch gets 410.
          if (++lists > 1) return answer;
          return { ...answer, metadata: { ...answer.metadata, resourceVersion: '1' } };
        },
        convert: (raw) => (raw as { metadata: { name: string } }).metadata.name,
      },
      {
        upsert: (e) => names.add(e.metadata.name),
        remove: (e) => names.delete(e.metadata.name),
      },
      { clock: systemClock, logger, newWatch: () => clients.newWatch() },
    );
    informer.start();
    try {
      await informer.waitForSync();
      expect(names.has('before')).toBe(true);
      await waitFor(() => lists >= 2, 20_000, 'the relist after 410');
      expect(lines.some((l) => l.msg === 'watch expired (410 Gone); listing again')).toBe(true);
      await core.createNamespace({ body: { metadata: { name: 'after' } } });
      await waitFor(() => names.has('after'), 20_000, 'the namespace created after the relist');
      expect(lists).toBe(2);
      expect(informer.restarts()).toBe(0);
    } finally {
      informer.stop();
    }
  }, 60_000);
});
