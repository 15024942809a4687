// Reading a live cluster: paged GETs only, the same objects kubectl prints, optional kinds that may be absent, and a
// plan equal to the one from the same cluster saved as a file.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { main } from '../../src/cli/program.js';
import { findCredentials, loadCredentials } from '../../src/kube/kubeconfig.js';
import {
  kubeGetter,
  LISTED_KINDS,
  listKind,
  readCluster,
  readUsageMetrics,
  type Getter,
  type HttpAnswer,
} from '../../src/live/read.js';
import { readCrdFile, startTestApiServer, type TestApiServer } from '../apiserver/index.js';

const dir = mkdtempSync(join(tmpdir(), 'kr-live-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PODS = LISTED_KINDS.find((k) => k.kind === 'Pod')!;
const POLICIES = LISTED_KINDS.find((k) => k.kind === 'RebalancePolicy')!;

/** A getter that serves `items` in pages and records every path it was asked for. */
function pagedGetter(items: readonly unknown[], opts: { expireOnce?: boolean } = {}): Getter & { paths: string[] } {
  const paths: string[] = [];
  let expire = opts.expireOnce ?? false;
  const get = (path: string): Promise<HttpAnswer> => {
    paths.push(path);
    const url = new URL(path, 'http://x');
    const limit = Number(url.searchParams.get('limit'));
    const start = Number(url.searchParams.get('continue') ?? '0');
    if (start > 0 && expire) {
      expire = false;
      return Promise.resolve({ status: 410, body: { kind: 'Status', reason: 'Expired' } });
    }
    const end = Math.min(items.length, start + limit);
    const metadata = end < items.length ? { continue: String(end) } : {};
    return Promise.resolve({ status: 200, body: { kind: 'PodList', metadata, items: items.slice(start, end) } });
  };
  return Object.assign(get, { paths });
}

const pods = (n: number): unknown[] => Array.from({ length: n }, (_, i) => ({ metadata: { name: `p${i}` } }));

describe('listKind', () => {
  it.each([
    [0, 500, 1],
    [5, 2, 3],
    [6, 2, 3],
    [1000, 500, 2],
    [1001, 500, 3],
  ])('%i pods in pages of %i take %i requests, each with limit', async (count, pageSize, requests) => {
    const get = pagedGetter(pods(count));
    const items = await listKind(get, PODS, { pageSize });
    expect(items).toHaveLength(count);
    expect(get.paths).toHaveLength(requests);
    for (const path of get.paths) expect(path).toMatch(new RegExp(`^/api/v1/pods\\?limit=${pageSize}(&continue=|$)`));
    // Items get the kind and apiVersion kubectl prints, so the loader sees the same objects as in a saved file.
    if (count > 0) expect((items as unknown[])[0]).toMatchObject({ kind: 'Pod', apiVersion: 'v1' });
  });

  it('restarts the list once when the continue token expired, never mixing two versions', async () => {
    const get = pagedGetter(pods(5), { expireOnce: true });
    const items = await listKind(get, PODS, { pageSize: 2 });
    expect(items).toHaveLength(5);
    expect(get.paths.filter((p) => !p.includes('continue'))).toHaveLength(2);
  });

  it.each([
    ['a missing CRD (404) on an optional kind', POLICIES, 404, 'absent', 0],
    ['a forbidden optional kind (403): warned', POLICIES, 403, 'absent', 1],
  ])('%s', async (_name, kind, status, result, warnings) => {
    const lines: string[] = [];
    const get: Getter = () => Promise.resolve({ status, body: { kind: 'Status', message: 'nope' } });
    expect(await listKind(get, kind, { warn: (l) => lines.push(l) })).toBe(result);
    expect(lines).toHaveLength(warnings);
  });

  it.each([404, 403, 500])('a %i on pods is an error naming the path and the server message', async (status) => {
    const get: Getter = () => Promise.resolve({ status, body: { kind: 'Status', message: 'the message' } });
    await expect(listKind(get, PODS)).rejects.toThrow(`cannot list /api/v1/pods: HTTP ${status}: the message`);
  });
});

describe('findCredentials', () => {
  const at = (env: Record<string, string>, files: string[] = []) => ({
    env,
    home: '/home/u',
    exists: (p: string) => files.includes(p),
  });
  it.each([
    ['the flag first', 'f', at({ KUBECONFIG: 'e' }, ['/home/u/.kube/config']), false, { kind: 'flag', path: 'f' }],
    ['then $KUBECONFIG', undefined, at({ KUBECONFIG: 'a:b' }), false, { kind: 'env', paths: ['a', 'b'] }],
    [
      'then ~/.kube/config',
      undefined,
      at({}, ['/home/u/.kube/config']),
      false,
      { kind: 'home', path: '/home/u/.kube/config' },
    ],
    ['then the pod', undefined, at({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }), false, { kind: 'in-cluster' }],
    [
      'the pod first for the operator',
      undefined,
      at({ KUBERNETES_SERVICE_HOST: 'h', KUBECONFIG: 'e' }),
      true,
      { kind: 'in-cluster' },
    ],
    ['none at all', undefined, at({}), false, undefined],
  ])('%s', (_name, flag, where, inClusterFirst, expected) => {
    expect(findCredentials(flag, where, inClusterFirst)).toEqual(expected);
  });
});

describe('loadCredentials', () => {
  const kubeconfig = (current: string): string =>
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- {name: c1, cluster: {server: "http://127.0.0.1:1"}}',
      '- {name: c2, cluster: {server: "http://127.0.0.1:2"}}',
      'users: [{name: u, user: {token: t}}]',
      'contexts:',
      '- {name: one, context: {cluster: c1, user: u}}',
      '- {name: two, context: {cluster: c2, user: u}}',
      `current-context: "${current}"`,
    ].join('\n');

  it.each([
    ['the current context', 'one', undefined, 'http://127.0.0.1:1'],
    ['--context overrides it', 'one', 'two', 'http://127.0.0.1:2'],
  ])('%s', async (_name, current, context, server) => {
    const path = join(dir, `kc-${current}-${context}`);
    writeFileSync(path, kubeconfig(current));
    expect((await loadCredentials({ kind: 'flag', path }, context)).getCurrentCluster()?.server).toBe(server);
  });

  it('a missing file in $KUBECONFIG is reported and skipped, as kubectl skips it; none at all is bad input', async () => {
    const path = join(dir, 'kc-present');
    writeFileSync(path, kubeconfig('two'));
    const gone = join(dir, 'kc-gone');
    const warnings: string[] = [];
    const kc = await loadCredentials({ kind: 'env', paths: [gone, path] }, undefined, {}, (l) => warnings.push(l));
    expect(kc.getCurrentCluster()?.server).toBe('http://127.0.0.1:2');
    expect(warnings).toEqual([`warning: $KUBECONFIG names ${gone}, which does not exist; skipped`]);
    await expect(loadCredentials({ kind: 'env', paths: [gone] }, undefined, {})).rejects.toThrow(/none of its files/);
    await expect(loadCredentials({ kind: 'flag', path: gone }, undefined, {})).rejects.toThrow(/cannot load/);
  });

  it.each([
    ['an unknown --context', 'one', 'three', /has no context "three" \(it has: one, two\)/],
    ['no current context', '', undefined, /current-context: is not set/],
  ])('%s is bad input', async (_name, current, context, problem) => {
    const path = join(dir, `kc-bad-${current}-${context}`);
    writeFileSync(path, kubeconfig(current));
    await expect(loadCredentials({ kind: 'flag', path }, context)).rejects.toThrow(problem);
  });
});

describe('plan --kubeconfig against the test API server', () => {
  let server: TestApiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** The example cluster loaded into a server that changes nothing (no controllers, no seeded objects). */
  async function serveExample(withCrd: boolean): Promise<{ server: TestApiServer; kubeconfig: string }> {
    const s = await startTestApiServer({
      seedNamespaces: false,
      seedPriorityClasses: false,
      disruption: { enabled: false },
      ...(withCrd ? { crds: readCrdFile('crds/rebalancer.dev_rebalancepolicies.yaml') } : { customResources: [] }),
    });
    const list = parse(readFileSync('examples/zone-skew.yaml', 'utf8')) as { items: { kind: string }[] };
    for (const item of list.items) if (withCrd || item.kind !== 'RebalancePolicy') s.store.create(item as never);
    const kubeconfig = join(dir, `kubeconfig-${s.port}`);
    writeFileSync(kubeconfig, s.kubeConfig().exportConfig());
    return { server: s, kubeconfig };
  }

  async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await main(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s) });
    return { code, out, err };
  }

  it('prints the plan --snapshot prints for the same cluster, with list requests only', async () => {
    const served = await serveExample(true);
    server = served.server;
    const mark = server.stats.mark();
    const live = await run('plan', '--kubeconfig', served.kubeconfig);
    const saved = await run('plan', '--snapshot', 'examples/zone-skew.yaml');
    expect(live.err).toBe('');
    expect(live.code).toBe(0);
    expect(JSON.parse(live.out)).toEqual(JSON.parse(saved.out));
    // Read-only: lists of resources, and the one GET of /version (not a resource) that picks the scheduler modelled.
    const requests = server.stats.requests(undefined, mark);
    const verbs = new Set(requests.filter((r) => r.url !== '/version').map((r) => r.verb));
    expect([...verbs]).toEqual(['list']);
    expect(requests.filter((r) => r.url === '/version').map((r) => r.verb)).toEqual(['get']);
  });

  it('completes when the API server answers 429 and 503 with Retry-After (waited out, as the operator does)', async () => {
    const served = await serveExample(true);
    server = served.server;
    const saved = await run('plan', '--snapshot', 'examples/zone-skew.yaml');
    const mark = server.stats.mark();
    server.faults.failNext({ verb: 'list', resource: 'pods', status: 429, retryAfterSeconds: 1, count: 1 });
    server.faults.failNext({ verb: 'list', resource: 'nodes', status: 503, retryAfterSeconds: 1, count: 1 });
    const live = await run('plan', '--kubeconfig', served.kubeconfig);
    expect(live.err).toBe('');
    expect(live.code).toBe(0);
    expect(JSON.parse(live.out)).toEqual(JSON.parse(saved.out));
    const pods = server.stats.requests({ verb: 'list', resource: 'pods' }, mark);
    expect(pods.map((r) => r.code)).toEqual([429, 200]);
    expect(pods[1]!.time - pods[0]!.time).toBeGreaterThanOrEqual(1000);
  });

  it('lists again from the start, more than once, when continue tokens expire (410)', async () => {
    let expired = 0;
    const items = pods(7);
    const get: Getter = (path) => {
      const url = new URL(path, 'http://x');
      const start = Number(url.searchParams.get('continue') ?? '0');
      if (start > 0 && expired < 3) {
        expired++;
        return Promise.resolve({ status: 410, body: { kind: 'Status', reason: 'Expired' } });
      }
      const end = Math.min(items.length, start + 2);
      const metadata = end < items.length ? { continue: String(end) } : {};
      return Promise.resolve({ status: 200, body: { metadata, items: items.slice(start, end) } });
    };
    const listed = await listKind(get, PODS, { pageSize: 2 });
    expect(listed).toHaveLength(7);
    expect(expired).toBe(3);
  });

  it('simulate -o table through the live cluster matches the saved one', async () => {
    const served = await serveExample(true);
    server = served.server;
    const live = await run('simulate', '--kubeconfig', served.kubeconfig, '-o', 'table');
    const saved = await run('simulate', '--snapshot', 'examples/zone-skew.yaml', '-o', 'table');
    expect(live.code).toBe(0);
    expect(live.out).toBe(saved.out);
  });

  it('a cluster without the RebalancePolicy CRD is read without error (the default policy applies)', async () => {
    const served = await serveExample(false);
    server = served.server;
    const live = await run('plan', '--kubeconfig', served.kubeconfig);
    expect(live.err).toBe('');
    expect(live.code).toBe(0);
    expect(JSON.parse(live.out)).toMatchObject({ kind: 'RebalancePlan', policy: 'default' });
  });

  it('reads every page: pods listed 3 at a time come out whole', async () => {
    const served = await serveExample(true);
    server = served.server;
    const kc = await loadCredentials({ kind: 'flag', path: served.kubeconfig }, undefined);
    const mark = server.stats.mark();
    const raw = (await readCluster(kubeGetter(kc), { pageSize: 3 })) as { items: { kind: string }[] };
    const podCount = raw.items.filter((i) => i.kind === 'Pod').length;
    expect(podCount).toBe(server.store.count('pods'));
    expect(server.stats.count({ verb: 'list', resource: 'pods' }, mark)).toBe(Math.ceil(podCount / 3));
  });

  it('usage: Metrics reads metrics.k8s.io; absent (404), the plan says so and plans nothing on requests', async () => {
    const served = await serveExample(true);
    server = served.server;
    const policy = join(dir, 'metrics-policy.yaml');
    writeFileSync(
      policy,
      'apiVersion: rebalancer.dev/v1alpha1\nkind: RebalancePolicy\nmetadata: {name: by-usage}\n' +
        'spec: {strategies: {lowNodeUtilization: {enabled: true, usage: Metrics}}}\n',
    );
    const mark = server.stats.mark();
    const live = await run('plan', '--kubeconfig', served.kubeconfig, '--policy', policy);
    expect(live.code).toBe(0);
    const plan = JSON.parse(live.out) as { degraded?: Array<{ strategy: string; reason: string; message: string }> };
    expect(plan.degraded).toEqual([
      expect.objectContaining({ strategy: 'LowNodeUtilization', reason: 'MetricsUnavailable' }),
    ]);
    expect(plan.degraded?.[0]?.message).toContain('metrics.k8s.io/v1beta1 nodes: HTTP 404');
    expect(server.stats.count({ group: 'metrics.k8s.io' }, mark)).toBe(1);
    // A policy that does not measure by metrics never asks for them.
    const other = server.stats.mark();
    expect((await run('plan', '--kubeconfig', served.kubeconfig)).code).toBe(0);
    expect(server.stats.count({ group: 'metrics.k8s.io' }, other)).toBe(0);
  });

  it('readUsageMetrics: NodeMetrics and PodMetrics listed once each, pods placed where they run', async () => {
    const paths: string[] = [];
    const get: Getter = (path) => {
      paths.push(path);
      const items = path.endsWith('/nodes')
        ? [{ metadata: { name: 'n1' }, usage: { cpu: '2', memory: '1Gi' } }]
        : [
            {
              metadata: { name: 'p', namespace: 'ns' },
              containers: [{ name: 'c', usage: { cpu: '10m', memory: '1Mi' } }],
            },
          ];
      return Promise.resolve({ status: 200, body: { items } });
    };
    const reading = await readUsageMetrics(get, () => 'n1', 5);
    expect(paths).toEqual(['/apis/metrics.k8s.io/v1beta1/nodes', '/apis/metrics.k8s.io/v1beta1/pods']);
    expect(reading).toMatchObject({ available: true, readAt: 5 });
    if (reading.available)
      expect(reading.pods.get('ns/p')).toEqual({ usage: { cpu: 10, memory: 2 ** 20 }, node: 'n1' });
    const throttled = await readUsageMetrics(
      () => Promise.resolve({ status: 429, body: { message: 'slow down' } }),
      () => undefined,
      0,
    );
    expect(throttled).toEqual({ available: false, message: 'metrics.k8s.io/v1beta1 nodes: HTTP 429 (slow down)' });
  });

  it.each([
    [
      'a kubeconfig that does not exist',
      ['--kubeconfig', '/nonexistent/kubeconfig'],
      2,
      /^error: \/nonexistent\/kubeconfig: cannot load the kubeconfig/,
    ],
    [
      '--snapshot with --kubeconfig',
      ['--snapshot', 'examples/zone-skew.yaml', '--kubeconfig', 'x'],
      2,
      /cannot be combined/,
    ],
  ])('%s is bad input', async (_name, args, code, message) => {
    const r = await run('plan', ...args);
    expect(r.code).toBe(code);
    expect(r.err).toMatch(message);
  });

  it('an API server that does not answer is a runtime failure (exit 1) naming it', async () => {
    const path = join(dir, 'kc-dead');
    writeFileSync(
      path,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9", insecure-skip-tls-verify: true}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const r = await run('plan', '--kubeconfig', path);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/^error: cannot reach the API server at http:\/\/127\.0\.0\.1:9/);
  });
});
