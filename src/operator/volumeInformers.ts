// The watch caches of volume topology: PersistentVolumes, PersistentVolumeClaims and StorageClasses, so the planner
// never moves a pod away from the only nodes that can reach its volume, and CSINodes, so it never moves one to a node
// whose CSI attach limit is reached. Kept apart from the other informers: they only feed ClusterCache's volume maps.
import type { CsiNodeInfo, PersistentVolumeClaimInfo, PersistentVolumeInfo, StorageClassInfo } from '../model/types.js';
import {
  convertCsiNode,
  convertPersistentVolume,
  convertPersistentVolumeClaim,
  convertStorageClass,
} from '../snapshot/convert.js';
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
  | SupervisedInformer<CsiNodeInfo>
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
    new SupervisedInformer<CsiNodeInfo>(
      {
        resource: 'csinodes',
        path: '/apis/storage.k8s.io/v1/csinodes',
        list: (page) => clients.storage.listCSINode(pageParams(page)),
        convert: convertCsiNode,
        // Served since v1.17, but a trimmed-down API server may lack it; the planner then has no attach limits.
        optional: true,
      },
      cache.csiNodeHandlers,
      deps,
    ),
  ];
}
