// Time as the operator sees it: one small interface injected everywhere (rate limiter, backoff, pacing, leader
// election, cycles), so tests can run on a manual clock and production uses the system's clocks.
//
// Two clocks, because they answer different questions. Intervals (token refills, Lease expiry and renew deadlines,
// backoff, pacing timeouts, cooldown deadlines) are measured on a monotonic clock: a wall-clock step (NTP, a VM
// resumed, an operator fixing the date) must neither stall every request nor let a follower take a Lease early.
// Instants shown to people or stored in the API (status times, Event and Lease timestamps, a pod's age against its
// creationTimestamp, an HTTP-date Retry-After) use the wall clock.

export interface Clock {
  /** Monotonic milliseconds from an arbitrary origin: only differences mean anything. */
  now(): number;
  /** Milliseconds since the epoch (wall clock; may jump). */
  wall(): number;
  /**
   * Resolves after `ms` milliseconds, or as soon as `signal` aborts (it never rejects: callers check the signal
   * themselves, which keeps every wait loop free of try/catch).
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** setTimeout's largest delay (about 24.8 days); longer delays are slept in steps of it. */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

export const systemClock: Clock = {
  now: () => performance.now(),
  wall: () => Date.now(),
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
      const wakeAt = performance.now() + Math.max(0, ms);
      const arm = (): void => {
        const left = wakeAt - performance.now();
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
