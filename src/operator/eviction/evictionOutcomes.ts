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

/**
 * `topology.kubernetes.io/zone skew 5 → 1 planned` for each of `moves` that repairs a spread group the plan reports,
 * in one pass over the plan's groups. A lane keeps these few strings, not the plan: at
 * 1,000 nodes a plan's report (6,000 spread groups with their domains, thousands of skipped pods) is megabytes, and a
 * plan's lanes outlive the next ten plans while their evictions wait for budgets and landings (issue 29).
 */
export function skewNotes(plan: RebalancePlan, moves: readonly Move[]): Map<Move, string> {
  const key = (namespace: string, topologyKey: string, workload: string): string =>
    `${namespace}\u0000${topologyKey}\u0000${workload}`;
  const wanted = new Map<string, Move[]>();
  for (const move of moves) {
    if (move.spreadKey === undefined) continue;
    const k = key(move.pod.namespace, move.spreadKey, `${move.pod.workload.kind}/${move.pod.workload.name}`);
    const list = wanted.get(k);
    if (list === undefined) wanted.set(k, [move]);
    else list.push(move);
  }
  const notes = new Map<Move, string>();
  if (wanted.size === 0) return notes;
  for (const t of plan.topology) {
    for (const workload of t.workloads ?? []) {
      const k = key(t.namespace, t.topologyKey, workload);
      const list = wanted.get(k);
      if (list === undefined) continue;
      // The first group that names the workload, as a search of the report in its order would find.
      wanted.delete(k);
      for (const move of list) notes.set(move, `${t.topologyKey} skew ${t.skew} → ${t.skewAfter} planned`);
    }
  }
  return notes;
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

  /** `skew`: the move's skewNote, worked out when its lane started. */
  record(move: Move, skew: string | undefined, result: EvictionResult, detail: string, code?: string): void {
    this.tally[result]++;
    const policy = this.policy;
    this.deps.metrics.recordEviction(policy, move.strategy, result);
    const pod = move.pod;
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
