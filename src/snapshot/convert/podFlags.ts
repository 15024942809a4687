// What a pod's annotations and volumes say about evicting it: the evict annotation, the protections other tools'
// annotations ask for, local storage and the claims it mounts.
import { intern } from '../../model/intern.js';
import { PREFER_NO_EVICTION } from '../../model/pods.js';
import { isObj, present, type Obj } from '../../model/rawJson.js';
import type { EvictAnnotation } from '../../model/types.js';
import { EMPTY, getList } from './fields.js';

function annotation(annotations: Obj | undefined, key: string): string | undefined {
  if (annotations === undefined || !Object.hasOwn(annotations, key)) return undefined;
  const value = annotations[key];
  return typeof value === 'string' ? value : undefined;
}

export function evictAnnotationOf(annotations: Obj | undefined): EvictAnnotation {
  // Case-insensitive, so a hand-typed "Never" protects the pod rather than being silently ignored.
  const own = annotation(annotations, 'rebalancer.dev/evict')?.toLowerCase();
  if (own === 'never') return 'never';
  if (own === 'always') return 'always';
  if (annotations !== undefined && Object.hasOwn(annotations, 'descheduler.alpha.kubernetes.io/evict')) return 'always';
  return undefined;
}

export function protectedByOf(annotations: Obj | undefined, evict: EvictAnnotation): string | undefined {
  if (annotations === undefined) return undefined;
  if (evict === 'never') return 'annotation rebalancer.dev/evict: "never"';
  if (annotation(annotations, 'karpenter.sh/do-not-disrupt') === 'true')
    return 'annotation karpenter.sh/do-not-disrupt: "true"';
  if (annotation(annotations, 'cluster-autoscaler.kubernetes.io/safe-to-evict') === 'false') {
    return 'annotation cluster-autoscaler.kubernetes.io/safe-to-evict: "false"';
  }
  if (Object.hasOwn(annotations, 'descheduler.alpha.kubernetes.io/prefer-no-eviction')) {
    return PREFER_NO_EVICTION;
  }
  return undefined;
}

export function volumeFlags(
  spec: Obj | undefined,
  podName: string,
): { localStorage: boolean; pvc: boolean; claims: readonly string[] } {
  const volumes = getList(spec, 'volumes', 'spec');
  let localStorage = false,
    pvc = false;
  if (volumes === undefined) return { localStorage, pvc, claims: EMPTY };
  const claims: string[] = [];
  for (const v of volumes) {
    if (!isObj(v)) continue;
    if (present(v['emptyDir']) || present(v['hostPath'])) localStorage = true;
    const claim = v['persistentVolumeClaim'];
    if (present(claim)) {
      pvc = true;
      if (isObj(claim) && typeof claim['claimName'] === 'string') claims.push(intern(claim['claimName']));
    }
    if (present(v['ephemeral'])) {
      pvc = true;
      // The ephemeral volume controller names the claim after the pod and the volume.
      if (typeof v['name'] === 'string') claims.push(intern(`${podName}-${v['name']}`));
    }
  }
  return { localStorage, pvc, claims: claims.length === 0 ? EMPTY : claims };
}
