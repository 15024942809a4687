// Raw (JSON-shaped) Kubernetes objects as the test API server stores and serves them.
// Timestamps are RFC 3339 strings, never Date objects: this is the wire format, not client-node's model classes.
// Only the fields the server itself reads are named; everything else passes through untouched.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [key: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** metav1.LabelSelector; `null`/`undefined` selects nothing, `{}` selects everything. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  observedGeneration?: number;
  [key: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number;
}

export interface ContainerSpec {
  name: string;
  image?: string;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  [key: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  containers: ContainerSpec[];
  initContainers?: ContainerSpec[];
  priority?: number;
  priorityClassName?: string;
  preemptionPolicy?: string;
  schedulerName?: string;
  schedulingGates?: { name: string }[];
  tolerations?: Toleration[];
  terminationGracePeriodSeconds?: number;
  restartPolicy?: string;
  [key: string]: unknown;
}

export interface PodStatus {
  phase?: string;
  conditions?: Condition[];
  qosClass?: string;
  startTime?: string;
  podIP?: string;
  hostIP?: string;
  containerStatuses?: unknown[];
  [key: string]: unknown;
}

export interface RawPod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

export interface RawNode extends KubeObject {
  spec?: { unschedulable?: boolean; taints?: unknown[]; [key: string]: unknown };
  status?: { conditions?: Condition[]; allocatable?: Record<string, string>; [key: string]: unknown };
}

export interface PdbSpec {
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  selector?: LabelSelector | null;
  unhealthyPodEvictionPolicy?: string;
}

export interface PdbStatus {
  observedGeneration?: number;
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: Condition[];
}

export interface RawPdb extends KubeObject {
  spec?: PdbSpec;
  status?: PdbStatus;
}

export interface RawReplicaSet extends KubeObject {
  spec?: { replicas?: number; selector?: LabelSelector; template?: { metadata?: ObjectMeta; spec?: PodSpec } };
  status?: Record<string, unknown>;
}

/** metav1.DeleteOptions, as far as the server honours it. */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  dryRun?: string[];
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}
