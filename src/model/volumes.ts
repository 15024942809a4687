// Volume topology: a pod whose claim is bound to a zonal PersistentVolume can only run where that volume is
// reachable (the scheduler's VolumeBinding filter), so its replacement can only land there too.
//
// A bound claim takes the PV's spec.nodeAffinity; a PV without one, whose StorageClass lists allowedTopologies,
// takes those. An unbound claim of a WaitForFirstConsumer class constrains nothing (the volume is provisioned where
// the pod lands); an unbound claim of an Immediate class with allowedTopologies will be bound inside them.
import { matchesNodeSelectorTerm } from './nodeAffinity.js';
import type {
  NodeInfo,
  PersistentVolumeClaimInfo,
  PersistentVolumeInfo,
  PodInfo,
  StorageClassInfo,
  VolumeTopology,
} from './types.js';

export interface VolumeObjects {
  readonly persistentVolumes: readonly PersistentVolumeInfo[];
  readonly persistentVolumeClaims: readonly PersistentVolumeClaimInfo[];
  readonly storageClasses: readonly StorageClassInfo[];
}

const NONE: readonly VolumeTopology[] = Object.freeze([]);

/** Resolves each pod's claims against the volumes; pods without limiting volumes are returned as they are. */
export function withVolumeTopology(pods: PodInfo[], volumes: VolumeObjects): PodInfo[] {
  if (!pods.some((p) => p.claims.length > 0 || p.volumeTopology.length > 0)) return pods;
  const pvs = new Map(volumes.persistentVolumes.map((v) => [v.name, v]));
  const pvcs = new Map(volumes.persistentVolumeClaims.map((c) => [`${c.namespace}/${c.name}`, c]));
  const classes = new Map(volumes.storageClasses.map((c) => [c.name, c]));
  return pods.map((pod) => {
    if (pod.claims.length === 0 && pod.volumeTopology.length === 0) return pod;
    const topology: VolumeTopology[] = [];
    for (const claimName of pod.claims) {
      const claim = pvcs.get(`${pod.namespace}/${claimName}`);
      if (claim === undefined) continue;
      const t = claimTopology(claim, pvs, classes);
      if (t !== undefined) topology.push(t);
    }
    if (topology.length === 0 && pod.volumeTopology.length === 0) return pod;
    return { ...pod, volumeTopology: topology.length === 0 ? NONE : topology };
  });
}

function claimTopology(
  claim: PersistentVolumeClaimInfo,
  pvs: ReadonlyMap<string, PersistentVolumeInfo>,
  classes: ReadonlyMap<string, StorageClassInfo>,
): VolumeTopology | undefined {
  if (claim.volumeName !== undefined) {
    const pv = pvs.get(claim.volumeName);
    if (pv === undefined) return undefined;
    if (pv.nodeAffinity !== undefined) {
      return { claim: claim.name, source: `PersistentVolume ${pv.name}`, ...pv.nodeAffinity };
    }
    const cls = pv.storageClassName === undefined ? undefined : classes.get(pv.storageClassName);
    if (cls?.allowedTopologies === undefined) return undefined;
    return { claim: claim.name, source: `PersistentVolume ${pv.name}`, ...cls.allowedTopologies };
  }
  const cls = claim.storageClassName === undefined ? undefined : classes.get(claim.storageClassName);
  if (cls === undefined || cls.volumeBindingMode === 'WaitForFirstConsumer' || cls.allowedTopologies === undefined) {
    return undefined;
  }
  return { claim: claim.name, source: `StorageClass ${cls.name}`, ...cls.allowedTopologies };
}

/** Whether every volume of the pod can be reached from the node. */
export function volumesReachable(pod: PodInfo, node: NodeInfo): boolean {
  for (const v of pod.volumeTopology) if (!v.terms.some((t) => matchesNodeSelectorTerm(t, node))) return false;
  return true;
}

/** The first volume of the pod the node cannot reach, or undefined. */
export function unreachableVolume(pod: PodInfo, node: NodeInfo): VolumeTopology | undefined {
  return pod.volumeTopology.find((v) => !v.terms.some((t) => matchesNodeSelectorTerm(t, node)));
}

/** `claim data-db-0 (PersistentVolume pv-1) is reachable only from nodes with topology.kubernetes.io/zone in (zone-a)` */
export function volumeText(pod: PodInfo, v: VolumeTopology): string {
  return `its volume ${pod.namespace}/${v.claim} (${v.source}) is reachable only from nodes with ${v.text}`;
}

/** Key of the pod's volume limits, for memoising per distinct requirement. */
export function volumeKey(pod: PodInfo): string {
  return pod.volumeTopology.length === 0 ? '' : pod.volumeTopology.map((v) => v.text).join(' & ');
}
