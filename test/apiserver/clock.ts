// Injectable time: every delay in the test API server (watch timeouts, bookmarks, graceful termination,
// controller loops, kubelet readiness, fault latency) goes through a Clock, and every timer a server starts is
// tracked by a TimerSet so `close()` can cancel them all.

export type TimerHandle = { readonly id: number };

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

let nextTimerId = 1;

/** Wall-clock time and Node's timers. */
export function realClock(): Clock {
  const live = new Map<number, NodeJS.Timeout>();
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const id = nextTimerId++;
      const timer = setTimeout(
        () => {
          live.delete(id);
          fn();
        },
        Math.max(0, ms),
      );
      live.set(id, timer);
      return { id };
    },
    clearTimeout(handle) {
      const timer = live.get(handle.id);
      if (timer !== undefined) {
        clearTimeout(timer);
        live.delete(handle.id);
      }
    },
  };
}

interface ManualTimer {
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. `advance(ms)` fires due timers in time order (timers scheduled by a
 * firing timer run too when they fall inside the window). Use it for controller tests driven through `store`/`api`;
 * HTTP clients keep their own real timers.
 */
export class ManualClock implements Clock {
  private current: number;
  private timers: ManualTimer[] = [];

  constructor(start: number | Date = Date.UTC(2025, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: nextTimerId++, at: this.current + Math.max(0, ms), fn };
    this.timers.push(timer);
    return { id: timer.id };
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle.id);
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.length;
  }

  advance(ms: number): void {
    const until = this.current + ms;
    for (;;) {
      let next: ManualTimer | undefined;
      for (const t of this.timers) {
        if (t.at <= until && (next === undefined || t.at < next.at || (t.at === next.at && t.id < next.id))) next = t;
      }
      if (next === undefined) break;
      const due = next;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.fn();
    }
    this.current = until;
  }
}

/** The timers one server instance started; `clearAll()` is called by `close()`. */
export class TimerSet {
  private readonly live = new Set<number>();
  private readonly handles = new Map<number, TimerHandle>();
  private closed = false;

  constructor(readonly clock: Clock) {}

  set(fn: () => void, ms: number): TimerHandle | undefined {
    if (this.closed) return undefined;
    const handle: TimerHandle = this.clock.setTimeout(() => {
      this.live.delete(handle.id);
      this.handles.delete(handle.id);
      fn();
    }, ms);
    this.live.add(handle.id);
    this.handles.set(handle.id, handle);
    return handle;
  }

  clear(handle: TimerHandle | undefined): void {
    if (handle === undefined) return;
    this.clock.clearTimeout(handle);
    this.live.delete(handle.id);
    this.handles.delete(handle.id);
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.set(resolve, ms) === undefined) resolve();
    });
  }

  clearAll(): void {
    this.closed = true;
    for (const handle of this.handles.values()) this.clock.clearTimeout(handle);
    this.live.clear();
    this.handles.clear();
  }
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
