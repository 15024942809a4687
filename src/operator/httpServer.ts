// The operator's HTTP endpoints: /healthz (the process is serving), /readyz (every watch cache has synced and the
// operator is not shutting down) and /metrics (the injected prom-client registry). Request handlers only: the
// entry point (run.ts) owns the sockets — the probes on plain HTTP at --health-addr, /metrics at --metrics-addr
// (HTTPS behind delegated authentication, src/serving/secureServing.ts, unless --metrics-secure=false).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

export interface Probe {
  readonly ok: boolean;
  /** One line per check, shown in the response body. */
  readonly detail: string;
}

export interface HttpHandlerDeps {
  readonly registry: Registry;
  readonly health: () => Probe;
  readonly readiness: () => Probe;
  /** Which endpoints this handler answers (default all three): the probes, or /metrics alone. */
  readonly serve?: 'all' | 'probes' | 'metrics';
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

function send(res: ServerResponse, code: number, contentType: string, body: string): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(body);
}

export function createHttpHandler(deps: HttpHandlerDeps): RequestHandler {
  const serve = deps.serve ?? 'all';
  const probes = serve !== 'metrics';
  const metrics = serve !== 'probes';
  const known = [...(probes ? ['/healthz', '/readyz'] : []), ...(metrics ? ['/metrics'] : [])].join(', ');
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    if (probes && (path === '/healthz' || path === '/readyz')) {
      const probe = path === '/healthz' ? deps.health() : deps.readiness();
      send(res, probe.ok ? 200 : 503, 'text/plain; charset=utf-8', `${probe.ok ? 'ok' : 'not ok'}\n${probe.detail}\n`);
      return;
    }
    if (metrics && path === '/metrics') {
      deps.registry.metrics().then(
        (text) => send(res, 200, deps.registry.contentType, text),
        (err: unknown) => send(res, 500, 'text/plain; charset=utf-8', `metrics unavailable: ${String(err)}\n`),
      );
      return;
    }
    send(res, 404, 'text/plain; charset=utf-8', `not found (try ${known})\n`);
  };
}

export class ListenAddressError extends Error {
  readonly code = 'E_LISTEN_ADDRESS' as const;
  constructor(address: string, flag = '--metrics-addr') {
    super(`invalid ${flag} ${JSON.stringify(address)}: expected [host]:port, e.g. :8443 or 127.0.0.1:9090`);
    this.name = 'ListenAddressError';
  }
}

/** `:8080` → all interfaces; `127.0.0.1:9090`; `[::1]:8080`. Port 0 picks a free port. */
export function parseListenAddress(
  address: string,
  flag = '--metrics-addr',
): { host: string | undefined; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(address.trim());
  if (match === null) throw new ListenAddressError(address, flag);
  const port = Number(match[3]);
  if (port > 65535) throw new ListenAddressError(address, flag);
  const host = match[1] ?? match[2];
  return { host: host === undefined || host === '' ? undefined : host, port };
}
