// Reports a user can act on (DESIGN.md): a scope that selects nothing says so, the STATUS column shows OutsideWindow,
// a missing CRD ends `run --once` at once naming it, every policy runs a cycle at start once per leadership term,
// and a cycle that stops with work left names what stopped it.
import { describe, expect, it } from 'vitest';
import { POLICY_CRD } from '../../src/operator/crdPresence.js';
import { CrdPresence } from '../../src/operator/crdPresence.js';
import { createFirstCycles } from '../../src/operator/firstCycles.js';
import { runOnce } from '../../src/operator/once.js';
import { scopeProblem } from '../../src/operator/scopeCheck.js';
import { buildStatus, type StatusInput } from '../../src/operator/status.js';
import { limitText, nextTick } from '../../src/operator/stoppedBy.js';
import { textLine } from '../../src/operator/textLog.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { makePolicy } from '../builders.js';
import { captureLogger, ManualClock } from './fakes.js';

const policy = (spec: Record<string, unknown>) => parsePolicy(makePolicy('p', spec), { file: 'p' });
const pods = [
  { namespace: 'shop', labels: { app: 'web' } },
  { namespace: 'kube-system', labels: { app: 'dns' } },
];

describe('a scope that selects nothing', () => {
  it.each<{ name: string; spec: Record<string, unknown>; want: string | undefined }>([
    { name: 'the default scope with pods', spec: {}, want: undefined },
    {
      name: 'an included namespace that does not exist',
      spec: { namespaces: { include: ['shop', 'shpo'] } },
      want: 'the scope selects nothing: spec.namespaces.include names a namespace that does not exist: shpo',
    },
    {
      name: 'only namespaces that do not exist',
      spec: { namespaces: { include: ['shpo'] } },
      want:
        'the scope selects nothing: spec.namespaces.include names a namespace that does not exist: shpo; ' +
        "the policy's namespaces hold no pod",
    },
    {
      name: 'a selector matching no pod',
      spec: { podSelector: { matchLabels: { app: 'api' } } },
      want: "the scope selects nothing: spec.podSelector (app=api) matches no pod in the policy's namespaces",
    },
    {
      name: 'a pod only in an excluded namespace',
      spec: { podSelector: { matchLabels: { app: 'dns' } } },
      want: "the scope selects nothing: spec.podSelector (app=dns) matches no pod in the policy's namespaces",
    },
  ])('$name', ({ spec, want }) => {
    expect(scopeProblem(policy(spec), { namespaces: new Set(['shop', 'kube-system']), pods })).toBe(want);
  });
});

describe('the Ready condition', () => {
  const input = (over: Partial<StatusInput>): StatusInput => ({
    generation: 1,
    now: Date.parse('2026-01-01T00:00:00Z'),
    previous: [],
    invalid: undefined,
    suspended: false,
    schedule: '*/5 * * * *',
    mode: 'Evict',
    degraded: undefined,
    lastRunTime: undefined,
    lastSuccessfulRunTime: undefined,
    lastPlan: undefined,
    totals: { evicted: 0, failed: 0 },
    ...over,
  });
  const ready = (over: Partial<StatusInput>) => buildStatus(input(over)).conditions.find((c) => c.type === 'Ready')!;

  it('reads OutsideWindow (still True) outside every window, for the STATUS column', () => {
    const outside = { status: true, reason: 'OutsideWindow', message: 'next window opens at 22:00' };
    expect(ready({ outsideWindow: outside })).toMatchObject({ status: 'True', reason: 'OutsideWindow' });
    expect(ready({ outsideWindow: { ...outside, status: false } })).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(ready({ outsideWindow: outside, degraded: { reason: 'X', message: 'm' } }).reason).toBe('Degraded');
  });

  it('carries the scope problem in its message', () => {
    expect(ready({ scope: 'the scope selects nothing: x' }).message).toContain('the scope selects nothing: x');
  });
});

describe('a missing CRD', () => {
  it('ends run --once at the first 404 with one stderr line naming the CRD, before any sync timeout', async () => {
    const { logger } = captureLogger();
    const crd = new CrdPresence(logger);
    const list = crd.watchList(() => Promise.reject(Object.assign(new Error('not found'), { code: 404 })));
    const stderr: string[] = [];
    const calls: string[] = [];
    const clock = new ManualClock();
    const code = runOnce({
      operator: {
        start: () => void list().catch(() => calls.push('404')),
        waitForSync: () => new Promise<void>(() => undefined),
        crdMissing: () => crd.whenMissing(),
        runAllOnce: () => Promise.reject(new Error('must not run')),
        shutdown: () => Promise.resolve(void calls.push('shutdown')),
      },
      logger,
      stderr: (l) => stderr.push(l),
      clock,
      syncTimeoutMs: 120_000,
    });
    expect(await code).toBe(1);
    expect(stderr).toHaveLength(1);
    expect(stderr[0]).toContain(POLICY_CRD);
    expect(calls).toEqual(['404', 'shutdown']);
  });

  it('is missing while lists answer 404 and present again once one answers', async () => {
    const { logger, lines } = captureLogger();
    const crd = new CrdPresence(logger);
    let installed = false;
    const list = crd.watchList(() =>
      installed ? Promise.resolve({ items: [] }) : Promise.reject(Object.assign(new Error('nf'), { code: 404 })),
    );
    await list().catch(() => undefined);
    await list().catch(() => undefined);
    expect(crd.problem()).toContain(POLICY_CRD);
    // One line per transition, not one per retry.
    expect(lines.filter((l) => l['crd'] === POLICY_CRD)).toHaveLength(1);
    installed = true;
    await list();
    expect(crd.problem()).toBeUndefined();
    expect(lines.filter((l) => l['crd'] === POLICY_CRD)).toHaveLength(2);
  });
});

describe('the first cycle at start', () => {
  it('runs once per leadership term, whichever of sync and Lease comes first, and only while leading', async () => {
    let synced!: () => void;
    const sync = new Promise<void>((resolve) => (synced = resolve));
    let leader = false;
    const started: string[] = [];
    const { logger } = captureLogger();
    const first = createFirstCycles({
      waitForSync: () => sync,
      isLeader: () => leader,
      policies: () => ['a', 'b'],
      start: (name) => started.push(name),
      logger,
    });
    const fromStart = first.started();
    leader = true;
    const fromLease = first.startedLeading();
    synced();
    await Promise.all([fromStart, fromLease]);
    expect(started).toEqual(['a', 'b']);
    // A new term (the Lease lost and won again): again.
    await first.startedLeading();
    expect(started).toEqual(['a', 'b', 'a', 'b']);
    // Not leading: nothing.
    leader = false;
    await first.startedLeading();
    expect(started).toHaveLength(4);
  });
});

describe('stoppedBy texts', () => {
  it.each([
    ['limit maxPerNode (2) reached on node node-a in this run', 'maxPerNode 2 reached on node node-a'],
    ['limit maxPerCycle (10) reached', 'maxPerCycle 10 reached'],
    ['limit maxPerNamespace (5) reached in namespace shop', 'maxPerNamespace 5 reached in namespace shop'],
    ['PodDisruptionBudget shop/web allows 0 disruptions', 'PodDisruptionBudget shop/web allows 0 disruptions'],
  ])('%s → %s', (reason, text) => {
    expect(limitText(reason)).toBe(text);
  });

  it('the next cycle is the schedule’s next tick', () => {
    expect(nextTick('*/10 * * * *', Date.parse('2026-01-01T10:03:00Z'), 'UTC')).toBe(
      Date.parse('2026-01-01T10:10:00Z'),
    );
  });
});

describe('--log-format text', () => {
  it('writes a record as a readable time, the level, the message and its fields', () => {
    const json = JSON.stringify({
      level: 40,
      time: Date.parse('2026-11-27T15:20:01.123Z'),
      name: 'kube-rebalancer',
      policy: 'zone-balance',
      stoppedBy: 'maxPerNode 2 reached on node node-a',
      evicted: 4,
      msg: 'cycle finished',
    });
    expect(textLine(json)).toBe(
      '2026-11-27T15:20:01.123Z WARN  cycle finished policy=zone-balance stoppedBy="maxPerNode 2 reached on node node-a" evicted=4\n',
    );
  });

  it('passes a line that is not JSON through as it is', () => {
    expect(textLine('plain')).toBe('plain\n');
  });
});
