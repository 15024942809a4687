// The Eviction API call, behind a one-method port so runs can be tested against a fake.

export interface EvictionTarget {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** deleteOptions.gracePeriodSeconds; undefined: the pod's terminationGracePeriodSeconds. */
  readonly gracePeriodSeconds?: number;
}

export interface Evictor {
  /** Sends one Eviction; resolves on 2xx, throws what the client threw otherwise. */
  evict(target: EvictionTarget, dryRun: boolean): Promise<void>;
}

/** policy/v1 Eviction with a uid precondition; dryRun=All in the query and the delete options when dry-running. */
/** The Eviction call (kubeClient.ts; named as client-node's CoreV1Api names it). */
export interface EvictionApi {
  createNamespacedPodEviction(p: { name: string; namespace: string; dryRun?: string; body: unknown }): Promise<unknown>;
}

export function createApiEvictor(core: EvictionApi): Evictor {
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
          deleteOptions: {
            preconditions: { uid: target.uid },
            ...(target.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: target.gracePeriodSeconds } : {}),
            ...(dryRun ? { dryRun: ['All'] } : {}),
          },
        },
      });
    },
  };
}
