// A pod's controller and the workload it belongs to (a ReplicaSet with a pod-template-hash is its Deployment). The
// replicas of one controller share one OwnerRef and one WorkloadRef.
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import type { Labels, OwnerRef, WorkloadRef } from '../../model/types.js';
import type { BoundedCache } from './boundedCache.js';
import { getList, getString, requireString } from './fields.js';

/** The controller among metadata.ownerReferences; `cache` (by uid) shares one OwnerRef between replicas. */
export function controllerOwner(meta: Obj | undefined, cache: BoundedCache<string, OwnerRef>): OwnerRef | undefined {
  const refs = getList(meta, 'ownerReferences', 'metadata');
  if (refs === undefined) return undefined;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i];
    const path = `metadata.ownerReferences[${i}]`;
    if (!isObj(ref)) throw new FieldError(path, `must be an object (got ${typeName(ref)})`);
    if (ref['controller'] !== true) continue;
    const kind = requireString(ref, 'kind', path);
    const name = requireString(ref, 'name', path);
    const uid = getString(ref, 'uid', path) ?? '';
    // The replicas of one controller share one OwnerRef.
    const known = cache.get(uid);
    if (known !== undefined && known.kind === kind && known.name === name) return known;
    const owner: OwnerRef = Object.freeze({ kind: intern(kind), name: intern(name), uid });
    cache.set(uid, owner);
    return owner;
  }
  return undefined;
}

/** The workload a pod belongs to; `cache` gives the pods of one OwnerRef one WorkloadRef. */
export function workloadOf(
  owner: OwnerRef | undefined,
  podName: string,
  labels: Labels,
  cache: WeakMap<OwnerRef, WorkloadRef>,
): WorkloadRef {
  if (owner === undefined) return { kind: 'Pod', name: podName };
  const known = cache.get(owner);
  if (known !== undefined) return known;
  const workload = Object.freeze(deriveWorkload(owner, labels));
  cache.set(owner, workload);
  return workload;
}

function deriveWorkload(owner: OwnerRef, labels: Labels): WorkloadRef {
  if (owner.kind === 'ReplicaSet' && Object.hasOwn(labels, 'pod-template-hash')) {
    const hash = labels['pod-template-hash']!;
    if (hash !== '' && owner.name.length > hash.length + 1 && owner.name.endsWith(`-${hash}`)) {
      return { kind: 'Deployment', name: intern(owner.name.slice(0, owner.name.length - hash.length - 1)) };
    }
  }
  return { kind: owner.kind, name: owner.name };
}
