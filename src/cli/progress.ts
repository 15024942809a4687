// Progress for long loads and simulations: one status line on stderr, rewritten in place, only when stderr is a
// terminal (piped or redirected output stays exactly as it is) and only once the work has taken a while, so quick
// commands print nothing extra. The line is erased when the work is done.

export interface ProgressSink {
  readonly write: (s: string) => void;
  readonly isTTY: boolean;
  /** Milliseconds since some fixed instant. */
  readonly now: () => number;
}

export interface Progress {
  update(text: string): void;
  /** Erases the status line, if one was shown. */
  done(): void;
}

export const silentProgress: Progress = { update: () => undefined, done: () => undefined };

export interface ProgressOptions {
  /** Nothing is shown before this much time has passed (default 500 ms). */
  readonly delayMs?: number;
  /** At most one rewrite per this interval (default 100 ms). */
  readonly intervalMs?: number;
}

export function createProgress(sink: ProgressSink, opts: ProgressOptions = {}): Progress {
  if (!sink.isTTY) return silentProgress;
  const delay = opts.delayMs ?? 500;
  const interval = opts.intervalMs ?? 100;
  const started = sink.now();
  let shown = false;
  let lastWrite = -Infinity;
  return {
    update(text) {
      const now = sink.now();
      if (now - started < delay || now - lastWrite < interval) return;
      lastWrite = now;
      shown = true;
      sink.write(`\r\u001b[K${text}`);
    },
    done() {
      if (shown) sink.write('\r\u001b[K');
      shown = false;
    },
  };
}
