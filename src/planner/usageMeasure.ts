// How a utilization strategy measures a node: by the requests of its pods (the plan's simulated state), or with
// `usage: Metrics` by what metrics.k8s.io says it uses, as the descheduler's actual-usage mode does.
//
// Metrics. cpu and memory come from the node's NodeMetrics; everything metrics-server does not report (the `pods`
// count, ephemeral-storage, extended resources such as GPUs) stays as requests, from the plan's state. The reading is
// older than the pods it is applied to (the operator reads it once per cycle and plans again as evictions land), so
// the node's figure is brought up to date with what changed since, pod by pod:
//   - a pod read on this node that no longer runs there (evicted, gone, or now elsewhere): its usage is taken away;
//   - a pod running here that was read on another node: its usage is added;
//   - a pod running here that metrics.k8s.io did not report and that was created after the reading: its requests are
//     added (it cannot be in the node's figure yet). One created before the reading is taken to be in it already.
// Then each planned move takes the pod's usage (its PodMetrics, or its requests while it has none) off its node and
// puts it on the replacement's node. A node without NodeMetrics cannot be measured: it is left out of the
// classification (never relieved, never filled).
import { isPodTerminal } from '../model/pods.js';
import type { ClusterSnapshot, NodeInfo, PodInfo, Resources, UsageReading } from '../model/types.js';
import type { Move } from './move.js';
import type { Planner } from './planner.js';

/** The resources metrics.k8s.io reports; the others are measured by requests. */
export const METRICS_RESOURCES: readonly string[] = ['cpu', 'memory'];

/** The reason of a utilization strategy that has no metrics to plan with (plan `degraded`, policy Degraded condition). */
export const METRICS_UNAVAILABLE = 'MetricsUnavailable';

export interface UsageMeasure {
  readonly source: 'Requests' | 'Metrics' | 'Prometheus';
  /** The nodes it can measure, in the snapshot's order. */
  readonly nodes: readonly NodeInfo[];
  /** The node's usage now, in the plan's state; `pods` is its number of pods. */
  of(node: NodeInfo): Record<string, number>;
  /** What a pod adds to a node (or takes away from it). */
  amountOf(pod: PodInfo): Resources;
}

/** What a node has requested by resource (`pods`: its number of pods), from the plan's state. */
export function requestedOf(planner: Planner, node: NodeInfo): Record<string, number> {
  const usage = planner.state.usageOf(node.name);
  return { ...usage.requested, pods: usage.pods };
}

export function requestsMeasure(planner: Planner): UsageMeasure {
  return {
    source: 'Requests',
    nodes: planner.state.nodeList,
    of: (node) => requestedOf(planner, node),
    amountOf: (pod) => pod.requests,
  };
}

/** Why a `usage: Metrics` strategy cannot plan on this snapshot; undefined when it holds a reading. */
export function metricsProblem(snapshot: ClusterSnapshot): string | undefined {
  const m = snapshot.metrics;
  if (m === undefined) {
    return (
      'no metrics.k8s.io reading: the cluster was read without NodeMetrics and PodMetrics ' +
      '(for a saved cluster, add `kubectl get nodes.metrics.k8s.io -o yaml` and ' +
      '`kubectl get pods.metrics.k8s.io -A -o yaml`); nothing is planned on requests instead'
    );
  }
  if (!m.available) return `${m.message}; nothing is planned on requests instead`;
  if (m.nodes.size === 0) {
    return 'metrics.k8s.io/v1beta1 listed no NodeMetrics (metrics-server has not scraped any node yet); nothing is planned on requests instead';
  }
  return undefined;
}

const podKey = (namespace: string, name: string): string => `${namespace}/${name}`;

function addInto(target: Map<string, Record<string, number>>, node: string, amount: Resources, sign: 1 | -1): void {
  let u = target.get(node);
  if (u === undefined) target.set(node, (u = {}));
  for (const r of METRICS_RESOURCES) u[r] = (u[r] ?? 0) + sign * (amount[r] ?? 0);
}

/** Each measured node's cpu and memory from its NodeMetrics, brought up to date with the snapshot's pods. */
function currentUsage(snapshot: ClusterSnapshot, reading: UsageReading): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const [node, usage] of reading.nodes) addInto(out, node, usage, 1);
  const running = new Map<string, string>();
  for (const pod of snapshot.pods) {
    if (pod.nodeName === undefined || isPodTerminal(pod)) continue;
    const key = podKey(pod.namespace, pod.name);
    running.set(key, pod.nodeName);
    const read = reading.pods.get(key);
    if (read === undefined) {
      if (pod.createdAt > reading.readAt) addInto(out, pod.nodeName, pod.requests, 1);
    } else if (read.node !== undefined && read.node !== pod.nodeName) {
      addInto(out, pod.nodeName, read.usage, 1);
    }
  }
  for (const [key, read] of reading.pods) {
    if (read.node !== undefined && running.get(key) !== read.node) addInto(out, read.node, read.usage, -1);
  }
  return out;
}

/** A pod's usage in the measure: its PodMetrics for cpu and memory, its requests for the rest (or while it has none). */
function usageOf(reading: UsageReading, pod: PodInfo): Resources {
  const read = reading.pods.get(podKey(pod.namespace, pod.name));
  return read === undefined ? pod.requests : { ...pod.requests, ...pickMetrics(read.usage) };
}

/**
 * `simulate`: the reading as the next cycle would find it, each evicted pod's usage moved with it to where its
 * replacement runs (a replacement is taken to use what the pod it replaces used).
 */
export function usageAfterMoves(
  reading: UsageReading,
  moves: ReadonlyArray<{ readonly move: Move; readonly replacement: PodInfo | undefined }>,
): UsageReading {
  const nodes = new Map<string, Record<string, number>>();
  for (const [name, usage] of reading.nodes) nodes.set(name, { ...usage });
  const pods = new Map(reading.pods);
  for (const { move, replacement } of moves) {
    const amount = usageOf(reading, move.pod);
    pods.delete(podKey(move.pod.namespace, move.pod.name));
    const from = nodes.get(move.from.name);
    if (from !== undefined) for (const r of METRICS_RESOURCES) from[r] = Math.max(0, (from[r] ?? 0) - (amount[r] ?? 0));
    if (replacement?.nodeName === undefined) continue;
    pods.set(podKey(replacement.namespace, replacement.name), {
      usage: pickMetrics(amount),
      node: replacement.nodeName,
    });
    const to = nodes.get(replacement.nodeName);
    if (to !== undefined) for (const r of METRICS_RESOURCES) to[r] = (to[r] ?? 0) + (amount[r] ?? 0);
  }
  return { ...reading, nodes, pods };
}

export function metricsMeasure(planner: Planner, reading: UsageReading): UsageMeasure {
  const snapshot = planner.analysis.snapshot;
  const base = currentUsage(snapshot, reading);
  const amounts = new Map<PodInfo, Resources>();
  const amountOf = (pod: PodInfo): Resources => {
    let amount = amounts.get(pod);
    if (amount === undefined) amounts.set(pod, (amount = usageOf(reading, pod)));
    return amount;
  };
  return {
    source: 'Metrics',
    nodes: planner.state.nodeList.filter((n) => reading.nodes.has(n.name)),
    amountOf,
    of(node) {
      const out = requestedOf(planner, node);
      const now = base.get(node.name);
      for (const r of METRICS_RESOURCES) out[r] = now?.[r] ?? 0;
      // The plan's moves so far: each pod's usage leaves its node and arrives where its replacement lands.
      for (const move of planner.moves) {
        const sign = move.from.name === node.name ? -1 : move.target?.name === node.name ? 1 : 0;
        if (sign === 0) continue;
        const amount = amountOf(move.pod);
        for (const r of METRICS_RESOURCES) out[r] = out[r]! + sign * (amount[r] ?? 0);
      }
      for (const r of METRICS_RESOURCES) out[r] = Math.max(0, out[r]!);
      return out;
    },
  };
}

function pickMetrics(usage: Resources): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of METRICS_RESOURCES) if (usage[r] !== undefined) out[r] = usage[r];
  return out;
}
