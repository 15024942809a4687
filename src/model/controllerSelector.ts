// The selector the scheduler's default spreading derives for a pod from its controller (PodTopologySpread's System
// defaults, and the policy's defaultConstraints): the snapshot holds no ReplicaSets, ReplicationControllers or
// StatefulSets, so it is the pod's own labels less the per-pod and per-revision ones, for a pod one of them controls.
import { selectorFromLabels } from './labels.js';
import type { Labels, PodInfo, Selector } from './types.js';

/** Labels a controller sets per pod or per revision, never part of its selector. */
const PER_POD_LABELS = [
  'statefulset.kubernetes.io/pod-name',
  'controller-revision-hash',
  'apps.kubernetes.io/pod-index',
  // Copied from its node at binding by the PodTopologyLabels admission (beta, on since 1.35): per pod.
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
];
const DEFAULTED_OWNERS = new Set(['ReplicaSet', 'ReplicationController', 'StatefulSet']);

/** Derived selectors by label set (replicas share their interned labels). */
const derived = new WeakMap<Labels, Selector | null>();

export function controllerSelector(pod: PodInfo): Selector | undefined {
  if (pod.owner === undefined || !DEFAULTED_OWNERS.has(pod.owner.kind)) return undefined;
  let known = derived.get(pod.labels);
  if (known === undefined) {
    known = deriveSelector(pod.labels) ?? null;
    derived.set(pod.labels, known);
  }
  return known ?? undefined;
}

function deriveSelector(podLabels: Labels): Selector | undefined {
  let labels: Labels = podLabels;
  if (PER_POD_LABELS.some((k) => k in labels)) {
    const copy: Record<string, string> = { ...labels };
    for (const k of PER_POD_LABELS) delete copy[k];
    labels = copy;
  }
  if (Object.keys(labels).length === 0) return undefined;
  return selectorFromLabels(labels);
}
