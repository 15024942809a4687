// Pod-specific API semantics: the defaults and admission the real server applies on create (defaulting,
// Priority admission, DefaultTolerationSeconds, status reset to Pending with a QoS class), the spec immutability
// rule on update, readiness as the eviction code and disruption controller read it, and the status a kubelet
// writes when a pod starts.

import { rfc3339 } from './clock.js';
import type { FieldError } from './errors.js';
import { errors } from './errors.js';
import { deepEqual } from './patch.js';
import type { Condition, ContainerSpec, KubeObject, PodSpec, PodStatus, RawPod, Toleration } from './types.js';
import { isObject } from './types.js';

export function isPodReady(pod: RawPod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

export function isTerminal(pod: RawPod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

export function isTerminating(obj: KubeObject): boolean {
  return obj.metadata.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
}

/** The controller owner reference (`controller: true`), if any. */
export function controllerOf(
  obj: KubeObject,
): { kind: string; name: string; uid: string; apiVersion: string } | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

function resourcePairs(
  containers: ContainerSpec[],
): { requests: Record<string, string>; limits: Record<string, string> }[] {
  return containers.map((c) => ({ requests: c.resources?.requests ?? {}, limits: c.resources?.limits ?? {} }));
}

/** status.qosClass as kubelet's qos.GetPodQOS computes it, for cpu and memory. */
export function qosClass(spec: PodSpec): string {
  const all = resourcePairs([...(spec.containers ?? []), ...(spec.initContainers ?? [])]);
  let any = false;
  let guaranteed = true;
  for (const { requests, limits } of all) {
    for (const resource of ['cpu', 'memory']) {
      const request = requests[resource] ?? limits[resource];
      const limit = limits[resource];
      if (request !== undefined || limit !== undefined) any = true;
      if (limit === undefined || request !== limit) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function nameProblem(name: string): string | undefined {
  if (name.length > 253) return 'must be no more than 253 characters';
  if (!DNS_SUBDOMAIN.test(name)) {
    return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function validatePodSpec(spec: unknown): FieldError[] {
  const problems: FieldError[] = [];
  if (!isObject(spec)) return [{ field: 'spec', type: 'FieldValueRequired' }];
  const containers = spec.containers;
  if (!Array.isArray(containers) || containers.length === 0) {
    problems.push({ field: 'spec.containers', type: 'FieldValueRequired' });
    return problems;
  }
  containers.forEach((c, i) => {
    if (!isObject(c) || typeof c.name !== 'string' || c.name === '') {
      problems.push({ field: `spec.containers[${i}].name`, type: 'FieldValueRequired' });
    }
    if (!isObject(c) || typeof c.image !== 'string' || c.image === '') {
      problems.push({ field: `spec.containers[${i}].image`, type: 'FieldValueRequired' });
    }
  });
  return problems;
}

function defaultContainer(c: ContainerSpec): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  if (c.imagePullPolicy === undefined) {
    const image = c.image ?? '';
    const tag = image.includes('@') ? 'digest' : (image.split('/').pop() ?? '').split(':')[1];
    c.imagePullPolicy = tag === undefined || tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
}

function tolerates(tolerations: Toleration[], key: string): boolean {
  return tolerations.some(
    (t) =>
      (t.effect === undefined || t.effect === '' || t.effect === 'NoExecute') &&
      ((t.operator === 'Exists' && (t.key === undefined || t.key === '')) || t.key === key),
  );
}

/** SetDefaults_Pod and friends, plus the DefaultTolerationSeconds admission plugin. Mutates `pod`. */
export function applyPodDefaults(pod: RawPod): void {
  const spec = pod.spec;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.schedulerName ??= 'default-scheduler';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  const tolerations = spec.tolerations ?? [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerates(tolerations, key)) {
      tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
  }
  spec.tolerations = tolerations;
}

export interface PriorityClassLookup {
  byName(name: string): KubeObject | undefined;
  globalDefault(): KubeObject | undefined;
}

/** The Priority admission plugin: resolves spec.priority (and preemptionPolicy) from the PriorityClass. */
export function admitPriority(pod: RawPod, classes: PriorityClassLookup): void {
  const spec = pod.spec;
  const name = pod.metadata.name ?? pod.metadata.generateName ?? '';
  let value = 0;
  let preemptionPolicy = 'PreemptLowerPriority';
  if (spec.priorityClassName) {
    const pc = classes.byName(spec.priorityClassName);
    if (pc === undefined) {
      throw errors.forbidden(
        { group: '', resource: 'pods' },
        name,
        `no PriorityClass with name ${spec.priorityClassName} was found`,
      );
    }
    value = Number(pc.value ?? 0);
    if (typeof pc.preemptionPolicy === 'string') preemptionPolicy = pc.preemptionPolicy;
  } else {
    const pc = classes.globalDefault();
    if (pc !== undefined) {
      spec.priorityClassName = pc.metadata.name ?? '';
      value = Number(pc.value ?? 0);
      if (typeof pc.preemptionPolicy === 'string') preemptionPolicy = pc.preemptionPolicy;
    }
  }
  if (spec.priority !== undefined && spec.priority !== value) {
    throw errors.forbidden(
      { group: '', resource: 'pods' },
      name,
      `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${value} from the given PriorityClass name`,
    );
  }
  spec.priority = value;
  spec.preemptionPolicy ??= preemptionPolicy;
}

function withoutMutableFields(spec: PodSpec): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...spec };
  const stripImages = (list: unknown): unknown =>
    Array.isArray(list) ? list.map((c: unknown) => (isObject(c) ? { ...c, image: undefined } : c)) : list;
  copy.containers = stripImages(spec.containers);
  copy.initContainers = stripImages(spec.initContainers);
  delete copy.activeDeadlineSeconds;
  delete copy.tolerations;
  delete copy.terminationGracePeriodSeconds;
  delete copy.schedulingGates;
  return copy;
}

/** ValidatePodUpdate's spec rule: only images, activeDeadlineSeconds, tolerations and a few more may change. */
export function validatePodSpecUpdate(next: PodSpec, prev: PodSpec): FieldError[] {
  if (deepEqual(withoutMutableFields(next), withoutMutableFields(prev))) return [];
  return [
    {
      field: 'spec',
      type: 'FieldValueForbidden',
      detail:
        'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    },
  ];
}

/** Sets or replaces a condition by type; lastTransitionTime changes only when the status does. */
export function setCondition(conditions: Condition[] | undefined, condition: Condition, nowMs: number): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === condition.type);
  const existing = index >= 0 ? list[index] : undefined;
  const next: Condition = { ...condition };
  next.lastTransitionTime =
    existing !== undefined && existing.status === condition.status && existing.lastTransitionTime !== undefined
      ? existing.lastTransitionTime
      : rfc3339(nowMs);
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

let podIpCounter = 0;

/** The status kubelet reports once every container runs and passes readiness. */
export function runningStatus(pod: RawPod, nowMs: number, ready = true): PodStatus {
  const now = rfc3339(nowMs);
  const readyStatus = ready ? 'True' : 'False';
  podIpCounter++;
  const conditions: Condition[] = [
    { type: 'PodReadyToStartContainers', status: 'True', lastProbeTime: null, lastTransitionTime: now },
    { type: 'Initialized', status: 'True', lastProbeTime: null, lastTransitionTime: now },
    { type: 'Ready', status: readyStatus, lastProbeTime: null, lastTransitionTime: now },
    { type: 'ContainersReady', status: readyStatus, lastProbeTime: null, lastTransitionTime: now },
    { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: now },
  ];
  const status: PodStatus = {
    ...(pod.status ?? {}),
    phase: 'Running',
    conditions,
    hostIP: '10.0.0.1',
    podIP: `10.244.${(podIpCounter >> 8) & 255}.${podIpCounter & 255}`,
    startTime: pod.status?.startTime ?? now,
    containerStatuses: (pod.spec.containers ?? []).map((c) => ({
      name: c.name,
      ready,
      started: true,
      restartCount: 0,
      image: c.image ?? '',
      imageID: '',
      containerID: `containerd://${c.name}`,
      state: { running: { startedAt: now } },
    })),
  };
  status.qosClass ??= qosClass(pod.spec);
  return status;
}
