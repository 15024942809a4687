// Small fake API servers for the src/kube tests: node:http on a loopback port, a handler per test, every request
// recorded once its body has arrived. closeFakeServers() (afterEach) closes them and their open connections.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Credentials } from '../../src/kube/credentials.js';

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export interface FakeServer {
  readonly url: string;
  /** Every request the server received, in order (method and path), recorded when its body has arrived. */
  readonly seen: Array<{ method: string; path: string; at: number }>;
}

const servers: Server[] = [];

/** Starts listening on a free loopback port; closed by closeFakeServers(). */
export async function listening(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function fakeServer(handler: Handler): Promise<FakeServer> {
  const seen: FakeServer['seen'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', path: req.url ?? '', at: performance.now() });
      handler(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  return { url: await listening(server), seen };
}

/** The made-up name tests give a fake server behind the proxy: the client never proxies loopback, as Go's does not. */
export const PROXIED_HOST = 'kubernetes.test';

/**
 * A tunnelling proxy (CONNECT, as client-node's proxy agent asks even for http) that records each target. It
 * resolves names under `.test` (PROXIED_HOST) to 127.0.0.1, where the fake servers listen.
 */
export async function connectProxy(): Promise<{ readonly url: string; readonly tunnels: string[] }> {
  const tunnels: string[] = [];
  const server = createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const target = host?.endsWith('.test') === true ? '127.0.0.1' : (host ?? '');
    const upstream = connect(Number(port), target, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    // Tunnelled sockets are the server's no longer: closeFakeServers ends them itself.
    tunnelSockets.add(client).add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  return { url: await listening(server), tunnels };
}

const tunnelSockets = new Set<Socket>();

export async function closeFakeServers(): Promise<void> {
  for (const socket of tunnelSockets) socket.destroy();
  tunnelSockets.clear();
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
}

/** Anonymous credentials for a fake server's URL. */
export function credentialsFor(server: string): Credentials {
  return {
    getCurrentCluster: () => ({ name: 'fake', server }),
    getCurrentContext: () => 'fake',
    getCurrentUser: () => ({ name: 'fake' }),
    applyToHTTPSOptions: () => Promise.resolve(),
  };
}

export const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};
