// What the pod converter remembers between pods: values shared by the replicas of a workload, so 150,000 pods of a
// few thousand workloads are parsed and validated a few thousand times. One instance belongs to whoever converts a
// set of pods together: the snapshot loader makes one per load, the operator's ClusterCache one for its lifetime.
// Every cache is bounded (boundedCache.ts).
import type { OwnerRef, RequiredNodeAffinity, Toleration, WorkloadRef } from '../../model/types.js';
import { BoundedCache } from './boundedCache.js';
import type { SelectorCaches } from './podSelectors.js';
import { PreviousPod } from './previousPod.js';
import type { PodResources } from './resources.js';

export class ConversionCache {
  /** Required node affinity by canonical text. */
  readonly requirements = new BoundedCache<string, RequiredNodeAffinity>();
  /** Validated toleration lists by raw shape. */
  readonly tolerations = new BoundedCache<string, readonly Toleration[]>();
  /** Compiled label selectors (spread constraints, pod affinity). */
  readonly selectors: SelectorCaches = { compiled: new BoundedCache(), anded: new BoundedCache() };
  /** Controller OwnerRefs by uid. */
  readonly owners = new BoundedCache<string, OwnerRef>();
  /** The workload of each OwnerRef. */
  readonly workloads = new WeakMap<OwnerRef, WorkloadRef>();
  /** Requests and QoS by the raw resource strings of all containers. */
  readonly resources = new BoundedCache<string, PodResources>();
  /** Container image lists (ImageLocality), keyed by the raw images. */
  readonly images = new BoundedCache<string, readonly string[]>();
  /** The last pod converted. */
  readonly previous = new PreviousPod();
}
