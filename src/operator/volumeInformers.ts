// The watch caches of volume topology: PersistentVolumes, PersistentVolumeClaims and StorageClasses, so the planner
// never moves a pod away from the only nodes that can reach its volume. Kept apart from the other informers: they
// only feed ClusterCache's volume maps.
import type { PersistentVolumeClaimInfo, PersistentVolumeInfo, StorageClassInfo } from '../model/types.js';
import { convertPersistentVolume, convertPersistentVolumeClaim, convertStorageClass } from '../snapshot/convert.js';
import type { ClusterCache } from './clusterCache.js';
import { pageParams, SupervisedInformer, type InformerDeps } from '../kube/informers.js';
import type { KubeClients } from '../kube/kubeClient.js';

export function volumeInformers(
  clients: KubeClients,
  cache: ClusterCache,
  deps: InformerDeps,
): Array<
  | SupervisedInformer<PersistentVolumeInfo>
  | SupervisedInformer<PersistentVolumeClaimInfo>
  | SupervisedInformer<StorageClassInfo>
> {
  return [
    new SupervisedInformer<PersistentVolumeInfo>(
      {
        resource: 'persistentvolumes',
        path: '/api/v1/persistentvolumes',
        list: (page) => clients.core.listPersistentVolume(pageParams(page)),
        convert: convertPersistentVolume,
      },
      cache.persistentVolumeHandlers,
      deps,
    ),
    new SupervisedInformer<PersistentVolumeClaimInfo>(
      {
        resource: 'persistentvolumeclaims',
        path: '/api/v1/persistentvolumeclaims',
        list: (page) => clients.core.listPersistentVolumeClaimForAllNamespaces(pageParams(page)),
        convert: convertPersistentVolumeClaim,
      },
      cache.persistentVolumeClaimHandlers,
      deps,
    ),
    new SupervisedInformer<StorageClassInfo>(
      {
        resource: 'storageclasses',
        path: '/apis/storage.k8s.io/v1/storageclasses',
        list: (page) => clients.storage.listStorageClass(pageParams(page)),
        convert: convertStorageClass,
      },
      cache.storageClassHandlers,
      deps,
    ),
  ];
}
