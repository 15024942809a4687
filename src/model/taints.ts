// Taints and tolerations with the API's semantics (k8s.io/api/core/v1 Toleration.ToleratesTaint):
// an empty toleration effect matches every effect, an empty key (only valid with Exists) matches every key,
// Exists ignores the value, Equal (or an empty operator) compares it.
import type { Taint, TaintEffect, Toleration } from './types.js';

export function toleratesTaint(toleration: Toleration, taint: Taint): boolean {
  if (toleration.effect !== '' && toleration.effect !== taint.effect) return false;
  if (toleration.key !== '' && toleration.key !== taint.key) return false;
  if (toleration.operator === 'Exists') return true;
  // Lt/Gt tolerate only behind TaintTolerationComparisonOperators, off by default in every supported minor
  // (kubeVersion.ts): the scheduler then treats such a toleration as tolerating nothing.
  if (toleration.operator !== 'Equal') return false;
  return toleration.value === taint.value;
}

export function isTolerated(taint: Taint, tolerations: readonly Toleration[]): boolean {
  for (const t of tolerations) if (toleratesTaint(t, taint)) return true;
  return false;
}

/** The first taint with one of `effects` that no toleration tolerates, or undefined. */
export function findUntoleratedTaint(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
  effects: ReadonlySet<TaintEffect>,
): Taint | undefined {
  for (const taint of taints) {
    if (effects.has(taint.effect) && !isTolerated(taint, tolerations)) return taint;
  }
  return undefined;
}

/** The effects the scheduler's filters refuse: NoSchedule and NoExecute. */
export const DO_NOT_SCHEDULE_EFFECTS: ReadonlySet<TaintEffect> = new Set<TaintEffect>(['NoSchedule', 'NoExecute']);

export function taintText(taint: Taint): string {
  return taint.value === '' ? `${taint.key}:${taint.effect}` : `${taint.key}=${taint.value}:${taint.effect}`;
}

const tolerationTexts = new WeakMap<readonly Toleration[], string>();

/**
 * Canonical text of a toleration list, as a key: pods with equal text tolerate the same taints. Memoised per list:
 * the converters intern toleration lists (replicas share one), and the planner asks for this key per candidate.
 */
export function tolerationsText(tolerations: readonly Toleration[]): string {
  let text = tolerationTexts.get(tolerations);
  if (text === undefined) {
    text = tolerations.map((t) => `${t.key}|${t.operator}|${t.value}|${t.effect}`).join(';');
    tolerationTexts.set(tolerations, text);
  }
  return text;
}
