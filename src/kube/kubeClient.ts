// The requests the operator makes, named as client-node names them, over the one client runtime: transport.ts (the
// request policy, deadlines, fencing, retries), watch.ts (streamed watches) and agentPool.ts (pooled connections).
// What the rest of the operator imports from src/kube's client is re-exported here.
import type { Credentials } from './credentials.js';
import { AgentPool } from './agentPool.js';
import { KubeTransport, type LimitedHttpOptions } from './transport.js';
import { LimitedWatch } from './watch.js';

export {
  ApiError,
  CredentialsError,
  FencedError,
  KubeTransport,
  type KubeAnswer,
  type KubeRequest,
  type LimitedHttpOptions,
  type ThrottleListener,
} from './transport.js';
export {
  DEFAULT_WATCH_IDLE_TIMEOUT_MS,
  DEFAULT_WATCH_TIMEOUT_SECONDS,
  LimitedWatch,
  WatchIdleError,
  WatchStatusError,
  type LimitedWatchOptions,
  type WatchCallback,
} from './watch.js';

type Params = Record<string, string | number | boolean | undefined>;

/** A list answer, as far as the informers read it. */
export interface ListAnswer {
  readonly items?: readonly unknown[];
  /** `continue` in JSON; client-node's typed V1ListMeta names it `_continue`. */
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string; readonly _continue?: string };
}

/** `?a=1&b=2` from the defined values (client-node's `_continue` is the API's `continue`). */
function query(params: Params): string {
  const q = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) q.set(key === '_continue' ? 'continue' : key, String(value));
  }
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

const enc = encodeURIComponent;

/**
 * The requests the operator makes, named and shaped as client-node's typed clients name them (so readers and test
 * fakes know them), answering plain JSON. The whole surface is here: nothing else talks to the API server.
 */
export function kubeApi(t: KubeTransport) {
  const get = (path: string, params: Params = {}): Promise<unknown> =>
    t.json({ method: 'GET', path: path + query(params) });
  const list = (path: string, params: Params): Promise<ListAnswer> => get(path, params) as Promise<ListAnswer>;
  return {
    /** GET /version: the server's release (the placement model follows its scheduler). */
    getCode: () => get('/version'),
    core: {
      listNode: (p: Params = {}) => list('/api/v1/nodes', p),
      listNamespace: (p: Params = {}) => list('/api/v1/namespaces', p),
      listPodForAllNamespaces: (p: Params = {}) => list('/api/v1/pods', p),
      listPersistentVolume: (p: Params = {}) => list('/api/v1/persistentvolumes', p),
      listPersistentVolumeClaimForAllNamespaces: (p: Params = {}) => list('/api/v1/persistentvolumeclaims', p),
      createNamespacedPodEviction: (p: { name: string; namespace: string; dryRun?: string; body: unknown }) =>
        t.json({
          method: 'POST',
          path: `/api/v1/namespaces/${enc(p.namespace)}/pods/${enc(p.name)}/eviction${query({ dryRun: p.dryRun })}`,
          body: p.body,
        }),
      /** `usage: Prometheus`: the Secret holding the query's bearer token (the Role grants get in one namespace). */
      readNamespacedSecret: (p: { namespace: string; name: string }) =>
        get(`/api/v1/namespaces/${enc(p.namespace)}/secrets/${enc(p.name)}`),
      createNamespacedEvent: (p: { namespace: string; body: unknown }) =>
        t.json({ method: 'POST', path: `/api/v1/namespaces/${enc(p.namespace)}/events`, body: p.body }),
      patchNamespacedEvent: (p: { namespace: string; name: string; body: unknown }) =>
        t.json({
          method: 'PATCH',
          path: `/api/v1/namespaces/${enc(p.namespace)}/events/${enc(p.name)}`,
          body: p.body,
          contentType: 'application/json-patch+json',
        }),
    },
    policy: {
      listPodDisruptionBudgetForAllNamespaces: (p: Params = {}) => list('/apis/policy/v1/poddisruptionbudgets', p),
    },
    scheduling: {
      listPriorityClass: (p: Params = {}) => list('/apis/scheduling.k8s.io/v1/priorityclasses', p),
    },
    storage: {
      listStorageClass: (p: Params = {}) => list('/apis/storage.k8s.io/v1/storageclasses', p),
      listCSINode: (p: Params = {}) => list('/apis/storage.k8s.io/v1/csinodes', p),
    },
    custom: {
      listClusterCustomObject: (p: { group: string; version: string; plural: string } & Params) => {
        const { group, version, plural, ...rest } = p;
        return list(`/apis/${group}/${version}/${plural}`, rest);
      },
      patchClusterCustomObjectStatus: (p: {
        group: string;
        version: string;
        plural: string;
        name: string;
        body: unknown;
      }) =>
        t.json({
          method: 'PATCH',
          path: `/apis/${p.group}/${p.version}/${p.plural}/${enc(p.name)}/status`,
          body: p.body,
          contentType: 'application/json-patch+json',
        }),
    },
    coordination: {
      readNamespacedLease: (p: { namespace: string; name: string; signal?: AbortSignal }) =>
        t.json({
          method: 'GET',
          path: `/apis/coordination.k8s.io/v1/namespaces/${enc(p.namespace)}/leases/${enc(p.name)}`,
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        }),
      createNamespacedLease: (p: { namespace: string; body: unknown; signal?: AbortSignal }) =>
        t.json({
          method: 'POST',
          path: `/apis/coordination.k8s.io/v1/namespaces/${enc(p.namespace)}/leases`,
          body: p.body,
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        }),
      replaceNamespacedLease: (p: { namespace: string; name: string; body: unknown; signal?: AbortSignal }) =>
        t.json({
          method: 'PUT',
          path: `/apis/coordination.k8s.io/v1/namespaces/${enc(p.namespace)}/leases/${enc(p.name)}`,
          body: p.body,
          ...(p.signal !== undefined ? { signal: p.signal } : {}),
        }),
    },
  };
}

export type KubeApi = ReturnType<typeof kubeApi>;

/** The operator's clients, all sharing one limiter. */
export interface KubeClients extends KubeApi {
  /** A fresh rate-limited watch (one per informer, so each can be closed on its own). */
  newWatch(): LimitedWatch;
  /** Closes pooled connections (after everything stopped). */
  close(): void;
}

export interface KubeClientOptions extends LimitedHttpOptions {
  /** LimitedWatchOptions.timeoutSeconds. */
  readonly watchTimeoutSeconds?: number;
  /** LimitedWatchOptions.idleTimeoutMs. */
  readonly watchIdleTimeoutMs?: number;
}

export function createKubeClients(credentials: Credentials, opts: KubeClientOptions): KubeClients {
  const transport = new KubeTransport(credentials, opts);
  // Watches hold their connection for minutes: they get agents of their own, outside the request pool's limit.
  const watchPool = new AgentPool(Infinity, false);
  return {
    ...kubeApi(transport),
    newWatch: () =>
      new LimitedWatch(transport, watchPool, {
        limiter: opts.limiter,
        clock: opts.clock,
        ...(opts.watchTimeoutSeconds !== undefined ? { timeoutSeconds: opts.watchTimeoutSeconds } : {}),
        ...(opts.watchIdleTimeoutMs !== undefined ? { idleTimeoutMs: opts.watchIdleTimeoutMs } : {}),
        ...(opts.random !== undefined ? { random: opts.random } : {}),
      }),
    close: () => {
      transport.close();
      watchPool.destroy();
    },
  };
}
