// How lowNodeUtilization with `usage: Prometheus` measures a node: by one value per node from a Prometheus query
// (0–1, as the descheduler takes it), in percentage points of MetricResource, out of 100 on every node.
//
// The query says nothing of pods, yet a plan must know how far each eviction lowers its node and raises the node its
// replacement lands on (the descheduler, not knowing, evicts one pod per node per run and hopes). Each pod's part is
// estimated when the reading is first planned with (apportion()): a node's value is shared among the pods running
// there by their request weight (their cpu and memory requests as shares of the node's allocatable, summed; equal
// parts when none requests anything). A pod moves its part with it, the same points on any node. A pod the reading
// did not see (created after it) is estimated by its weight times the cluster's points per unit of weight.
//
// As for metrics.k8s.io (usageMeasure.ts), the reading is brought up to date with the pods: a pod counted on a node
// and no longer there takes its part away, one counted elsewhere or not counted adds its part. A node the query has
// no value for is not classified (never relieved, never a landing place). Without a value for any node, or without a
// reading, the strategy plans nothing and the plan says why (`degraded`), never falling back to requests.
import { isPodTerminal } from '../model/pods.js';
import type { ClusterSnapshot, NodeInfo, NodeUsageValues, PodInfo } from '../model/types.js';
import { METRIC_RESOURCE } from '../strategies/utilization.js';
import type { Move } from './move.js';
import type { Planner } from './planner.js';
import { requestedOf, type UsageMeasure } from './usageMeasure.js';

const WEIGHED = ['cpu', 'memory'];

const podKey = (pod: { readonly namespace: string; readonly name: string }): string => `${pod.namespace}/${pod.name}`;

/** A pod's request weight on a node: its cpu and memory requests as shares of the node's allocatable, summed. */
function weightOn(pod: PodInfo, node: NodeInfo | undefined): number {
  let w = 0;
  for (const r of WEIGHED) {
    const cap = node?.allocatable[r] ?? 0;
    if (cap > 0) w += (pod.requests[r] ?? 0) / cap;
  }
  return w;
}

/** The running pods of the snapshot by node name. */
function runningByNode(snapshot: ClusterSnapshot): Map<string, PodInfo[]> {
  const out = new Map<string, PodInfo[]>();
  for (const pod of snapshot.pods) {
    if (pod.nodeName === undefined || isPodTerminal(pod)) continue;
    const list = out.get(pod.nodeName);
    if (list) list.push(pod);
    else out.set(pod.nodeName, [pod]);
  }
  return out;
}

/**
 * The reading with each pod's part of its node's value, from the pods of `snapshot` created by the time it was
 * read; a reading that has its parts already is returned as it is (a run keeps the parts of its first plan).
 */
export function apportion(usage: NodeUsageValues, snapshot: ClusterSnapshot): NodeUsageValues {
  if (usage.parts !== undefined) return usage;
  const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
  const pods = new Map<string, { node: string; points: number }>();
  let points = 0;
  let weight = 0;
  for (const [name, list] of runningByNode(snapshot)) {
    const value = usage.values.get(name);
    if (value === undefined) continue;
    const counted = list.filter((p) => p.createdAt <= usage.readAt);
    if (counted.length === 0) continue;
    const weights = counted.map((p) => weightOn(p, nodes.get(name)));
    const total = weights.reduce((a, b) => a + b, 0);
    counted.forEach((p, i) => {
      const share = total > 0 ? weights[i]! / total : 1 / counted.length;
      pods.set(podKey(p), { node: name, points: value * 100 * share });
    });
    if (total > 0) {
      points += value * 100;
      weight += total;
    }
  }
  return { ...usage, parts: { pods, perWeight: weight > 0 ? points / weight : 0 } };
}

/** Why a `usage: Prometheus` strategy cannot plan on this snapshot; undefined when it holds a usable reading. */
export function prometheusProblem(snapshot: ClusterSnapshot): string | undefined {
  const usage = snapshot.nodeUsage;
  if (usage === undefined) {
    return (
      'no Prometheus reading: usage: Prometheus is read by the operator in each cycle (offline, pass the answer of ' +
      'the query as --usage-file); nothing is planned on requests instead'
    );
  }
  if (!usage.available) return `${usage.message}; nothing is planned on requests instead`;
  if (!snapshot.nodes.some((n) => usage.values.has(n.name))) {
    const named = [...usage.values.keys()].slice(0, 3).join(', ');
    return (
      `${usage.source}: no sample is labelled instance=<a node of the cluster> (the query named ${named}` +
      `${usage.values.size > 3 ? ', …' : ''}); nothing is planned on requests instead`
    );
  }
  return undefined;
}

/** What a pod's part is: read with the reading, or estimated from its weight on the node it runs on. */
function partOf(parts: NonNullable<NodeUsageValues['parts']>, pod: PodInfo, node: NodeInfo | undefined): number {
  return parts.pods.get(podKey(pod))?.points ?? weightOn(pod, node) * parts.perWeight;
}

/** Each measured node's points now, the reading brought up to date with the snapshot's pods. */
function currentPoints(snapshot: ClusterSnapshot, usage: NodeUsageValues): Map<string, number> {
  const parts = usage.parts!;
  const nodes = new Map(snapshot.nodes.map((n) => [n.name, n]));
  const out = new Map<string, number>();
  for (const [name, value] of usage.values) out.set(name, value * 100);
  const add = (node: string, points: number): void => {
    const now = out.get(node);
    if (now !== undefined) out.set(node, now + points);
  };
  const running = new Map<string, string>();
  for (const pod of snapshot.pods) {
    if (pod.nodeName === undefined || isPodTerminal(pod)) continue;
    const key = podKey(pod);
    running.set(key, pod.nodeName);
    const read = parts.pods.get(key);
    if (read === undefined) {
      if (pod.createdAt > usage.readAt) add(pod.nodeName, partOf(parts, pod, nodes.get(pod.nodeName)));
    } else if (read.node !== pod.nodeName) {
      add(pod.nodeName, read.points);
    }
  }
  for (const [key, read] of parts.pods) if (running.get(key) !== read.node) add(read.node, -read.points);
  return out;
}

export function prometheusMeasure(planner: Planner, usage: NodeUsageValues): UsageMeasure {
  const snapshot = planner.analysis.snapshot;
  const read = apportion(usage, snapshot);
  const parts = read.parts!;
  const base = currentPoints(snapshot, read);
  const amounts = new Map<PodInfo, Record<string, number>>();
  const amountOf = (pod: PodInfo): Record<string, number> => {
    let amount = amounts.get(pod);
    if (amount === undefined) {
      const node = planner.state.nodeList.find((n) => n.name === pod.nodeName);
      amounts.set(pod, (amount = { ...pod.requests, [METRIC_RESOURCE]: partOf(parts, pod, node) }));
    }
    return amount;
  };
  return {
    source: 'Prometheus',
    nodes: planner.state.nodeList.filter((n) => base.has(n.name)),
    amountOf,
    of(node) {
      const out: Record<string, number> = requestedOf(planner, node);
      let points = base.get(node.name) ?? 0;
      // The plan's moves so far: each pod's part leaves its node and arrives where its replacement lands.
      for (const move of planner.moves) {
        if (move.from.name === node.name) points -= amountOf(move.pod)[METRIC_RESOURCE]!;
        else if (move.target?.name === node.name) points += amountOf(move.pod)[METRIC_RESOURCE]!;
      }
      out[METRIC_RESOURCE] = Math.max(0, points);
      return out;
    },
  };
}

/**
 * `simulate`: the reading as the next cycle would find it, each evicted pod's part moved with it to where its
 * replacement runs (the replacement is taken to use what the pod it replaces used).
 */
export function nodeUsageAfterMoves(
  usage: NodeUsageValues,
  snapshot: ClusterSnapshot,
  moves: ReadonlyArray<{ readonly move: Move; readonly replacement: PodInfo | undefined }>,
): NodeUsageValues {
  const read = apportion(usage, snapshot);
  const parts = read.parts!;
  const values = new Map(read.values);
  const pods = new Map(parts.pods);
  for (const { move, replacement } of moves) {
    const points = partOf(parts, move.pod, move.from);
    pods.delete(podKey(move.pod));
    const from = values.get(move.from.name);
    if (from !== undefined) values.set(move.from.name, Math.max(0, from - points / 100));
    if (replacement?.nodeName === undefined) continue;
    pods.set(podKey(replacement), { node: replacement.nodeName, points });
    const to = values.get(replacement.nodeName);
    if (to !== undefined) values.set(replacement.nodeName, Math.min(1, to + points / 100));
  }
  return { ...read, values, parts: { pods, perWeight: parts.perWeight } };
}
