// `run --once` with a fake operator: exit 0 when every cycle succeeded (suspended policies skipped), 1 with the
// reasons on stderr when one failed, 1 when the caches never synced; the operator is always shut down.
import { describe, expect, it } from 'vitest';
import { onceFailureLine, runOnce } from '../../src/operator/once.js';
import type { OnceResult } from '../../src/operator/operator.js';
import { captureLogger, ManualClock } from './fakes.js';

function fakeOperator(results: OnceResult[], syncs = true) {
  const calls: string[] = [];
  return {
    calls,
    operator: {
      start: () => void calls.push('start'),
      waitForSync: () => (syncs ? Promise.resolve() : new Promise<void>(() => undefined)),
      runAllOnce: () => {
        calls.push('runAllOnce');
        return Promise.resolve(results);
      },
      shutdown: () => {
        calls.push('shutdown');
        return Promise.resolve();
      },
    },
  };
}

async function once(results: OnceResult[], syncs = true) {
  const { operator, calls } = fakeOperator(results, syncs);
  const stderr: string[] = [];
  const clock = new ManualClock();
  const { logger, lines } = captureLogger();
  const code = runOnce({ operator, logger, stderr: (l) => stderr.push(l), clock, syncTimeoutMs: 5_000 });
  await clock.advance(5_000);
  return { code: await code, calls, stderr, lines };
}

describe('run --once', () => {
  it.each([
    ['every cycle succeeded', [{ policy: 'a', failure: undefined }], 0],
    ['a suspended policy is skipped', [{ policy: 'a', failure: undefined, skipped: 'suspended' as const }], 0],
    ['no policy at all', [], 0],
    [
      'one failed',
      [
        { policy: 'a', failure: undefined },
        { policy: 'b', failure: 'invalid spec: spec.mode: bad' },
      ],
      1,
    ],
  ])('%s → exit %i', async (_name, results, expected) => {
    const { code, calls, stderr } = await once(results);
    expect(code).toBe(expected);
    expect(calls).toEqual(['start', 'runAllOnce', 'shutdown']);
    expect(stderr).toEqual(expected === 0 ? [] : [`error: ${onceFailureLine(results)}\n`]);
  });

  it('names every failed policy and its reason in one line', () => {
    expect(
      onceFailureLine([
        { policy: 'a', failure: 'cycle failed: boom' },
        { policy: 'b', failure: undefined },
        { policy: 'c', failure: 'Degraded: replacement x is still Pending' },
      ]),
    ).toBe(
      '2 of 3 policies failed: RebalancePolicy a: cycle failed: boom; RebalancePolicy c: Degraded: replacement x is still Pending',
    );
  });

  it('exits 1 without running a cycle when the caches do not sync in time', async () => {
    const { code, calls, stderr } = await once([{ policy: 'a', failure: undefined }], false);
    expect(code).toBe(1);
    expect(calls).toEqual(['start', 'shutdown']);
    expect(stderr).toEqual(['error: the caches did not sync within 5s; no cycle ran\n']);
  });
});
