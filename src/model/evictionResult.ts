// What one eviction attempt came to: the vocabulary the Eviction API's answers are mapped to
// (src/kube/evictionErrors.ts), the executor records, and the metric catalogue labels `rebalancer_evictions_total`
// with (src/metrics/names.ts re-exports it).

/** Outcome of one eviction attempt (label `result` of `rebalancer_evictions_total`). */
export const EVICTION_RESULTS = ['evicted', 'dry_run', 'pdb_blocked', 'not_found', 'failed', 'skipped'] as const;
export type EvictionResult = (typeof EVICTION_RESULTS)[number];
