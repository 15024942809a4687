// One HTTP(S) request whose whole answer is read as text: what `plan --kubeconfig` and the operator's client send
// for everything but watches.
//
// Three rules, as client-go's transport keeps them:
// - The deadline runs from the call, not from the moment the agent hands out a socket: a request queued behind a
//   full pool (32 slow list pages) times out like any other. Every way a request ends early (deadline, the caller's
//   signal, a refused write, an answer too large) destroys it, which closes its socket and frees the pool's slot; a
//   request is never abandoned while it still holds a connection.
// - Nothing is written before a socket is assigned and connected, and `beforeWrite` is asked at that instant: an
//   eviction waiting for a socket is checked against the leader's fence when it would go out, not when it queued.
// - The answer is bounded (`maxBytes`): a runaway body fails the request instead of the process.
// - A reused keep-alive connection the server had already closed (reset or hung up before any byte of an answer)
//   is reported as StaleConnectionError, so the caller can send an idempotent request once more on a fresh one.
import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';

export interface TextAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly text: string;
}

/** Largest answer read by default (a 500-item page of big pods is a few MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

export interface TextRequestOptions {
  /** From the call until the whole answer is read, queueing for a socket included. */
  readonly timeoutMs: number;
  /** Aborting it destroys the request (and its socket) with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Aborting it withdraws the request if it has not been written yet (it ends with the reason); later, nothing. */
  readonly withdraw?: AbortSignal;
  /** Asked once a socket is connected, immediately before the request is written; an Error refuses to send it. */
  readonly beforeWrite?: () => Error | undefined;
  /** The answer's largest size (default DEFAULT_MAX_RESPONSE_BYTES). */
  readonly maxBytes?: number;
}

/** The request ended before an answer: deadline, abort, refused write or oversize. `written` says if it went out. */
export class RequestEndedError extends Error {
  constructor(
    message: string,
    readonly written: boolean,
  ) {
    super(message);
    this.name = 'RequestEndedError';
  }
}

/**
 * The request went out on a reused keep-alive connection that turned out closed before any byte of an answer: the
 * server most likely never read it (Go's transport resends such a request when it is idempotent).
 */
export class StaleConnectionError extends Error {
  constructor(message: string, cause: unknown) {
    super(message, { cause });
    this.name = 'StaleConnectionError';
  }
}

const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** Calls `then` once `socket` can be written to: at once for a pooled connection, after (TLS) connect for a new one. */
export function whenConnected(socket: Socket, then: () => void): void {
  if (!socket.connecting) {
    then();
    return;
  }
  socket.once('encrypted' in socket ? 'secureConnect' : 'connect', then);
}

export function requestText(
  url: URL,
  options: https.RequestOptions,
  body: string | undefined,
  opts: TextRequestOptions,
): Promise<TextAnswer> {
  const client = url.protocol === 'https:' ? https : http;
  const what = `${options.method ?? 'GET'} ${url.pathname}`;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return new Promise<TextAnswer>((resolve, reject) => {
    let written = false;
    let settled = false;
    const settle = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      opts.withdraw?.removeEventListener('abort', onWithdraw);
      fn();
    };
    const end = (err: Error): void => {
      settle(() => reject(err));
      request.destroy();
    };
    let answered = false;
    const request = client.request(url, options, (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) {
          end(new RequestEndedError(`${what}: answer larger than ${maxBytes} bytes`, true));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err) => end(err));
      res.on('end', () =>
        settle(() =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        ),
      );
    });
    const timer = setTimeout(
      () => end(new RequestEndedError(`${what}: no answer within ${opts.timeoutMs / 1000} s`, written)),
      opts.timeoutMs,
    );
    const onAbort = (): void => {
      const reason: unknown = opts.signal?.reason;
      end(reason instanceof Error ? reason : new RequestEndedError(`${what}: aborted`, written));
    };
    const onWithdraw = (): void => {
      if (!written) end(new RequestEndedError(`${what}: withdrawn before it was sent`, false));
    };
    if (opts.signal?.aborted === true) return onAbort();
    if (opts.withdraw?.aborted === true) return onWithdraw();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    opts.withdraw?.addEventListener('abort', onWithdraw, { once: true });
    request.on('error', (err: NodeJS.ErrnoException) => {
      if (!answered && request.reusedSocket && CLOSED_CODES.has(err.code ?? '')) {
        end(new StaleConnectionError(`${what}: reused connection closed by the server before an answer`, err));
        return;
      }
      end(err);
    });
    request.once('socket', (socket: Socket) =>
      whenConnected(socket, () => {
        if (settled) return;
        const refused = opts.beforeWrite?.();
        if (refused !== undefined) {
          end(refused);
          return;
        }
        written = true;
        request.end(body);
      }),
    );
  });
}
