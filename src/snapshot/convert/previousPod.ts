// The previous pod's raw parts and what they converted to. kubectl lists a workload's replicas next to each other,
// and replicas differ only in name, uid, node and status, so comparing with the previous pod (cheap, no allocation)
// usually skips rebuilding labels, requests, tolerations, affinity and spread constraints. Only the last pod's
// sub-objects are referenced here, until the next conversion replaces them.
import { EMPTY_LABELS, internLabels } from '../../model/intern.js';
import type { Obj } from '../../model/rawJson.js';
import type {
  Labels,
  PodAffinityTerm,
  PreferredSchedulingTerm,
  RequiredNodeAffinity,
  SpreadConstraint,
  Toleration,
  WeightedPodAffinityTerm,
} from '../../model/types.js';
import type { BoundedCache } from './boundedCache.js';
import { EMPTY, getObj, getStringMap, sameJson } from './fields.js';
import { NO_REQUIREMENT, preferredNodeAffinity, requiredNodeAffinity } from './nodeSelectors.js';
import { podAffinityTerms, preferredPodAffinityTerms, spreadConstraints, type SelectorCaches } from './podSelectors.js';
import { podResources, sameContainerResources, type PodResources } from './resources.js';
import { tolerations } from './taints.js';

export class PreviousPod {
  labelsRaw: unknown = undefined;
  labels: Labels = EMPTY_LABELS;
  resourcesSpec: Obj | undefined = undefined;
  resources: PodResources | undefined = undefined;
  tolerationsRaw: unknown = undefined;
  tolerations: readonly Toleration[] = EMPTY;
  nodeSelectorRaw: unknown = undefined;
  nodeAffinityRaw: unknown = undefined;
  required: RequiredNodeAffinity = NO_REQUIREMENT;
  preferred: readonly PreferredSchedulingTerm[] = EMPTY;
  spreadRaw: unknown = undefined;
  spreadLabels: Labels = EMPTY_LABELS;
  spread: readonly SpreadConstraint[] = EMPTY;
  affinityRaw: unknown = undefined;
  antiAffinityRaw: unknown = undefined;
  affinityLabels: Labels = EMPTY_LABELS;
  affinityNamespace = '';
  podAffinity: readonly PodAffinityTerm[] = EMPTY;
  preferredPodAffinity: readonly WeightedPodAffinityTerm[] = EMPTY;
  preferredPodAntiAffinity: readonly WeightedPodAffinityTerm[] = EMPTY;
  podAntiAffinity: readonly PodAffinityTerm[] = EMPTY;

  /** metadata.labels, validated (`raw`, for matchLabelKeys) and interned (`labels`). */
  podLabels(meta: Obj | undefined): { raw: Readonly<Record<string, string>>; labels: Labels } {
    const raw = meta?.['labels'];
    if (raw !== undefined && sameJson(raw, this.labelsRaw)) {
      return { raw: raw as Record<string, string>, labels: this.labels };
    }
    const validated = getStringMap(meta, 'labels', 'metadata') ?? EMPTY_LABELS;
    const labels = internLabels(validated);
    this.labelsRaw = raw;
    this.labels = labels;
    return { raw: validated, labels };
  }

  podResources(spec: Obj | undefined, cache: BoundedCache<string, PodResources>): PodResources {
    const p = this.resourcesSpec;
    if (
      this.resources !== undefined &&
      p !== undefined &&
      spec !== undefined &&
      sameContainerResources(spec['containers'], p['containers']) &&
      sameContainerResources(spec['initContainers'], p['initContainers']) &&
      sameJson(spec['overhead'], p['overhead']) &&
      sameJson(spec['resources'], p['resources'])
    ) {
      return this.resources;
    }
    const value = podResources(spec, cache);
    this.resourcesSpec = spec;
    this.resources = value;
    return value;
  }

  tolerationsOf(spec: Obj | undefined, cache: BoundedCache<string, readonly Toleration[]>): readonly Toleration[] {
    const raw = spec?.['tolerations'];
    if (sameJson(raw, this.tolerationsRaw)) return this.tolerations;
    const value = tolerations(spec, cache);
    this.tolerationsRaw = raw;
    this.tolerations = value;
    return value;
  }

  /** Sets `required` and `preferred` for this pod. */
  nodeAffinity(
    spec: Obj | undefined,
    affinity: Obj | undefined,
    cache: BoundedCache<string, RequiredNodeAffinity>,
  ): void {
    const selectorRaw = spec?.['nodeSelector'];
    const affinityRaw = affinity?.['nodeAffinity'];
    if (sameJson(selectorRaw, this.nodeSelectorRaw) && sameJson(affinityRaw, this.nodeAffinityRaw)) return;
    const nodeAffinity = getObj(affinity, 'nodeAffinity', 'spec.affinity');
    const required = requiredNodeAffinity(spec, nodeAffinity, cache);
    const preferred = preferredNodeAffinity(nodeAffinity);
    this.nodeSelectorRaw = selectorRaw;
    this.nodeAffinityRaw = affinityRaw;
    this.required = required;
    this.preferred = preferred;
  }

  spreadConstraints(
    spec: Obj | undefined,
    labels: Labels,
    rawLabels: Readonly<Record<string, string>>,
    cache: SelectorCaches,
  ): readonly SpreadConstraint[] {
    const raw = spec?.['topologySpreadConstraints'];
    if (labels === this.spreadLabels && sameJson(raw, this.spreadRaw)) return this.spread;
    const value = spreadConstraints(spec, rawLabels, cache);
    this.spreadRaw = raw;
    this.spreadLabels = labels;
    this.spread = value;
    return value;
  }

  /** Sets `podAffinity` and `podAntiAffinity` for this pod. */
  podAffinityTerms(
    affinity: Obj | undefined,
    namespace: string,
    labels: Labels,
    rawLabels: Readonly<Record<string, string>>,
    cache: SelectorCaches,
  ): void {
    const affinityRaw = affinity?.['podAffinity'];
    const antiRaw = affinity?.['podAntiAffinity'];
    if (
      labels === this.affinityLabels &&
      namespace === this.affinityNamespace &&
      sameJson(affinityRaw, this.affinityRaw) &&
      sameJson(antiRaw, this.antiAffinityRaw)
    ) {
      return;
    }
    // Both are converted before either is kept: a pod that fails conversion leaves the memo as it was.
    const podAffinity = podAffinityTerms(affinity, 'podAffinity', namespace, rawLabels, cache);
    const podAntiAffinity = podAffinityTerms(affinity, 'podAntiAffinity', namespace, rawLabels, cache);
    const preferred = preferredPodAffinityTerms(affinity, 'podAffinity', namespace, rawLabels, cache);
    const preferredAnti = preferredPodAffinityTerms(affinity, 'podAntiAffinity', namespace, rawLabels, cache);
    this.affinityRaw = affinityRaw;
    this.antiAffinityRaw = antiRaw;
    this.affinityLabels = labels;
    this.affinityNamespace = namespace;
    this.podAffinity = podAffinity;
    this.podAntiAffinity = podAntiAffinity;
    this.preferredPodAffinity = preferred;
    this.preferredPodAntiAffinity = preferredAnti;
  }
}
