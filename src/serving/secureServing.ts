// /metrics over HTTPS behind delegated authentication and authorization (delegatingAuth.ts), as kube-scheduler and
// the descheduler serve theirs. The serving certificate is `tls.crt`/`tls.key` of --metrics-cert-dir, read again
// every few seconds and swapped in when it changed (a cert-manager renewal or a Secret update reaches the mounted
// files without a restart; a half-written or mismatched pair is logged and the previous one kept), or, without a
// folder, a self-signed one made at start-up (selfSignedCert.ts), backdated an hour and made anew while the process
// runs once less than a third of its validity is left (a process may well outlive a year).
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import type { Logger } from 'pino';
import { InputError } from '../errors.js';
import type { DelegatingAuth } from './delegatingAuth.js';
import { selfSignedCert } from './selfSignedCert.js';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface KeyPair {
  readonly cert: string;
  readonly key: string;
}

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

/** Reads and checks the pair of `dir`; an InputError names the file and what is wrong with it. */
export function loadCertDir(dir: string): KeyPair {
  const read = (file: string): string => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (err) {
      const what = file === CERT_FILE ? 'certificate' : 'key';
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new InputError(join(dir, file), undefined, undefined, `cannot read the metrics serving ${what}: ${why}`);
    }
  };
  const pair = { cert: read(CERT_FILE), key: read(KEY_FILE) };
  try {
    createSecureContext(pair);
  } catch (err) {
    const why = (err as Error).message;
    throw new InputError(join(dir, CERT_FILE), undefined, undefined, `no usable pair with ${KEY_FILE}: ${why}`);
  }
  return pair;
}

/** Wraps `handler`: each request is answered only once delegated authentication and authorization allow it. */
export function authenticatedHandler(auth: DelegatingAuth, handler: RequestHandler, logger: Logger): RequestHandler {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    auth.check(req, path).then(
      (decision) => {
        if (decision.status === 200) {
          handler(req, res);
          return;
        }
        const text = {
          401: 'Unauthorized',
          403: 'Forbidden',
          500: 'Internal Server Error',
          503: 'Service Unavailable',
        }[decision.status];
        if (decision.status === 500) logger.warn({ path, reason: decision.reason }, 'metrics request not checked');
        else logger.debug({ path, status: decision.status, reason: decision.reason }, 'metrics request refused');
        res.writeHead(decision.status, {
          'Content-Type': 'text/plain; charset=utf-8',
          'Cache-Control': 'no-store',
          // RFC 9110: a 401 names the scheme it wants; a 503 says when to come back.
          ...(decision.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="kube-rebalancer"' } : {}),
          ...(decision.status === 503 ? { 'Retry-After': '1' } : {}),
        });
        // 401 names no reason (the token may have been someone else's); 403 says which user lacks which permission.
        res.end(decision.status === 403 ? `${text}: ${decision.reason}\n` : `${text}\n`);
      },
      (err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(`Internal Server Error: ${String(err)}\n`);
      },
    );
  };
}

export interface SecureServerOptions {
  readonly handler: RequestHandler;
  readonly logger: Logger;
  /** Folder with tls.crt and tls.key; undefined: a self-signed certificate for `altNames`. */
  readonly certDir?: string;
  /** DNS names and IP addresses of the self-signed certificate. */
  readonly altNames: readonly string[];
  /** How often the folder is read again (default 10 s, as controller-runtime's certwatcher). */
  readonly reloadIntervalMs?: number;
  /** Epoch ms (default Date.now): when the self-signed certificate is due for renewal. */
  readonly now?: () => number;
  /** How often the self-signed certificate's expiry is checked (default hourly). */
  readonly renewCheckIntervalMs?: number;
}

export interface SecureServer {
  readonly server: Server;
  /** Stops watching the certificate files (the caller closes the server). */
  readonly stopWatching: () => void;
  /** Makes a new self-signed certificate if the current one is due (true when it did). */
  readonly renewIfDue: () => boolean;
}

const SELF_SIGNED_DAYS = 365;

export function createSecureServer(opts: SecureServerOptions): SecureServer {
  const now = opts.now ?? Date.now;
  const selfSigned = (): ReturnType<typeof selfSignedCert> =>
    selfSignedCert({ commonName: 'kube-rebalancer', altNames: opts.altNames, now: now(), validDays: SELF_SIGNED_DAYS });
  let own = opts.certDir === undefined ? selfSigned() : undefined;
  let current: KeyPair = own ?? loadCertDir(opts.certDir!);
  const server = createHttpsServer({ ...current, minVersion: 'TLSv1.2' }, opts.handler);
  const renewIfDue = (): boolean => {
    if (own === undefined || now() < own.notAfter - (SELF_SIGNED_DAYS * 86_400_000) / 3) return false;
    own = selfSigned();
    current = own;
    server.setSecureContext({ ...own, minVersion: 'TLSv1.2' });
    opts.logger.info({ notAfter: new Date(own.notAfter).toISOString() }, 'self-signed serving certificate renewed');
    return true;
  };
  const renewTimer = own !== undefined ? setInterval(renewIfDue, opts.renewCheckIntervalMs ?? 3_600_000) : undefined;
  renewTimer?.unref();
  let timer: NodeJS.Timeout | undefined;
  const dir = opts.certDir;
  if (dir !== undefined) {
    let lastProblem: string | undefined;
    timer = setInterval(() => {
      let next: KeyPair;
      try {
        next = loadCertDir(dir);
      } catch (err) {
        const problem = err instanceof Error ? err.message : String(err);
        // A Secret update swaps the files one after the other: a mismatch is usually gone at the next read.
        if (problem !== lastProblem)
          opts.logger.warn({ certDir: dir, err: problem }, 'serving certificate not reloaded');
        lastProblem = problem;
        return;
      }
      lastProblem = undefined;
      if (next.cert === current.cert && next.key === current.key) return;
      server.setSecureContext({ ...next, minVersion: 'TLSv1.2' });
      current = next;
      opts.logger.info({ certDir: dir }, 'serving certificate reloaded');
    }, opts.reloadIntervalMs ?? 10_000);
    timer.unref();
  }
  return {
    server,
    stopWatching: () => {
      if (timer !== undefined) clearInterval(timer);
      if (renewTimer !== undefined) clearInterval(renewTimer);
    },
    renewIfDue,
  };
}
