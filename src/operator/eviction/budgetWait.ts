// Before an eviction: the pod's PodDisruptionBudget must allow one more disruption. Waiting for it here, bounded by
// replacementTimeout, is cheaper than calling the Eviction API and being refused.
import type { EvictionResult } from '../../metrics/names.js';
import { pdbKey } from '../../model/pdb.js';
import type { PodInfo } from '../../model/types.js';
import { budgetsIgnored, multipleBudgetsRefusal } from '../../planner/budget.js';
import { ClusterCache, pdbWaitKey, type PdbEntry } from '../clusterCache.js';
import type { PdbLedger } from './pdbLedger.js';

export type BudgetAnswer =
  /** `key` is '' and `entry` undefined for a pod no budget selects. */
  | { readonly kind: 'ok'; readonly key: string; readonly entry: PdbEntry | undefined }
  | { readonly kind: 'refused'; readonly result: EvictionResult; readonly reason: string }
  | { readonly kind: 'halted' };

export interface BudgetWait {
  readonly cache: ClusterCache;
  /** Evictions sent that the cached budget does not show yet. */
  readonly ledger: PdbLedger;
  /** A dry run changes nothing and the server checks the budget itself: no point waiting for it. */
  readonly dryRun: boolean;
  readonly timeoutMs: number;
  /** The run's signal; the answer is `halted` once it fired. */
  readonly signal: AbortSignal;
}

/** Waits (bounded by `timeoutMs`) until the pod's budget allows one more disruption. */
export async function waitForBudget(pod: PodInfo, wait: BudgetWait): Promise<BudgetAnswer> {
  const { cache, ledger } = wait;
  // The API server deletes a Pending, Failed or Succeeded pod without consulting its budgets: no wait, no debit.
  if (budgetsIgnored(pod)) return { kind: 'ok', key: '', entry: undefined };
  const pdbs = cache.pdbsFor(pod);
  // The planner's rule, checked again against the budgets cached now.
  const several = multipleBudgetsRefusal(pdbs.map((p) => p.info));
  if (several !== undefined) return { kind: 'refused', result: 'skipped', reason: several };
  const first = pdbs[0];
  if (first === undefined) return { kind: 'ok', key: '', entry: undefined };
  const key = pdbKey(first.info);
  if (wait.dryRun) return { kind: 'ok', key, entry: first };
  const available = (): boolean => {
    const entry = cache.pdb(key);
    return entry !== undefined && ClusterCache.allowance(entry, ledger.outstanding(key, entry)) >= 1;
  };
  const ok = await cache.waitUntil([pdbWaitKey(key)], available, wait.timeoutMs, wait.signal);
  if (wait.signal.aborted) return { kind: 'halted' };
  const entry = cache.pdb(key);
  if (!ok || entry === undefined) {
    return {
      kind: 'refused',
      result: 'pdb_blocked',
      reason: `PodDisruptionBudget ${key} allowed no disruption for ${Math.round(wait.timeoutMs / 1000)}s (not sent)`,
    };
  }
  return { kind: 'ok', key, entry };
}
