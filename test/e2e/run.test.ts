// The entry point, `runOperator` (what `kube-rebalancer run` calls): it reads a kubeconfig file, serves /healthz
// and /readyz on plain HTTP at --health-addr and /metrics over HTTPS at --metrics-addr behind TokenReview and
// SubjectAccessReview (the test API server answers both: its own token is `test-user`, allowed), or plain with
// --metrics-secure=false, elects itself leader, and on SIGTERM releases the Lease and resolves to exit code 0.
// Bad flag values are bad input (exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { buildProgram, main } from '../../src/cli/program.js';
import { runOperator } from '../../src/operator/run.js';
import { getText } from '../integration/operatorProcess.js';
import { startCluster, waitFor } from './harness.js';

let server: TestApiServer | undefined;
const tempDirs: string[] = [];

afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

function lease(s: TestApiServer): { holderIdentity?: string } | undefined {
  return s.store.get('leases', 'kube-rebalancer', 'kube-rebalancer')?.['spec'] as
    { holderIdentity?: string } | undefined;
}

/** A test API server, a kubeconfig file for it, and two free ports (metrics, health). */
async function cluster(): Promise<{ s: TestApiServer; kubeconfig: string; port: number; healthPort: number }> {
  const s = (server = await startCluster());
  const dir = mkdtempSync(join(tmpdir(), 'kube-rebalancer-'));
  tempDirs.push(dir);
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, s.kubeConfig().exportConfig());
  return { s, kubeconfig, port: await freePort(), healthPort: await freePort() };
}

describe('runOperator', () => {
  it('serves health on http and metrics on https behind authentication, leads, and on SIGTERM releases the lease and exits 0', async () => {
    const { s, kubeconfig, port, healthPort } = await cluster();
    s.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-rebalancer' } });
    process.env['POD_NAME'] = 'rebalancer-0';
    const exit = runOperator({
      kubeconfig,
      metricsAddr: `127.0.0.1:${port}`,
      healthAddr: `127.0.0.1:${healthPort}`,
      leaderElect: true,
      namespace: 'kube-rebalancer',
      kubeApiQps: 50,
      kubeApiBurst: 100,
      logLevel: 'silent',
    });
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`).catch(() => undefined))?.status === 200,
        10_000,
        'ready',
      );
      expect((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);
      // The probes' port serves no metrics; the metrics port speaks TLS only.
      expect((await fetch(`http://127.0.0.1:${healthPort}/metrics`)).status).toBe(404);
      await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
      await waitFor(() => lease(s)?.holderIdentity === 'rebalancer-0', 10_000, 'the lease');
      expect((await getText(true, port, '/metrics')).status).toBe(401);
      expect((await getText(true, port, '/metrics', 'not-the-token')).status).toBe(401);
      const mark = s.stats.mark();
      const scraped = await getText(true, port, '/metrics', 'test-token');
      expect(scraped.status).toBe(200);
      expect(scraped.text).toMatch(/^rebalancer_leader 1$/m);
      expect(scraped.text).toMatch(/^process_cpu_user_seconds_total /m);
      // One review of each kind, then the cached decision.
      expect((await getText(true, port, '/metrics', 'test-token')).status).toBe(200);
      expect(s.stats.count({ resource: 'tokenreviews' }, mark)).toBe(1);
      expect(s.stats.count({ resource: 'subjectaccessreviews' }, mark)).toBe(1);
    } finally {
      delete process.env['POD_NAME'];
      process.emit('SIGTERM');
    }
    expect(await exit).toBe(0);
    expect(lease(s)?.holderIdentity ?? '').toBe('');
    await expect(fetch(`http://127.0.0.1:${healthPort}/healthz`)).rejects.toThrow();
  });

  it('--metrics-secure=false serves /metrics on plain HTTP without authentication', async () => {
    const { s, kubeconfig, port, healthPort } = await cluster();
    const exit = main([
      'run',
      `--kubeconfig=${kubeconfig}`,
      `--metrics-addr=127.0.0.1:${port}`,
      '--metrics-secure=false',
      `--health-addr=127.0.0.1:${healthPort}`,
      '--log-level=silent',
    ]);
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined))?.status === 200,
        10_000,
        'plain metrics',
      );
      expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/^rebalancer_leader 1$/m);
      expect((await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status).toBe(200);
      expect(s.stats.count({ resource: 'tokenreviews' })).toBe(0);
    } finally {
      process.emit('SIGTERM');
    }
    expect(await exit).toBe(0);
  });

  it('rejects bad flag values and unreadable kubeconfig files as bad input (exit 2)', async () => {
    const base = { metricsAddr: '127.0.0.1:0', leaderElect: false, namespace: 'ns', logLevel: 'silent' };
    expect(await runOperator({ ...base, kubeApiQps: 0, kubeApiBurst: 1 })).toBe(2);
    expect(await runOperator({ ...base, kubeApiQps: 1, kubeApiBurst: 0.5 })).toBe(2);
    expect(await runOperator({ ...base, metricsAddr: 'nonsense', kubeApiQps: 1, kubeApiBurst: 1 })).toBe(2);
    expect(await runOperator({ ...base, healthAddr: 'nonsense', kubeApiQps: 1, kubeApiBurst: 1 })).toBe(2);
    const certDir = mkdtempSync(join(tmpdir(), 'kube-rebalancer-'));
    tempDirs.push(certDir);
    const errors: string[] = [];
    const io = { stderr: (line: string) => void errors.push(line) };
    expect(await runOperator({ ...base, metricsCertDir: certDir, kubeApiQps: 1, kubeApiBurst: 1 }, io)).toBe(2);
    expect(errors.join('')).toContain(join(certDir, 'tls.crt'));
    expect(await runOperator({ ...base, kubeconfig: '/nonexistent/kubeconfig', kubeApiQps: 1, kubeApiBurst: 1 })).toBe(
      2,
    );
  });
});

describe('kube-rebalancer run (command line)', () => {
  it('documents its flags and defaults', async () => {
    let out = '';
    const program = buildProgram({ stdout: (s) => (out += s), stderr: (s) => (out += s) });
    await expect(program.parseAsync(['run', '--help'], { from: 'user' })).rejects.toMatchObject({ exitCode: 0 });
    for (const flag of [
      '--kubeconfig',
      '--metrics-addr',
      '--metrics-secure',
      '--metrics-cert-dir',
      '--health-addr',
      '--leader-elect',
      '--namespace',
      '--kube-api-qps',
      '--kube-api-burst',
      '--log-level',
    ]) {
      expect(out).toContain(flag);
    }
    expect(out).toContain('(default: ":8443")');
    expect(out).toContain('(default: ":8081")');
    expect(out).toContain('(default: 20)');
    expect(out).toContain('(default: 40)');
  });

  it('treats an invalid --kube-api-qps or --kube-api-burst as bad input (exit 2)', async () => {
    let err = '';
    const program = buildProgram({ stdout: () => undefined, stderr: (s) => (err += s) });
    await expect(program.parseAsync(['run', '--kube-api-qps', '0'], { from: 'user' })).rejects.toThrow();
    expect(err).toContain('must be a number > 0');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['run', '--kube-api-qps', '-1'])).toBe(2);
      expect(await main(['run', '--kube-api-burst', 'many'])).toBe(2);
    } finally {
      stderr.mockRestore();
    }
  });
});
