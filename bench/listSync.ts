// The operator's first sync of a 150,000-pod cluster through the real list path: the operator's own client over
// HTTP, paginated lists (limit 500 + continue), each page converted as it arrives. The test API server runs in a
// child process (its store of raw objects must not count against the operator's RSS); this process is the operator,
// and loads only what the operator loads (the server's modules are imported by the child alone).
//   node --expose-gc dist/bench/listSync.js [pods] [nodes]
// Prints the sync time, the operator's RSS after sync, and the largest response body the operator had to hold (a
// page), next to the size of the whole pod list as one body (what an unpaginated list would have been); then the
// peak RSS of `plan --kubeconfig` against the same cluster (a child process under /usr/bin/time), which converts
// each page on arrival as the operator does and must not need more memory than the operator after sync.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { loadKubeconfig, type Credentials } from '../src/kube/credentials.js';
import { createOperator } from '../src/operator/operator.js';
import type { ClusterShape } from './clusters.js';

function shapeFor(pods: number, nodes: number): ClusterShape {
  const replicas = 50;
  return {
    nodes,
    zones: 3,
    workloads: Math.ceil(pods / replicas),
    replicas,
    skewedFraction: 0.1,
    kind: 'mixed',
    namespaces: 100,
  };
}

/** Child: the test API server holding the cluster; prints its kubeconfig, exits when stdin closes. */
async function serve(pods: number, nodes: number): Promise<void> {
  const { readCrdFile, startTestApiServer } = await import('../test/apiserver/index.js');
  const { clusterObjects } = await import('./clusters.js');
  const crd = fileURLToPath(new URL('../crds/rebalancer.dev_rebalancepolicies.yaml', import.meta.url));
  const server = await startTestApiServer({ crds: readCrdFile(crd), requestLogLimit: 10_000 });
  for (const raw of clusterObjects(shapeFor(pods, nodes))) server.store.create(raw as never);
  process.stdout.write(`${JSON.stringify({ kubeconfig: server.kubeConfig().exportConfig() })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
}

function rssAfterGc(): number {
  for (let i = 0; i < 3; i++) global.gc?.();
  return Math.round(process.memoryUsage().rss / 2 ** 20);
}

/** Bytes of one response body of the pod list (`limit` 0 = the whole list in one body). */
async function bodyBytes(kc: Credentials, limit: number): Promise<number> {
  const server = kc.getCurrentCluster()!.server;
  const options: { headers?: Record<string, string> } = {};
  await kc.applyToHTTPSOptions(options);
  const response = await fetch(`${server}/api/v1/pods${limit > 0 ? `?limit=${limit}` : ''}`, {
    headers: options.headers ?? {},
  });
  if (!response.ok) throw new Error(`GET pods answered ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) bytes += chunk.length;
  return bytes;
}

async function operate(pods: number, nodes: number): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [script, 'serve', String(pods), String(nodes)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`test API server exited (${code})`)));
    });
    const dir = mkdtempSync(join(tmpdir(), 'kr-listsync-'));
    const path = join(dir, 'kubeconfig');
    writeFileSync(path, (JSON.parse(line) as { kubeconfig: string }).kubeconfig);
    const kc = (await loadKubeconfig([path], undefined, path)).credentials;
    const baselineRssMb = rssAfterGc();
    const operator = createOperator({
      kubeConfig: kc,
      logger: pino({ level: 'warn' }),
      registry: new Registry(),
      identity: 'bench',
      namespace: 'kube-rebalancer',
      leaderElect: false,
      kubeApiQps: 1000,
      kubeApiBurst: 1000,
    });
    const start = performance.now();
    operator.start();
    await operator.waitForSync();
    const syncMs = performance.now() - start;
    const rssMb = rssAfterGc();
    const counts = operator.cache.counts();
    await operator.shutdown({ releaseLease: false, graceMs: 0 });
    const plan = planPeakRss(path);
    rmSync(dir, { recursive: true, force: true });
    const pageBytes = await bodyBytes(kc, 500);
    const wholeListBytes = await bodyBytes(kc, 0);
    process.stdout.write(
      `${JSON.stringify({
        pods: counts.pods,
        nodes: counts.nodes,
        pageSize: 500,
        syncSeconds: Math.round(syncMs / 100) / 10,
        baselineRssMb,
        rssAfterSyncMb: rssMb,
        planPeakRssMb: plan.peakRssMb,
        planExitCode: plan.code,
        largestBodyMiB: Math.round((pageBytes / 2 ** 20) * 100) / 100,
        unpaginatedListMiB: Math.round(wholeListBytes / 2 ** 20),
        targets: { rssAfterSyncMb: 600, largestStringMiB: 64 },
        ok: rssMb <= 600 && pageBytes <= 64 * 2 ** 20 && plan.code === 0 && plan.peakRssMb <= rssMb,
      })}\n`,
    );
  } finally {
    child.stdin?.end();
    if (child.exitCode === null) child.kill('SIGTERM');
  }
}

/** `plan --kubeconfig` in a child process: its exit code and peak RSS (VmHWM, from /usr/bin/time). */
function planPeakRss(kubeconfig: string): { code: number; peakRssMb: number } {
  const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const run = spawnSync(
    '/usr/bin/time',
    ['-f', 'peak-kb %M', process.execPath, cli, 'plan', '--kubeconfig', kubeconfig],
    {
      encoding: 'utf8',
      maxBuffer: 512 * 2 ** 20,
    },
  );
  const kb = Number(/peak-kb (\d+)/.exec(run.stderr)?.[1] ?? NaN);
  if (run.status !== 0) process.stderr.write(run.stderr.slice(-2000));
  return { code: run.status ?? -1, peakRssMb: Math.round(kb / 1024) };
}

const [mode, a, b] = process.argv.slice(2);
const run = mode === 'serve' ? serve(Number(a), Number(b)) : operate(Number(mode ?? 150_000), Number(a ?? 5_000));
run.catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exitCode = 1;
});
