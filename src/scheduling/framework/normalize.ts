// The two ways kube-scheduler v1.26 scales a plugin's raw node scores to 0–100 over the nodes being scored
// (pkg/scheduler/framework/plugins/helper/normalize_score.go and InterPodAffinity's NormalizeScore). Every score is an
// integer, as upstream's int64 arithmetic makes it, so totals compare exactly and ties are real ties.

export const MAX_NODE_SCORE = 100;

/**
 * Scales to 0–100 against the highest raw score (integer division); `reverse` turns it round (100 − score). All
 * zero: 0 everywhere, or 100 everywhere when reversed.
 */
export function defaultNormalize(scores: Float64Array, n: number, reverse: boolean): void {
  let max = 0;
  for (let i = 0; i < n; i++) if (scores[i]! > max) max = scores[i]!;
  if (max === 0) {
    if (reverse) scores.fill(MAX_NODE_SCORE, 0, n);
    return;
  }
  for (let i = 0; i < n; i++) {
    const scaled = Math.trunc((MAX_NODE_SCORE * scores[i]!) / max);
    scores[i] = reverse ? MAX_NODE_SCORE - scaled : scaled;
  }
}

/** Min–max scaling to 0–100, truncated (InterPodAffinity): all equal gives 0 everywhere. */
export function minMaxNormalize(scores: Float64Array, n: number): void {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    min = Math.min(min, scores[i]!);
    max = Math.max(max, scores[i]!);
  }
  const span = max - min;
  for (let i = 0; i < n; i++) scores[i] = span > 0 ? Math.trunc(MAX_NODE_SCORE * ((scores[i]! - min) / span)) : 0;
}
