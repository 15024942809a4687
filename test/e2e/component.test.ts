// `run` behaves like a Kubernetes component: it logs the API server and its identity at start, bad flags and bad
// credentials are exit 2 with one `error:` line on stderr (nothing on stdout), no credentials at all is exit 2 rather
// than retrying localhost:8080, and "ready" is never logged after "stopped".
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { main } from '../../src/cli/program.js';
import { runOperator } from '../../src/operator/run.js';
import { startCluster, waitFor } from './harness.js';

const dir = mkdtempSync(join(tmpdir(), 'kr-component-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let server: TestApiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Runs the command line with stdout watched too: bad input must not print a log line there. */
async function runCli(
  argv: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number; err: string; stdout: string }> {
  let err = '';
  let stdout = '';
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) {
    saved[k] = process.env[k];
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  try {
    const code = await main(argv, { stdout: (s) => (stdout += s), stderr: (s) => (err += s) });
    return { code, err, stdout };
  } finally {
    spy.mockRestore();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

describe('kube-rebalancer run at start', () => {
  const garbage = join(dir, 'garbage-kubeconfig');
  writeFileSync(garbage, ': this is not [a kubeconfig\n');
  const emptyHome = mkdtempSync(join(dir, 'home-'));
  const noCredentials = { HOME: emptyHome, KUBECONFIG: undefined, KUBERNETES_SERVICE_HOST: undefined };

  it.each([
    ['an unknown flag', ['run', '--kube-api-qsp', '5'], {}, /^error: unknown option '--kube-api-qsp'/],
    [
      'a bad --kube-api-qps',
      ['run', '--kube-api-qps', '0'],
      {},
      /^error: option '--kube-api-qps <n>' argument '0' is invalid/,
    ],
    ['a bad --log-level', ['run', '--log-level', 'loud'], {}, /^error: invalid --log-level "loud"/],
    ['a bad --metrics-addr', ['run', '--metrics-addr', 'nonsense'], {}, /^error: .*nonsense/],
    [
      'a missing kubeconfig',
      ['run', '--kubeconfig', '/nonexistent/kubeconfig'],
      {},
      /^error: cannot load Kubernetes credentials from \/nonexistent\/kubeconfig/,
    ],
    [
      'a kubeconfig that is not one',
      ['run', '--kubeconfig', garbage],
      {},
      /^error: cannot load Kubernetes credentials from .*garbage-kubeconfig/,
    ],
    [
      'no kubeconfig and not in a pod',
      ['run'],
      noCredentials,
      /^error: no Kubernetes credentials: no --kubeconfig, \$KUBECONFIG is not set/,
    ],
  ])('%s: exit 2, one error line on stderr, nothing on stdout', async (_name, argv, env, message) => {
    const r = await runCli(argv, env);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    // One paragraph: the error, and for a mistyped flag commander's "(Did you mean …?)".
    expect(r.err.trimEnd().split('\n').length).toBeLessThanOrEqual(2);
    expect(r.err.split('\n')[1] ?? '').toMatch(/^(\(Did you mean .*\?\))?$/);
    expect(r.stdout).toBe('');
  });
});

describe('kube-rebalancer run while running', () => {
  interface Line {
    msg: string;
    [key: string]: unknown;
  }

  async function start(s: TestApiServer): Promise<{ lines: Line[]; exit: Promise<number> }> {
    const kubeconfig = join(dir, `kubeconfig-${s.port}`);
    writeFileSync(kubeconfig, s.kubeConfig().exportConfig());
    const lines: Line[] = [];
    const log = { write: (line: string) => void lines.push(JSON.parse(line) as Line) };
    process.env['POD_NAME'] = 'rebalancer-7';
    try {
      const exit = runOperator(
        {
          kubeconfig,
          metricsAddr: '127.0.0.1:0',
          metricsSecure: false,
          healthAddr: '127.0.0.1:0',
          leaderElect: false,
          namespace: 'kube-rebalancer',
          kubeApiQps: 50,
          kubeApiBurst: 100,
        },
        { stderr: () => undefined, log },
      );
      return { lines, exit };
    } finally {
      delete process.env['POD_NAME'];
    }
  }

  it('logs the API server URL and its identity first, and ready before stopped', async () => {
    const s = (server = await startCluster());
    const { lines, exit } = await start(s);
    try {
      await waitFor(() => lines.some((l) => l.msg.includes('ready')), 10_000, 'ready');
    } finally {
      process.emit('SIGTERM');
    }
    expect(await exit).toBe(0);
    expect(lines[0]).toMatchObject({ msg: 'connecting to the API server', server: s.url, identity: 'rebalancer-7' });
    const ready = lines.findIndex((l) => l.msg.includes('ready'));
    const stopped = lines.findIndex((l) => l.msg === 'stopped');
    expect(ready).toBeGreaterThan(0);
    expect(stopped).toBeGreaterThan(ready);
  });

  it('logs the address it bound, not the flag: port 0 is logged as the port the OS gave', async () => {
    const s = (server = await startCluster());
    const { lines, exit } = await start(s);
    try {
      const serving = await waitFor(
        () => lines.find((l) => l.msg.startsWith('serving /healthz and /readyz and /metrics')),
        10_000,
        'the serving line',
      );
      expect(serving.address).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
      expect((await fetch(`http://${String(serving.address)}/healthz`)).status).toBe(200);
    } finally {
      process.emit('SIGTERM');
    }
    expect(await exit).toBe(0);
  });

  it('never logs ready after stopped when stopped before the caches synced', async () => {
    const s = (server = await startCluster());
    // Lists of pods hang for a while, so the caches cannot sync before the signal.
    s.faults.delay({ verb: 'list', resource: 'pods', ms: 1500, count: 100 });
    const { lines, exit } = await start(s);
    // Signals are handled once it serves /healthz.
    await waitFor(() => lines.some((l) => l.msg.startsWith('serving /healthz')), 5000, 'the start');
    process.emit('SIGTERM');
    expect(await exit).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const stopped = lines.findIndex((l) => l.msg === 'stopped');
    expect(stopped).toBeGreaterThan(0);
    expect(lines.slice(stopped).filter((l) => l.msg.includes('ready'))).toEqual([]);
  });
});
