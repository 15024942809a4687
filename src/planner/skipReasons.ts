// Skip reasons in groups: a skip's text names its pod's age, node or budget, so two pods refused for the same rule
// rarely have the same text. `plan -o table`, the policy's status.lastPlan.skippedReasons and the cycle's summary
// Event all group by the same class, so they count the same way.

export interface ReasonCount {
  readonly reason: string;
  readonly count: number;
}

/** Known reasons whose text carries specifics, with the class they belong to. */
const CLASSES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^protected by /, 'protected by annotation'],
  [/^pod is \S+, not Running/, 'pod is not Running'],
  [/^namespace \S+ is outside the policy's namespaces/, "namespace is outside the policy's namespaces"],
  [/^priority \S+ is at or above the threshold/, 'priority is at or above the threshold'],
  [/^priority \S+ is higher than that of the pod/, 'priority is higher than that of the pod it would make room for'],
  [/younger than minPodAge/, 'pod is younger than minPodAge'],
  [/^PodDisruptionBudget \S+ allows 0 disruptions/, 'PodDisruptionBudget allows 0 disruptions'],
  [/^PodDisruptionBudget \S+: budget used by this plan/, 'PodDisruptionBudget: budget used by this plan'],
  [/^its volume \S+ .*is reachable only from/, 'its volume is reachable only from other nodes'],
  [/^evicting it would not lower the skew/, 'evicting it would not lower the skew by itself'],
  [/^evicting it alone would not clear the anti-affinity/, 'evicting it alone would not clear the anti-affinity'],
  [/selected by \d+ PodDisruptionBudgets/, 'pod is selected by more than one PodDisruptionBudget'],
  [/^limit (maxPer\w+)/, 'limit $1 reached'],
  [/^no node can take a replacement/, 'no node can take a replacement'],
  [/^the move would raise the skew of/, 'the move would raise the skew of another spread constraint'],
  [/^the required pod affinity of \S+ depends on this pod/, "another pod's required affinity depends on this pod"],
  [/^conflicts with /, 'conflicts with another violation'],
  [/^pod uses DRA resourceClaims/, 'pod uses DRA resourceClaims'],
];

/** The CRD bounds status.lastPlan.skippedReasons[].reason; a longer one would get the whole status refused. */
export const MAX_REASON_LENGTH = 256;

/** The class of a skip reason: a known rule without its specifics, else the text before any detail. */
export function skipReasonClass(reason: string): string {
  for (const [pattern, label] of CLASSES) {
    const match = pattern.exec(reason);
    if (match !== null) return label.replace('$1', match[1] ?? '');
  }
  // Unknown wording: details follow a parenthesis, a semicolon or a colon.
  const cut = reason.search(/ \(|;|: /);
  const text = (cut > 0 ? reason.slice(0, cut) : reason).trim();
  return text.length > MAX_REASON_LENGTH ? `${text.slice(0, MAX_REASON_LENGTH - 1)}…` : text;
}

/** Counts by class, most frequent first (then by name), at most `max` entries (DESIGN.md: 10). */
export function countSkipReasons(reasons: Iterable<string>, max = 10): ReasonCount[] {
  const counts = new Map<string, number>();
  for (const reason of reasons) {
    const key = skipReasonClass(reason);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts]
    .map(([reason, count]) => ({ reason, count }))
    .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : a.reason > b.reason ? 1 : 0))
    .slice(0, max);
}
