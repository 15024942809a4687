// Watches of the client runtime: each a streamed GET behind the shared limiter, read line by line, with bookmarks,
// a randomised server-side timeout and an idle-read deadline, as client-go's reflector watches.
import * as http from 'node:http';
import * as https from 'node:https';
import { createInterface } from 'node:readline';
import type { AgentPool } from './agentPool.js';
import { systemClock, type Clock } from '../clock.js';
import { retryAfterMs, statusOf } from './evictionErrors.js';
import type { RateLimiter } from './rateLimiter.js';
import type { KubeTransport } from './transport.js';

export interface LimitedWatchOptions {
  readonly limiter: RateLimiter;
  /**
   * The shortest server-side timeout of a watch: each watch asks for a random `timeoutSeconds` between this and
   * twice this (default 300, so 5 to 10 minutes, as client-go's reflector), so informers started together do not
   * all reconnect together.
   */
  readonly timeoutSeconds?: number;
  /**
   * A watch that receives nothing (no event, no bookmark) for this long is closed and reported as WatchIdleError
   * (default 150 s: the API server sends a bookmark about once a minute). A dead peer would otherwise be found only
   * by TCP keepalive, about 12 minutes on Node 20, with the cache stale meanwhile.
   */
  readonly idleTimeoutMs?: number;
  /** Measures the idle deadline (default: the system clock). */
  readonly clock?: Clock;
  /** Random source in [0, 1) for timeoutSeconds (default Math.random). */
  readonly random?: () => number;
}

export const DEFAULT_WATCH_TIMEOUT_SECONDS = 300;
export const DEFAULT_WATCH_IDLE_TIMEOUT_MS = 150_000;

/**
 * An error answer to a watch request; `statusCode` 410 tells the informer to list again. The Status message is kept
 * (it says why: a missing grant, a priority-and-fairness rejection) and so is the server's Retry-After, which the
 * informer waits at least before it tries again.
 */
export class WatchStatusError extends Error {
  constructor(
    readonly statusCode: number,
    path: string,
    detail = '',
    readonly retryAfterMs: number | undefined = undefined,
  ) {
    super(`watch ${path}: HTTP ${statusCode}${detail !== '' ? `: ${detail}` : ''}`);
    this.name = 'WatchStatusError';
  }
}

/** A watch that received nothing for its idle deadline: closed, to be opened again from the last version seen. */
export class WatchIdleError extends Error {
  readonly code = 'E_WATCH_IDLE' as const;
  constructor(path: string, ms: number) {
    super(`watch ${path}: nothing received for ${ms / 1000} s; closed`);
    this.name = 'WatchIdleError';
  }
}

/** Called with each event of a watch stream: its type and its object, parsed from one line. */
export type WatchCallback = (phase: string, object: unknown) => void;

/**
 * Watches behind the shared limiter, each a streamed GET read line by line (one JSON event a line). Bookmarks are
 * requested (so a resumed watch rarely needs a relist and a live one is never silent for long), the server is asked
 * to close each watch after a randomised `timeoutSeconds`, and a watch silent past its idle deadline is closed here,
 * so a dead connection is replaced within that deadline. `close()` aborts the open watch and any that was about
 * to start: a stopped informer leaves no stream behind. The returned promise never rejects; the end of the stream or
 * a failure is reported once through `done` (null for a clean end).
 */
export class LimitedWatch {
  private current: AbortController | undefined;
  private closed = false;
  private readonly closing = new AbortController();

  constructor(
    private readonly transport: KubeTransport,
    private readonly pool: AgentPool,
    private readonly opts: LimitedWatchOptions,
  ) {}

  async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: (err: unknown) => void,
  ): Promise<AbortController> {
    const controller = new AbortController();
    let finished = false;
    const finish = (err: unknown): void => {
      if (finished) return;
      finished = true;
      controller.abort();
      if (!this.closed) done(err);
    };
    await this.opts.limiter.acquire(this.closing.signal).catch(() => undefined);
    if (this.closed) {
      controller.abort();
      return controller;
    }
    this.current = controller;
    const query = new URLSearchParams({ watch: 'true', allowWatchBookmarks: 'true' });
    for (const [key, value] of Object.entries(queryParams)) if (value !== undefined) query.set(key, String(value));
    const minTimeout = this.opts.timeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS;
    query.set('timeoutSeconds', String(Math.floor(minTimeout * (1 + (this.opts.random ?? Math.random)()))));
    const idle = this.idleWatchdog(path, controller.signal, finish);
    try {
      const { url, options } = await this.transport.options('GET', `${path}?${query.toString()}`, {}, this.pool);
      options.signal = controller.signal;
      const client = url.protocol === 'https:' ? https : http;
      const request = client.request(url, options, (res) => {
        res.on('error', finish);
        if (res.statusCode !== 200) {
          // A short error body (a Status) is read for its message; a long one is cut, the watch ends either way.
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            if ((size += chunk.length) <= 64 * 1024) chunks.push(chunk);
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = statusOf(text);
            const message = typeof status?.message === 'string' ? status.message : '';
            const wall = (this.opts.clock ?? systemClock).wall();
            finish(new WatchStatusError(res.statusCode ?? 0, path, message, retryAfterMs(res.headers, status, wall)));
          });
          return;
        }
        res.socket.setKeepAlive(true, 30_000);
        res.on('data', idle);
        const lines = createInterface({ input: res, crlfDelay: Infinity });
        lines.on('line', (line) => {
          if (finished || line === '') return;
          let event: { type?: unknown; object?: unknown };
          try {
            event = JSON.parse(line) as { type?: unknown; object?: unknown };
          } catch {
            return; // a torn line of a dropped connection: the watch ends next and resumes
          }
          if (typeof event.type === 'string') callback(event.type, event.object);
        });
        lines.on('close', () => finish(null));
        // readline passes the stream's errors on (a dropped connection): without a listener they would be thrown.
        lines.on('error', finish);
      });
      // Our own abort comes after finish (a no-op then) or with close() (which reports nothing).
      request.on('error', finish);
      request.end();
    } catch (err) {
      // Credentials that cannot be applied (an exec plugin failing): reported like any failed watch.
      finish(err);
    }
    return controller;
  }

  close(): void {
    this.closed = true;
    this.closing.abort();
    this.current?.abort();
  }

  /**
   * Ends the watch with WatchIdleError when nothing arrives for the idle deadline (the headers count: a server that
   * never answers is as dead as one that went silent). Returns the function to call on each chunk received.
   */
  private idleWatchdog(path: string, signal: AbortSignal, finish: (err: unknown) => void): () => void {
    const clock = this.opts.clock ?? systemClock;
    const idleMs = this.opts.idleTimeoutMs ?? DEFAULT_WATCH_IDLE_TIMEOUT_MS;
    let last = clock.now();
    void (async () => {
      while (!signal.aborted) {
        await clock.sleep(last + idleMs - clock.now(), signal);
        if (signal.aborted) return;
        if (clock.now() - last >= idleMs) finish(new WatchIdleError(path, idleMs));
      }
    })();
    return () => {
      last = clock.now();
    };
  }
}
