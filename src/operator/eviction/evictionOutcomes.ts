// The one place an eviction outcome is recorded: the run's count, the metric, the log line and the Event.
import type { Logger } from 'pino';
import type { RebalancerMetrics } from '../../metrics/metrics.js';
import type { EvictionResult } from '../../metrics/names.js';
import { workloadKey } from '../../planner/budget.js';
import type { Move } from '../../planner/plan.js';
import type { RebalancePlan } from '../../model/plan.js';
import type { EventRecorder } from '../events.js';

export type RunCounts = Record<EvictionResult, number>;

const EVENT_REASONS: Partial<Record<EvictionResult, { type: 'Normal' | 'Warning'; reason: string }>> = {
  evicted: { type: 'Normal', reason: 'RebalanceEviction' },
  dry_run: { type: 'Normal', reason: 'RebalanceDryRun' },
  pdb_blocked: { type: 'Warning', reason: 'RebalanceBlocked' },
  failed: { type: 'Warning', reason: 'RebalanceEvictionFailed' },
};

/** `topology.kubernetes.io/zone skew 5 → 1 planned` for the spread group a move belongs to, if found. */
export function skewNote(plan: RebalancePlan, move: Move): string | undefined {
  if (move.spreadKey === undefined) return undefined;
  const workload = `${move.pod.workload.kind}/${move.pod.workload.name}`;
  const report = plan.topology.find(
    (t) =>
      t.namespace === move.pod.namespace && t.topologyKey === move.spreadKey && (t.workloads ?? []).includes(workload),
  );
  return report === undefined ? undefined : `${report.topologyKey} skew ${report.skew} → ${report.skewAfter} planned`;
}

export class EvictionOutcomes {
  private readonly tally: RunCounts = { evicted: 0, dry_run: 0, pdb_blocked: 0, not_found: 0, failed: 0, skipped: 0 };

  constructor(
    private readonly policy: string,
    private readonly deps: {
      readonly metrics: RebalancerMetrics;
      readonly events: EventRecorder;
      readonly log: Logger;
    },
  ) {}

  /** A copy of the counts so far. */
  counts(): RunCounts {
    return { ...this.tally };
  }

  record(move: Move, plan: RebalancePlan, result: EvictionResult, detail: string, code?: string): void {
    this.tally[result]++;
    const policy = this.policy;
    this.deps.metrics.recordEviction(policy, move.strategy, result);
    const pod = move.pod;
    const skew = skewNote(plan, move);
    const fields = {
      pod: `${pod.namespace}/${pod.name}`,
      uid: pod.uid,
      node: move.from.name,
      target: move.target?.name,
      workload: workloadKey(pod),
      strategy: move.strategy,
      result,
      ...(code !== undefined ? { code } : {}),
      ...(skew !== undefined ? { skew } : {}),
    };
    const ok = result === 'evicted' || result === 'dry_run';
    if (ok) this.deps.log.info(fields, `${result === 'dry_run' ? 'dry-run eviction' : 'evicted'}: ${move.reason}`);
    else this.deps.log.warn(fields, `eviction ${result}: ${detail}`);
    const kind = EVENT_REASONS[result];
    if (kind === undefined) return;
    const why = `${move.strategy}: ${move.reason}${skew !== undefined ? `; ${skew}` : ''}`;
    const message =
      result === 'evicted'
        ? `Evicted by RebalancePolicy ${policy} (${why})`
        : result === 'dry_run'
          ? `Would be evicted by RebalancePolicy ${policy}, dry run accepted by the API server (${why})`
          : `Eviction by RebalancePolicy ${policy} ${result === 'pdb_blocked' ? 'blocked' : 'failed'}: ${detail}`;
    this.deps.events.record(
      { apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      kind.type,
      kind.reason,
      message,
      {
        key: `${policy}\u0000${kind.reason}\u0000${workloadKey(pod)}`,
        label: `${pod.workload.kind} ${pod.namespace}/${pod.workload.name}`,
      },
    );
  }
}
