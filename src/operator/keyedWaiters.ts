// Waiting for a condition on the cache without polling: a waiter names the keys whose changes may make its check
// true (a workload's pods, a budget), and only a change of one of those keys re-checks it. Apart from clusterCache.ts
// because it knows nothing of what the keys stand for; the cache notifies, the executor waits.
import type { Clock } from '../clock.js';

interface Waiter {
  readonly check: () => boolean;
  readonly done: (ok: boolean) => void;
}

export class KeyedWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(private readonly clock: Clock) {}

  /**
   * Resolves true as soon as `check()` holds (re-checked whenever one of `keys` changes), false on timeout or
   * abort. `check` must be cheap: it runs on every change of its keys.
   */
  waitUntil(keys: readonly string[], check: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (check()) return Promise.resolve(true);
    if (signal?.aborted === true || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const timer = new AbortController();
      let settled = false;
      const waiter: Waiter = {
        check,
        done: (ok) => {
          if (settled) return;
          settled = true;
          for (const key of keys) this.unregister(key, waiter);
          timer.abort();
          signal?.removeEventListener('abort', onAbort);
          resolve(ok);
        },
      };
      const onAbort = (): void => waiter.done(false);
      for (const key of keys) this.register(key, waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.clock.sleep(timeoutMs, timer.signal).then(() => waiter.done(check()));
    });
  }

  private register(key: string, waiter: Waiter): void {
    let set = this.waiters.get(key);
    if (set === undefined) this.waiters.set(key, (set = new Set()));
    set.add(waiter);
  }

  private unregister(key: string, waiter: Waiter): void {
    const set = this.waiters.get(key);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(key);
  }

  /** Re-checks the waiters of `key`. Public so the executor can wake waiters when its own bookkeeping changes. */
  notify(key: string): void {
    const set = this.waiters.get(key);
    if (set === undefined) return;
    for (const waiter of [...set]) if (waiter.check()) waiter.done(true);
  }
}
