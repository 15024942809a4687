// The listeners of `kube-rebalancer run`: /healthz and /readyz on plain HTTP at --health-addr (the kubelet's probes
// carry no token); /metrics at --metrics-addr over HTTPS, each request authenticated by a TokenReview and authorized
// by a SubjectAccessReview (src/serving/secureServing.ts), or on plain HTTP without either with
// --metrics-secure=false (local runs). With --metrics-secure=false and the same address for both, one listener
// answers all three paths.
import { createServer, type Server } from 'node:http';
import type { Server as TlsServer } from 'node:https';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { InputError } from '../errors.js';
import { createDelegatingAuth } from '../serving/delegatingAuth.js';
import { authenticatedHandler, createSecureServer, loadCertDir } from '../serving/secureServing.js';
import { ListenAddressError, parseListenAddress } from './httpServer.js';
import type { Operator } from './operator.js';

export interface ServingFlags {
  readonly metricsAddr: string;
  /** Default true. */
  readonly metricsSecure?: boolean;
  readonly metricsCertDir?: string;
  /** Default :8081. */
  readonly healthAddr?: string;
  /** The operator's namespace: the Service's DNS names in the self-signed certificate. */
  readonly namespace: string;
}

export const DEFAULT_HEALTH_ADDR = ':8081';

/** What is wrong with the serving flags (one line for `error:`), or undefined. */
export function servingFlagProblem(flags: ServingFlags): string | undefined {
  try {
    parseListenAddress(flags.metricsAddr);
    parseListenAddress(flags.healthAddr ?? DEFAULT_HEALTH_ADDR, '--health-addr');
  } catch (err) {
    if (err instanceof ListenAddressError) return err.message;
    throw err;
  }
  if (flags.metricsCertDir === undefined) return undefined;
  if (flags.metricsSecure === false) return '--metrics-cert-dir needs --metrics-secure (plain HTTP has no certificate)';
  try {
    loadCertDir(flags.metricsCertDir);
  } catch (err) {
    if (err instanceof InputError) return `--metrics-cert-dir: ${err.message}`;
    throw err;
  }
  return undefined;
}

export interface Listeners {
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

function listen(server: Server | TlsServer, address: string, flag: string): Promise<void> {
  const { host, port } = parseListenAddress(address, flag);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** host:port a listening server is bound to (IPv6 in brackets); `fallback` if it has no TCP address. */
function boundAddress(server: Server | TlsServer, fallback: string): string {
  const address = server.address();
  if (address === null || typeof address === 'string') return fallback;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${host}:${address.port}`;
}

/** Names of the self-signed certificate: the Service's DNS names in `namespace`, this host, loopback. */
function servingNames(namespace: string): string[] {
  const service = 'kube-rebalancer';
  const svc = `${service}.${namespace}.svc`;
  return ['localhost', '127.0.0.1', '::1', hostname(), service, `${service}.${namespace}`, svc, `${svc}.cluster.local`];
}

/** Opens the listeners (flags checked by servingFlagProblem first); undefined, logged, when one cannot listen. */
export async function openListeners(
  operator: Operator,
  flags: ServingFlags,
  logger: Logger,
): Promise<Listeners | undefined> {
  const healthAddr = flags.healthAddr ?? DEFAULT_HEALTH_ADDR;
  const secure = flags.metricsSecure ?? true;
  const shared = !secure && healthAddr.trim() === flags.metricsAddr.trim();
  const healthServer = createServer(shared ? operator.httpHandler : operator.probeHandler);
  let metricsServer: Server | TlsServer | undefined;
  let stopWatching = (): void => undefined;
  if (secure) {
    const auth = createDelegatingAuth({ api: operator.authReviews });
    const tls = createSecureServer({
      handler: authenticatedHandler(auth, operator.metricsHandler, logger),
      logger,
      ...(flags.metricsCertDir !== undefined ? { certDir: flags.metricsCertDir } : {}),
      altNames: servingNames(flags.namespace),
    });
    metricsServer = tls.server;
    stopWatching = tls.stopWatching;
  } else if (!shared) {
    metricsServer = createServer(operator.metricsHandler);
  }
  const servers = [healthServer, ...(metricsServer !== undefined ? [metricsServer] : [])];
  const close = async (): Promise<void> => {
    stopWatching();
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  };
  try {
    await listen(healthServer, healthAddr, '--health-addr');
    if (metricsServer !== undefined) await listen(metricsServer, flags.metricsAddr, '--metrics-addr');
  } catch (err) {
    logger.error({ err: (err as Error).message }, `cannot listen on ${healthAddr} or ${flags.metricsAddr}`);
    await close();
    return undefined;
  }
  // The address bound, not the flag: with port 0 (or a host name) only the listener knows where it is.
  logger.info(
    { address: boundAddress(healthServer, healthAddr) },
    `serving /healthz and /readyz${shared ? ' and /metrics' : ''} (http)`,
  );
  if (metricsServer === undefined) return { close };
  logger.info(
    {
      address: boundAddress(metricsServer, flags.metricsAddr),
      ...(secure ? { certificate: flags.metricsCertDir ?? 'self-signed' } : {}),
    },
    secure
      ? 'serving /metrics (https; TokenReview authentication, SubjectAccessReview authorization)'
      : 'serving /metrics (http, no authentication: --metrics-secure=false)',
  );
  return { close };
}
