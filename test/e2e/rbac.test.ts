// RBAC derived from the code: every API call the operator makes, found two ways —
//  1. recorded: a scenario that exercises every path that talks to the API (informers list+watch, leader
//     election create/get/update and release, dry-run and real evictions, Events created and aggregated, status
//     writes) runs against the test API server, whose request log gives (verb, group, resource/subresource,
//     namespace) of each request;
//  2. static: every request method of the facades in src/kube/kubeClient.ts and src/kube/authReviews.ts
//     (named as client-node's typed APIs name them) and every such method called in src/operator is looked up in the
//     table below (an unknown method,
//     or a request sent outside the facade, fails the test, so a new call cannot slip past), and every watch path of
//     the informers is listed;
// — then compared with manifests/clusterrole.yaml and the leader-election Role in manifests/role.yaml: each call is
// granted (leases only in the operator's namespace), and nothing is granted beyond the calls, except the reviewed
// extras in EXTRAS (each with its reason; an extra that becomes used, or is no longer granted, fails the test).
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { sep } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { METRICS_API, type TestApiServer } from '../apiserver/index.js';
import { createDelegatingAuth } from '../../src/serving/delegatingAuth.js';
import {
  createDeployment,
  createPolicy,
  startCluster,
  startOperator,
  updatePolicySpec,
  waitFor,
  type OperatorHandle,
} from './harness.js';

const OPERATOR_NAMESPACE = 'kube-rebalancer';

interface Access {
  readonly verb: string;
  readonly group: string;
  /** `pods`, `pods/eviction`, `rebalancepolicies/status`. */
  readonly resource: string;
  /** For namespaced calls that must stay in one namespace (leases): that namespace. */
  readonly namespace?: string;
}

const key = (a: Access): string =>
  `${a.verb} ${a.group || 'core'}/${a.resource}${a.namespace ? ` in ${a.namespace}` : ''}`;

/** client-node methods the operator may call, and the access each needs (a generic one: every use of it). */
const METHODS: Readonly<Record<string, Access | readonly Access[]>> = {
  listNode: { verb: 'list', group: '', resource: 'nodes' },
  listPodForAllNamespaces: { verb: 'list', group: '', resource: 'pods' },
  listNamespace: { verb: 'list', group: '', resource: 'namespaces' },
  listPodDisruptionBudgetForAllNamespaces: { verb: 'list', group: 'policy', resource: 'poddisruptionbudgets' },
  listPriorityClass: { verb: 'list', group: 'scheduling.k8s.io', resource: 'priorityclasses' },
  listPersistentVolume: { verb: 'list', group: '', resource: 'persistentvolumes' },
  listPersistentVolumeClaimForAllNamespaces: { verb: 'list', group: '', resource: 'persistentvolumeclaims' },
  listStorageClass: { verb: 'list', group: 'storage.k8s.io', resource: 'storageclasses' },
  listCSINode: { verb: 'list', group: 'storage.k8s.io', resource: 'csinodes' },
  // The policies' informer, and metrics.k8s.io for usage: Metrics (src/kube/metricsReader.ts).
  listClusterCustomObject: [
    { verb: 'list', group: 'rebalancer.dev', resource: 'rebalancepolicies' },
    { verb: 'list', group: 'metrics.k8s.io', resource: 'nodes' },
    { verb: 'list', group: 'metrics.k8s.io', resource: 'pods' },
  ],
  createNamespacedPodEviction: { verb: 'create', group: '', resource: 'pods/eviction' },
  createNamespacedEvent: { verb: 'create', group: '', resource: 'events' },
  patchNamespacedEvent: { verb: 'patch', group: '', resource: 'events' },
  patchClusterCustomObjectStatus: { verb: 'patch', group: 'rebalancer.dev', resource: 'rebalancepolicies/status' },
  readNamespacedLease: { verb: 'get', group: 'coordination.k8s.io', resource: 'leases', namespace: OPERATOR_NAMESPACE },
  // usage: Prometheus: the bearer token's Secret, in the operator's namespace only (src/kube/prometheusReader.ts).
  readNamespacedSecret: { verb: 'get', group: '', resource: 'secrets', namespace: OPERATOR_NAMESPACE },
  createNamespacedLease: {
    verb: 'create',
    group: 'coordination.k8s.io',
    resource: 'leases',
    namespace: OPERATOR_NAMESPACE,
  },
  replaceNamespacedLease: {
    verb: 'update',
    group: 'coordination.k8s.io',
    resource: 'leases',
    namespace: OPERATOR_NAMESPACE,
  },
  // GET /version (the placement model follows the server's minor): a non-resource URL that Kubernetes's default
  // system:public-info-viewer ClusterRole grants everyone, so the operator's roles need nothing for it.
  getCode: [],
  createTokenReview: { verb: 'create', group: 'authentication.k8s.io', resource: 'tokenreviews' },
  createSubjectAccessReview: { verb: 'create', group: 'authorization.k8s.io', resource: 'subjectaccessreviews' },
};

/** Watch paths of the informers → access. */
const WATCHES: Readonly<Record<string, Access>> = {
  '/api/v1/nodes': { verb: 'watch', group: '', resource: 'nodes' },
  '/api/v1/pods': { verb: 'watch', group: '', resource: 'pods' },
  '/api/v1/namespaces': { verb: 'watch', group: '', resource: 'namespaces' },
  '/apis/policy/v1/poddisruptionbudgets': { verb: 'watch', group: 'policy', resource: 'poddisruptionbudgets' },
  '/apis/scheduling.k8s.io/v1/priorityclasses': {
    verb: 'watch',
    group: 'scheduling.k8s.io',
    resource: 'priorityclasses',
  },
  '/api/v1/persistentvolumes': { verb: 'watch', group: '', resource: 'persistentvolumes' },
  '/api/v1/persistentvolumeclaims': { verb: 'watch', group: '', resource: 'persistentvolumeclaims' },
  '/apis/storage.k8s.io/v1/storageclasses': { verb: 'watch', group: 'storage.k8s.io', resource: 'storageclasses' },
  '/apis/storage.k8s.io/v1/csinodes': { verb: 'watch', group: 'storage.k8s.io', resource: 'csinodes' },
  '/apis/${POLICY_GROUP}/${POLICY_VERSION}/${POLICY_PLURAL}': {
    verb: 'watch',
    group: 'rebalancer.dev',
    resource: 'rebalancepolicies',
  },
};

/** Granted but not used, each reviewed. */
const EXTRAS: Readonly<Record<string, string>> = {};

/**
 * Every method name of client-node's typed API classes. KubernetesObjectApi (generic create/read/list/delete on any
 * kind, whose names collide with Map and array methods) is checked separately: the operator must not use it.
 */
function clientMethodNames(): Set<string> {
  const names = new Set<string>();
  for (const [exported, value] of Object.entries(k8s)) {
    if (typeof value !== 'function' || !/Api$/.test(exported) || exported === 'KubernetesObjectApi') continue;
    const proto = (value as { prototype?: object }).prototype;
    if (proto === undefined) continue;
    for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor') names.add(name);
  }
  return names;
}

/** The facades requests go through, by file: where in it the methods are defined. */
const FACADES: Readonly<Record<string, readonly [string, string]>> = {
  'kube/kubeClient.ts': ['export function kubeApi(', 'export type KubeApi'],
  'kube/authReviews.ts': ['export function authReviewApi(', 'export interface AuthReviewClients'],
};

/** The method names a facade defines. */
function facadeMethods(text: string, [start, end]: readonly [string, string]): string[] {
  const body = text.slice(text.indexOf(start), text.indexOf(end));
  return [...body.matchAll(/^\s+([a-z][A-Za-z0-9]*): \(/gm)].map((m) => m[1]!);
}

/** The .ts files below a folder of src/, as paths relative to src/ (`operator/eviction/executor.ts`). */
function sourcesBelow(folder: string): string[] {
  const root = new URL('../../src/', import.meta.url);
  return readdirSync(new URL(`${folder}/`, root), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `${folder}/${f.split(sep).join('/')}`);
}

function staticScan(): { calls: Map<string, string[]>; watches: string[] } {
  const src = new URL('../../src/', import.meta.url);
  const known = clientMethodNames();
  const calls = new Map<string, string[]>();
  const watches: string[] = [];
  // The operator and the client layer it calls through (src/kube: the Lease calls, the facades).
  for (const file of [...sourcesBelow('operator'), ...sourcesBelow('kube')]) {
    const text = readFileSync(new URL(file, src), 'utf8');
    const facade = FACADES[file];
    if (facade !== undefined) {
      // Its methods are named as client-node names them; each must be known to client-node and to METHODS.
      for (const name of facadeMethods(text, facade)) {
        if (!known.has(name)) throw new Error(`${file} defines ${name}, which client-node's typed APIs do not`);
        calls.set(name, [...(calls.get(name) ?? []), file]);
      }
      continue;
    }
    if (
      !file.startsWith('kube/') &&
      /KubernetesObjectApi|makeApiClient|\bfetch\(|\bhttps?\.request\(|\.json\(\{/.test(text)
    ) {
      throw new Error(`${file} reaches the API outside src/kube; extend this test to derive its RBAC`);
    }
    for (const m of text.matchAll(/\.([a-z][A-Za-z0-9]*)\(/g)) {
      const name = m[1]!;
      if (!known.has(name) || name.startsWith('with')) continue;
      calls.set(name, [...(calls.get(name) ?? []), file]);
    }
    for (const m of text.matchAll(/path:\s*[`'](\/apis?\/[^`']+)[`']/g)) watches.push(m[1]!);
  }
  return { calls, watches };
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
}

function grants(): Map<string, Access> {
  const out = new Map<string, Access>();
  for (const file of ['clusterrole.yaml', 'role.yaml']) {
    const text = readFileSync(new URL(`../../manifests/${file}`, import.meta.url), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      const obj = doc.toJS() as { kind?: string; metadata?: { namespace?: string }; rules?: Rule[] } | null;
      if (obj === null || (obj.kind !== 'ClusterRole' && obj.kind !== 'Role')) continue;
      const namespace = obj.kind === 'Role' ? obj.metadata?.namespace : undefined;
      const tuples = (obj.rules ?? []).flatMap((rule) =>
        (rule.apiGroups ?? []).flatMap((group) =>
          (rule.resources ?? []).flatMap((resource) => (rule.verbs ?? []).map((verb) => ({ verb, group, resource }))),
        ),
      );
      for (const t of tuples) {
        const access: Access = { ...t, ...(namespace ? { namespace } : {}) };
        out.set(key(access), access);
      }
    }
  }
  return out;
}

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterAll(async () => {
  for (const op of operators.splice(0)) await op.stop();
  await server?.close();
});

/** Runs every API path of the operator against the test server and returns what it asked for. */
async function recordedScenario(): Promise<Map<string, Access>> {
  const s = (server = await startCluster({ server: { customResources: [...METRICS_API] } }));
  s.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: OPERATOR_NAMESPACE } });
  createDeployment(s, {
    namespace: 'shop',
    name: 'web',
    placement: ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1'],
    pdb: { maxUnavailable: 1 },
  });
  await s.settle();
  createPolicy(s, 'balance', { mode: 'DryRun', eviction: { maxPerWorkload: 3 } });
  // A policy measuring by metrics.k8s.io: its cycle lists NodeMetrics and PodMetrics.
  createPolicy(s, 'by-usage', {
    mode: 'DryRun',
    strategies: { lowNodeUtilization: { enabled: true, usage: 'Metrics' } },
  });
  // A policy measuring by a Prometheus query: its cycle reads the token's Secret (the query itself fails, no server).
  s.store.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'prometheus-token', namespace: OPERATOR_NAMESPACE },
    data: { prometheusAuthToken: Buffer.from('token').toString('base64') },
  });
  createPolicy(s, 'by-query', {
    mode: 'DryRun',
    strategies: {
      lowNodeUtilization: {
        enabled: true,
        usage: 'Prometheus',
        thresholds: { MetricResource: 30 },
        targetThresholds: { MetricResource: 60 },
        prometheus: {
          url: 'http://127.0.0.1:9',
          query: 'node_usage',
          authToken: { secretReference: { namespace: OPERATOR_NAMESPACE, name: 'prometheus-token' } },
        },
      },
    },
  });
  const mark = s.stats.mark();
  const leader = startOperator(s, { identity: 'a', leaderElect: true });
  operators.push(leader);
  await leader.operator.waitForSync();
  await waitFor(() => leader.operator.isLeader(), 5000, 'leadership');
  // Twice the same dry run: the second Event on each pod is an aggregation (patch).
  await leader.operator.tick('balance');
  await leader.operator.tick('balance');
  await leader.operator.tick('by-usage');
  await leader.operator.tick('by-query');
  await waitFor(() => s.stats.count({ verb: 'patch', resource: 'events' }, mark) > 0, 5000, 'an aggregated Event');
  updatePolicySpec(s, 'balance', (spec) => {
    spec['mode'] = 'Evict';
  });
  await waitFor(() => leader.operator.cache.policy('balance')?.policy?.spec.mode === 'Evict', 5000, 'the edit');
  await leader.operator.tick('balance');
  // A scrape of /metrics: authenticated and authorized through the operator's review client.
  const auth = createDelegatingAuth({ api: leader.operator.authReviews });
  const scrape = { headers: { authorization: 'Bearer test-token' }, method: 'GET' } as unknown as IncomingMessage;
  expect((await auth.check(scrape, '/metrics')).status).toBe(200);
  await leader.stop({ releaseLease: true });
  operators.splice(0);
  const recorded = new Map<string, Access>();
  for (const r of s.stats.requests({}, mark)) {
    // Non-resource URLs (GET /version) are not a matter of the operator's roles (see getCode in METHODS).
    if (r.resource === '') continue;
    const access: Access = {
      verb: r.verb,
      group: r.group,
      resource: r.resource,
      ...(r.resource === 'leases' || r.resource === 'secrets' ? { namespace: r.namespace ?? '' } : {}),
    };
    recorded.set(key(access), access);
  }
  return recorded;
}

describe('RBAC (manifests/clusterrole.yaml, manifests/role.yaml) against the calls the code makes', () => {
  it('grants every call the code makes, and nothing more than the reviewed extras', { timeout: 30_000 }, async () => {
    const { calls, watches } = staticScan();
    const unknown = [...calls.keys()].filter((name) => METHODS[name] === undefined);
    expect(
      unknown,
      `client-node calls without an RBAC entry in this test (add them to METHODS): ${unknown.join(', ')}`,
    ).toEqual([]);
    const unknownWatches = watches.filter((p) => WATCHES[p] === undefined);
    expect(unknownWatches, 'informer paths without an RBAC entry (add them to WATCHES)').toEqual([]);

    const required = new Map<string, Access>();
    for (const name of calls.keys()) {
      for (const access of [METHODS[name]!].flat()) required.set(key(access), access);
    }
    for (const path of watches) required.set(key(WATCHES[path]!), WATCHES[path]!);
    const recorded = await recordedScenario();
    // The scenario reached every statically found call, and made no call the scan missed.
    expect([...recorded.keys()].sort()).toEqual([...required.keys()].sort());

    const granted = grants();
    const missing = [...required.keys()].filter((k) => !granted.has(k));
    expect(missing, 'calls the manifests do not grant').toEqual([]);
    const extras = [...granted.keys()].filter((k) => !required.has(k)).sort();
    expect(extras, 'grants nothing in the code uses (review, then remove them or list them in EXTRAS)').toEqual(
      Object.keys(EXTRAS).sort(),
    );
  });
});
