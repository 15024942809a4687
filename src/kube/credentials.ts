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
import { existsSync, readFileSync } from 'node:fs';
import type * as https from 'node:https';
import { dirname, isAbsolute, resolve } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { InputError } from '../errors.js';
import { applyImpersonation, impersonationOf, type Impersonation } from './impersonation.js';
import { proxyFromEnvironment } from './proxy.js';

/** What every request needs: where the server is, and how to authenticate to it (client-node's KubeConfig fits). */
export interface Credentials {
  getCurrentCluster(): { readonly name: string; readonly server: string } | null;
  getCurrentContext(): string;
  getCurrentUser(): { readonly name: string } | null;
  /** Sets the TLS options and the Authorization header of one request. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

export type CredentialFile =
  { readonly kind: 'files'; readonly paths: readonly string[] } | { readonly kind: 'in-cluster' };

/** The pod's service account, where the kubelet mounts it. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** A projected token is rotated by the kubelet; it is read again after this long, as client-go does. */
const TOKEN_FILE_REFRESH_MS = 60_000;
/** Certificate, key and CA files are read again after this long (rotation without a restart). */
const TLS_FILE_REFRESH_MS = 60_000;

/** TLS material: inline data, or a file read again after TLS_FILE_REFRESH_MS (the last good read kept on failure). */
export type Material = () => Buffer;

/** A file's content, read now (errors thrown) and again after `refreshMs` when asked. */
export function rereadFile(path: string, now: () => number = Date.now, refreshMs = TLS_FILE_REFRESH_MS): Material {
  let value = readFileSync(path);
  let readAt = now();
  return () => {
    const t = now();
    if (t - readAt >= refreshMs) {
      readAt = t;
      try {
        value = readFileSync(path);
      } catch {
        // Replaced atomically by the rotating agent, so a failed read is rare: the last one stays in use.
      }
    }
    return value;
  };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Named {
  readonly name: string;
  readonly value: Obj;
  /** The file it came from, for relative paths and messages. */
  readonly file: string;
}

interface ClusterEntry {
  readonly name: string;
  readonly server: string;
  readonly ca?: Material;
  readonly insecure: boolean;
  readonly servername?: string;
}

type Auth =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'token-file'; readonly path: string }
  | { readonly kind: 'basic'; readonly header: string };

/** Credentials this module reads itself. */
export class StaticCredentials implements Credentials {
  private token: { value: string; readAt: number } | undefined;

  constructor(
    private readonly cluster: ClusterEntry,
    private readonly context: string,
    private readonly user: {
      name: string;
      cert?: Material;
      key?: Material;
      auth: Auth;
      impersonate?: Impersonation;
    },
    private readonly now: () => number = Date.now,
  ) {}

  getCurrentCluster(): { name: string; server: string } {
    return { name: this.cluster.name, server: this.cluster.server };
  }

  getCurrentContext(): string {
    return this.context;
  }

  getCurrentUser(): { name: string } {
    return { name: this.user.name };
  }

  applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    if (this.cluster.ca !== undefined) options.ca = this.cluster.ca();
    if (this.cluster.insecure) options.rejectUnauthorized = false;
    if (this.cluster.servername !== undefined) options.servername = this.cluster.servername;
    if (this.user.cert !== undefined) options.cert = this.user.cert();
    if (this.user.key !== undefined) options.key = this.user.key();
    const authorization = this.authorization();
    if (authorization !== undefined) {
      options.headers = { ...(options.headers as Obj | undefined), Authorization: authorization };
    }
    if (this.user.impersonate !== undefined) {
      const headers = { ...(options.headers as Obj | undefined) } as NonNullable<https.RequestOptions['headers']>;
      applyImpersonation(headers as Record<string, string | string[]>, this.user.impersonate);
      options.headers = headers;
    }
    return Promise.resolve();
  }

  private authorization(): string | undefined {
    const auth = this.user.auth;
    switch (auth.kind) {
      case 'none':
        return undefined;
      case 'token':
        return `Bearer ${auth.token}`;
      case 'basic':
        return auth.header;
      case 'token-file': {
        const now = this.now();
        if (this.token === undefined || now - this.token.readAt >= TOKEN_FILE_REFRESH_MS) {
          // A failed re-read keeps the token read last: the kubelet replaces the file atomically, so this is rare.
          try {
            this.token = { value: readFileSync(auth.path, 'utf8').trim(), readAt: now };
          } catch (err) {
            if (this.token === undefined) throw err;
          }
        }
        return `Bearer ${this.token.value}`;
      }
    }
  }
}

/** The pod's service account: KUBERNETES_SERVICE_HOST/PORT, its CA and its (rotated) token. */
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

/** client-node's KubeConfig with the impersonation client-node does not fully do (it knows `as` only). */
class Delegated implements Credentials {
  constructor(
    private readonly kc: Credentials,
    private readonly impersonate: Impersonation | undefined,
  ) {}

  getCurrentCluster(): { readonly name: string; readonly server: string } | null {
    return this.kc.getCurrentCluster();
  }

  getCurrentContext(): string {
    return this.kc.getCurrentContext();
  }

  getCurrentUser(): { readonly name: string } | null {
    return this.kc.getCurrentUser();
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    await this.kc.applyToHTTPSOptions(options);
    if (this.impersonate === undefined) return;
    const headers = { ...(options.headers as Obj | undefined) } as Record<string, string | string[]>;
    applyImpersonation(headers, this.impersonate);
    options.headers = headers;
  }
}

/** client-node's KubeConfig for what StaticCredentials does not do; its import is the cost this module avoids. */
async function clientNodeKubeConfig(merged: Obj, context: string, name: string): Promise<Credentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(merged));
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    throw new InputError(name, undefined, undefined, `cannot load the kubeconfig: ${message}`);
  }
  kc.setCurrentContext(context);
  return kc;
}
