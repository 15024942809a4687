// "Why wasn't my pod evicted?" on a live cluster: the policy's status.lastPlan.skippedReasons counts the skips by
// reason, the operator logs each skipped pod at debug level with its reason, and the cycle's summary Event counts
// skips exactly as status does.
import { afterEach, describe, expect, it } from 'vitest';
import type { TestApiServer } from '../apiserver/index.js';
import {
  createDeployment,
  createPolicy,
  policyStatus,
  startCluster,
  startOperator,
  waitFor,
  type OperatorHandle,
} from './harness.js';

let server: TestApiServer | undefined;
const operators: OperatorHandle[] = [];

afterEach(async () => {
  for (const op of operators.splice(0)) await op.stop();
  await server?.close();
  server = undefined;
});

interface LastPlan {
  skipped: number;
  skippedReasons?: Array<{ reason: string; count: number }>;
}

describe('skipped pods on a live cluster', () => {
  it('status, debug log and summary Event agree on what was skipped and why', async () => {
    const s = (server = await startCluster());
    // web: 6 replicas piled 3/3/0 need two moves; the budget allows one disruption, so the others are skipped.
    createDeployment(s, {
      namespace: 'shop',
      name: 'web',
      placement: ['zone-a-node-1', 'zone-a-node-2', 'zone-a-node-1', 'zone-b-node-1', 'zone-b-node-2', 'zone-b-node-1'],
      pdb: { maxUnavailable: 1 },
    });
    await s.settle();
    createPolicy(s, 'balance', { mode: 'DryRun', eviction: { maxPerWorkload: 1 } });
    const op = startOperator(s);
    operators.push(op);
    await op.operator.waitForSync();
    await op.operator.tick('balance');

    const last = (policyStatus(s, 'balance') as { lastPlan?: LastPlan }).lastPlan;
    expect(last).toBeDefined();
    expect(last!.skipped).toBeGreaterThan(0);
    const reasons = last!.skippedReasons ?? [];
    expect(reasons.length).toBeGreaterThan(0);
    expect(reasons.reduce((n, r) => n + r.count, 0)).toBe(last!.skipped);
    // Once one pod is planned, the budget (maxUnavailable 1) has no disruption left for the others.
    expect(reasons.map((r) => r.reason)).toContain('PodDisruptionBudget: budget used by this plan');

    const debug = op.logs.filter((l) => l.msg === 'pod skipped');
    expect(debug.length).toBe(last!.skipped);
    for (const line of debug) {
      expect(line['pod']).toMatch(/^shop\/web-/);
      expect(typeof line['reason']).toBe('string');
    }

    const event = await waitFor(
      () =>
        s.store
          .list('events', { namespace: 'default' })
          .find(
            (e) =>
              e['reason'] === 'RebalanceCompleted' && (e['involvedObject'] as { name?: string }).name === 'balance',
          ),
      5000,
      'the summary Event',
    );
    const message = String(event['message']);
    expect(message).toContain(`, ${last!.skipped} skipped (`);
    expect(message).toContain(`${reasons[0]!.count} ${reasons[0]!.reason}`);
  });
});
