// Time as the operator sees it: one small interface injected everywhere (rate limiter, backoff, pacing, leader
// election, cycles), so tests can run on a manual clock and production uses the wall clock.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /**
   * Resolves after `ms` milliseconds, or as soon as `signal` aborts (it never rejects: callers check the signal
   * themselves, which keeps every wait loop free of try/catch).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** setTimeout's largest delay (about 24.8 days); longer delays are slept in steps of it. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted === true) {
        resolve();
        return;
      }
      let timer: NodeJS.Timeout;
      const onAbort = (): void => {
        clearTimeout(timer);
        resolve();
      };
      // A longer delay would make setTimeout fire after 1 ms (a window a year away, a long debounce).
      const wakeAt = Date.now() + Math.max(0, ms);
      const arm = (): void => {
        const left = wakeAt - Date.now();
        timer = setTimeout(
          () => {
            if (left > MAX_TIMEOUT_MS) return arm();
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          Math.min(Math.max(0, left), MAX_TIMEOUT_MS),
        );
      };
      arm();
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
};
