// PodDisruptionBudget logic shared by the planner and the operator: which budgets cover a pod, and how many
// disruptions each budget allows right now.
//
// Allowance: status.disruptionsAllowed when the object has a status, which is exactly what the Eviction API checks.
// Without a status (a hand-written snapshot), the number is computed the way the disruption controller computes it
// (pkg/controller/disruption, getExpectedPodCount + updatePdbStatus), with one approximation: where the controller
// asks the owning controllers for their scale (percentages, maxUnavailable), the matching pods are counted instead.
//   expected = matching pods that are not terminating and not finished (Succeeded/Failed)
//   healthy  = those of them that are Ready
//   maxUnavailable set (int, or % of expected rounded up) ⇒ desiredHealthy = max(0, expected − maxUnavailable)
//   minAvailable int                                        ⇒ desiredHealthy = minAvailable
//   minAvailable % (of expected, rounded up)                ⇒ desiredHealthy = ceil(pct × expected / 100)
//   neither set                                             ⇒ allowed = 0. policy/v1 has no default (v1beta1's implied
//       minAvailable: 1 is gone); the controller then leaves expected and desiredHealthy at 0, and its rule
//       "expected ≤ 0 ⇒ no disruptions" makes such a budget block every eviction. We do the same.
//   allowed = expected > 0 ? max(0, healthy − desiredHealthy) : 0
import { matchesSelector } from './labels.js';
import { isPodActive } from './pods.js';
import type { ClusterSnapshot, IntOrPercent, PdbInfo, PodInfo } from './types.js';

/** `namespace/name`, the key of computeAllowances' map. */
export function pdbKey(pdb: Pick<PdbInfo, 'namespace' | 'name'>): string {
  return `${pdb.namespace}/${pdb.name}`;
}

/** The budgets that cover `pod`: same namespace, selector matches (a nil selector matches nothing). */
export function pdbsForPod(pod: Pick<PodInfo, 'namespace' | 'labels'>, pdbs: readonly PdbInfo[]): PdbInfo[] {
  const out: PdbInfo[] = [];
  for (const pdb of pdbs) {
    if (pdb.namespace === pod.namespace && matchesSelector(pdb.selector, pod.labels)) out.push(pdb);
  }
  return out;
}

/** An IntOrPercent scaled against `total`, percentages rounded up (intstr.GetScaledValueFromIntOrPercent, roundUp). */
export function scaledValue(value: IntOrPercent, total: number): number {
  return value.kind === 'int' ? value.value : Math.ceil((value.value * total) / 100);
}

/** Disruptions a budget allows given the counts of its matching pods; see the header for the rules. */
export function allowedDisruptions(pdb: PdbInfo, expected: number, healthy: number): number {
  let desiredHealthy: number;
  if (pdb.maxUnavailable !== undefined) {
    desiredHealthy = Math.max(0, expected - scaledValue(pdb.maxUnavailable, expected));
  } else if (pdb.minAvailable !== undefined) {
    desiredHealthy = scaledValue(pdb.minAvailable, expected);
  } else {
    return 0;
  }
  if (expected <= 0) return 0;
  return Math.max(0, healthy - desiredHealthy);
}

function counts(pdb: PdbInfo, pods: readonly PodInfo[]): { expected: number; healthy: number } {
  let expected = 0,
    healthy = 0;
  for (const pod of pods) {
    if (!isPodActive(pod) || !matchesSelector(pdb.selector, pod.labels)) continue;
    expected++;
    if (pod.ready) healthy++;
  }
  return { expected, healthy };
}

/** Every budget's current allowance, keyed `namespace/name`. */
export function computeAllowances(snapshot: Pick<ClusterSnapshot, 'pods' | 'pdbs'>): Map<string, number> {
  const allowances = new Map<string, number>();
  let podsByNamespace: Map<string, PodInfo[]> | undefined;
  for (const pdb of snapshot.pdbs) {
    if (pdb.statusAllowed !== undefined) {
      allowances.set(pdbKey(pdb), Math.max(0, pdb.statusAllowed));
      continue;
    }
    podsByNamespace ??= groupByNamespace(snapshot.pods);
    const { expected, healthy } = counts(pdb, podsByNamespace.get(pdb.namespace) ?? []);
    allowances.set(pdbKey(pdb), allowedDisruptions(pdb, expected, healthy));
  }
  return allowances;
}

function groupByNamespace(pods: readonly PodInfo[]): Map<string, PodInfo[]> {
  const map = new Map<string, PodInfo[]>();
  for (const pod of pods) {
    let list = map.get(pod.namespace);
    if (list === undefined) map.set(pod.namespace, (list = []));
    list.push(pod);
  }
  return map;
}
