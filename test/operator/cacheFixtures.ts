// Feeding builder objects into a ClusterCache the way the informers do (convert on arrival, then upsert).
import { ClusterCache } from '../../src/operator/clusterCache.js';
import {
  convertCsiNode,
  convertNamespace,
  convertNode,
  convertPersistentVolume,
  convertPersistentVolumeClaim,
  convertPriorityClass,
  convertStorageClass,
} from '../../src/snapshot/convert.js';
import type { Cached } from '../../src/kube/informers.js';
import type { Clock } from '../../src/clock.js';

type Raw = Record<string, unknown>;
type Buildable = Raw | { obj(): Raw };

function raw(o: Buildable): Raw {
  return typeof (o as { obj?: unknown }).obj === 'function' ? (o as { obj(): Raw }).obj() : o;
}

function cached<T>(o: Raw, value: T): Cached<T> {
  const meta = (o['metadata'] ?? {}) as { name?: string; namespace?: string; resourceVersion?: string };
  return {
    metadata: {
      name: meta.name ?? '',
      ...(meta.namespace !== undefined ? { namespace: meta.namespace } : {}),
      ...(meta.resourceVersion !== undefined ? { resourceVersion: meta.resourceVersion } : {}),
    },
    value,
  };
}

/** Upserts each object into the cache through its informer handlers. */
export function apply(cache: ClusterCache, objects: readonly Buildable[]): void {
  for (const item of objects) {
    const o = raw(item);
    switch (o['kind']) {
      case 'Node':
        cache.nodeHandlers.upsert(cached(o, convertNode(o)));
        break;
      case 'Pod':
        cache.podHandlers.upsert(cached(o, cache.convertPod(o)));
        break;
      case 'PodDisruptionBudget':
        cache.pdbHandlers.upsert(cached(o, cache.convertPdb(o)));
        break;
      case 'PriorityClass':
        cache.priorityClassHandlers.upsert(cached(o, convertPriorityClass(o)));
        break;
      case 'Namespace':
        cache.namespaceHandlers.upsert(cached(o, convertNamespace(o)));
        break;
      case 'PersistentVolume':
        cache.persistentVolumeHandlers.upsert(cached(o, convertPersistentVolume(o)));
        break;
      case 'PersistentVolumeClaim':
        cache.persistentVolumeClaimHandlers.upsert(cached(o, convertPersistentVolumeClaim(o)));
        break;
      case 'StorageClass':
        cache.storageClassHandlers.upsert(cached(o, convertStorageClass(o)));
        break;
      case 'CSINode':
        cache.csiNodeHandlers.upsert(cached(o, convertCsiNode(o)));
        break;
      case 'RebalancePolicy':
        cache.policyHandlers.upsert(cached(o, cache.convertPolicy(o)));
        break;
      default:
        throw new Error(`unsupported kind ${String(o['kind'])}`);
    }
  }
}

/** Deletes a pod from the cache, as a DELETED watch event would. */
export function deletePod(cache: ClusterCache, namespace: string, name: string): void {
  cache.podHandlers.remove({ metadata: { name, namespace }, value: undefined });
}

export function newCache(clock: Clock, objects: readonly Buildable[] = []): ClusterCache {
  const cache = new ClusterCache(clock);
  apply(cache, objects);
  return cache;
}
