// Pod → PodInfo. The converter reads only the fields the model keeps; nothing of the raw object is retained (labels,
// resources and tolerations are interned frozen values, the remaining strings are primitives).
//
// Hot path: a cluster snapshot can hold 150,000 pods, so the pod converter avoids per-pod allocations it does not need
// (field paths are built only when reporting an error, label sets are interned, no JSON.stringify, no RegExp creation)
// and reuses what the previous pod and the caller's ConversionCache already hold.
import { intern } from '../../model/intern.js';
import { isObj, present, type Obj } from '../../model/rawJson.js';
import type { PodInfo, PodPhase, QosClass } from '../../model/types.js';
import type { ConversionCache } from './conversionCache.js';
import {
  conditionTrue,
  EMPTY,
  getEnum,
  getInt,
  getObj,
  getString,
  requireString,
  root,
  timestampMs,
} from './fields.js';
import { hostPortsOf } from './hostPorts.js';
import { controllerOwner, workloadOf } from './owners.js';
import { evictAnnotationOf, protectedByOf, volumeFlags } from './podFlags.js';
import { requiredNodeFeatures, resourceClaimNames, schedulingGated } from './podFeatures.js';
import { podConditionsOf } from './podConditions.js';
import { podStatusSummary } from './podStatus.js';
import { requestedResourceNames } from './requestedResources.js';
import { heldResources } from './resizedResources.js';
import type { PriorityResolver } from './priorities.js';

/** The scheduler of a pod whose spec names none: kept as undefined, so most pods carry no name. */
const DEFAULT_SCHEDULER = 'default-scheduler';

const PHASES: readonly PodPhase[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
const QOS: readonly QosClass[] = ['BestEffort', 'Burstable', 'Guaranteed'];

/**
 * Pod → PodInfo. `cache` is shared by the pods converted together; `resolvePriority` maps a priorityClassName to a
 * value when spec.priority is not set.
 */
export function convertPod(raw: unknown, cache: ConversionCache, resolvePriority: PriorityResolver = () => 0): PodInfo {
  const previous = cache.previous;
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const namespace = intern(getString(meta, 'namespace', 'metadata') || 'default');
  const { raw: rawLabels, labels } = previous.podLabels(meta);
  const annotations = getObj(meta, 'annotations', 'metadata');
  const spec = getObj(o, 'spec', '');
  const status = getObj(o, 'status', '');
  const affinity = getObj(spec, 'affinity', 'spec');

  const owner = controllerOwner(meta, cache.owners);
  const priorityClassName = getString(spec, 'priorityClassName', 'spec') || undefined;
  const priority = getInt(spec, 'priority', 'spec') ?? resolvePriority(priorityClassName);
  const schedulerName = getString(spec, 'schedulerName', 'spec') || DEFAULT_SCHEDULER;
  const resources = previous.podResources(spec, cache.resources);
  const evictAnnotation = evictAnnotationOf(annotations);
  const { localStorage, pvc, claims } = volumeFlags(spec, name);
  const nodeName = getString(spec, 'nodeName', 'spec');
  previous.nodeAffinity(spec, affinity, cache.requirements);
  const spread = previous.spreadConstraints(spec, labels, rawLabels, cache.selectors);
  previous.podAffinityTerms(affinity, namespace, labels, rawLabels, cache.selectors);

  const health = podStatusSummary(status);
  const held =
    nodeName === undefined ? undefined : heldResources(spec, status, resources.requests, resources.nonZeroRequests);
  const resourceClaims = resourceClaimNames(spec);
  const features = requiredNodeFeatures(spec);

  return {
    uid: getString(meta, 'uid', 'metadata') || `${namespace}/${name}`,
    namespace,
    name,
    labels,
    nodeName: nodeName === undefined || nodeName === '' ? undefined : intern(nodeName),
    phase: getEnum(status, 'phase', 'status', PHASES) ?? 'Pending',
    terminating: present(meta?.['deletionTimestamp']),
    terminationGracePeriodSeconds: getInt(spec, 'terminationGracePeriodSeconds', 'spec'),
    ready: conditionTrue(status, 'Ready', 'status'),
    createdAt: timestampMs(meta, 'creationTimestamp') ?? 0,
    priority,
    priorityClassName: priorityClassName === undefined ? undefined : intern(priorityClassName),
    schedulerName: schedulerName === DEFAULT_SCHEDULER ? undefined : intern(schedulerName),
    qos: getEnum(status, 'qosClass', 'status', QOS) ?? resources.qos,
    owner,
    workload: workloadOf(owner, name, labels, cache.workloads),
    requests: resources.requests,
    nonZeroRequests: resources.nonZeroRequests,
    fitNonZeroRequests: resources.fitNonZeroRequests,
    // Undefined for nearly every pod; always present so every PodInfo has one shape (the converter's hot path).
    held,
    schedulingGated: schedulingGated(spec) || undefined,
    resourceClaims,
    requiredFeatures: features,
    images: containerImages(spec, cache),
    requiredNodeAffinity: previous.required,
    preferredNodeAffinity: previous.preferred,
    tolerations: previous.tolerationsOf(spec, cache.tolerations),
    spreadConstraints: spread,
    podAffinity: previous.podAffinity,
    podAntiAffinity: previous.podAntiAffinity,
    preferredPodAffinity: previous.preferredPodAffinity,
    preferredPodAntiAffinity: previous.preferredPodAntiAffinity,
    daemonSet: owner?.kind === 'DaemonSet',
    mirror:
      (annotations !== undefined && Object.hasOwn(annotations, 'kubernetes.io/config.mirror')) ||
      owner?.kind === 'Node',
    localStorage,
    pvc,
    claims,
    // Resolved once the snapshot's volumes are known (withVolumeTopology).
    volumeTopology: EMPTY,
    hostPorts: hostPortsOf(spec),
    evictAnnotation,
    protectedBy: protectedByOf(annotations, evictAnnotation),
    restarts: health.restarts,
    initRestarts: health.initRestarts,
    statusDetail: health.statusDetail,
    conditions: podConditionsOf(status),
    requestedResources: requestedResourceNames(spec),
  };
}

/** The image references ImageLocality counts (1.35+): init containers, containers, then image volumes. */
function imageReferences(spec: Obj | undefined): string[] | undefined {
  let out: string[] | undefined;
  for (const key of ['initContainers', 'containers'] as const) {
    const list = spec?.[key];
    if (!Array.isArray(list)) continue;
    for (const c of list as unknown[]) {
      const image = isObj(c) ? c['image'] : undefined;
      (out ??= []).push(typeof image === 'string' ? image : '');
    }
  }
  const volumes = spec?.['volumes'];
  if (Array.isArray(volumes)) {
    for (const v of volumes as unknown[]) {
      const image = isObj(v) ? v['image'] : undefined;
      if (isObj(image)) (out ??= []).push(typeof image['reference'] === 'string' ? image['reference'] : '');
    }
  }
  return out;
}

/**
 * The images ImageLocality looks up in node.status.images, normalised as it does: a name without a tag gets
 * `:latest` (a digest or tag after the last `/` is kept). Replicas share the list.
 */
function containerImages(spec: Obj | undefined, cache: ConversionCache): readonly string[] {
  const refs = imageReferences(spec);
  if (refs === undefined) return EMPTY;
  const key = refs.join('\u0000');
  const known = cache.images.get(key);
  if (known !== undefined) return known;
  const images = refs.map((image) =>
    intern(image.lastIndexOf(':') <= image.lastIndexOf('/') ? `${image}:latest` : image),
  );
  cache.images.set(key, images);
  return images;
}
