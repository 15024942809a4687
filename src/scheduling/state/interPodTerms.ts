// The cluster state's bookkeeping of inter-pod terms: a key per kind of term (replicas share theirs), the live pods a
// term matches per topology domain, and the existing pods' terms that act on an incoming pod (anti-affinity for the
// filter, affinity and preferences for the score), summed per domain of their owners' nodes.
import { labelValue, selectorText } from '../../model/labels.js';
import type { NodeInfo, PodAffinityTerm, PodInfo } from '../../model/types.js';

/**
 * Existing pods' affinity terms that score an incoming pod they select (InterPodAffinity scoring): the summed weight
 * per domain of the owners' nodes — required affinity counts hardPodAffinityWeight, preferred affinity its weight,
 * preferred anti-affinity minus its weight.
 */
export interface ScoreTermGroup {
  readonly term: PodAffinityTerm;
  readonly owner: PodInfo;
  readonly perDomain: Map<string, number>;
}

/** Live pods matching one affinity term, counted per topology domain. */
export interface TermCounts {
  readonly term: PodAffinityTerm;
  readonly owner: PodInfo;
  readonly perDomain: Map<string, number>;
  total: number;
}

/** One kind of existing anti-affinity term that selects a pod being placed. */
export interface AntiAffinityCheck {
  readonly term: PodAffinityTerm;
  readonly perDomain: ReadonlyMap<string, number>;
  /** The evicted pod's domain when it is one of the owners (its term leaves with it). */
  readonly exceptDomain: string | undefined;
}

/** Existing pods' anti-affinity terms of one kind, counted per domain of their owners. */
export interface AntiTermGroup {
  readonly key: string;
  /** Creation order: checks are reported in it, whichever index found them. */
  readonly seq: number;
  readonly term: PodAffinityTerm;
  readonly owner: PodInfo;
  readonly perDomain: Map<string, number>;
}

/** Term → its key, for terms of the owner's own namespace (namespace, key): replicas share their terms' objects. */
const termKeys = new WeakMap<PodAffinityTerm, { readonly namespace: string; readonly key: string }>();

export function termKey(term: PodAffinityTerm, owner: PodInfo): string {
  const known = termKeys.get(term);
  if (known !== undefined && known.namespace === owner.namespace) return known.key;
  const key = buildTermKey(term, owner);
  termKeys.set(term, { namespace: owner.namespace, key });
  return key;
}

function buildTermKey(term: PodAffinityTerm, owner: PodInfo): string {
  const ns =
    term.namespaces.length === 0 && term.namespaceSelector === undefined ? owner.namespace : term.namespaces.join(',');
  const nsSel = term.namespaceSelector ? selectorText(term.namespaceSelector) : '-';
  return `${ns}\u0000${nsSel}\u0000${selectorText(term.selector)}\u0000${term.topologyKey}`;
}

/** Whether a term selects pods of its owner's namespace only (no namespaces list, no namespaceSelector). */
export function ownNamespaceOnly(term: PodAffinityTerm): boolean {
  return term.namespaces.length === 0 && term.namespaceSelector === undefined;
}

export function bumpTerm(tc: TermCounts, node: NodeInfo, delta: number): void {
  // `total` counts matching pods anywhere (the "first pod" rule of required affinity); perDomain only keyed nodes.
  tc.total += delta;
  const domain = labelValue(node.labels, tc.term.topologyKey);
  if (domain === undefined) return;
  tc.perDomain.set(domain, (tc.perDomain.get(domain) ?? 0) + delta);
}

export function hasInterPodTerms(pod: PodInfo): boolean {
  return (
    pod.podAntiAffinity.length > 0 ||
    pod.podAffinity.length > 0 ||
    (pod.preferredPodAffinity?.length ?? 0) > 0 ||
    (pod.preferredPodAntiAffinity?.length ?? 0) > 0
  );
}

/** Two lists of anti-affinity groups, each in creation order, merged in that order. */
export function inCreationOrder(a: readonly AntiTermGroup[], b: readonly AntiTermGroup[]): readonly AntiTermGroup[] {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out: AntiTermGroup[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]!.seq < b[j]!.seq)) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

export const NO_WEIGHTED: NonNullable<PodInfo['preferredPodAffinity']> = [];

export function pushTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
