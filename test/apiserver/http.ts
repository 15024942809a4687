// The HTTP front end: authentication (bearer token), request routing the way the API server's RequestInfo resolver
// does (/api/v1/..., /apis/<group>/<version>/..., namespaces/<ns>/<resource>/<name>/<subresource>), discovery,
// fault injection and the request log, then dispatch to KubeApi / evictPod / the watch hub. Answers are JSON;
// failures are metav1.Status bodies with the matching HTTP code (and Retry-After when the Status carries one).

import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KubeApi, ListQuery } from './api.js';
import type { Clock, TimerSet } from './clock.js';
import type { Status } from './errors.js';
import { ApiError, errors } from './errors.js';
import { evictPod } from './eviction.js';
import type { Faults, RequestInfo, Stats } from './faults.js';
import type { ResourceDef, ResourceRegistry } from './resources.js';
import type { DeleteOptions } from './types.js';
import { isObject } from './types.js';
import type { WatchHub } from './watch.js';

export interface HttpDeps {
  api: KubeApi;
  registry: ResourceRegistry;
  hub: WatchHub;
  faults: Faults;
  stats: Stats;
  clock: Clock;
  timers: TimerSet;
  /** Required bearer token; `null` accepts every request. */
  token: string | null;
  serverAddress: () => string;
  kubernetesVersion: { major: string; minor: string };
}

const MAX_BODY_BYTES = 3 * 1024 * 1024;

/** Server-side apply (application/apply-patch+yaml) is not implemented: it answers 415 like an unknown type. */
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];

interface Route extends RequestInfo {
  /** `api` or `apis` for resource requests; undefined for other paths. */
  prefix: string | undefined;
  subresource: string | undefined;
  /** Path segments after /api or /apis when they do not name a resource. */
  segments: string[];
  watch: boolean;
}

function parseBool(value: string | null): boolean {
  return value !== null && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value);
}

/** RequestInfoFactory.NewRequestInfo, reduced to what the test server serves. */
export function route(method: string, url: URL): Route {
  const parts = url.pathname
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const watch = parseBool(url.searchParams.get('watch'));
  const base: Route = {
    verb: method.toLowerCase(),
    group: '',
    version: '',
    resource: '',
    namespace: undefined,
    name: undefined,
    url: url.pathname + url.search,
    prefix: undefined,
    subresource: undefined,
    segments: parts,
    watch,
  };
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return base;
  const groupVersion = prefix === 'api' ? ['', parts[1]] : [parts[1], parts[2]];
  let rest = parts.slice(prefix === 'api' ? 2 : 3);
  base.prefix = prefix;
  base.group = groupVersion[0] ?? '';
  base.version = groupVersion[1] ?? '';
  if (base.version === '' || rest.length === 0) return base;
  if (rest[0] === 'namespaces' && rest.length > 1) {
    base.namespace = rest[1];
    if (rest.length > 2 && rest[2] !== 'status' && rest[2] !== 'finalize') rest = rest.slice(2);
  }
  const resource = rest[0] ?? '';
  base.name = rest[1];
  base.subresource = rest[2];
  if (resource === 'namespaces' && base.namespace !== undefined && rest.length <= 3 && rest[1] === base.namespace) {
    base.namespace = undefined;
  }
  base.resource = base.subresource ? `${resource}/${base.subresource}` : resource;
  if (rest.length > 3) base.resource = rest.join('/');
  base.verb = resourceVerb(method, base.name !== undefined, watch);
  return base;
}

function resourceVerb(method: string, hasName: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (watch) return 'watch';
      return hasName ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return hasName ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) {
        reject(
          new ApiError({
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Failure',
            message: 'the request body is too large',
            reason: 'RequestEntityTooLarge',
            code: 413,
          }),
        );
      } else resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch (err) {
    throw errors.badRequest(`error decoding request body: ${(err as Error).message}`);
  }
}

function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(text)),
    'Cache-Control': 'no-cache, private',
    'Audit-Id': randomUUID(),
    ...headers,
  });
  res.end(text);
}

function statusHeaders(status: Status): Record<string, string> {
  const retry = status.details?.retryAfterSeconds;
  return retry !== undefined && retry > 0 ? { 'Retry-After': String(retry) } : {};
}

function dryRunValues(url: URL): string[] {
  const values = url.searchParams.getAll('dryRun').filter((v) => v !== '');
  for (const v of values) {
    if (v !== 'All') throw errors.badRequest(`dryRun: Unsupported value: "${v}": supported values: "All"`);
  }
  return values;
}

function numberParam(url: URL, name: string): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw errors.badRequest(`invalid value for ${name}: ${raw}`);
  return value;
}

function deleteOptions(url: URL, body: unknown): DeleteOptions {
  const options: DeleteOptions = {};
  const grace = numberParam(url, 'gracePeriodSeconds');
  if (grace !== undefined) options.gracePeriodSeconds = grace;
  const policy = url.searchParams.get('propagationPolicy');
  if (policy) options.propagationPolicy = policy;
  const dry = dryRunValues(url);
  if (dry.length > 0) options.dryRun = dry;
  if (isObject(body)) {
    if (typeof body.gracePeriodSeconds === 'number') options.gracePeriodSeconds = body.gracePeriodSeconds;
    if (typeof body.propagationPolicy === 'string') options.propagationPolicy = body.propagationPolicy;
    if (Array.isArray(body.dryRun) && body.dryRun.length > 0) options.dryRun = body.dryRun.map(String);
    if (isObject(body.preconditions)) {
      const pre: DeleteOptions['preconditions'] = {};
      if (typeof body.preconditions.uid === 'string') pre.uid = body.preconditions.uid;
      if (typeof body.preconditions.resourceVersion === 'string')
        pre.resourceVersion = body.preconditions.resourceVersion;
      options.preconditions = pre;
    }
  }
  return options;
}

function listQuery(url: URL, namespace: string | undefined): ListQuery {
  const q = url.searchParams;
  return {
    namespace,
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    limit: numberParam(url, 'limit'),
    continue: q.get('continue') ?? undefined,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') ?? undefined,
  };
}

type Outcome = { code: number; body: unknown } | 'streaming';

export function createRequestHandler(deps: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  /**
   * TokenReview and SubjectAccessReview (create-only, like the real ones): the server's own token authenticates as
   * `test-user` in group `system:authenticated`; any other token does not. Every authenticated user is allowed
   * everything (this server has no authorizer), so the answer to a review is `allowed` for `test-user`.
   */
  const reviews = (r: Route): ((body: unknown) => { code: number; body: unknown }) | undefined => {
    if (r.verb !== 'create' || r.name !== undefined) return undefined;
    const spec = (body: unknown): Record<string, unknown> =>
      isObject(body) && isObject(body['spec']) ? body['spec'] : {};
    if (r.group === 'authentication.k8s.io' && r.resource === 'tokenreviews') {
      return (body) => {
        const ok = deps.token === null || spec(body)['token'] === deps.token;
        const status = ok
          ? { authenticated: true, user: { username: 'test-user', uid: 'test-uid', groups: ['system:authenticated'] } }
          : { authenticated: false, error: 'invalid bearer token' };
        return { code: 201, body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', status } };
      };
    }
    if (r.group === 'authorization.k8s.io' && r.resource === 'subjectaccessreviews') {
      return (body) => {
        const allowed = spec(body)['user'] === 'test-user';
        return {
          code: 201,
          body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed } },
        };
      };
    }
    return undefined;
  };

  const nonResource = (r: Route): { code: number; body: unknown } => {
    const path = '/' + r.segments.join('/');
    if (path === '/api') {
      return {
        code: 200,
        body: {
          kind: 'APIVersions',
          versions: ['v1'],
          serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: deps.serverAddress() }],
        },
      };
    }
    if (path === '/apis') return { code: 200, body: deps.registry.apiGroupList() };
    if (r.prefix === 'api' && r.version !== '' && r.segments.length === 2) {
      const list = deps.registry.resourceList('', r.version);
      if (list !== undefined) return { code: 200, body: list };
    }
    if (r.prefix === 'apis' && r.segments.length === 2) {
      const group = deps.registry.apiGroup(r.group);
      if (group !== undefined) return { code: 200, body: group };
    }
    if (r.prefix === 'apis' && r.segments.length === 3) {
      const list = deps.registry.resourceList(r.group, r.version);
      if (list !== undefined) return { code: 200, body: list };
    }
    if (path === '/version') {
      const { major, minor } = deps.kubernetesVersion;
      return {
        code: 200,
        body: {
          major,
          minor,
          gitVersion: `v${major}.${minor}.0+test-apiserver`,
          gitCommit: 'test',
          gitTreeState: 'clean',
          buildDate: '2025-01-01T00:00:00Z',
          goVersion: 'go1.22',
          compiler: 'gc',
          platform: 'linux/amd64',
        },
      };
    }
    if (['/healthz', '/livez', '/readyz'].includes(path)) return { code: 200, body: 'ok' };
    throw errors.pathNotFound();
  };

  const resourceRequest = async (
    r: Route,
    def: ResourceDef,
    url: URL,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<Outcome> => {
    const { api } = deps;
    const sub = r.subresource;
    if (sub !== undefined && !def.subresources.includes(sub)) throw errors.pathNotFound();
    if (def.storage === '-bindings' && !(req.method === 'POST' && r.name === undefined)) {
      throw errors.methodNotSupported({ group: def.group, resource: def.resource }, r.verb);
    }
    if (!def.namespaced && r.namespace !== undefined) throw errors.pathNotFound();
    const ns = r.namespace;
    const name = r.name;
    const method = req.method ?? 'GET';
    const readJson = async (): Promise<unknown> => parseJson(await readBody(req));
    const statusSub = sub === 'status' ? 'status' : undefined;
    if (method === 'GET' && name !== undefined && sub === undefined && r.watch) {
      // GET .../pods/{name}?watch=true is a watch of the collection restricted to that name.
      const own = `metadata.name=${name.replace(/([\\,=])/g, '\\$1')}`;
      const extra = url.searchParams.get('fieldSelector');
      url.searchParams.set('fieldSelector', extra ? `${own},${extra}` : own);
    }
    if (method === 'GET' && name !== undefined && (sub === undefined || sub === 'status') && !r.watch) {
      return { code: 200, body: api.get(def, ns, name) };
    }
    if (method === 'GET' && (name === undefined || (r.watch && sub === undefined))) {
      if (r.watch) {
        const q = url.searchParams;
        deps.hub.open(
          {
            def,
            info: r,
            namespace: ns,
            labelSelector: q.get('labelSelector') ?? undefined,
            fieldSelector: q.get('fieldSelector') ?? undefined,
            resourceVersion: q.get('resourceVersion') ?? undefined,
            timeoutSeconds: numberParam(url, 'timeoutSeconds'),
            allowWatchBookmarks: parseBool(q.get('allowWatchBookmarks')),
            sendInitialEvents: parseBool(q.get('sendInitialEvents')),
            forceExpired: deps.faults.expireWatch(r),
          },
          res,
        );
        return 'streaming';
      }
      return { code: 200, body: api.list(def, listQuery(url, ns)) };
    }
    const namespacedWithoutNs = def.namespaced && ns === undefined;
    if (method === 'POST' && name === undefined && sub === undefined && !namespacedWithoutNs) {
      return api.create(def, ns, await readJson(), dryRunValues(url).includes('All'));
    }
    if (method === 'POST' && name !== undefined && sub === 'eviction') {
      return evictPod(api, ns ?? '', name, await readJson(), dryRunValues(url));
    }
    if (method === 'POST' && name !== undefined && sub === 'binding') {
      return api.bind(ns ?? '', name, await readJson(), dryRunValues(url).includes('All'));
    }
    if (method === 'PUT' && name !== undefined && (sub === undefined || sub === 'status')) {
      return api.update(def, ns, name, await readJson(), statusSub, dryRunValues(url).includes('All'));
    }
    if (method === 'PATCH' && name !== undefined && (sub === undefined || sub === 'status')) {
      const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      if (!PATCH_TYPES.includes(contentType)) throw errors.unsupportedMediaType(contentType, PATCH_TYPES);
      return api.patch(def, ns, name, contentType, await readJson(), statusSub, dryRunValues(url).includes('All'));
    }
    if (method === 'DELETE' && name !== undefined && sub === undefined) {
      return api.delete(def, ns, name, deleteOptions(url, await readJson()));
    }
    if (method === 'DELETE' && name === undefined && sub === undefined) {
      return { code: 200, body: api.deleteCollection(def, listQuery(url, ns), deleteOptions(url, await readJson())) };
    }
    throw errors.methodNotSupported({ group: def.group, resource: def.resource }, r.verb);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const start = deps.clock.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const r: Route = { ...route(req.method ?? 'GET', url), userAgent: req.headers['user-agent'] ?? '' };
    let injected = false;
    let code = 500;
    try {
      if (deps.token !== null && req.headers.authorization !== `Bearer ${deps.token}`) throw errors.unauthorized();
      const latency = deps.faults.latencyFor(r);
      if (latency > 0) await deps.timers.sleep(latency);
      const failure = deps.faults.failureFor(r);
      if (failure !== undefined) {
        injected = true;
        throw errors.fromCode(failure.status, failure.message, failure.retryAfterSeconds);
      }
      let outcome: Outcome;
      const review = reviews(r);
      if (review !== undefined) {
        outcome = review(parseJson(await readBody(req)));
      } else if (r.prefix !== undefined && r.resource !== '') {
        const def = deps.registry.find(r.group, r.version, r.resource.split('/')[0] ?? '');
        if (def === undefined) throw errors.pathNotFound();
        outcome = await resourceRequest(r, def, url, req, res);
      } else {
        outcome = nonResource(r);
      }
      if (outcome === 'streaming') {
        code = 200;
        return;
      }
      code = outcome.code;
      if (typeof outcome.body === 'string') {
        res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8' });
        res.end(outcome.body);
      } else {
        const status =
          isObject(outcome.body) && outcome.body.kind === 'Status' ? (outcome.body as unknown as Status) : undefined;
        sendJson(res, code, outcome.body, status ? statusHeaders(status) : {});
      }
    } catch (err) {
      const apiError =
        err instanceof ApiError ? err : errors.internal(err instanceof Error ? err.message : String(err));
      code = apiError.code;
      if (!res.headersSent) sendJson(res, code, apiError.status, statusHeaders(apiError.status));
      else res.destroy();
    } finally {
      deps.stats.record(r, start, code, injected);
    }
  };

  return (req, res) => {
    void handle(req, res);
  };
}
