// Why a policy run stopped early, and the one signal every wait of the run listens to.
import { setMaxListeners } from 'node:events';
import type { AbortReason } from '../../metrics/names.js';

export type Halt = AbortReason | 'degraded' | 'window_closed';

function abortReason(signal: AbortSignal): AbortReason {
  const reason: unknown = signal.reason;
  return reason === 'spec_changed' || reason === 'deleted' || reason === 'leadership_lost' ? reason : 'shutting_down';
}

export class RunHalt {
  private why: Halt | undefined;
  private readonly abort = new AbortController();

  /**
   * `caller`: the caller's abort (its reason an AbortReason); `gate`: aborts when the maintenance window closes.
   * `onHalt` runs once, after the run's signal fired.
   */
  constructor(
    caller: AbortSignal,
    gate: AbortSignal | undefined,
    private readonly onHalt: () => void,
  ) {
    // Every lane (one per workload, a thousand in a large run) waits on this signal at once; that is by design,
    // not a listener leak, so Node's default warning threshold of 10 does not apply.
    setMaxListeners(0, this.abort.signal);
    if (caller.aborted) this.halt(abortReason(caller));
    else caller.addEventListener('abort', () => this.halt(abortReason(caller)), { once: true });
    if (gate?.aborted === true) this.halt('window_closed');
    else gate?.addEventListener('abort', () => this.halt('window_closed'), { once: true });
  }

  /** Why the run stopped, once it has. */
  get reason(): Halt | undefined {
    return this.why;
  }

  /** Aborts when the run halts. */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The first reason wins. */
  halt(why: Halt): void {
    if (this.why !== undefined) return;
    this.why = why;
    this.abort.abort();
    this.onHalt();
  }
}
