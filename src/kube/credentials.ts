// Credentials for the API server, read without loading client-node's generated API. Importing client-node at all
// (its KubeConfig included) evaluates every model and API class of Kubernetes: about 50 MiB of resident memory for
// code the operator never calls, more than its whole cache of 10,000 pods. The kinds of credentials an operator and
// most kubeconfigs use are read here: the pod's service account, client certificates, a bearer token or token file,
// basic auth, a CA, insecure-skip-tls-verify and tls-server-name. A kubeconfig that needs more (an exec plugin, an
// auth provider, a proxy) is handed whole to client-node's KubeConfig, loaded only then, which implements the same
// `Credentials` interface.
//
// Several $KUBECONFIG files merge as kubectl merges them: the first file that names a cluster, user or context wins,
// the first current-context wins, and relative paths are resolved against the file they appear in.
import { readFileSync } from 'node:fs';
import type * as https from 'node:https';
import { dirname, isAbsolute, resolve } from 'node:path';
import { load as parseYaml } from 'js-yaml';
import { InputError } from '../errors.js';

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
  readonly ca?: Buffer;
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
    private readonly user: { name: string; cert?: Buffer; key?: Buffer; auth: Auth },
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
    if (this.cluster.ca !== undefined) options.ca = this.cluster.ca;
    if (this.cluster.insecure) options.rejectUnauthorized = false;
    if (this.cluster.servername !== undefined) options.servername = this.cluster.servername;
    if (this.user.cert !== undefined) options.cert = this.user.cert;
    if (this.user.key !== undefined) options.key = this.user.key;
    const authorization = this.authorization();
    if (authorization !== undefined) {
      options.headers = { ...(options.headers as Obj | undefined), Authorization: authorization };
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
  const port = env['KUBERNETES_SERVICE_PORT'] ?? '443';
  if (host === '')
    throw new InputError('in-cluster service account', undefined, undefined, 'KUBERNETES_SERVICE_HOST is not set');
  const where = `in-cluster service account (${dir})`;
  let ca: Buffer;
  try {
    ca = readFileSync(`${dir}/ca.crt`);
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

/** What a kubeconfig asks for that StaticCredentials does not do; undefined when it does everything. */
function needsClientNode(cluster: Obj, user: Obj): string | undefined {
  if (user['exec'] !== undefined && user['exec'] !== null) return 'exec';
  if (user['auth-provider'] !== undefined && user['auth-provider'] !== null) return 'auth-provider';
  if (typeof cluster['proxy-url'] === 'string' && cluster['proxy-url'] !== '') return 'proxy-url';
  return undefined;
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
function material(entry: Named, list: string, field: string): Buffer | undefined {
  const data = entry.value[`${field}-data`];
  if (typeof data === 'string' && data !== '') return Buffer.from(data, 'base64');
  const path = entry.value[field];
  if (typeof path !== 'string' || path === '') return undefined;
  const full = isAbsolute(path) ? path : resolve(dirname(entry.file), path);
  try {
    return readFileSync(full);
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
  /** Set when the kubeconfig needed client-node's KubeConfig (exec, auth-provider, proxy-url). */
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
  if (typeof token === 'string' && token !== '') return { kind: 'token', token };
  if (typeof tokenFile === 'string' && tokenFile !== '') {
    return { kind: 'token-file', path: isAbsolute(tokenFile) ? tokenFile : resolve(dirname(user.file), tokenFile) };
  }
  if (typeof username === 'string' && username !== '') {
    const basic = Buffer.from(`${username}:${typeof password === 'string' ? password : ''}`).toString('base64');
    return { kind: 'basic', header: `Basic ${basic}` };
  }
  return { kind: 'none' };
}

/**
 * The current (or the named) context of the kubeconfig files: StaticCredentials when this module can serve it, else
 * client-node's KubeConfig (loaded now, and only now). Every problem is bad input naming the file and field.
 */
export async function loadKubeconfig(
  paths: readonly string[],
  context: string | undefined,
  name: string,
): Promise<LoadedKubeconfig> {
  const files = paths.map((path) => ({ path, doc: readKubeconfig(path) }));
  const k: Kubeconfigs = {
    files,
    contexts: merged(files, 'contexts', 'context'),
    clusters: merged(files, 'clusters', 'cluster'),
    users: merged(files, 'users', 'user'),
  };
  const { current, cluster, server, user } = selectContext(k, context, name);
  const delegate = needsClientNode(cluster.value, user.value);
  if (delegate !== undefined) {
    return { credentials: await clientNodeKubeConfig(paths, current, name), delegatedFor: delegate };
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
    },
  );
  return { credentials };
}

/** client-node's KubeConfig for what StaticCredentials does not do; its import is the cost this module avoids. */
async function clientNodeKubeConfig(paths: readonly string[], context: string, name: string): Promise<Credentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    kc.loadFromFile(paths[0]!);
    for (const path of paths.slice(1)) {
      const more = new KubeConfig();
      more.loadFromFile(path);
      kc.mergeConfig(more, true);
    }
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    throw new InputError(name, undefined, undefined, `cannot load the kubeconfig: ${message}`);
  }
  kc.setCurrentContext(context);
  return kc;
}
