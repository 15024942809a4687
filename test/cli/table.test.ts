// `-o table` and `-o wide` at scale: skips grouped by reason with counts and examples, DOMAINS cut to the fullest and
// emptiest few, the mode in the header, a legend for `!`, and simulate's summary in words that agree in number.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domainsText, planTable, simulationTable } from '../../src/cli/table.js';
import { createProgress } from '../../src/cli/progress.js';
import type { SimulationResult } from '../../src/planner/simulate.js';
import { countSkipReasons, MAX_REASON_LENGTH, skipReasonClass } from '../../src/planner/skipReasons.js';
import type { RebalancePlan, SkippedPod, TopologyReport } from '../../src/model/plan.js';

function plan(parts: Partial<RebalancePlan> = {}): RebalancePlan {
  const skipped = parts.skipped ?? [];
  const evictions = parts.evictions ?? [];
  return {
    apiVersion: 'rebalancer.dev/v1alpha1',
    kind: 'RebalancePlan',
    policy: 'p',
    evictions,
    skipped,
    topology: parts.topology ?? [],
    violations: [],
    summary: { nodes: 3, pods: 9, violations: 0, evictions: evictions.length, skipped: skipped.length },
  };
}

const skip = (name: string, reason: string): SkippedPod => ({
  namespace: 'shop',
  name,
  strategy: 'TopologySpread',
  reason,
});

function spread(domains: Record<string, number>, skew: number): TopologyReport {
  return {
    namespace: 'shop',
    selector: 'app=web',
    topologyKey: 'topology.kubernetes.io/zone',
    whenUnsatisfiable: 'DoNotSchedule',
    maxSkew: 1,
    domains,
    skew,
    skewAfter: 1,
    workloads: ['Deployment/web'],
  };
}

describe('skip reason classes', () => {
  it.each([
    ['PodDisruptionBudget shop/web allows 0 disruptions', 'PodDisruptionBudget allows 0 disruptions'],
    ['pod is 2m old, younger than minPodAge 5m', 'pod is younger than minPodAge'],
    ['limit maxPerNode (2) reached on node n1; left for the next cycle', 'limit maxPerNode reached'],
    ['priority 100 is at or above the threshold 50', 'priority is at or above the threshold'],
    ['pod is Pending, not Running', 'pod is not Running'],
    ['protected by annotation rebalancer.dev/evict=never', 'protected by annotation'],
    ['no node can take a replacement (3 nodes: cordoned)', 'no node can take a replacement'],
    ['pod uses local storage (emptyDir/hostPath; set evictLocalStoragePods)', 'pod uses local storage'],
    ['DaemonSet pod', 'DaemonSet pod'],
    [
      'PodDisruptionBudget shop/web: budget used by this plan (1 of 1)',
      'PodDisruptionBudget: budget used by this plan',
    ],
    [
      'its volume shop/data-db-0 (PersistentVolume pv-1) is reachable only from nodes with topology.kubernetes.io/zone in (zone-a); no node there helps',
      'its volume is reachable only from other nodes',
    ],
    [
      'evicting it would not lower the skew of topology.kubernetes.io/zone spread (Deployment/web) by itself, and …',
      'evicting it would not lower the skew by itself',
    ],
    [
      'evicting it alone would not clear the anti-affinity of shop/a (shop/b cannot move)',
      'evicting it alone would not clear the anti-affinity',
    ],
    ['some new wording: with details', 'some new wording'],
  ])('%s → %s', (reason, cls) => {
    expect(skipReasonClass(reason)).toBe(cls);
  });

  it('never gives a class longer than the CRD allows', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 600 }), (reason) => {
        expect(skipReasonClass(reason).length).toBeLessThanOrEqual(MAX_REASON_LENGTH);
      }),
    );
  });

  it('counts by class, most frequent first, at most 10', () => {
    const reasons = [
      'PodDisruptionBudget a/x allows 0 disruptions',
      'PodDisruptionBudget a/y allows 0 disruptions',
      'pod is 1m old, younger than minPodAge 5m',
      ...Array.from({ length: 12 }, (_, i) => `reason ${String.fromCharCode(97 + i)}`),
    ];
    const counts = countSkipReasons(reasons);
    expect(counts).toHaveLength(10);
    expect(counts[0]).toEqual({ reason: 'PodDisruptionBudget allows 0 disruptions', count: 2 });
    expect(counts[1]).toEqual({ reason: 'pod is younger than minPodAge', count: 1 });
  });
});

describe('DOMAINS', () => {
  const many = Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`zone-${String(i).padStart(2, '0')}`, i % 7]));
  it.each([
    [
      'a few domains: all, fullest first',
      { 'zone-c': 1, 'zone-a': 6, 'zone-b': 2 },
      false,
      'zone-a=6 zone-b=2 zone-c=1',
    ],
    [
      'seven domains: all',
      Object.fromEntries([1, 2, 3, 4, 5, 6, 7].map((i) => [`z${i}`, i])),
      false,
      'z7=7 z6=6 z5=5 z4=4 z3=3 z2=2 z1=1',
    ],
  ])('%s', (_name, domains, wide, text) => {
    expect(domainsText(domains, wide)).toBe(text);
  });

  it('many domains: the three fullest, the three emptiest and how many more', () => {
    const text = domainsText(many);
    expect(text).toMatch(/^zone-\d\d=6 zone-\d\d=6 zone-\d\d=6 … zone-\d\d=0 zone-\d\d=0 zone-\d\d=0, 40 more$/);
  });

  it('-o wide: every domain', () => {
    expect(domainsText(many, true).split(' ')).toHaveLength(46);
  });
});

describe('plan -o table', () => {
  const skipped = [
    ...Array.from({ length: 5 }, (_, i) => skip(`web-${i}`, `PodDisruptionBudget shop/web${i} allows 0 disruptions`)),
    skip('api-0', 'pod is 1m old, younger than minPodAge 5m'),
  ];

  it('shows the mode in the header and explains `!`', () => {
    const out = planTable(plan({ topology: [spread({ a: 3, b: 0 }, 3)] }), { mode: 'DryRun' });
    expect(out.split('\n')[0]).toBe('Policy p (DryRun): 3 nodes, 9 pods');
    expect(out).toContain('3!');
    expect(out).toContain("! skew above the constraint's maxSkew");
  });

  it('NODES: class and percent per resource, before → after, over and under first, cut to 20 unless wide', () => {
    const nodes = [
      {
        name: 'spot-1',
        class: 'under' as const,
        utilization: { cpu: 0, memory: 0 },
        utilizationAfter: { cpu: 0.3, memory: 0 },
      },
      {
        name: 'od-1',
        class: 'over' as const,
        utilization: { cpu: 0.8, memory: 0.1 },
        utilizationAfter: { cpu: 0.6, memory: 0.1 },
      },
      ...Array.from({ length: 30 }, (_, i) => ({
        name: `n${String(i).padStart(2, '0')}`,
        class: 'appropriate' as const,
        utilization: { cpu: 0.4, memory: 0.4 },
        utilizationAfter: { cpu: 0.4, memory: 0.4 },
      })),
    ];
    const text = planTable({ ...plan(), nodes });
    expect(text).toContain('NODES (32: 1 over, 1 under, 30 appropriate)');
    expect(text).toMatch(/NODE\s+CLASS\s+CPU\s+MEMORY/);
    expect(text).toMatch(/od-1\s+over\s+80% → 60%\s+10%\n\s*spot-1\s+under\s+0% → 30%\s+0%/);
    expect(text).toContain('… 12 more (-o wide lists them all)');
    expect(planTable({ ...plan(), nodes }, { wide: true })).toContain('n29');
    expect(planTable(plan())).not.toContain('NODES');
  });

  it('has no legend when no skew is above maxSkew', () => {
    expect(planTable(plan({ topology: [spread({ a: 1, b: 1 }, 0)] }))).not.toContain('! skew');
  });

  it('groups SKIPPED by reason with counts and at most three example pods', () => {
    const out = planTable(plan({ skipped }));
    expect(out).toContain('SKIPPED (6)');
    const rows = out.slice(out.indexOf('SKIPPED')).split('\n');
    expect(rows[1]).toMatch(/^COUNT\s+REASON\s+EXAMPLES$/);
    expect(rows[2]).toMatch(
      /^5\s+PodDisruptionBudget allows 0 disruptions\s+shop\/web-0 shop\/web-1 shop\/web-2, 2 more$/,
    );
    expect(rows[3]).toMatch(/^1\s+pod is younger than minPodAge\s+shop\/api-0$/);
  });

  it('-o wide lists every skipped pod with its full reason', () => {
    const out = planTable(plan({ skipped }), { wide: true });
    for (const s of skipped) expect(out).toContain(`${s.namespace}/${s.name}`);
    expect(out).toContain('PodDisruptionBudget shop/web4 allows 0 disruptions');
  });
});

describe('simulate -o table', () => {
  const result = (evictionsPerCycle: number[], topology: TopologyReport[]): SimulationResult => ({
    cycles: evictionsPerCycle.map((n) =>
      plan({
        topology,
        evictions: Array.from({ length: n }, (_, i) => ({
          namespace: 'shop',
          name: `web-${i}`,
          node: 'a',
          strategy: 'TopologySpread' as const,
          reason: 'r',
          priority: 0,
        })),
      }),
    ),
    final: { topology, violations: [] },
    converged: true,
    stalled: false,
  });

  it.each([
    [[1, 0], '1 eviction in 2 cycles'],
    [[1], '1 eviction in 1 cycle'],
    [[2, 1, 0], '3 evictions in 3 cycles'],
    [[0], '0 evictions in 1 cycle'],
  ])('%j → "%s"', (cycles, summary) => {
    expect(simulationTable(result(cycles, [spread({ a: 2, b: 0 }, 2)]))).toContain(`${summary}; converged`);
  });

  it('says there are no spread constraints in scope, as plan does', () => {
    const out = simulationTable(result([0], []));
    expect(out).toContain('(no spread constraints in scope)');
    expect(out).not.toMatch(/^NAMESPACE/m);
  });
});

describe('progress on stderr', () => {
  function sink(isTTY: boolean): {
    lines: string[];
    at: (ms: number) => void;
    write: (s: string) => void;
    isTTY: boolean;
    now: () => number;
  } {
    let now = 0;
    const lines: string[] = [];
    return { lines, at: (ms) => (now = ms), write: (s) => lines.push(s), isTTY, now: () => now };
  }

  it('stays silent when stderr is not a terminal', () => {
    const s = sink(false);
    const p = createProgress(s);
    s.at(10_000);
    p.update('reading');
    p.done();
    expect(s.lines).toEqual([]);
  });

  it('on a terminal: nothing for quick work, then one rewritten line at most every interval, erased at the end', () => {
    const s = sink(true);
    const p = createProgress(s, { delayMs: 500, intervalMs: 100 });
    s.at(100);
    p.update('quick');
    s.at(600);
    p.update('parsing');
    s.at(650);
    p.update('too soon');
    s.at(800);
    p.update('converting');
    p.done();
    expect(s.lines).toEqual(['\r\u001b[Kparsing', '\r\u001b[Kconverting', '\r\u001b[K']);
  });

  it('erases nothing when it showed nothing', () => {
    const s = sink(true);
    const p = createProgress(s);
    p.done();
    expect(s.lines).toEqual([]);
  });
});
