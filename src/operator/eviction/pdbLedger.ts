// Evictions this operator sent that the cached PodDisruptionBudgets do not reflect yet.
import type { PdbEntry } from '../clusterCache.js';

/**
 * The Eviction API decrements status.disruptionsAllowed in the same request, so the debit holds until the cache
 * shows a newer version of the budget than the one the eviction was checked against. Shared by all runs (budgets
 * are cluster objects).
 */
export class PdbLedger {
  private readonly debits = new Map<string, Map<string, string>>();

  debit(key: string, podUid: string, resourceVersion: string): void {
    let pods = this.debits.get(key);
    if (pods === undefined) this.debits.set(key, (pods = new Map<string, string>()));
    pods.set(podUid, resourceVersion);
  }

  outstanding(key: string, entry: PdbEntry | undefined): number {
    const pods = this.debits.get(key);
    if (pods === undefined) return 0;
    for (const [uid, rv] of pods) if (entry === undefined || entry.resourceVersion !== rv) pods.delete(uid);
    if (pods.size === 0) this.debits.delete(key);
    return pods.size;
  }
}
