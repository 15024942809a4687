// Converters from raw Kubernetes objects (as the API server or `kubectl -o yaml|json` prints them) to the compact model,
// shared by the snapshot loader and the watch caches. Each converter reads only the fields the model keeps, validates
// them with the API's rules, and throws FieldError with the exact field path of the first problem; the caller adds the
// file and the object.
//
// This module is their public surface; the parts live in convert/: the raw field readers (fields.ts), one module per
// kind (pods, nodes, pdbs, priorities, volumes), and the pieces of a pod (resources, node selectors, taints, pod
// selectors, owners, podFlags). The pod converter keeps what replicas share in a ConversionCache that its caller owns.
export { ConversionCache } from './convert/conversionCache.js';
export { describeObject } from './convert/describe.js';
export { convertNamespace, convertNode } from './convert/nodes.js';
export { convertPdb } from './convert/pdbs.js';
export { convertPod } from './convert/pods.js';
export {
  BUILTIN_PRIORITY_CLASSES,
  convertPriorityClass,
  makePriorityResolver,
  type PriorityResolver,
} from './convert/priorities.js';
export { convertCsiNode } from './convert/csiNodes.js';
export { convertPersistentVolume, convertPersistentVolumeClaim, convertStorageClass } from './convert/volumes.js';
export {
  convertNodeMetrics,
  convertPodMetrics,
  usageReading,
  type NodeMetricsInfo,
  type PodMetricsInfo,
} from './convert/metrics.js';
