// Leader election on its own thread (src/kube/leaseThread.ts + leaseWorker.ts, the worker transpiled from the
// sources): the Lease is renewed while the main thread is held, longer than the renew deadline, by synchronous work
// (what a paced run's plan does at 1,000 nodes); the same hold makes the main-thread elector step down, which shows
// the test can tell them apart. The Lease API is a small fake in a child process, so that it answers while this
// thread is held; the process is stopped by its pid after each test.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createKubeClients } from '../../src/kube/kubeClient.js';
import { loadCredentials, type CredentialSource } from '../../src/kube/kubeconfig.js';
import { createLeaderElector, type LeaderElector } from '../../src/kube/leaderElection.js';
import { createThreadedLeaderElector } from '../../src/kube/leaseThread.js';
import { createRateLimiter } from '../../src/kube/rateLimiter.js';
import { captureLogger } from '../operator/fakes.js';
import { transpiled, type Transpiled } from './transpiled.js';

/** A coordination.k8s.io/v1 Lease store with optimistic concurrency; prints its port, then one line per request. */
const SERVER = `
const http = require('node:http');
let lease; let rv = 1;
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const send = (code, obj) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(obj)); };
    process.stdout.write(req.method + ' ' + req.url + '\\n');
    if (req.method === 'GET') return lease ? send(200, lease) : send(404, { kind: 'Status', code: 404, reason: 'NotFound' });
    const obj = JSON.parse(body);
    if (req.method === 'POST' && lease) return send(409, { kind: 'Status', code: 409 });
    if (req.method === 'PUT' && obj.metadata.resourceVersion !== lease?.metadata.resourceVersion) return send(409, { kind: 'Status', code: 409 });
    lease = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } };
    send(req.method === 'POST' ? 201 : 200, lease);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write('port ' + server.address().port + '\\n'));
`;

const TIMINGS = { leaseDurationMs: 3_000, renewDeadlineMs: 1_000, retryPeriodMs: 200 };
/** How long the main thread is held: well past the renew deadline, short of the Lease's duration. */
const HOLD_MS = 2_000;

let worker: Transpiled;
let dir: string;
let server: ChildProcess | undefined;
let output = '';

beforeAll(() => {
  worker = transpiled('src/kube/leaseWorker.ts');
  dir = mkdtempSync(join(tmpdir(), 'kr-lease-thread-'));
});
afterAll(() => {
  worker.remove();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  if (server?.pid !== undefined && server.exitCode === null) process.kill(server.pid);
  server = undefined;
});

async function startServer(): Promise<CredentialSource> {
  output = '';
  const child = spawn(process.execPath, ['-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  server = child;
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const m = /^port (\d+)$/m.exec(output);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`the fake Lease server exited (${code})`)));
  });
  const path = join(dir, `kubeconfig-${port}`);
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}"}}]`,
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: ctx, context: {cluster: c, user: u}}]',
      'current-context: ctx',
    ].join('\n'),
  );
  return { kind: 'flag', path };
}

/** The election of this file's electors: its timings, the Lease and an identity, with credentials from `source`. */
function election(source: CredentialSource): Parameters<typeof createThreadedLeaderElector>[0]['election'] {
  return {
    source,
    namespace: 'kube-rebalancer',
    name: 'kube-rebalancer',
    identity: 'a',
    userAgent: 'test',
    qps: 5,
    burst: 10,
    ...TIMINGS,
  };
}

/** The threaded elector on `source`, with this file's timings and the transpiled worker. */
function threaded(
  source: CredentialSource,
  logger: Logger,
  onStoppedLeading?: () => void,
): ReturnType<typeof createThreadedLeaderElector> {
  return createThreadedLeaderElector({
    election: election(source),
    clock: systemClock,
    logger,
    workerUrl: worker.url,
    ...(onStoppedLeading !== undefined ? { onStoppedLeading } : {}),
  });
}

/** Waits (polling, never asserting how long it took) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Holds this thread for `ms`, as a long synchronous plan does. */
function hold(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy
  }
}

async function heldWhileLeading(
  elector: LeaderElector,
  stopped: string[],
): Promise<{ leading: boolean; puts: number; stoppedDuringHold: boolean }> {
  elector.start();
  await until(() => elector.isLeader(), 'the Lease to be taken');
  const before = (output.match(/^PUT /gm) ?? []).length;
  hold(HOLD_MS);
  const leading = elector.isLeader();
  const stoppedDuringHold = stopped.length > 0;
  // The renewals the server answered while this thread was held (its lines are read now).
  await new Promise((resolve) => setTimeout(resolve, 100));
  const puts = (output.match(/^PUT /gm) ?? []).length - before;
  await elector.stop(false);
  return { leading, puts, stoppedDuringHold };
}

describe('leader election on its own thread', () => {
  it('keeps the Lease while the main thread is held past the renew deadline', async () => {
    const source = await startServer();
    const stopped: string[] = [];
    const { logger, lines } = captureLogger('info');
    const elector = threaded(source, logger, () => stopped.push('stopped'));
    const { leading, puts, stoppedDuringHold } = await heldWhileLeading(elector, stopped);
    expect(leading).toBe(true);
    expect(stoppedDuringHold).toBe(false);
    // Renewed every retry period while held: several writes, none of them waiting for this thread.
    expect(puts).toBeGreaterThanOrEqual(3);
    // The worker's log lines reach this thread's logger.
    expect(lines.some((l) => l.msg === 'became leader (lease acquired)' && l['component'] === 'leader-election')).toBe(
      true,
    );
  });

  it('the main-thread elector, held the same way, steps down at its renew deadline', async () => {
    const source = await startServer();
    const stopped: string[] = [];
    const credentials = await loadCredentials(source, undefined);
    const clients = createKubeClients(credentials, {
      limiter: createRateLimiter({ qps: 5, burst: 10, clock: systemClock }),
      clock: systemClock,
      userAgent: 'test',
      maxSockets: 2,
    });
    const elector = createLeaderElector({
      api: clients.coordination,
      namespace: 'kube-rebalancer',
      name: 'kube-rebalancer',
      identity: 'a',
      clock: systemClock,
      logger: captureLogger().logger,
      ...TIMINGS,
      onStoppedLeading: () => stopped.push('stopped'),
    });
    const { leading, puts, stoppedDuringHold } = await heldWhileLeading(elector, stopped);
    clients.close();
    expect(leading).toBe(false);
    expect(stoppedDuringHold).toBe(true);
    // At most the renewal already sent when the hold began.
    expect(puts).toBeLessThanOrEqual(1);
  });

  it('a worker that cannot load its credentials says so, and the replica never leads', async () => {
    const { logger, lines } = captureLogger('info');
    const elector = threaded({ kind: 'flag', path: join(dir, 'missing-kubeconfig') }, logger);
    elector.start();
    await until(() => lines.some((l) => l.msg.startsWith('leader election thread failed')), 'the failure');
    expect(elector.isLeader()).toBe(false);
    await elector.stop(false);
  });

  it('leads again when the worker renews after this thread saw the renew deadline pass, with no message', async () => {
    // A stand-in worker: it leads, its renewals stop for longer than the renew deadline (a slow API server), then
    // resume, and it never steps down in its own view (its deadline timer had not fired when the late renewal
    // succeeded), so it posts nothing more. This thread must step down at the deadline and lead again after.
    const script = join(dir, 'late-renewal-worker.mjs');
    writeFileSync(
      script,
      [
        "import { parentPort, workerData } from 'node:worker_threads';",
        'const state = new BigInt64Array(workerData.shared);',
        'const now = () => process.hrtime.bigint() / 1000n;',
        'let renewing;',
        "parentPort.on('message', (m) => {",
        "  if (m.type === 'start') {",
        '    Atomics.store(state, 1, now());',
        '    Atomics.store(state, 2, now());',
        '    Atomics.store(state, 0, 1n);',
        "    parentPort.postMessage({ type: 'leading', value: true });",
        `    setTimeout(() => (renewing = setInterval(() => { Atomics.store(state, 1, now()); Atomics.store(state, 2, now()); }, 50)), ${
          TIMINGS.renewDeadlineMs + 800
        });`,
        '  }',
        "  if (m.type === 'stop') { clearInterval(renewing); parentPort.postMessage({ type: 'stopped' }); }",
        '});',
      ].join('\n'),
    );
    const calls: string[] = [];
    const { logger } = captureLogger('info');
    const elector = createThreadedLeaderElector({
      election: election({ kind: 'flag', path: join(dir, 'unused-kubeconfig') }),
      clock: systemClock,
      logger,
      workerUrl: pathToFileURL(script),
      onStartedLeading: () => calls.push('started'),
      onStoppedLeading: () => calls.push('stopped'),
    });
    try {
      elector.start();
      await until(() => elector.isLeader(), 'the first lead');
      await until(() => calls.includes('stopped'), 'the step-down at the renew deadline');
      expect(elector.isLeader()).toBe(false);
      await until(() => elector.isLeader(), 'leading again after the late renewal');
      expect(calls).toEqual(['started', 'stopped', 'started']);
    } finally {
      await elector.stop(false);
    }
  });
});
