// One plan per cluster state: the planner walks nodes, pods and budgets in the order it is given them, and breaks
// ties among equal candidates by that order. A cluster read live (watch-cache insertion order) and the same cluster
// read from a file (the file's order) must plan alike (issue 29: 3 of 16 plans differed), so planning starts from a
// canonical order: nodes, priority classes and namespaces by name, pods and budgets by namespace then name, compared
// by code unit (locale-independent). A snapshot already in that order (a fresh list: the API server lists in key
// order) is passed through as is after one linear check; a nearly sorted one (a cache that appended a few pods since)
// costs little more, as the sort is adaptive.
import type { ClusterSnapshot } from '../model/types.js';

interface Named {
  readonly name: string;
}
interface NamespacedNamed extends Named {
  readonly namespace: string;
}

function byName(a: Named, b: Named): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function byNamespacedName(a: NamespacedNamed, b: NamespacedNamed): number {
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? -1 : 1;
  return byName(a, b);
}

function ordered<T>(items: readonly T[], compare: (a: T, b: T) => number): readonly T[] {
  for (let i = 1; i < items.length; i++) {
    if (compare(items[i - 1]!, items[i]!) > 0) return [...items].sort(compare);
  }
  return items;
}

/**
 * Pods by namespace, then name: bucketed by namespace first (a few hundred namespaces at most), so the sort compares
 * one string per pair; each bucket keeps its listed order when it already is sorted.
 */
function orderedPods<T extends NamespacedNamed>(pods: readonly T[]): readonly T[] {
  let sorted = true;
  for (let i = 1; i < pods.length && sorted; i++) sorted = byNamespacedName(pods[i - 1]!, pods[i]!) <= 0;
  if (sorted) return pods;
  const buckets = new Map<string, T[]>();
  for (const pod of pods) {
    let bucket = buckets.get(pod.namespace);
    if (bucket === undefined) buckets.set(pod.namespace, (bucket = []));
    bucket.push(pod);
  }
  const out: T[] = [];
  for (const namespace of [...buckets.keys()].sort()) {
    const bucket = buckets.get(namespace)!;
    for (const pod of ordered(bucket, byName)) out.push(pod);
  }
  return out;
}

/** The snapshot with every list in canonical order (the same object when it already was). */
export function canonicalOrder(snapshot: ClusterSnapshot): ClusterSnapshot {
  const nodes = ordered(snapshot.nodes, byName);
  const pods = orderedPods(snapshot.pods);
  const pdbs = ordered(snapshot.pdbs, byNamespacedName);
  const priorityClasses = ordered(snapshot.priorityClasses, byName);
  const namespaces = ordered(snapshot.namespaces, byName);
  if (
    nodes === snapshot.nodes &&
    pods === snapshot.pods &&
    pdbs === snapshot.pdbs &&
    priorityClasses === snapshot.priorityClasses &&
    namespaces === snapshot.namespaces
  ) {
    return snapshot;
  }
  return { ...snapshot, nodes, pods, pdbs, priorityClasses, namespaces };
}
