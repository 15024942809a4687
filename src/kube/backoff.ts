// Capped exponential backoff with jitter, shared by the informer supervisor, eviction retries and leader election.
// Pure: the random source is injected, so delays are deterministic in tests.

export interface BackoffOptions {
  /** First delay, ms. */
  readonly initialMs: number;
  /** Upper bound of any delay, ms. */
  readonly maxMs: number;
  /** Growth per attempt (default 2). */
  readonly factor?: number;
  /** Fraction of the delay added at random, 0..1 (default 0.2), so restarted watchers do not stampede. */
  readonly jitter?: number;
  /** Random source in [0, 1) (default Math.random). */
  readonly random?: () => number;
}

/** The delay before retry number `attempt` (0-based): min(max, initial × factor^attempt) plus jitter, capped. */
export function backoffDelay(attempt: number, opts: BackoffOptions): number {
  const factor = opts.factor ?? 2;
  const jitter = opts.jitter ?? 0.2;
  const random = opts.random ?? Math.random;
  const base = Math.min(opts.maxMs, opts.initialMs * Math.pow(factor, Math.max(0, attempt)));
  return Math.min(opts.maxMs, base + base * jitter * random());
}

/** A backoff that remembers its attempt count; reset() after a success. */
export class Backoff {
  private attempt = 0;

  constructor(private readonly opts: BackoffOptions) {}

  /** The next delay; each call grows the following one. */
  next(): number {
    return backoffDelay(this.attempt++, this.opts);
  }

  reset(): void {
    this.attempt = 0;
  }
}
