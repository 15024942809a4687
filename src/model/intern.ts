// Interning for the compact model: 150,000 pods of a few hundred workloads repeat the same strings, label sets,
// request maps and tolerations, so the converters hand out one shared, frozen instance per distinct value.
//
// Cache keys are length-prefixed concatenations (`3:app3:web`), which are unambiguous whatever the strings contain
// and cheaper than JSON.stringify. The caches are bounded: when one grows past its limit it is cleared and refilled,
// so a long-running operator that sees label sets come and go (a new pod-template-hash per rollout) cannot leak.
// Clearing only costs sharing, never correctness: interned values are compared by content, not identity.
import type { Labels, Resources, Toleration } from './types.js';

const STRING_LIMIT = 1_000_000;
const OBJECT_LIMIT = 200_000;

const strings = new Map<string, string>();
const labelSets = new Map<string, Labels>();
const resourceSets = new Map<string, Resources>();
const tolerationCache = new Map<string, Toleration>();
const tolerationLists = new Map<string, readonly Toleration[]>();

export const EMPTY_LABELS: Labels = Object.freeze({});
export const EMPTY_RESOURCES: Resources = Object.freeze({});
const EMPTY_TOLERATIONS: readonly Toleration[] = Object.freeze([]);

/** The canonical instance of `s`. */
export function intern(s: string): string {
  const known = strings.get(s);
  if (known !== undefined) return known;
  if (strings.size >= STRING_LIMIT) strings.clear();
  strings.set(s, s);
  return s;
}

/** Sets an own property, also for the key `__proto__` (which plain assignment would treat as the prototype). */
function setOwn<T>(target: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A shared frozen copy of a label map: identical label sets (in any key order) return the same object.
 * Keys and values are interned. The caller guarantees every value is a string.
 */
export function internLabels(record: Readonly<Record<string, string>>): Labels {
  const keys = Object.keys(record);
  if (keys.length === 0) return EMPTY_LABELS;
  // First try the key in the record's own order: replicas list their labels in the same order, so this usually
  // hits without sorting. On a miss, the sorted (canonical) key decides, and the order-specific key becomes an alias.
  let orderKey = '';
  for (const key of keys) {
    const value = record[key]!;
    orderKey += `${key.length}:${key}${value.length}:${value}`;
  }
  const hit = labelSets.get(orderKey);
  if (hit !== undefined) return hit;
  const labels = internSortedLabels(record, keys);
  labelSets.set(orderKey, labels);
  return labels;
}

function internSortedLabels(record: Readonly<Record<string, string>>, keys: string[]): Labels {
  if (keys.length > 1) keys.sort();
  let cacheKey = '';
  for (const key of keys) {
    const value = record[key]!;
    cacheKey += `${key.length}:${key}${value.length}:${value}`;
  }
  const known = labelSets.get(cacheKey);
  if (known !== undefined) return known;
  const labels: Record<string, string> = {};
  for (const key of keys) setOwn(labels, intern(key), intern(record[key]!));
  Object.freeze(labels);
  if (labelSets.size >= OBJECT_LIMIT) labelSets.clear();
  labelSets.set(cacheKey, labels);
  return labels;
}

/** A shared frozen copy of a resource map (resource name → amount in base units). */
export function internResources(record: Readonly<Record<string, number>>): Resources {
  const keys = Object.keys(record);
  if (keys.length === 0) return EMPTY_RESOURCES;
  if (keys.length > 1) keys.sort();
  let cacheKey = '';
  for (const key of keys) cacheKey += `${key.length}:${key}${record[key]!};`;
  const known = resourceSets.get(cacheKey);
  if (known !== undefined) return known;
  const resources: Record<string, number> = {};
  for (const key of keys) setOwn(resources, intern(key), record[key]!);
  Object.freeze(resources);
  if (resourceSets.size >= OBJECT_LIMIT) resourceSets.clear();
  resourceSets.set(cacheKey, resources);
  return resources;
}

function tolerationKey(t: Toleration): string {
  return `${t.key.length}:${t.key}${t.operator}:${t.value.length}:${t.value}${t.effect};`;
}

/**
 * A shared frozen list of shared frozen tolerations. Order is kept (it does not change the meaning, but keeping it
 * makes output and diffs follow the pod spec); nearly every pod carries the same two default NoExecute tolerations.
 */
export function internTolerations(list: readonly Toleration[]): readonly Toleration[] {
  if (list.length === 0) return EMPTY_TOLERATIONS;
  let listKey = '';
  const keys: string[] = [];
  for (const t of list) {
    const key = tolerationKey(t);
    keys.push(key);
    listKey += key;
  }
  const knownList = tolerationLists.get(listKey);
  if (knownList !== undefined) return knownList;
  const shared = list.map((t, i) => {
    const key = keys[i]!;
    const known = tolerationCache.get(key);
    if (known !== undefined) return known;
    const frozen: Toleration = Object.freeze({
      key: intern(t.key),
      operator: t.operator,
      value: intern(t.value),
      effect: t.effect,
    });
    if (tolerationCache.size >= OBJECT_LIMIT) tolerationCache.clear();
    tolerationCache.set(key, frozen);
    return frozen;
  });
  Object.freeze(shared);
  if (tolerationLists.size >= OBJECT_LIMIT) tolerationLists.clear();
  tolerationLists.set(listKey, shared);
  return shared;
}

/** Empties every cache (tests; or an operator that wants to release memory after a large relist). */
export function clearInternCaches(): void {
  strings.clear();
  labelSets.clear();
  resourceSets.clear();
  tolerationCache.clear();
  tolerationLists.clear();
}

/** Entry counts, for tests and the footprint benchmark. */
export function internCacheSizes(): { strings: number; labels: number; resources: number; tolerations: number } {
  return {
    strings: strings.size,
    labels: labelSets.size,
    resources: resourceSets.size,
    tolerations: tolerationLists.size,
  };
}
