// The operator's HTTP endpoints: /healthz (the process is serving), /readyz (every watch cache has synced and the
// operator is not shutting down) and /metrics (the injected prom-client registry). A request handler only: the
// entry point (run.ts) owns the socket.
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
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

function send(res: ServerResponse, code: number, contentType: string, body: string): void {
  res.writeHead(code, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
  res.end(body);
}

export function createHttpHandler(deps: HttpHandlerDeps): RequestHandler {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      const probe = path === '/healthz' ? deps.health() : deps.readiness();
      send(res, probe.ok ? 200 : 503, 'text/plain; charset=utf-8', `${probe.ok ? 'ok' : 'not ok'}\n${probe.detail}\n`);
      return;
    }
    if (path === '/metrics') {
      deps.registry.metrics().then(
        (text) => send(res, 200, deps.registry.contentType, text),
        (err: unknown) => send(res, 500, 'text/plain; charset=utf-8', `metrics unavailable: ${String(err)}\n`),
      );
      return;
    }
    send(res, 404, 'text/plain; charset=utf-8', 'not found (try /healthz, /readyz, /metrics)\n');
  };
}

export class ListenAddressError extends Error {
  readonly code = 'E_LISTEN_ADDRESS' as const;
  constructor(address: string) {
    super(`invalid --metrics-addr ${JSON.stringify(address)}: expected [host]:port, e.g. :8080 or 127.0.0.1:9090`);
    this.name = 'ListenAddressError';
  }
}

/** `:8080` → all interfaces; `127.0.0.1:9090`; `[::1]:8080`. Port 0 picks a free port. */
export function parseListenAddress(address: string): { host: string | undefined; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(address.trim());
  if (match === null) throw new ListenAddressError(address);
  const port = Number(match[3]);
  if (port > 65535) throw new ListenAddressError(address);
  const host = match[1] ?? match[2];
  return { host: host === undefined || host === '' ? undefined : host, port };
}
