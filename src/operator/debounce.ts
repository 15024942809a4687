// Debounced triggers (spec.triggers.debounce): changes to a key (a policy) are gathered, and the key fires once no
// further change has arrived for `debounceMs`, or at the latest 10 × debounceMs after the first change, so a steady
// stream of changes (a rolling node upgrade) still gets a cycle. A fire carries the first change's kind and what
// changed, for the log line and the metric label. Time comes from the injected clock.
import type { CycleTriggerLabel } from '../metrics/names.js';
import type { Clock } from '../clock.js';

/** What started a cycle (label `trigger` of rebalancer_cycles_total). */
export type CycleTrigger = CycleTriggerLabel;

/** How much longer than the debounce a burst of changes may hold a cycle back. */
export const MAX_DELAY_FACTOR = 10;

export interface Fired {
  readonly key: string;
  readonly trigger: Exclude<CycleTrigger, 'schedule'>;
  /** The changes gathered, oldest first (at most 10 kept). */
  readonly changes: readonly string[];
  /** When the first change arrived. */
  readonly since: number;
}

interface Pending {
  readonly first: number;
  last: number;
  debounceMs: number;
  readonly trigger: Fired['trigger'];
  readonly changes: string[];
  dropped: number;
  timer: AbortController;
}

const KEEP_CHANGES = 10;

export class Debouncer {
  private readonly pending = new Map<string, Pending>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly fire: (fired: Fired) => void,
  ) {}

  /** Records a change to `key`; the key fires `debounceMs` after the last change (bounded, see above). */
  poke(key: string, trigger: Fired['trigger'], change: string, debounceMs: number): void {
    if (this.stopped) return;
    const now = this.clock.now();
    let p = this.pending.get(key);
    if (p === undefined) {
      p = { first: now, last: now, debounceMs, trigger, changes: [], dropped: 0, timer: new AbortController() };
      this.pending.set(key, p);
    } else {
      p.last = now;
      // A policy edited to a shorter debounce is not held back by the longer one.
      p.debounceMs = Math.min(p.debounceMs, debounceMs);
      p.timer.abort();
      p.timer = new AbortController();
    }
    if (p.changes.length < KEEP_CHANGES) p.changes.push(change);
    else p.dropped++;
    this.arm(key, p);
  }

  /** Whether `key` has changes waiting. */
  waiting(key: string): boolean {
    return this.pending.has(key);
  }

  /** Forgets the changes of `key` (the policy was deleted). */
  cancel(key: string): void {
    this.pending.get(key)?.timer.abort();
    this.pending.delete(key);
  }

  stop(): void {
    this.stopped = true;
    for (const key of [...this.pending.keys()]) this.cancel(key);
  }

  /** When `p` fires: quiet for the debounce, or the cap since the first change, whichever is earlier. */
  static dueAt(p: Pick<Pending, 'first' | 'last' | 'debounceMs'>): number {
    return Math.min(p.last + p.debounceMs, p.first + MAX_DELAY_FACTOR * p.debounceMs);
  }

  private arm(key: string, p: Pending): void {
    const signal = p.timer.signal;
    void this.clock.sleep(Math.max(0, Debouncer.dueAt(p) - this.clock.now()), signal).then(() => {
      if (signal.aborted || this.pending.get(key) !== p) return;
      this.pending.delete(key);
      const changes = p.dropped > 0 ? [...p.changes, `and ${p.dropped} more`] : p.changes;
      this.fire({ key, trigger: p.trigger, changes, since: p.first });
    });
  }
}
