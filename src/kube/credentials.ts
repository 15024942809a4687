// Credentials for the API server, read without loading client-node's generated API. Importing client-node at all
// (its KubeConfig included) evaluates every model and API class of Kubernetes: about 50 MiB of resident memory for
// code the operator never calls, more than its whole cache of 10,000 pods. The kinds of credentials an operator and
// most kubeconfigs use are read here: the pod's service account, client certificates, a bearer token or token file,
// basic auth, a CA, insecure-skip-tls-verify, tls-server-name and impersonation. A kubeconfig whose cluster, user or
// context has any other key (an exec plugin, an auth provider, a proxy-url, or one this module does not know) is
// handed whole to client-node's KubeConfig, loaded only then, which implements the same `Credentials` interface; so
// is one that needs a proxy from HTTPS_PROXY/HTTP_PROXY (proxy.ts), the pod's service account included.
//
// Several $KUBECONFIG files merge as kubectl merges them: the first file that names a cluster, user or context wins,
// the first current-context wins, and relative paths are resolved against the file they appear in. The merge is done
// here, before any delegation: client-node is given the one merged kubeconfig (its own merge rejects a name that two
// files share, which kubectl accepts).
//
// As client-go: a tokenFile wins over a token; certificate, key and CA files are read again after a minute (rotated
// by cert-manager or the kubelet, they take effect without a restart); insecure-skip-tls-verify together with a CA
// is an error; in a pod, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set. Credentials are never
// sent in clear text: a token, a password or a plugin's credential with an http:// server is refused, except to a
// loopback address (a local test server).
//
// The parts: credentialTypes.ts (shapes), staticCredentials.ts (what this process applies), delegated.ts (client-node),
// inCluster.ts (the service account); this file reads and merges kubeconfig files and chooses between them.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { InputError } from '../errors.js';
import { impersonationOf } from './impersonation.js';
import { proxyFromEnvironment } from './proxy.js';
import { clientNodeKubeConfig, Delegated } from './delegated.js';
import { StaticCredentials } from './staticCredentials.js';
import {
  rereadFile,
  isObj,
  type Auth,
  type Credentials,
  type Material,
  type Named,
  type Obj,
} from './credentialTypes.js';

export {
  rereadFile,
  SERVICE_ACCOUNT_DIR,
  type CredentialFile,
  type Credentials,
  type Material,
} from './credentialTypes.js';
export { StaticCredentials } from './staticCredentials.js';
export { inClusterCredentials, serviceAccountCredentials } from './inCluster.js';

const IMPLEMENTED: Readonly<Record<'clusters' | 'users' | 'contexts', ReadonlySet<string>>> = {
  clusters: new Set([
    'server',
    'certificate-authority',
    'certificate-authority-data',
    'insecure-skip-tls-verify',
    'tls-server-name',
    // Requests are not compressed anyway; extensions are for tools.
    'disable-compression',
    'extensions',
  ]),
  users: new Set([
    'client-certificate',
    'client-certificate-data',
    'client-key',
    'client-key-data',
    'token',
    'tokenFile',
    'username',
    'password',
    'as',
    'as-groups',
    'as-uid',
    'as-user-extra',
    'extensions',
  ]),
  contexts: new Set(['cluster', 'user', 'namespace', 'extensions']),
};

/** The first key of the selected entries StaticCredentials does not implement (`exec`, `proxy-url`...), if any. */
function unimplementedKey(
  entries: ReadonlyArray<readonly ['clusters' | 'users' | 'contexts', Obj]>,
): string | undefined {
  for (const [list, value] of entries) {
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined || v === null || v === '') continue;
      if (!IMPLEMENTED[list].has(key)) return key;
    }
  }
  return undefined;
}

/** Whether a host is a loopback address, where plain http cannot be read by anyone else. */
function loopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

function readKubeconfig(path: string): Obj {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new InputError(path, undefined, undefined, `cannot load the kubeconfig: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new InputError(
      path,
      undefined,
      undefined,
      `cannot load the kubeconfig: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  if (doc === undefined || doc === null) return {};
  if (!isObj(doc)) throw new InputError(path, undefined, undefined, 'cannot load the kubeconfig: not a YAML mapping');
  return doc;
}

/** The named entries of one list (`clusters`, `users`, `contexts`) across the files, first one winning. */
function merged(files: ReadonlyArray<{ path: string; doc: Obj }>, list: string, inner: string): Map<string, Named> {
  const out = new Map<string, Named>();
  for (const { path, doc } of files) {
    const entries = doc[list];
    if (entries === undefined || entries === null) continue;
    if (!Array.isArray(entries)) throw new InputError(path, undefined, list, 'must be a list');
    entries.forEach((entry: unknown, i) => {
      if (!isObj(entry) || typeof entry['name'] !== 'string') {
        throw new InputError(path, undefined, `${list}[${i}].name`, 'must be a string');
      }
      const value = entry[inner];
      if (!out.has(entry['name']))
        out.set(entry['name'], { name: entry['name'], value: isObj(value) ? value : {}, file: path });
    });
  }
  return out;
}

/** A `*-data` field (base64) or the file its path field names, relative to the kubeconfig it appears in. */
function material(entry: Named, list: string, field: string): Material | undefined {
  const data = entry.value[`${field}-data`];
  if (typeof data === 'string' && data !== '') {
    const bytes = Buffer.from(data, 'base64');
    return () => bytes;
  }
  const path = entry.value[field];
  if (typeof path !== 'string' || path === '') return undefined;
  const full = isAbsolute(path) ? path : resolve(dirname(entry.file), path);
  try {
    return rereadFile(full);
  } catch (err) {
    throw new InputError(
      entry.file,
      undefined,
      `${list}[${entry.name}].${field}`,
      `cannot read ${full}: ${(err as Error).message}`,
    );
  }
}

export interface LoadedKubeconfig {
  readonly credentials: Credentials;
  /** Set when the kubeconfig is handed to client-node's KubeConfig: the first key this loader leaves to it (exec...). */
  readonly delegatedFor?: string;
}

interface Kubeconfigs {
  readonly files: ReadonlyArray<{ path: string; doc: Obj }>;
  readonly contexts: Map<string, Named>;
  readonly clusters: Map<string, Named>;
  readonly users: Map<string, Named>;
}

/** The context to use, its cluster and its user; `name` says where the credentials came from, for messages. */
function selectContext(k: Kubeconfigs, context: string | undefined, name: string) {
  if (context !== undefined && !k.contexts.has(context)) {
    const known = k.contexts.size > 0 ? [...k.contexts.keys()].join(', ') : 'none';
    throw new InputError(name, undefined, 'contexts', `has no context "${context}" (it has: ${known})`);
  }
  const current =
    context ??
    k.files.map(({ doc }) => doc['current-context']).find((c): c is string => typeof c === 'string' && c !== '');
  if (current === undefined) {
    throw new InputError(
      name,
      undefined,
      'current-context',
      'is not set (set it with kubectl config use-context, or pass --context)',
    );
  }
  const ctx = k.contexts.get(current);
  const clusterName = ctx?.value['cluster'];
  const cluster = typeof clusterName === 'string' ? k.clusters.get(clusterName) : undefined;
  if (ctx === undefined || cluster === undefined) {
    throw new InputError(name, undefined, 'current-context', `names context "${current}", which has no cluster`);
  }
  const server = cluster.value['server'];
  if (typeof server !== 'string' || server === '') {
    throw new InputError(cluster.file, undefined, `clusters[${cluster.name}].server`, 'is not set');
  }
  const userName = typeof ctx.value['user'] === 'string' ? ctx.value['user'] : '';
  const user = k.users.get(userName) ?? { name: userName, value: {}, file: ctx.file };
  return { current, cluster, server, user };
}

/** A user's bearer token, token file or basic auth (client certificates are TLS options). */
function authOf(user: Named): Auth {
  const { token, tokenFile, username, password } = user.value;
  // As client-go: the file wins, so a rotated token replaces a stale inline one.
  if (typeof tokenFile === 'string' && tokenFile !== '') {
    return { kind: 'token-file', path: isAbsolute(tokenFile) ? tokenFile : resolve(dirname(user.file), tokenFile) };
  }
  if (typeof token === 'string' && token !== '') return { kind: 'token', token };
  if (typeof username === 'string' && username !== '') {
    const basic = Buffer.from(`${username}:${typeof password === 'string' ? password : ''}`).toString('base64');
    return { kind: 'basic', header: `Basic ${basic}` };
  }
  return { kind: 'none' };
}

/** Keys of a user that put a secret on every request (client certificates do not travel in the request). */
const SECRET_KEYS = ['token', 'tokenFile', 'username', 'password', 'exec', 'auth-provider'];

/**
 * The current (or the named) context of the kubeconfig files: StaticCredentials when this module can serve it, else
 * client-node's KubeConfig (loaded now, and only now). Every problem is bad input naming the file and field.
 */
export async function loadKubeconfig(
  paths: readonly string[],
  context: string | undefined,
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  missing?: (path: string) => void,
): Promise<LoadedKubeconfig> {
  // With `missing` (the files of $KUBECONFIG), a file that does not exist is reported and skipped, as kubectl skips
  // it; the merge needs at least one. Without it (--kubeconfig, ~/.kube/config) a missing file is an error.
  const present = missing === undefined ? paths : paths.filter((path) => existsSync(path) || (missing(path), false));
  if (present.length === 0) {
    throw new InputError(name, undefined, undefined, 'cannot load the kubeconfig: none of its files exists');
  }
  const files = present.map((path) => ({ path, doc: readKubeconfig(path) }));
  const k: Kubeconfigs = {
    files,
    contexts: merged(files, 'contexts', 'context'),
    clusters: merged(files, 'clusters', 'cluster'),
    users: merged(files, 'users', 'user'),
  };
  const { current, cluster, server, user } = selectContext(k, context, name);
  const ctx = k.contexts.get(current)!;
  const where = `users[${user.name}]`;
  const impersonate = impersonationOf(user.value, user.file, where);
  const caGiven = ['certificate-authority', 'certificate-authority-data'].some(
    (key) => typeof cluster.value[key] === 'string' && cluster.value[key] !== '',
  );
  if (cluster.value['insecure-skip-tls-verify'] === true && caGiven) {
    throw new InputError(
      cluster.file,
      undefined,
      `clusters[${cluster.name}].insecure-skip-tls-verify`,
      'cannot be true together with a certificate-authority: either verify the server against the CA or do not',
    );
  }
  const url = parseServer(server, cluster);
  const secret = SECRET_KEYS.find((key) => user.value[key] !== undefined && user.value[key] !== null);
  if (url.protocol === 'http:' && secret !== undefined && !loopback(url.hostname)) {
    throw new InputError(
      cluster.file,
      undefined,
      `clusters[${cluster.name}].server`,
      `is plain http (${server}): the user's ${secret} would be sent in clear text; use https`,
    );
  }
  const proxyUrl = cluster.value['proxy-url'];
  const envProxy = typeof proxyUrl === 'string' && proxyUrl !== '' ? undefined : proxyFromEnvironment(server, env);
  const delegate =
    unimplementedKey([
      ['clusters', cluster.value],
      ['users', user.value],
      ['contexts', ctx.value],
    ]) ?? (envProxy !== undefined ? 'proxy (from the environment)' : undefined);
  if (delegate !== undefined) {
    const kc = await clientNodeKubeConfig(mergedDocument(k, current, cluster.name, envProxy), current, name);
    return { credentials: new Delegated(kc, impersonate), delegatedFor: delegate };
  }
  const ca = material(cluster, 'clusters', 'certificate-authority');
  const cert = material(user, 'users', 'client-certificate');
  const key = material(user, 'users', 'client-key');
  const servername = cluster.value['tls-server-name'];
  const credentials = new StaticCredentials(
    {
      name: cluster.name,
      server: server.replace(/\/+$/, ''),
      ...(ca !== undefined ? { ca } : {}),
      insecure: cluster.value['insecure-skip-tls-verify'] === true,
      ...(typeof servername === 'string' && servername !== '' ? { servername } : {}),
    },
    current,
    {
      name: user.name,
      ...(cert !== undefined ? { cert } : {}),
      ...(key !== undefined ? { key } : {}),
      auth: authOf(user),
      ...(impersonate !== undefined ? { impersonate } : {}),
    },
  );
  return { credentials };
}

function parseServer(server: string, cluster: Named): URL {
  try {
    return new URL(server);
  } catch {
    throw new InputError(cluster.file, undefined, `clusters[${cluster.name}].server`, `is not a URL: ${server}`);
  }
}

/** Path fields kubectl resolves against the file that names them. */
const PATH_FIELDS: Readonly<Record<'clusters' | 'users', readonly string[]>> = {
  clusters: ['certificate-authority'],
  users: ['client-certificate', 'client-key', 'tokenFile'],
};

/** An entry with its relative paths made absolute (an exec command too, when it is a path: it holds a slash). */
function resolvedEntry(list: 'clusters' | 'users' | 'contexts', entry: Named): Obj {
  const value: Obj = { ...entry.value };
  const base = dirname(entry.file);
  const absolute = (p: unknown): unknown =>
    typeof p === 'string' && p !== '' && !isAbsolute(p) ? resolve(base, p) : p;
  if (list !== 'contexts')
    for (const field of PATH_FIELDS[list]) if (field in value) value[field] = absolute(value[field]);
  const exec = value['exec'];
  if (list === 'users' && isObj(exec) && typeof exec['command'] === 'string' && exec['command'].includes('/')) {
    value['exec'] = { ...exec, command: absolute(exec['command']) };
  }
  return value;
}

/** The merged kubeconfig as one document (kubectl's merge), for client-node; `proxy` set on the current cluster. */
function mergedDocument(k: Kubeconfigs, current: string, clusterName: string, proxy: string | undefined): Obj {
  const entries = (list: 'clusters' | 'users' | 'contexts', inner: string, map: Map<string, Named>): Obj[] =>
    [...map.values()].map((entry) => {
      const value = resolvedEntry(list, entry);
      if (list === 'clusters' && entry.name === clusterName && proxy !== undefined) value['proxy-url'] = proxy;
      return { name: entry.name, [inner]: value };
    });
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: entries('clusters', 'cluster', k.clusters),
    users: entries('users', 'user', k.users),
    contexts: entries('contexts', 'context', k.contexts),
    'current-context': current,
  };
}
