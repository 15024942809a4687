// Where an evicted pod's replacement landed, read from the pod cache, against the plan's prediction: the target, a
// node the scheduler scored equal to it (targetTies), another node, or none within the wait.
import type { Logger } from 'pino';
import type { RebalancerMetrics } from '../../metrics/metrics.js';
import type { LandingOutcome } from '../../metrics/names.js';
import type { PodInfo } from '../../model/types.js';
import type { Move } from '../../planner/move.js';
import { workloadWaitKey, type ClusterCache } from '../clusterCache.js';
import type { EventRecorder } from '../events.js';
import type { Landing } from './landing.js';

export function classifyLanding(move: Pick<Move, 'target' | 'ties'>, node: string | undefined): LandingOutcome {
  if (node === undefined) return 'unscheduled';
  if (node === move.target?.name) return 'target';
  return move.ties.some((t) => t.name === node) ? 'tied' : 'elsewhere';
}

/**
 * Whether a move's landing can be checked at all: it predicted a node, and something replaces the pod (a bare pod
 * has no controller to make a replacement).
 */
export function landingPredicted(move: Move): boolean {
  return move.target !== undefined && move.pod.workload.kind !== 'Pod';
}

export interface LandingWatch {
  readonly workload: string;
  /** Uids of the workload's pods just before the eviction: a pod not among them is a replacement. */
  readonly podsBefore: ReadonlySet<string>;
}

/**
 * Resolves once a replacement of the evicted pod is bound to a node, or at `timeoutMs` as unscheduled; undefined
 * when `signal` fires first (nothing is known). `plannedAt`: when the plan read the cache; a landing elsewhere on a
 * node that changed after it is marked so (Landing.nodeChangedSincePlan).
 */
export async function watchLanding(
  cache: ClusterCache,
  watch: LandingWatch,
  move: Move,
  timeoutMs: number,
  signal: AbortSignal,
  plannedAt?: number,
): Promise<Landing | undefined> {
  const fresh = (): PodInfo[] => cache.workloadPods(watch.workload).filter((p) => !watch.podsBefore.has(p.uid));
  const bound = (): PodInfo | undefined => fresh().find((p) => p.nodeName !== undefined);
  await cache.waitUntil([workloadWaitKey(watch.workload)], () => bound() !== undefined, timeoutMs, signal);
  const replacement = bound();
  if (replacement === undefined && signal.aborted) return undefined;
  const node = replacement?.nodeName;
  const outcome = classifyLanding(move, node);
  const changed =
    outcome === 'elsewhere' && node !== undefined && plannedAt !== undefined && cache.nodeChangedAfter(node, plannedAt);
  return {
    move,
    outcome,
    replacement: replacement ?? fresh()[0],
    node,
    ...(changed ? { nodeChangedSincePlan: true } : {}),
  };
}

/** `n-b1` or `n-b1 (or a node scored equal: n-b2, n-b3)`. */
export function predictionText(move: Pick<Move, 'target' | 'ties'>): string {
  const target = move.target?.name ?? 'none';
  if (move.ties.length === 0) return target;
  const shown = move.ties.slice(0, 5).map((t) => t.name);
  const more = move.ties.length > shown.length ? `, … ${move.ties.length - shown.length} more` : '';
  return `${target} (or a node scored equal: ${shown.join(', ')}${more})`;
}

/** The one place a landing becomes a metric, a log line and, for a replacement that landed elsewhere, an Event. */
export function reportLanding(
  landing: Landing,
  policy: string,
  deps: { readonly metrics: RebalancerMetrics; readonly events: EventRecorder; readonly log: Logger },
): void {
  deps.metrics.recordLanding(policy, landing.outcome);
  const { move, replacement, node } = landing;
  const evicted = `${move.pod.namespace}/${move.pod.name}`;
  const fields = {
    pod: evicted,
    replacement: replacement === undefined ? undefined : `${replacement.namespace}/${replacement.name}`,
    predicted: move.target?.name,
    ties: move.ties.length,
    node,
    outcome: landing.outcome,
    ...(landing.nodeChangedSincePlan === true ? { nodeChangedSincePlan: true } : {}),
  };
  if (landing.outcome !== 'elsewhere' || replacement === undefined) {
    deps.log.info(fields, `replacement landed: ${landing.outcome}`);
    return;
  }
  const message =
    `Replacement of ${evicted} (evicted by RebalancePolicy ${policy}, ${move.strategy}) landed on ${node ?? ''}, ` +
    `not where predicted: ${predictionText(move)}` +
    (landing.nodeChangedSincePlan === true
      ? `; ${node ?? ''} was added or changed (became Ready or schedulable, or its labels or taints) after the plan read the cluster, so this miss is not counted against the predictions`
      : '');
  deps.log.warn(fields, message);
  deps.events.record(
    { apiVersion: 'v1', kind: 'Pod', namespace: replacement.namespace, name: replacement.name, uid: replacement.uid },
    'Warning',
    'LandedElsewhere',
    message,
  );
}
