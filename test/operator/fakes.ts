// Fakes for the operator's ports (fakes over mocks): a manual clock, a cron that ticks on demand, and a pino
// logger whose lines are kept in memory so tests can assert on them.
import { pino, type Logger } from 'pino';
import type { Clock } from '../../src/clock.js';
import type { CronFactory } from '../../src/operator/policyScheduler.js';

/** A clock that moves only when told; sleepers wake in time order as it advances. */
export class ManualClock implements Clock {
  private current: number;
  /** wall() - now(): moved by jumpWall() only, as a wall-clock step moves the system time. */
  private wallOffset = 0;
  private sleepers: Array<{ at: number; resolve: () => void; seq: number }> = [];
  private seq = 0;

  constructor(start = Date.parse('2026-01-01T00:00:00Z')) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  wall(): number {
    return this.current + this.wallOffset;
  }

  /** Steps the wall clock by `ms` (either way) without any time passing on the monotonic clock. */
  jumpWall(ms: number): void {
    this.wallOffset += ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      // Waking by time removes the abort listener, as the system clock does: a long-lived signal (a leader
      // elector's) must not collect one listener per sleep.
      const onAbort = (): void => {
        this.sleepers = this.sleepers.filter((s) => s !== entry);
        resolve();
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const entry = { at: this.current + Math.max(0, ms), resolve: wake, seq: this.seq++ };
      this.sleepers.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Sleepers currently waiting. */
  get waiting(): number {
    return this.sleepers.length;
  }

  /** Moves time forward by `ms`, waking due sleepers one at a time (letting their continuations run). */
  /**
   * Moves time on by `ms` without waking anyone: the thread was busy (a long plan, a collection) and every timer due
   * meanwhile fires late, at the next advance().
   */
  stall(ms: number): void {
    this.current += ms;
  }

  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      await flush();
      const due = this.sleepers.filter((s) => s.at <= target).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.sleepers = this.sleepers.filter((s) => s !== due);
      this.current = Math.max(this.current, due.at);
      due.resolve();
    }
    this.current = target;
    await flush();
  }
}

/** Lets pending promise continuations run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise((resolve) => setImmediate(resolve));
}

export interface CronRecord {
  readonly expression: string;
  readonly name: string;
  readonly onTick: () => void;
  stopped: boolean;
}

/** A cron that never fires by itself: tests call fire(name). Keeps every task ever created. */
export class ManualCron {
  readonly tasks: CronRecord[] = [];

  readonly factory: CronFactory = (expression, onTick, name) => {
    const record: CronRecord = { expression, name, onTick, stopped: false };
    this.tasks.push(record);
    return {
      stop: () => {
        record.stopped = true;
      },
    };
  };

  /** The live task of a policy. */
  active(name: string): CronRecord | undefined {
    return this.tasks.find((t) => t.name === name && !t.stopped);
  }

  fire(name: string): void {
    const task = this.active(name);
    if (task === undefined) throw new Error(`no active cron task for ${name}`);
    task.onTick();
  }
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [key: string]: unknown;
}

/** A pino logger writing parsed JSON lines into `lines`. */
export function captureLogger(level = 'debug'): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino(
    { level, base: undefined },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as LogLine);
      },
    },
  );
  return { logger, lines };
}
