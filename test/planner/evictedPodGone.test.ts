// Issue 28: the utilization suite's packing cluster (two nodes at 20%, three at 60%, cpu-only requests) under the
// default scheduler, per Kubernetes minor and per how the evicted pods are deleted. From 1.36 BalancedAllocation scores
// the change a pod makes (72 on every node here), so where the second replacement of low-node-1 lands turns on
// whether its evicted pod still holds its 400m: 629 there against 632 on high-node-1 while it terminates, 634 there
// once it is gone. A pod with terminationGracePeriodSeconds 0 is deleted within its eviction, and kube-scheduler
// 1.37.2 scored one replacement in each view in the same run (its -v=10 log, quoted below), so the plan must accept
// both views' landings, and landing on a node being emptied makes the move pointless.
import { describe, expect, it } from 'vitest';
import type { KubeVersion } from '../../src/model/kubeVersion.js';
import { planCycle, type PlanOutcome } from '../../src/planner/plan.js';
import { parsePolicy } from '../../src/policy/parse.js';
import { analyze } from '../../src/analysis/analyze.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { explainScores, placeReplacement } from '../../src/scheduling/placement.js';
import { buildSnapshot, makeNode, makePod, makePolicy, type PodBuilder } from '../builders.js';

type Json = Record<string, unknown>;

const node = (name: string, zone: string) =>
  makeNode(name).zone(zone).allocatable({ cpu: '4', memory: '32Gi', pods: '110' });

/** `n` pods of 400m of Deployment `app` on a node, deleted with `grace` seconds (undefined: not written). */
function pods(app: string, nodeName: string, n: number, grace: number | undefined): PodBuilder[] {
  return Array.from({ length: n }, (_, i) => {
    const p = makePod(`${app}-${nodeName}-${i}`, 'load')
      .deployment(app)
      .label('app', app)
      .node(nodeName)
      .requests({ cpu: '400m' });
    return grace === undefined ? p : p.set('spec.terminationGracePeriodSeconds', grace);
  });
}

/**
 * The cluster as the suite builds it: `fill` 6 × 400m on each high node, `light` 2 × 400m on each low node, and the
 * operator's two replicas (100m, 256Mi, another namespace) on high-node-1 and high-node-2.
 */
function packingCluster(version: KubeVersion, grace: number | undefined) {
  const objects = [
    ...['high-node-1', 'high-node-2', 'high-node-3'].flatMap((n) => [node(n, 'high'), ...pods('fill', n, 6, grace)]),
    ...['low-node-1', 'low-node-2'].flatMap((n) => [node(n, 'low'), ...pods('light', n, 2, grace)]),
    ...['high-node-1', 'high-node-2'].map((n, i) =>
      makePod(`operator-${i}`, 'kube-rebalancer')
        .deployment('operator')
        .node(n)
        .requests({ cpu: '100m', memory: '256Mi' }),
    ),
  ];
  return { ...buildSnapshot(objects), kubeVersion: version };
}

function plan(version: KubeVersion, grace: number | undefined, policyGrace?: number): PlanOutcome {
  const eviction: Json = { maxPerCycle: 20, maxPerNode: 10, maxPerNamespace: 20, maxPerWorkload: 2, minPodAge: '0s' };
  if (policyGrace !== undefined) eviction['gracePeriodSeconds'] = policyGrace;
  const spec = {
    namespaces: { include: ['load'] },
    eviction,
    strategies: { highNodeUtilization: { enabled: true, thresholds: { cpu: 30 } } },
  };
  return planCycle(packingCluster(version, grace), parsePolicy(makePolicy('hnu', spec), { file: 'policy.yaml' }));
}

const EMPTIED = /would land on low-node-[12], an underutilized node being emptied/;

describe('HighNodeUtilization in the packing cluster, default scheduler: where the replacements of low-node-1 land', () => {
  const rows: Array<{
    scenario: string;
    version: KubeVersion;
    grace: number | undefined;
    policyGrace?: number;
    evicted: string[];
  }> = [
    { scenario: '1.35, pods deleted at once', version: '1.35', grace: 0, evicted: [] },
    { scenario: '1.35, pods with the default grace period', version: '1.35', grace: undefined, evicted: [] },
    { scenario: '1.36, pods deleted at once', version: '1.36', grace: 0, evicted: [] },
    { scenario: '1.37, pods deleted at once', version: '1.37', grace: 0, evicted: [] },
    {
      scenario: '1.37, pods with a grace period, but the policy evicts with gracePeriodSeconds 0',
      version: '1.37',
      grace: 30,
      policyGrace: 0,
      evicted: [],
    },
    {
      scenario: '1.37, pods with a 30 s grace period: each replacement is placed while its evicted pod terminates',
      version: '1.37',
      grace: 30,
      evicted: ['light-low-node-1-1→high-node-3', 'light-low-node-1-0→high-node-1'],
    },
    {
      scenario: '1.36, pods with the default grace period',
      version: '1.36',
      grace: undefined,
      evicted: ['light-low-node-1-1→high-node-3', 'light-low-node-1-0→high-node-1'],
    },
    {
      scenario: '1.37, the policy evicts with a grace period although the pods have none',
      version: '1.37',
      grace: 0,
      policyGrace: 5,
      evicted: ['light-low-node-1-1→high-node-3', 'light-low-node-1-0→high-node-1'],
    },
  ];

  it.each(rows)('$scenario', ({ version, grace, policyGrace, evicted }) => {
    const r = plan(version, grace, policyGrace);
    expect(r.plan.evictions.map((e) => `${e.name}→${e.target}`)).toEqual(evicted);
    if (evicted.length === 0) expect(r.plan.skipped.map((s) => s.reason).join('\n')).toMatch(EMPTIED);
  });
});

describe("the second replacement's scores in each view, as kube-scheduler 1.37.2 logged them at -v=10", () => {
  // From the scheduler's log in the suite's run: light-…-qb5hf (the first replacement) was scored before the delete
  // event of its evicted pod arrived, light-…-h6c2d (the second) just after it.
  const terminating = {
    'high-node-1': 632,
    'high-node-2': 632,
    'high-node-3': 597,
    'low-node-1': 629,
    'low-node-2': 562,
  };
  const gone = { ...terminating, 'low-node-1': 634 };

  function afterFirstMove() {
    const snapshot = packingCluster('1.37', 0);
    const state = new ClusterState(
      analyze(snapshot, parsePolicy(makePolicy('hnu', { namespaces: { include: ['load'] } }), { file: 'p' }).spec),
    );
    const pod = (name: string) => snapshot.pods.find((p) => p.name === name)!;
    const low1 = state.nodes.get('low-node-1')!;
    const first = pod('light-low-node-1-0');
    state.commit(first, placeReplacement(state, first, { pod: first, node: low1 }, true).node);
    return { state, second: pod('light-low-node-1-1'), low1 };
  }
  const totals = (rows: ReturnType<typeof explainScores>) => Object.fromEntries(rows.map((r) => [r.node, r.total]));

  it('while the evicted pod terminates, high-node-1 and high-node-2 tie at 632; once it is gone, low-node-1 wins with 634', () => {
    const { state, second, low1 } = afterFirstMove();
    expect(totals(explainScores(state, second, { pod: second, node: low1 }))).toEqual(terminating);
    const scores = explainScores(state, second, { pod: second, node: low1 });
    expect(scores.find((s) => s.node === 'low-node-1')?.plugins).toEqual({
      TaintToleration: 300,
      NodeResourcesFit: 89,
      PodTopologySpread: 168,
      NodeResourcesBalancedAllocation: 72,
    });
    state.commit(second, undefined);
    expect(totals(explainScores(state, second, undefined))).toEqual(gone);
  });

  it('a pod deleted at once may land in either view: both views’ top nodes are its possible landings', () => {
    const { state, second, low1 } = afterFirstMove();
    const graceful = placeReplacement(state, second, { pod: second, node: low1 }, false);
    expect([graceful.node?.name, ...graceful.ties.map((n) => n.name)]).toEqual(['high-node-1', 'high-node-2']);
    const atOnce = placeReplacement(state, second, { pod: second, node: low1 }, true);
    expect([atOnce.node?.name, ...atOnce.ties.map((n) => n.name)]).toEqual([
      'high-node-1',
      'high-node-2',
      'low-node-1',
    ]);
  });
});
