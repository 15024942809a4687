// The Eviction API call, behind a one-method port so runs can be tested against a fake.
import type { CoreV1Api } from '@kubernetes/client-node';

export interface EvictionTarget {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface Evictor {
  /** Sends one Eviction; resolves on 2xx, throws what the client threw otherwise. */
  evict(target: EvictionTarget, dryRun: boolean): Promise<void>;
}

/** policy/v1 Eviction with a uid precondition; dryRun=All in the query and the delete options when dry-running. */
export function createApiEvictor(core: Pick<CoreV1Api, 'createNamespacedPodEviction'>): Evictor {
  return {
    async evict(target, dryRun) {
      await core.createNamespacedPodEviction({
        name: target.name,
        namespace: target.namespace,
        ...(dryRun ? { dryRun: 'All' } : {}),
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: target.name, namespace: target.namespace },
          deleteOptions: { preconditions: { uid: target.uid }, ...(dryRun ? { dryRun: ['All'] } : {}) },
        },
      });
    },
  };
}
