// `run --leader-elect-lease-duration / --leader-elect-renew-deadline / --leader-elect-retry-period`: Go durations,
// checked as client-go checks its LeaderElectionConfig; a bad value or combination is bad input (exit 2) naming the
// flag, and the defaults are the elector's own.
import { describe, expect, it, vi } from 'vitest';
import { buildProgram, main } from '../../src/cli/program.js';
import { leaderElectionTimings, type LeaderElectionFlags } from '../../src/operator/leaderElectionFlags.js';
import { runOperator } from '../../src/operator/run.js';

describe('leader-election flags', () => {
  it.each<[string, LeaderElectionFlags, { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number }]>([
    [
      'none given: the defaults 15s, 10s, 2s',
      {},
      { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    ],
    [
      'a quick handover',
      { leaderElectLeaseDuration: '6s', leaderElectRenewDeadline: '4s', leaderElectRetryPeriod: '1s' },
      { leaseDurationMs: 6_000, renewDeadlineMs: 4_000, retryPeriodMs: 1_000 },
    ],
    [
      'a patient cluster, in minutes and milliseconds',
      { leaderElectLeaseDuration: '1m', leaderElectRenewDeadline: '45s', leaderElectRetryPeriod: '5000ms' },
      { leaseDurationMs: 60_000, renewDeadlineMs: 45_000, retryPeriodMs: 5_000 },
    ],
  ])('%s', (_name, flags, timings) => {
    expect(leaderElectionTimings(flags)).toEqual({ timings });
  });

  it.each<[string, LeaderElectionFlags, string]>([
    ['not a duration', { leaderElectLeaseDuration: 'soon' }, 'invalid --leader-elect-lease-duration "soon"'],
    ['a number without unit', { leaderElectRetryPeriod: '2' }, 'invalid --leader-elect-retry-period "2"'],
    ['zero', { leaderElectRenewDeadline: '0s' }, '--leader-elect-renew-deadline must be longer than 0'],
    ['negative', { leaderElectRetryPeriod: '-1s' }, '--leader-elect-retry-period must be longer than 0'],
    ['a fraction of a second for the Lease', { leaderElectLeaseDuration: '15500ms' }, 'must be whole seconds'],
    [
      'a renew deadline as long as the lease',
      { leaderElectLeaseDuration: '10s' },
      '--leader-elect-renew-deadline (10000 ms) must be shorter than --leader-elect-lease-duration (10000 ms)',
    ],
    [
      'a retry period the jitter pushes past the renew deadline',
      { leaderElectRenewDeadline: '2s', leaderElectRetryPeriod: '2s' },
      'must be longer than 1.2 × --leader-elect-retry-period (2000 ms)',
    ],
  ])('refuses %s', (_name, flags, problem) => {
    const result = leaderElectionTimings(flags);
    expect('problem' in result ? result.problem : '').toContain(problem);
  });

  it('runOperator answers a bad combination as bad input (exit 2), one line naming the flag', async () => {
    const lines: string[] = [];
    const code = await runOperator(
      {
        metricsAddr: '127.0.0.1:0',
        leaderElect: true,
        namespace: 'ns',
        kubeApiQps: 1,
        kubeApiBurst: 1,
        logLevel: 'silent',
        leaderElectLeaseDuration: '4s',
        leaderElectRenewDeadline: '5s',
      },
      { stderr: (s) => void lines.push(s) },
    );
    expect(code).toBe(2);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^error: --leader-elect-renew-deadline .* must be shorter than --leader-elect-lease-duration/,
    );
  });

  it('`run --help` documents the three flags with their defaults; a bad value on the command line exits 2', async () => {
    let out = '';
    const program = buildProgram({ stdout: (s) => (out += s), stderr: (s) => (out += s) });
    await expect(program.parseAsync(['run', '--help'], { from: 'user' })).rejects.toMatchObject({ exitCode: 0 });
    const flat = out.replace(/\s+/g, ' ');
    expect(flat).toMatch(/--leader-elect-lease-duration <duration> .*\(default: "15s"\)/);
    expect(flat).toMatch(/--leader-elect-renew-deadline <duration> .*\(default: "10s"\)/);
    expect(flat).toMatch(/--leader-elect-retry-period <duration> .*\(default: "2s"\)/);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await main(['run', '--leader-elect', '--leader-elect-retry-period', 'often'])).toBe(2);
    } finally {
      stderr.mockRestore();
    }
  });
});
