// The entry point, `runOperator` (what `kube-rebalancer run` calls): it reads a kubeconfig file, serves
// /healthz, /readyz and /metrics on --metrics-addr, elects itself leader, and on SIGTERM releases the Lease and
// resolves to exit code 0. Bad flag values are bad input (exit 2).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import { buildProgram, main } from '../../src/cli/program.js';
import { runOperator } from '../../src/operator/run.js';
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

describe('runOperator', () => {
  it('serves health and metrics, leads, and on SIGTERM releases the lease and exits 0', async () => {
    const s = (server = await startCluster());
    s.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-rebalancer' } });
    const dir = mkdtempSync(join(tmpdir(), 'kube-rebalancer-'));
    tempDirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, s.kubeConfig().exportConfig());
    const port = await freePort();
    process.env['POD_NAME'] = 'rebalancer-0';
    const exit = runOperator({
      kubeconfig,
      metricsAddr: `127.0.0.1:${port}`,
      leaderElect: true,
      namespace: 'kube-rebalancer',
      kubeApiQps: 50,
      kubeApiBurst: 100,
      logLevel: 'silent',
    });
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        10_000,
        'ready',
      );
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      await waitFor(() => lease(s)?.holderIdentity === 'rebalancer-0', 10_000, 'the lease');
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^rebalancer_leader 1$/m);
      expect(metrics).toMatch(/^process_cpu_user_seconds_total /m);
    } finally {
      delete process.env['POD_NAME'];
      process.emit('SIGTERM');
    }
    expect(await exit).toBe(0);
    expect(lease(s)?.holderIdentity ?? '').toBe('');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('rejects bad flag values and unreadable kubeconfig files as bad input (exit 2)', async () => {
    const base = { metricsAddr: '127.0.0.1:0', leaderElect: false, namespace: 'ns', logLevel: 'silent' };
    expect(await runOperator({ ...base, kubeApiQps: 0, kubeApiBurst: 1 })).toBe(2);
    expect(await runOperator({ ...base, kubeApiQps: 1, kubeApiBurst: 0.5 })).toBe(2);
    expect(await runOperator({ ...base, metricsAddr: 'nonsense', kubeApiQps: 1, kubeApiBurst: 1 })).toBe(2);
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
      '--leader-elect',
      '--namespace',
      '--kube-api-qps',
      '--kube-api-burst',
      '--log-level',
    ]) {
      expect(out).toContain(flag);
    }
    expect(out).toContain('(default: ":8080")');
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
