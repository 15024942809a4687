// `kube-rebalancer run --once`: sync the caches, run one cycle of every policy in turn, report, exit. For clusters
// that run the rebalancer as a Job or CronJob (manifests/cronjob/) instead of the Deployment. Exit 0 when every cycle
// succeeded (suspended policies are skipped), 1 when one failed: an invalid spec, a failed or interrupted cycle, a
// Degraded pause, caches that did not sync in time, or no RebalancePolicy CRD (at its first 404, naming it). The reasons go to the log and, one line, to stderr.
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../clock.js';
import type { OnceResult, Operator } from './operator.js';

export const DEFAULT_SYNC_TIMEOUT_MS = 120_000;

export interface OnceDeps {
  readonly operator: Pick<Operator, 'start' | 'waitForSync' | 'runAllOnce' | 'shutdown'> &
    Partial<Pick<Operator, 'crdMissing'>>;
  readonly logger: Logger;
  readonly stderr: (line: string) => void;
  readonly clock?: Clock;
  readonly syncTimeoutMs?: number;
  /** Aborts the run (a signal): the cycle in progress stops evicting, the rest are not started. */
  readonly signal?: AbortSignal;
}

/** The one-line summary of a run: undefined when every cycle succeeded. */
export function onceFailureLine(results: readonly OnceResult[]): string | undefined {
  const failed = results.filter((r) => r.failure !== undefined);
  if (failed.length === 0) return undefined;
  const reasons = failed.map((r) => `RebalancePolicy ${r.policy}: ${r.failure}`).join('; ');
  return `${failed.length} of ${results.length} ${results.length === 1 ? 'policy' : 'policies'} failed: ${reasons}`;
}

export async function runOnce(deps: OnceDeps): Promise<number> {
  const clock = deps.clock ?? systemClock;
  const { operator, logger } = deps;
  const timeoutMs = deps.syncTimeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
  operator.start();
  const timer = new AbortController();
  // Without the CRD no sync can happen: give up at once, naming it, instead of at the sync timeout.
  const synced = await Promise.race<boolean | string>([
    operator.waitForSync().then(() => true),
    clock.sleep(timeoutMs, timer.signal).then(() => false),
    ...(operator.crdMissing !== undefined ? [operator.crdMissing()] : []),
  ]);
  timer.abort();
  let code: number;
  if (typeof synced === 'string') {
    deps.stderr(`error: ${synced}\n`);
    code = 1;
  } else if (!synced) {
    const message = `the caches did not sync within ${Math.round(timeoutMs / 1000)}s; no cycle ran`;
    logger.error(message);
    deps.stderr(`error: ${message}\n`);
    code = 1;
  } else if (deps.signal?.aborted === true) {
    code = 1;
  } else {
    const results = await operator.runAllOnce();
    for (const r of results) {
      if (r.failure !== undefined) logger.error({ policy: r.policy }, `cycle failed: ${r.failure}`);
      else logger.info({ policy: r.policy, ...(r.skipped ? { skipped: r.skipped } : {}) }, 'cycle done');
    }
    const failure = onceFailureLine(results);
    if (failure !== undefined) deps.stderr(`error: ${failure}\n`);
    logger.info({ policies: results.length, failed: results.filter((r) => r.failure).length }, 'run --once finished');
    code = failure === undefined ? 0 : 1;
  }
  await operator.shutdown({ releaseLease: true });
  return code;
}
