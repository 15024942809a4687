// Pod protections: small named predicates, each returning why a pod must not be evicted (or undefined).
// They are checked in this order and the first reason is reported in the plan's `skipped` list.
// PodDisruptionBudgets and the per-cycle limits depend on what else is planned and live in budget.ts.
import { matchesSelector } from '../model/labels.js';
import { isPodTerminal, PREFER_NO_EVICTION } from '../model/pods.js';
import type { PodInfo, PodPhase, Selector } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';
import type { NamespaceScope } from '../analysis/scope.js';

export interface EvictabilityContext {
  readonly spec: PolicySpec;
  readonly now: number;
  /** Pods at or above this priority are never evicted. */
  readonly priorityThreshold: number;
  readonly inScope: NamespaceScope;
  readonly podSelector: Selector;
  /** The phases of the pods the strategy at hand acts on: Running unless a housekeeping strategy says more. */
  readonly phases?: readonly PodPhase[];
  /** The number of live pods of the pod's controller (for minReplicas); absent: no floor is checked. */
  readonly ownerPods?: (pod: PodInfo) => number;
  /** The labels of the pod's node (for spec.nodeSelector); absent: not checked. */
  readonly nodeLabels?: (pod: PodInfo) => Readonly<Record<string, string>> | undefined;
  /** Whether a PodDisruptionBudget selects the pod (for evictPodsWithoutPDB); absent: not checked. */
  readonly hasBudget?: (pod: PodInfo) => boolean;
}

type Protection = (pod: PodInfo, ctx: EvictabilityContext) => string | undefined;

const RUNNING: readonly PodPhase[] = ['Running'];

function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m}m` : `${Math.floor(m / 60)}h${m % 60}m`;
}

// Preferred (the descheduler's default) makes the soft opt-out an ordering hint (canonicalOrder puts such pods last);
// every other opt-out annotation protects whatever the policy says.
const annotationOptOut: Protection = (pod, ctx) =>
  pod.protectedBy === undefined ||
  (pod.protectedBy === PREFER_NO_EVICTION && ctx.spec.eviction.noEvictionPolicy === 'Preferred')
    ? undefined
    : `protected by ${pod.protectedBy}`;

const daemonSetPod: Protection = (pod) =>
  pod.daemonSet ? 'DaemonSet pod (its controller would recreate it on the same node)' : undefined;

const mirrorPod: Protection = (pod) =>
  pod.mirror ? 'mirror/static pod (managed by the kubelet, not the API)' : undefined;

const terminating: Protection = (pod) => (pod.terminating ? 'pod is terminating' : undefined);

const notRunning: Protection = (pod, ctx) =>
  (ctx.phases ?? RUNNING).includes(pod.phase)
    ? undefined
    : `pod is ${pod.phase}, not ${(ctx.phases ?? RUNNING).join(' or ')}`;

const outOfScope: Protection = (pod, ctx) =>
  ctx.inScope(pod.namespace) ? undefined : `namespace ${pod.namespace} is outside the policy's namespaces`;

const notSelected: Protection = (pod, ctx) =>
  matchesSelector(ctx.podSelector, pod.labels) ? undefined : "pod does not match the policy's podSelector";

/** system-cluster-critical: the descheduler's SystemCriticalPods protection starts here, and so does ours. */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

// Two rules, both must allow: the policy's threshold, and the system-critical floor that only an explicit
// evictSystemCriticalPods lifts (a threshold above 2000000000 alone does not reach node agents and add-ons).
// A pod whose node is not known (unbound, or the node gone) is outside the selection: nothing says it matches.
const nodeNotSelected: Protection = (pod, ctx) => {
  const selector = ctx.spec.nodeSelector;
  if (selector === undefined || ctx.nodeLabels === undefined) return undefined;
  const labels = ctx.nodeLabels(pod);
  return labels !== undefined && matchesSelector(selector, labels)
    ? undefined
    : `node ${pod.nodeName ?? '(none)'} does not match the policy's nodeSelector`;
};

const highPriority: Protection = (pod, ctx) => {
  if (pod.priority >= ctx.priorityThreshold)
    return `priority ${pod.priority} is at or above the threshold ${ctx.priorityThreshold}`;
  if (pod.priority >= SYSTEM_CRITICAL_PRIORITY && ctx.spec.eviction.evictSystemCriticalPods !== true)
    return `priority ${pod.priority} is system-critical (set evictSystemCriticalPods to evict such pods)`;
  return undefined;
};

const tooYoung: Protection = (pod, ctx) => {
  const age = ctx.now - pod.createdAt;
  return age < ctx.spec.eviction.minPodAgeMs
    ? `pod is ${formatAge(age)} old, younger than minPodAge ${formatAge(ctx.spec.eviction.minPodAgeMs)}`
    : undefined;
};

const barePod: Protection = (pod, ctx) => {
  if (pod.owner !== undefined || ctx.spec.eviction.evictBarePods || pod.evictAnnotation === 'always') return undefined;
  // A Failed bare pod is only a record of a finished run; removing it loses no work, a Running one's would be lost.
  if (pod.phase === 'Failed' && ctx.spec.eviction.evictFailedBarePods === true) return undefined;
  return pod.phase === 'Failed'
    ? 'Failed bare pod without a controller (set evictFailedBarePods to let failedPods remove it)'
    : 'bare pod without a controller (nothing would recreate it; set evictBarePods)';
};

const fewReplicas: Protection = (pod, ctx) => {
  const floor = ctx.spec.eviction.minReplicas ?? 0;
  if (floor <= 1 || pod.owner === undefined || ctx.ownerPods === undefined) return undefined;
  const count = ctx.ownerPods(pod);
  return count < floor
    ? `${pod.owner.kind} ${pod.owner.name} has ${count} pod(s), fewer than minReplicas ${floor}`
    : undefined;
};

const withoutBudget: Protection = (pod, ctx) =>
  ctx.spec.eviction.evictPodsWithoutPDB === false && ctx.hasBudget !== undefined && !ctx.hasBudget(pod)
    ? 'no PodDisruptionBudget selects the pod (evictPodsWithoutPDB is false)'
    : undefined;

const localStorage: Protection = (pod, ctx) =>
  pod.localStorage && !ctx.spec.eviction.evictLocalStoragePods && pod.evictAnnotation !== 'always'
    ? 'pod uses local storage (emptyDir/hostPath; set evictLocalStoragePods)'
    : undefined;

const persistentVolume: Protection = (pod, ctx) => {
  if (!pod.pvc || ctx.spec.eviction.evictPodsWithPVC) return undefined;
  const protectedClasses = ctx.spec.eviction.protectedStorageClasses ?? [];
  if (protectedClasses.length === 0) return 'pod uses a PersistentVolumeClaim (evictPodsWithPVC is false)';
  // A claim whose class cannot be read ('' or no resolution at all) is held as the descheduler holds it: protected.
  const classes = pod.storageClasses ?? [''];
  const held = classes.find((c) => c === '' || protectedClasses.includes(c));
  if (held === undefined) return undefined;
  return held === ''
    ? 'pod uses a PersistentVolumeClaim whose StorageClass is not known (protectedStorageClasses)'
    : `pod uses a PersistentVolumeClaim of StorageClass ${held} (protectedStorageClasses)`;
};

// The DynamicResources filter places a pod with resourceClaims only where its claims' devices can be allocated: ResourceSlices,
// DeviceClasses and the claims' selectors, none of which the snapshot reads. Evicting it would be a bet on a filter the
// model does not know, so it is left alone. A finished pod holds no devices and is not placed again.
const resourceClaims: Protection = (pod) =>
  pod.resourceClaims === undefined || isPodTerminal(pod)
    ? undefined
    : `pod uses DRA resourceClaims (${pod.resourceClaims.join(', ')}): where a replacement can get its devices is not modelled`;

/** In order: the reasons a person would look for first come first. */
export const PROTECTIONS: readonly Protection[] = [
  annotationOptOut,
  mirrorPod,
  daemonSetPod,
  terminating,
  notRunning,
  outOfScope,
  notSelected,
  nodeNotSelected,
  highPriority,
  tooYoung,
  barePod,
  fewReplicas,
  withoutBudget,
  localStorage,
  persistentVolume,
  resourceClaims,
];

/** Live pods (not Succeeded, Failed or terminating) per controller uid, counted once per snapshot. */
export function ownerPodCounter(pods: readonly PodInfo[]): (pod: PodInfo) => number {
  let counts: Map<string, number> | undefined;
  return (pod) => {
    if (counts === undefined) {
      counts = new Map();
      for (const p of pods) {
        if (p.owner === undefined || p.terminating || p.phase === 'Succeeded' || p.phase === 'Failed') continue;
        counts.set(p.owner.uid, (counts.get(p.owner.uid) ?? 0) + 1);
      }
    }
    return pod.owner === undefined ? 0 : (counts.get(pod.owner.uid) ?? 0);
  };
}

export function protectionReason(pod: PodInfo, ctx: EvictabilityContext): string | undefined {
  for (const check of PROTECTIONS) {
    const reason = check(pod, ctx);
    if (reason !== undefined) return reason;
  }
  return undefined;
}
