// The pod's service account as credentials (kubectl's in-cluster config), proxied when HTTPS_PROXY applies.
import { readFileSync } from 'node:fs';
import { InputError } from '../errors.js';
import { clientNodeKubeConfig } from './delegated.js';
import { rereadFile, SERVICE_ACCOUNT_DIR, type Credentials, type Material, type Obj } from './credentialTypes.js';
import { proxyFromEnvironment } from './proxy.js';
import { StaticCredentials } from './staticCredentials.js';

export function inClusterCredentials(
  env: NodeJS.ProcessEnv,
  dir = SERVICE_ACCOUNT_DIR,
  now: () => number = Date.now,
): StaticCredentials {
  const host = env['KUBERNETES_SERVICE_HOST'] ?? '';
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '';
  // Both, as client-go's InClusterConfig: a guessed port would send the token to whatever listens on 443.
  for (const [name, value] of [
    ['KUBERNETES_SERVICE_HOST', host],
    ['KUBERNETES_SERVICE_PORT', port],
  ] as const) {
    if (value === '') throw new InputError('in-cluster service account', undefined, undefined, `${name} is not set`);
  }
  const where = `in-cluster service account (${dir})`;
  let ca: Material;
  try {
    ca = rereadFile(`${dir}/ca.crt`, now);
    readFileSync(`${dir}/token`);
  } catch (err) {
    throw new InputError(where, undefined, undefined, `cannot read: ${(err as Error).message}`);
  }
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new StaticCredentials(
    { name: 'inCluster', server, ca, insecure: false },
    'inCluster',
    {
      name: 'inCluster',
      auth: { kind: 'token-file', path: `${dir}/token` },
    },
    now,
  );
}

/**
 * The service account as client-go's InClusterConfig uses it, proxies included: its transport takes HTTPS_PROXY and
 * NO_PROXY from the environment for the service's address too (a cluster whose egress goes through a proxy lists the
 * service network in NO_PROXY; one that does not is proxied). With a proxy, the same server, CA file and token file
 * are handed to client-node, whose proxy agent tunnels the requests and which reads the token file again as it
 * rotates.
 */
export async function serviceAccountCredentials(
  env: NodeJS.ProcessEnv,
  dir = SERVICE_ACCOUNT_DIR,
): Promise<{ readonly credentials: Credentials; readonly delegatedFor?: string }> {
  const direct = inClusterCredentials(env, dir);
  const server = direct.getCurrentCluster().server;
  const proxy = proxyFromEnvironment(server, env);
  if (proxy === undefined) return { credentials: direct };
  const document: Obj = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'inCluster', cluster: { server, 'certificate-authority': `${dir}/ca.crt`, 'proxy-url': proxy } },
    ],
    users: [
      { name: 'inCluster', user: { 'auth-provider': { name: 'tokenFile', config: { tokenFile: `${dir}/token` } } } },
    ],
    contexts: [{ name: 'inCluster', context: { cluster: 'inCluster', user: 'inCluster' } }],
    'current-context': 'inCluster',
  };
  const credentials = await clientNodeKubeConfig(document, 'inCluster', `in-cluster service account (${dir})`);
  return { credentials, delegatedFor: 'proxy (from the environment)' };
}

/** The keys StaticCredentials implements; any other key of the selected cluster, user or context delegates. */
