// Volume topology: a pod whose claim is bound to a zonal PersistentVolume can only run where that volume is
// reachable (the scheduler's VolumeBinding filter), so its replacement can only land there too.
//
// A bound claim takes the PV's spec.nodeAffinity; a PV without one, whose StorageClass lists allowedTopologies,
// takes those. An unbound claim of a WaitForFirstConsumer class constrains nothing (the volume is provisioned where
// the pod lands); an unbound claim of an Immediate class with allowedTopologies will be bound inside them.
// The same pass resolves what the NodeVolumeLimits and VolumeRestrictions filters read: the CSI volumes a pod attaches
// and its ReadWriteOncePod claims.
import { matchesNodeSelectorTerm } from './nodeAffinity.js';
import type {
  CsiNodeInfo,
  CsiVolume,
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

/**
 * Resolves each pod's claims against the volumes: the nodes they can be reached from, the CSI volumes they attach
 * and which are ReadWriteOncePod. Pods without claims are returned as they are.
 */
export function withVolumeTopology(pods: PodInfo[], volumes: VolumeObjects): PodInfo[] {
  if (!pods.some((p) => p.claims.length > 0 || p.volumeTopology.length > 0)) return pods;
  const pvs = new Map(volumes.persistentVolumes.map((v) => [v.name, v]));
  const pvcs = new Map(volumes.persistentVolumeClaims.map((c) => [`${c.namespace}/${c.name}`, c]));
  const classes = new Map(volumes.storageClasses.map((c) => [c.name, c]));
  return pods.map((pod) => {
    if (pod.claims.length === 0 && pod.volumeTopology.length === 0) return pod;
    const topology: VolumeTopology[] = [];
    const csi: CsiVolume[] = [];
    const exclusive: string[] = [];
    const storageClasses = new Set<string>();
    for (const claimName of pod.claims) {
      const claim = pvcs.get(`${pod.namespace}/${claimName}`);
      // Unknown is kept as '': a protection by storage class must hold a pod whose class it cannot read.
      storageClasses.add(claim?.storageClassName ?? '');
      if (claim === undefined) continue;
      const t = claimTopology(claim, pvs, classes);
      if (t !== undefined) topology.push(t);
      const v = claimCsiVolume(claim, pvs, classes);
      if (v !== undefined && !csi.some((c) => c.driver === v.driver && c.handle === v.handle)) csi.push(v);
      if (claim.readWriteOncePod === true) exclusive.push(claim.name);
    }
    const unchanged =
      topology.length === 0 &&
      pod.volumeTopology.length === 0 &&
      csi.length === 0 &&
      pod.csiVolumes === undefined &&
      exclusive.length === 0 &&
      pod.readWriteOncePodClaims === undefined &&
      storageClasses.size === 0 &&
      pod.storageClasses === undefined;
    if (unchanged) return pod;
    return {
      ...pod,
      storageClasses: storageClasses.size === 0 ? undefined : [...storageClasses].sort(),
      volumeTopology: topology.length === 0 ? NONE : topology,
      csiVolumes: csi.length === 0 ? undefined : csi,
      readWriteOncePodClaims: exclusive.length === 0 ? undefined : exclusive,
    };
  });
}

/**
 * The CSI volume a claim attaches, as kube-scheduler's NodeVolumeLimits counts it: a bound claim's PV spec.csi; an
 * unbound claim (or one whose PV is not known) will be provisioned by its StorageClass's provisioner, under a
 * placeholder handle unique to the claim. In-tree volumes (and their CSI migration) are not counted.
 */
function claimCsiVolume(
  claim: PersistentVolumeClaimInfo,
  pvs: ReadonlyMap<string, PersistentVolumeInfo>,
  classes: ReadonlyMap<string, StorageClassInfo>,
): CsiVolume | undefined {
  const pv = claim.volumeName === undefined ? undefined : pvs.get(claim.volumeName);
  if (pv !== undefined) return pv.csi;
  const provisioner =
    claim.storageClassName === undefined ? undefined : classes.get(claim.storageClassName)?.provisioner;
  return provisioner === undefined ? undefined : { driver: provisioner, handle: `${claim.namespace}-${claim.name}` };
}

/** Nodes with their CSINode's attach limits (a node without a CSINode, or one without counts, is unchanged). */
export function withCsiNodeLimits(nodes: NodeInfo[], csiNodes: Iterable<CsiNodeInfo>): NodeInfo[] {
  const limits = new Map<string, Readonly<Record<string, number>>>();
  for (const c of csiNodes) if (Object.keys(c.limits).length > 0) limits.set(c.name, c.limits);
  if (limits.size === 0) return nodes;
  return nodes.map((node) => {
    const csiVolumeLimits = limits.get(node.name);
    return csiVolumeLimits === undefined ? node : { ...node, csiVolumeLimits };
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
