// A policy run against a fake Eviction API (fakes over mocks): how each answer is recorded (one metric, one log
// line, one Event, by the same function), retries, leadership checked before every call, dry runs, the uid
// precondition, and pacing: the next eviction of a workload waits for its replacement.
import { ApiException } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics/metrics.js';
import { systemClock } from '../../../src/clock.js';
import type { EventRecorder, EventTarget, EventType } from '../../../src/operator/events.js';
import { PolicyRun } from '../../../src/operator/eviction/executor.js';
import type { EvictionGate, RunDeps, RunPlan } from '../../../src/operator/eviction/runTypes.js';
import { createApiEvictor, type EvictionTarget, type Evictor } from '../../../src/operator/eviction/evictor.js';
import { PdbLedger } from '../../../src/operator/eviction/pdbLedger.js';
import { parsePolicy } from '../../../src/policy/parse.js';
import { makeNode, makePdb, makePod, makePolicy, ZONE } from '../../builders.js';
import { apply, deletePod, newCache } from '../cacheFixtures.js';
import { captureLogger } from '../fakes.js';
import { InFlightEvictions } from '../../../src/operator/eviction/inFlight.js';
import { stoppedBy } from '../../../src/operator/stoppedBy.js';

const maxSkewOf = (p: RunPlan): number => Math.max(0, ...p.plan.topology.map((t) => t.skew));

interface RecordedEvent {
  target: EventTarget;
  type: EventType;
  reason: string;
  message: string;
}

class FakeEvents implements EventRecorder {
  readonly recorded: RecordedEvent[] = [];
  record(target: EventTarget, type: EventType, reason: string, message: string): void {
    this.recorded.push({ target, type, reason, message });
  }
  flush(): Promise<void> {
    return Promise.resolve();
  }
}

/** Answers each call with the next scripted outcome (default: success); keeps every call. */
class FakeEvictor implements Evictor {
  readonly calls: Array<{ target: EvictionTarget; dryRun: boolean }> = [];
  constructor(private readonly script: Error[] = []) {}
  evict(target: EvictionTarget, dryRun: boolean): Promise<void> {
    this.calls.push({ target, dryRun });
    const next = this.script.shift();
    return next === undefined ? Promise.resolve() : Promise.reject(next);
  }
}

function apiError(code: number, message: string, details?: unknown): ApiException<string> {
  const body = JSON.stringify({ kind: 'Status', status: 'Failure', code, message, ...(details ? { details } : {}) });
  return new ApiException(code, 'Unknown API Status Code!', body, {});
}

const spread = { topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } };
const webPod = (name: string, node: string) =>
  makePod(name, 'shop').deployment('web').labels({ app: 'web' }).node(node).spread(spread);

/** Zones a/b/c with one node each; web has 3 pods in zone a and 3 in zone b. */
function cluster(extra: unknown[] = []) {
  return newCache(systemClock, [
    makeNode('n-a').zone('zone-a'),
    makeNode('n-b').zone('zone-b'),
    makeNode('n-c').zone('zone-c'),
    ...['1', '2', '3'].map((i) => webPod(`web-a${i}`, 'n-a')),
    ...['1', '2', '3'].map((i) => webPod(`web-b${i}`, 'n-b')),
    ...(extra as never[]),
  ]);
}

interface SetupOptions {
  spec?: Record<string, unknown>;
  evictor?: FakeEvictor;
  leader?: () => boolean;
  extra?: unknown[];
  /** The cluster in place of cluster()'s. */
  objects?: unknown[];
  onFirstPlan?: (outcome: RunPlan) => void;
  inFlight?: InFlightEvictions;
  gate?: EvictionGate;
}

function setup(opts: SetupOptions = {}) {
  const cache = opts.objects !== undefined ? newCache(systemClock, opts.objects as never[]) : cluster(opts.extra);
  const registry = new Registry();
  const metrics = createMetrics(registry);
  const events = new FakeEvents();
  const evictor = opts.evictor ?? new FakeEvictor();
  const { logger, lines } = captureLogger();
  const policy = parsePolicy(
    makePolicy('p', {
      mode: 'Evict',
      ...opts.spec,
      eviction: {
        minPodAge: '0s',
        waitForReplacement: false,
        maxPerWorkload: 2,
        ...(opts.spec?.['eviction'] ?? {}),
      },
    }),
    { file: 'test' },
  );
  const deps: RunDeps = {
    cache,
    evictor,
    clock: systemClock,
    metrics,
    events,
    ledger: new PdbLedger(),
    inFlight: opts.inFlight ?? new InFlightEvictions(),
    isLeader: opts.leader ?? (() => true),
    retry: { initialMs: 1, maxMs: 2, maxAttempts: 3, maxRetriesPerRun: 10, random: () => 0 },
    minReplanIntervalMs: 1,
  };
  const run = () =>
    new PolicyRun(deps, {
      policy,
      policyTarget: { apiVersion: 'rebalancer.dev/v1alpha1', kind: 'RebalancePolicy', name: 'p' },
      logger,
      signal: new AbortController().signal,
      held: new Map(),
      onLoop: () => undefined,
      ...(opts.onFirstPlan !== undefined ? { onFirstPlan: opts.onFirstPlan } : {}),
      ...(opts.gate !== undefined ? { gate: opts.gate } : {}),
    }).run();
  return { cache, registry, events, evictor, lines, run };
}

async function evictionMetric(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('rebalancer_evictions_total')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels['result']), v.value]));
}

describe('a policy run', () => {
  it('a Failed pod is removed without waiting for its budget (at 0) or for a replacement, one after another', async () => {
    const failed = (name: string) =>
      makePod(name, 'shop').deployment('worker').labels({ app: 'worker' }).node('n-a').phase('Failed').notReady();
    const budget = makePdb('worker', 'shop').selector({ app: 'worker' }).minAvailable(1).allowed(0);
    // The API server deletes a Failed pod at once: the cache sees it go.
    const evictor = new (class extends FakeEvictor {
      override evict(target: EvictionTarget, dryRun: boolean): Promise<void> {
        setTimeout(() => deletePod(cache, target.namespace, target.name), 5);
        return super.evict(target, dryRun);
      }
    })();
    const { cache, registry, events, run } = setup({
      evictor,
      extra: [failed('worker-x1'), failed('worker-x2'), budget],
      spec: {
        strategies: { topologySpread: { enabled: false }, failedPods: { enabled: true } },
        // Pacing on, one pod of a workload in flight: a budget wait or a replacement wait would end in a timeout.
        eviction: { waitForReplacement: true, maxPerWorkload: 1, replacementTimeout: '30s' },
      },
    });
    const started = Date.now();
    const result = await run();
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(evictor.calls.map((c) => c.target.name).sort()).toEqual(['worker-x1', 'worker-x2']);
    expect(result.counts).toMatchObject({ evicted: 2, pdb_blocked: 0 });
    expect(result.degraded).toBeUndefined();
    expect(await evictionMetric(registry)).toEqual({ evicted: 2 });
    expect(events.recorded[0]!.message).toMatch(/^Evicted by RebalancePolicy p \(FailedPods: pod Failed, created /);
  });

  it('evicts the planned pods, each with a uid precondition, and records each outcome once (metric, log, Event)', async () => {
    const { evictor, registry, events, lines, run } = setup();
    const result = await run();
    expect(result.counts.evicted).toBe(2);
    expect(evictor.calls.map((c) => c.dryRun)).toEqual([false, false]);
    expect(evictor.calls.every((c) => c.target.uid === `uid-shop-${c.target.name}`)).toBe(true);
    expect(await evictionMetric(registry)).toEqual({ evicted: 2 });
    const logged = lines.filter((l) => l['result'] === 'evicted');
    expect(logged).toHaveLength(2);
    expect(logged[0]).toMatchObject({
      strategy: 'TopologySpread',
      workload: 'shop/Deployment/web',
      node: expect.stringMatching(/^n-[ab]$/),
    });
    expect(events.recorded.map((e) => [e.target.kind, e.type, e.reason])).toEqual([
      ['Pod', 'Normal', 'RebalanceEviction'],
      ['Pod', 'Normal', 'RebalanceEviction'],
    ]);
    expect(events.recorded[0]!.message).toMatch(
      /^Evicted by RebalancePolicy p \(TopologySpread: topology\.kubernetes\.io\/zone: zone-[ab] has 3, zone-c has 0, maxSkew 1; topology\.kubernetes\.io\/zone skew 3 → 0 planned\)$/,
    );
  });

  it('dry-runs: server-side dry-run calls, result dry_run, nothing debited', async () => {
    const { evictor, registry, events, run } = setup({ spec: { mode: 'DryRun' } });
    const result = await run();
    expect(result.counts.dry_run).toBe(2);
    expect(evictor.calls.every((c) => c.dryRun)).toBe(true);
    expect(await evictionMetric(registry)).toEqual({ dry_run: 2 });
    expect(events.recorded.every((e) => e.reason === 'RebalanceDryRun')).toBe(true);
  });

  it('a budget refusal (429 with a DisruptionBudget cause) is pdb_blocked and the workload backs off for the run', async () => {
    const refusal = apiError(429, "Cannot evict pod as it would violate the pod's disruption budget.", {
      causes: [
        { reason: 'DisruptionBudget', message: 'The disruption budget web needs 6 healthy pods and has 6 currently' },
      ],
    });
    const { evictor, registry, events, run } = setup({ evictor: new FakeEvictor([refusal]) });
    const result = await run();
    expect(evictor.calls).toHaveLength(1);
    expect(result.counts).toMatchObject({ pdb_blocked: 1, evicted: 0 });
    expect(await evictionMetric(registry)).toEqual({ pdb_blocked: 1 });
    expect(events.recorded).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'RebalanceBlocked',
        message: expect.stringContaining('would violate'),
      }),
    ]);
  });

  it.each([
    ['404: the pod is gone', 'not_found', apiError(404, 'pods "x" not found')],
    [
      '409: the uid precondition failed (a new pod took the name)',
      'not_found',
      apiError(409, 'the UID in the precondition does not match'),
    ],
    [
      '500 "more than one PodDisruptionBudget"',
      'skipped',
      apiError(500, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'),
    ],
    ['403: forbidden', 'failed', apiError(403, 'forbidden')],
  ])('%s is recorded as %s, without a retry', async (_name, expected, error) => {
    const { evictor, registry, run } = setup({ evictor: new FakeEvictor([error]) });
    const result = await run();
    expect(evictor.calls).toHaveLength(1);
    expect(result.counts[expected as 'failed']).toBe(1);
    expect(await evictionMetric(registry)).toEqual({ [expected]: 1 });
  });

  it('retries 5xx and network errors with backoff, at most maxAttempts times per eviction', async () => {
    const flaky = setup({ evictor: new FakeEvictor([apiError(503, 'unavailable'), new Error('socket hang up')]) });
    expect((await flaky.run()).counts.evicted).toBe(2);
    expect(flaky.evictor.calls.map((c) => c.target.name)).toHaveLength(4);
    expect(flaky.lines.filter((l) => l.msg === 'eviction failed, retrying')).toHaveLength(2);

    const broken = setup({
      evictor: new FakeEvictor([apiError(500, 'boom'), apiError(500, 'boom'), apiError(500, 'boom')]),
      spec: { eviction: { maxPerWorkload: 1 } },
    });
    const result = await broken.run();
    expect(broken.evictor.calls).toHaveLength(3);
    expect(result.counts.failed).toBe(1);
    expect(broken.events.recorded.map((e) => e.reason)).toEqual(['RebalanceEvictionFailed']);
  });

  it('a closed maintenance-window gate: no eviction is sent, the run halts as window_closed', async () => {
    const closed = new AbortController();
    closed.abort();
    const { evictor, run } = setup({ gate: { closed: () => 'the window ended', signal: closed.signal } });
    const result = await run();
    expect(evictor.calls).toEqual([]);
    expect(result.halted).toBe('window_closed');
  });

  it('the gate is checked immediately before every call: a window ending mid-run stops the next eviction', async () => {
    const evictor = new FakeEvictor();
    const signal = new AbortController().signal;
    const { run } = setup({
      evictor,
      gate: { closed: () => (evictor.calls.length >= 1 ? 'the window ended' : undefined), signal },
    });
    const result = await run();
    expect(evictor.calls).toHaveLength(1);
    expect(result.counts.evicted).toBe(1);
    expect(result.halted).toBe('window_closed');
  });

  it('checks leadership immediately before every call: a lost lease stops the run before the next eviction', async () => {
    let leading = true;
    const evictor = new FakeEvictor();
    const original = evictor.evict.bind(evictor);
    evictor.evict = async (target, dryRun) => {
      await original(target, dryRun);
      leading = false;
    };
    const { run } = setup({ evictor, leader: () => leading });
    const result = await run();
    expect(evictor.calls).toHaveLength(1);
    expect(result.halted).toBe('leadership_lost');
  });

  it('a pod that vanished from the cache since the plan is not_found, without a call', async () => {
    const holder: { cache?: ReturnType<typeof setup>['cache'] } = {};
    const { cache, evictor, registry, run } = setup({
      spec: { eviction: { maxPerWorkload: 1 } },
      onFirstPlan: (outcome) => {
        for (const move of outcome.moves) deletePod(holder.cache!, move.pod.namespace, move.pod.name);
      },
    });
    holder.cache = cache;
    const result = await run();
    expect(result.counts.not_found).toBe(1);
    expect(evictor.calls).toHaveLength(0);
    expect(await evictionMetric(registry)).toEqual({ not_found: 1 });
  });

  it('paces a workload: its next eviction waits until the replacement is Ready, then re-plans', async () => {
    const evictor = new FakeEvictor();
    let version = 0;
    const budget = (allowed: number) => {
      const pdb = makePdb('web', 'shop').selector({ app: 'web' }).maxUnavailable(1).allowed(allowed).obj();
      (pdb['metadata'] as Record<string, unknown>)['resourceVersion'] = String(++version);
      return pdb;
    };
    const { cache, run } = setup({
      evictor,
      spec: { eviction: { waitForReplacement: true, maxPerWorkload: 2, replacementTimeout: '5s' } },
      extra: [budget(1)],
    });
    const original = evictor.evict.bind(evictor);
    const timeline: string[] = [];
    let replacement = 0;
    evictor.evict = async (target, dryRun) => {
      await original(target, dryRun);
      timeline.push(`evict ${target.name}`);
      // The cluster: the pod goes, the budget is spent, then a replacement becomes Ready in zone c and the
      // disruption controller restores the budget.
      deletePod(cache, 'shop', target.name);
      apply(cache, [budget(0)]);
      setTimeout(() => {
        const name = `web-new${++replacement}`;
        timeline.push(`ready ${name}`);
        apply(cache, [webPod(name, 'n-c')]);
        apply(cache, [budget(1)]);
      }, 30);
    };
    const result = await run();
    expect(result.counts.evicted).toBe(2);
    expect(result.plans).toBeGreaterThanOrEqual(3);
    expect(timeline).toEqual([
      expect.stringMatching(/^evict /),
      'ready web-new1',
      expect.stringMatching(/^evict /),
      'ready web-new2',
    ]);
  });
});

describe('a DryRun run reports what an Evict run would do', () => {
  /** The paced Evict run of the test above: the cluster answers each eviction with a Ready replacement in zone c. */
  async function evictRun(eviction: Record<string, unknown>) {
    const evictor = new FakeEvictor();
    const { cache, run } = setup({ evictor, spec: { eviction: { waitForReplacement: true, ...eviction } } });
    const original = evictor.evict.bind(evictor);
    let replacement = 0;
    evictor.evict = async (target, dryRun) => {
      await original(target, dryRun);
      deletePod(cache, 'shop', target.name);
      setTimeout(() => apply(cache, [webPod(`web-new${++replacement}`, 'n-c')]), 10);
    };
    return { result: await run(), evicted: evictor.calls.map((c) => c.target.name) };
  }

  async function dryRun(eviction: Record<string, unknown>) {
    const evictor = new FakeEvictor();
    const { run } = setup({ evictor, spec: { mode: 'DryRun', eviction: { waitForReplacement: true, ...eviction } } });
    const result = await run();
    return { result, calls: evictor.calls };
  }

  it.each([
    { name: 'maxPerWorkload 1: Evict goes on as replacements become Ready', eviction: { maxPerWorkload: 1 } },
    { name: 'maxPerCycle 1 stops both after one', eviction: { maxPerWorkload: 1, maxPerCycle: 1 } },
    { name: 'maxPerNode 1 with the defaults', eviction: { maxPerWorkload: 1, maxPerNode: 1 } },
  ])('$name: dry_run equals evicted, the same pods in the same order', async ({ eviction }) => {
    const evict = await evictRun(eviction);
    const dry = await dryRun(eviction);
    expect(dry.result.counts.dry_run).toBe(evict.result.counts.evicted);
    expect(dry.calls.every((c) => c.dryRun)).toBe(true);
    expect(dry.calls.map((c) => c.target.name)).toEqual(evict.evicted);
    // The projected cluster ends where Evict left the real one.
    expect(maxSkewOf(dry.result.lastPlan)).toBe(maxSkewOf(evict.result.lastPlan));
  });

  describe('9/0/0 over two nodes of zone a with maxPerNode 1 (the README scenario): one eviction per node, two', () => {
    const apiSpread = { topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'api' } } };
    const apiPod = (name: string, node: string) =>
      makePod(name, 'payments').deployment('api').labels({ app: 'api' }).node(node).spread(apiSpread);
    const layout = (onA1: number) => [
      makeNode('a1').zone('zone-a'),
      makeNode('a2').zone('zone-a'),
      makeNode('b1').zone('zone-b'),
      makeNode('c1').zone('zone-c'),
      ...Array.from({ length: 9 }, (_, i) => apiPod(`api-${i}`, i < onA1 ? 'a1' : 'a2')),
    ];
    const eviction = { waitForReplacement: true, maxPerWorkload: 1, maxPerNode: 1, maxPerNamespace: 3 };

    // Which node holds five decides whether the first step's node is the one a re-plan that ignored the run's counts
    // would pick again: the scheduler's first placement differs by version (1.35: 5/4, 1.37: 4/5).
    it.each([
      { name: '5 on a1, 4 on a2', onA1: 5 },
      { name: '4 on a1, 5 on a2', onA1: 4 },
    ])('$name: DryRun dry-runs two, from both nodes, and Evict evicts the same two', async ({ onA1 }) => {
      const dry = setup({ objects: layout(onA1), spec: { mode: 'DryRun', eviction } });
      const dryResult = await dry.run();
      const evictor = new FakeEvictor();
      const real = setup({ objects: layout(onA1), evictor, spec: { eviction } });
      const original = evictor.evict.bind(evictor);
      let replacement = 0;
      // Each replacement becomes Ready in the emptier of zones b and c, where the plan predicts it.
      evictor.evict = async (target, dryRun) => {
        await original(target, dryRun);
        deletePod(real.cache, 'payments', target.name);
        const node = replacement % 2 === 0 ? 'b1' : 'c1';
        setTimeout(() => apply(real.cache, [apiPod(`api-new${++replacement}`, node)]), 10);
      };
      const evictResult = await real.run();
      const fromNodes = (calls: FakeEvictor['calls'], nodeOf: (name: string) => string) =>
        calls.map((c) => nodeOf(c.target.name)).sort();
      const nodeOf = (name: string) => (Number(name.slice('api-'.length)) < onA1 ? 'a1' : 'a2');
      expect(dryResult.counts.dry_run).toBe(2);
      expect(fromNodes(dry.evictor.calls, nodeOf)).toEqual(['a1', 'a2']);
      expect(evictResult.counts.evicted).toBe(dryResult.counts.dry_run);
      expect(evictor.calls.map((c) => c.target.name)).toEqual(dry.evictor.calls.map((c) => c.target.name));
      expect(
        stoppedBy({
          halted: dryResult.halted,
          degraded: undefined,
          limitReached: dryResult.limitReached,
          lastPlan: dryResult.lastPlan,
        }),
      ).toMatch(/^maxPerNode 1 reached on node a[12]$/);
    });
  });

  it('3/3/0 with maxPerWorkload 1: two dry runs (one step per plan, as a paced lane), not one', async () => {
    const dry = await dryRun({ maxPerWorkload: 1 });
    expect(dry.result.counts.dry_run).toBe(2);
    expect(dry.result.plans).toBeGreaterThanOrEqual(2);
  });
});

describe('what stopped a run with work left', () => {
  it('maxPerCycle: named with its value, not the value the last re-plan was given', async () => {
    const { run } = setup({ spec: { eviction: { waitForReplacement: false, maxPerCycle: 1, maxPerWorkload: 5 } } });
    const r = await run();
    expect(r.counts.evicted).toBe(1);
    expect(
      stoppedBy({ halted: r.halted, degraded: undefined, limitReached: r.limitReached, lastPlan: r.lastPlan }),
    ).toBe('maxPerCycle 1 reached');
  });

  it('a run that finished its plan names nothing', async () => {
    const { run } = setup({ spec: { eviction: { waitForReplacement: false, maxPerWorkload: 5 } } });
    const r = await run();
    expect(r.counts.evicted).toBe(2);
    expect(r.limitReached).toBeUndefined();
  });
});

describe('createApiEvictor', () => {
  it('sends a policy/v1 Eviction with the uid precondition, and dryRun=All in query and body for a dry run', async () => {
    const sent: unknown[] = [];
    const evictor = createApiEvictor({
      createNamespacedPodEviction: (param: unknown) => {
        sent.push(param);
        return Promise.resolve({});
      },
    });
    await evictor.evict({ namespace: 'shop', name: 'web-1', uid: 'u-1' }, false);
    await evictor.evict({ namespace: 'shop', name: 'web-1', uid: 'u-1' }, true);
    expect(sent).toEqual([
      {
        name: 'web-1',
        namespace: 'shop',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'web-1', namespace: 'shop' },
          deleteOptions: { preconditions: { uid: 'u-1' } },
        },
      },
      {
        name: 'web-1',
        namespace: 'shop',
        dryRun: 'All',
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name: 'web-1', namespace: 'shop' },
          deleteOptions: { preconditions: { uid: 'u-1' }, dryRun: ['All'] },
        },
      },
    ]);
  });
});
