// The label selectors a pod carries: topology spread constraints and required pod (anti-)affinity terms. Replicas
// repeat the same selectors, so compiled selectors are shared through the caller's caches.
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { andSelector, compileLabelSelector, MATCH_NOTHING } from '../../model/labels.js';
import { isObj, present, typeName, type Obj } from '../../model/rawJson.js';
import { spreadConstraintDefaults } from '../../model/spread.js';
import type {
  LabelRequirement,
  NodeInclusionPolicy,
  PodAffinityTerm,
  Selector,
  SpreadConstraint,
  WeightedPodAffinityTerm,
  WhenUnsatisfiable,
} from '../../model/types.js';
import type { BoundedCache } from './boundedCache.js';
import { EMPTY, getEnum, getInt, getList, getObj, requireString } from './fields.js';

/** Compiled selectors shared between pods. */
export interface SelectorCaches {
  /** By selectorKey (the common matchLabels-only shapes). */
  readonly compiled: BoundedCache<string, Selector>;
  /** Selectors with the pod's matchLabelKeys/mismatchLabelKeys values ANDed in, by base text and requirements. */
  readonly anded: BoundedCache<string, Selector>;
}

const WHEN: readonly WhenUnsatisfiable[] = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION: readonly NodeInclusionPolicy[] = ['Honor', 'Ignore'];

/** The pod's label values for `keys` as requirements (keys the pod lacks are ignored, as the scheduler does). */
function labelKeyRequirements(
  raw: Obj,
  key: 'matchLabelKeys' | 'mismatchLabelKeys',
  path: string,
  podLabels: Readonly<Record<string, string>>,
): LabelRequirement[] {
  const list = getList(raw, key, path);
  if (list === undefined || list.length === 0) return [];
  const out: LabelRequirement[] = [];
  list.forEach((k, i) => {
    if (typeof k !== 'string') throw new FieldError(`${path}.${key}[${i}]`, `must be a string (got ${typeName(k)})`);
    if (Object.hasOwn(podLabels, k)) {
      out.push({ key: k, operator: key === 'matchLabelKeys' ? 'In' : 'NotIn', values: [podLabels[k]!] });
    }
  });
  return out;
}

/**
 * A cheap canonical key for the common selector shapes (matchLabels only); undefined for anything else, which is
 * then compiled without caching. Avoids recompiling (and re-validating) one selector for each of 1,000 replicas.
 */
function selectorKey(raw: unknown): string | undefined {
  if (!isObj(raw)) return undefined;
  let key = '';
  for (const k in raw) {
    if (!Object.hasOwn(raw, k)) continue;
    if (k !== 'matchLabels') return undefined;
    const ml = raw[k];
    if (ml === null) continue;
    if (!isObj(ml)) return undefined;
    for (const lk in ml) {
      if (!Object.hasOwn(ml, lk)) continue;
      const v = ml[lk];
      if (typeof v !== 'string') return undefined;
      key += `${lk.length}:${lk}${v.length}:${v}`;
    }
  }
  return key;
}

/** andSelector, shared between pods: a selector with the pod's pod-template-hash ANDed in is the same for a ReplicaSet. */
function andCached(base: Selector, extra: readonly LabelRequirement[], cache: SelectorCaches): Selector {
  if (base.kind === 'nothing' || extra.length === 0) return base;
  let key = `${base.text.length}:${base.text}`;
  for (const r of extra) key += `${r.operator}${r.key.length}:${r.key}${r.values[0]!.length}:${r.values[0]}`;
  const known = cache.anded.get(key);
  if (known !== undefined) return known;
  const value = andSelector(base, extra);
  cache.anded.set(key, value);
  return value;
}

function compileCached(raw: unknown, path: string, cache: SelectorCaches): Selector {
  const key = selectorKey(raw);
  if (key === undefined) return compileLabelSelector(raw, path);
  const known = cache.compiled.get(key);
  if (known !== undefined) return known;
  const compiled = compileLabelSelector(raw, path);
  cache.compiled.set(key, compiled);
  return compiled;
}

export function spreadConstraints(
  spec: Obj | undefined,
  podLabels: Readonly<Record<string, string>>,
  cache: SelectorCaches,
): readonly SpreadConstraint[] {
  const list = getList(spec, 'topologySpreadConstraints', 'spec');
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) => {
    const path = `spec.topologySpreadConstraints[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
    const maxSkew = getInt(raw, 'maxSkew', path);
    if (maxSkew === undefined || maxSkew < 1) throw new FieldError(`${path}.maxSkew`, 'must be an integer ≥ 1');
    const topologyKey = requireString(raw, 'topologyKey', path);
    const whenUnsatisfiable = getEnum(raw, 'whenUnsatisfiable', path, WHEN);
    if (whenUnsatisfiable === undefined)
      throw new FieldError(`${path}.whenUnsatisfiable`, `is required (${WHEN.join(' or ')})`);
    const rawMinDomains = getInt(raw, 'minDomains', path);
    if (rawMinDomains !== undefined) {
      if (rawMinDomains < 1) throw new FieldError(`${path}.minDomains`, 'must be an integer ≥ 1');
      if (whenUnsatisfiable !== 'DoNotSchedule') {
        throw new FieldError(`${path}.minDomains`, 'can only be set when whenUnsatisfiable is DoNotSchedule');
      }
    }
    const base =
      raw['labelSelector'] === undefined || raw['labelSelector'] === null
        ? MATCH_NOTHING
        : compileCached(raw['labelSelector'], `${path}.labelSelector`, cache);
    const selector = andCached(base, labelKeyRequirements(raw, 'matchLabelKeys', path, podLabels), cache);
    return {
      maxSkew,
      topologyKey: intern(topologyKey),
      whenUnsatisfiable,
      selector,
      ...spreadConstraintDefaults(
        rawMinDomains,
        getEnum(raw, 'nodeAffinityPolicy', path, INCLUSION),
        getEnum(raw, 'nodeTaintsPolicy', path, INCLUSION),
      ),
      fromDefaults: false,
    };
  });
}

export function podAffinityTerms(
  affinity: Obj | undefined,
  kind: 'podAffinity' | 'podAntiAffinity',
  namespace: string,
  podLabels: Readonly<Record<string, string>>,
  cache: SelectorCaches,
): readonly PodAffinityTerm[] {
  const section = getObj(affinity, kind, 'spec.affinity');
  const sectionPath = `spec.affinity.${kind}`;
  const list = getList(section, 'requiredDuringSchedulingIgnoredDuringExecution', sectionPath);
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) =>
    podAffinityTerm(
      raw,
      `${sectionPath}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`,
      namespace,
      podLabels,
      cache,
    ),
  );
}

/** The preferred terms of podAffinity or podAntiAffinity, each with its weight (1–100). */
export function preferredPodAffinityTerms(
  affinity: Obj | undefined,
  kind: 'podAffinity' | 'podAntiAffinity',
  namespace: string,
  podLabels: Readonly<Record<string, string>>,
  cache: SelectorCaches,
): readonly WeightedPodAffinityTerm[] {
  const section = getObj(affinity, kind, 'spec.affinity');
  const sectionPath = `spec.affinity.${kind}.preferredDuringSchedulingIgnoredDuringExecution`;
  const list = getList(section, 'preferredDuringSchedulingIgnoredDuringExecution', `spec.affinity.${kind}`);
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) => {
    const path = `${sectionPath}[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
    const weight = getInt(raw, 'weight', path);
    if (weight === undefined || weight < 1 || weight > 100) throw new FieldError(`${path}.weight`, 'must be 1–100');
    const term = podAffinityTerm(raw['podAffinityTerm'], `${path}.podAffinityTerm`, namespace, podLabels, cache);
    return { weight, term };
  });
}

function podAffinityTerm(
  raw: unknown,
  path: string,
  namespace: string,
  podLabels: Readonly<Record<string, string>>,
  cache: SelectorCaches,
): PodAffinityTerm {
  if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
  const base = compileCached(raw['labelSelector'], `${path}.labelSelector`, cache);
  const selector = andCached(
    base,
    [
      ...labelKeyRequirements(raw, 'matchLabelKeys', path, podLabels),
      ...labelKeyRequirements(raw, 'mismatchLabelKeys', path, podLabels),
    ],
    cache,
  );
  const topologyKey = requireString(raw, 'topologyKey', path);
  const names: string[] = [];
  (getList(raw, 'namespaces', path) ?? []).forEach((n, j) => {
    if (typeof n !== 'string')
      throw new FieldError(`${path}.namespaces[${j}]`, `must be a string (got ${typeName(n)})`);
    names.push(intern(n));
  });
  const rawNsSelector = raw['namespaceSelector'];
  const namespaceSelector = present(rawNsSelector)
    ? compileCached(rawNsSelector, `${path}.namespaceSelector`, cache)
    : undefined;
  // Neither namespaces nor namespaceSelector: the pod's own namespace (filled in here so readers need not).
  if (names.length === 0 && namespaceSelector === undefined) names.push(namespace);
  return { selector, topologyKey: intern(topologyKey), namespaces: names, namespaceSelector };
}
