// PodTopologySpread's score (kube-scheduler v1.26): for the pod's ScheduleAnyway constraints — or, for a pod with no
// constraints of its own, the profile's default constraints with a selector derived from its controller — a node
// scores Σ (matching pods in its domain × log(domains + 2) + maxSkew − 1), rounded; fewer is better, so the scores are
// turned round: 100 × (max + min − score) / max. Terminating pods are not counted (the evicted pod among them).
//
// The System defaults select the pods of the pod's Service, ReplicaSet, ReplicationController or StatefulSet. The
// snapshot holds no Services or controllers, so the selector is derived from the pod's own labels when a ReplicaSet,
// ReplicationController or StatefulSet controls it (their pods share the template's labels, less the per-pod and
// per-revision ones): a pod selected only by a Service gets no default spreading here (see the README).
import { labelValue, matchesSelector } from '../../../model/labels.js';
import { matchesRequiredNodeAffinity } from '../../../model/nodeAffinity.js';
import { DO_NOT_SCHEDULE_EFFECTS, findUntoleratedTaint } from '../../../model/taints.js';
import type { NodeInclusionPolicy, NodeInfo, PodInfo, Selector } from '../../../model/types.js';
import type { ClusterState, Placed } from '../../clusterState.js';
import type { ScorePlugin } from '../../framework/interface.js';
import { MAX_NODE_SCORE } from '../../framework/normalize.js';
import type { SpreadDefaulting } from './args.js';
import { controllerSelector } from '../../../model/controllerSelector.js';

const HOSTNAME = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

interface ScoringConstraint {
  readonly topologyKey: string;
  readonly maxSkew: number;
  readonly selector: Selector;
  readonly nodeAffinityPolicy: NodeInclusionPolicy;
  readonly nodeTaintsPolicy: NodeInclusionPolicy;
}

const SYSTEM_DEFAULTS = [
  { topologyKey: ZONE, maxSkew: 5, nodeAffinityPolicy: 'Honor', nodeTaintsPolicy: 'Ignore' },
  { topologyKey: HOSTNAME, maxSkew: 3, nodeAffinityPolicy: 'Honor', nodeTaintsPolicy: 'Ignore' },
] as const;

/** The constraints the score uses, and whether a node must carry every one of their keys to be scored. */
function scoringConstraints(
  pod: PodInfo,
  defaulting: SpreadDefaulting,
): { readonly constraints: readonly ScoringConstraint[]; readonly requireAll: boolean } {
  if (pod.spreadConstraints.length > 0) {
    const constraints = pod.spreadConstraints.filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway');
    return { constraints, requireAll: true };
  }
  const defaults =
    defaulting.type === 'System'
      ? SYSTEM_DEFAULTS
      : defaulting.constraints.filter((c) => c.whenUnsatisfiable === 'ScheduleAnyway');
  const selector = defaults.length === 0 ? undefined : controllerSelector(pod);
  if (selector === undefined) return { constraints: [], requireAll: true };
  const constraints = defaults.map((c) => ({
    topologyKey: c.topologyKey,
    maxSkew: c.maxSkew,
    selector,
    nodeAffinityPolicy: c.nodeAffinityPolicy ?? 'Honor',
    nodeTaintsPolicy: c.nodeTaintsPolicy ?? 'Ignore',
  }));
  // Only the System defaults let a node without a zone label still be scored by hostname.
  return { constraints, requireAll: defaulting.type !== 'System' };
}

function hasAllKeys(node: NodeInfo, constraints: readonly ScoringConstraint[]): boolean {
  for (const c of constraints) if (labelValue(node.labels, c.topologyKey) === undefined) return false;
  return true;
}

function included(c: ScoringConstraint, pod: PodInfo, node: NodeInfo): boolean {
  if (c.nodeAffinityPolicy === 'Honor' && !matchesRequiredNodeAffinity(pod.requiredNodeAffinity, node)) return false;
  return !(
    c.nodeTaintsPolicy === 'Honor' &&
    findUntoleratedTaint(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) !== undefined
  );
}

/** The pod being scored, the profile's defaulting, and the evicted pod (terminating or gone: not counted). */
interface SpreadInput {
  readonly defaulting: SpreadDefaulting;
  readonly pod: PodInfo;
  readonly terminating: Placed | undefined;
}

/**
 * Writes the normalised PodTopologySpread scores of the `feasible` nodes (node indices) into `out`. `terminating`:
 * the evicted pod, not counted. With `domainsScored` (per constraint, the domains a window of nodes scores), writes
 * the raw scores instead, NaN for a node left out (see WindowedScore).
 */
export function spreadScores(
  state: ClusterState,
  { defaulting, pod, terminating }: SpreadInput,
  feasible: Int32Array,
  out: Float64Array,
  domainsScored?: readonly number[],
): void {
  const n = feasible.length;
  const { constraints, requireAll } = scoringConstraints(pod, defaulting);
  if (constraints.length === 0) {
    out.fill(MAX_NODE_SCORE, 0, n);
    return;
  }
  const nodes = state.nodeList;
  const ignored = new Uint8Array(n);
  for (let k = 0; k < n; k++) if (requireAll && !hasAllKeys(nodes[feasible[k]!]!, constraints)) ignored[k] = 1;
  // Domains of the scored nodes (the pair's value is '' on a node without the key), then pods counted into them from
  // every node the constraint includes.
  const domainCounts = constraints.map(() => new Map<string, number>());
  const weights = constraints.map((c, i) => {
    let size = 0;
    for (let k = 0; k < n; k++) {
      if (ignored[k]) continue;
      if (c.topologyKey === HOSTNAME) size++;
      else {
        const value = labelValue(nodes[feasible[k]!]!.labels, c.topologyKey) ?? '';
        if (!domainCounts[i]!.has(value)) domainCounts[i]!.set(value, 0);
      }
    }
    if (domainsScored !== undefined) return Math.log(domainsScored[i]! + 2);
    return Math.log((c.topologyKey === HOSTNAME ? size : domainCounts[i]!.size) + 2);
  });
  const evictedAt = terminating === undefined ? -1 : (state.nodeIndex.get(terminating.node.name) ?? -1);
  const perNode = constraints.map((c) => {
    const counts = countsOnNodes(state, pod.namespace, c.selector);
    const evictedCounted =
      terminating !== undefined && terminating.pod.namespace === pod.namespace && matches(c.selector, terminating.pod);
    return { counts, evictedCounted };
  });
  constraints.forEach((c, i) => {
    if (c.topologyKey === HOSTNAME) return;
    const domains = domainCounts[i]!;
    for (const [index, count] of perNode[i]!.counts) {
      const node = nodes[index]!;
      if (requireAll && !hasAllKeys(node, constraints)) continue;
      if (!included(c, pod, node)) continue;
      const value = labelValue(node.labels, c.topologyKey) ?? '';
      const have = domains.get(value);
      if (have === undefined) continue;
      const minus = perNode[i]!.evictedCounted && index === evictedAt ? 1 : 0;
      domains.set(value, have + count - minus);
    }
  });
  let min = Infinity;
  let max = 0;
  for (let k = 0; k < n; k++) {
    if (ignored[k]) continue;
    const index = feasible[k]!;
    const node = nodes[index]!;
    let score = 0;
    for (let i = 0; i < constraints.length; i++) {
      const c = constraints[i]!;
      const value = labelValue(node.labels, c.topologyKey);
      if (value === undefined) continue;
      let count: number;
      if (c.topologyKey === HOSTNAME) {
        count = perNode[i]!.counts.get(index) ?? 0;
        if (perNode[i]!.evictedCounted && index === evictedAt) count--;
      } else count = domainCounts[i]!.get(value) ?? 0;
      score += count * weights[i]! + (c.maxSkew - 1);
    }
    out[k] = Math.round(score);
    min = Math.min(min, out[k]!);
    max = Math.max(max, out[k]!);
  }
  if (domainsScored !== undefined) {
    for (let k = 0; k < n; k++) if (ignored[k]) out[k] = NaN;
    return;
  }
  for (let k = 0; k < n; k++) {
    if (ignored[k]) out[k] = 0;
    else if (max === 0) out[k] = MAX_NODE_SCORE;
    else out[k] = Math.trunc((MAX_NODE_SCORE * (max + min - out[k]!)) / max);
  }
}

const NO_COUNTS: ReadonlyMap<number, number> = new Map();

function countsOnNodes(state: ClusterState, namespace: string, selector: Selector): ReadonlyMap<number, number> {
  // An empty selector counts nothing in upstream's spread scoring (labels.Selector.Empty()).
  if (selector.kind === 'nothing' || selector.requirements.length === 0) return NO_COUNTS;
  return state.matchingPerNode(namespace, selector);
}

function matches(selector: Selector, pod: PodInfo): boolean {
  if (selector.kind === 'nothing' || selector.requirements.length === 0) return false;
  return matchesSelector(selector, pod.labels);
}

/** Score and normalisation are one pass here: the scores are turned round against the scored nodes' own range. */
export const podTopologySpreadScore: ScorePlugin = {
  name: 'PodTopologySpread',
  preScore: ({ state, profile, pod, evicted }) => {
    const defaulting = profile.spreadDefaulting;
    const input = { defaulting, pod, terminating: evicted.terminating ?? evicted.gone };
    let vectors: number[][] = [];
    return {
      score(feasible, out) {
        spreadScores(state, input, feasible, out);
      },
      windowed: {
        scaling: 'spreadReverse',
        params(feasible, k) {
          const windows = domainsPerWindow(state, defaulting, pod, feasible, k);
          vectors = windows.vectors;
          return { ids: windows.ids, count: vectors.length };
        },
        raw(feasible, param, out) {
          spreadScores(state, input, feasible, out, vectors[param] ?? []);
        },
      },
    };
  },
};

/**
 * For every window of `k` consecutive nodes of `feasible` (cyclic, by its first node), the domains each constraint
 * scores there — the nodes with the keys for the hostname, the distinct values of the others — as an id into the
 * distinct vectors. Counted with sliding windows: one pass, whatever `k`.
 */
function domainsPerWindow(
  state: ClusterState,
  defaulting: SpreadDefaulting,
  pod: PodInfo,
  feasible: Int32Array,
  k: number,
): { readonly ids: Int32Array; readonly vectors: number[][] } {
  const n = feasible.length;
  const { constraints, requireAll } = scoringConstraints(pod, defaulting);
  const nodes = state.nodeList;
  const scored = new Uint8Array(n);
  for (let j = 0; j < n; j++) scored[j] = requireAll && !hasAllKeys(nodes[feasible[j]!]!, constraints) ? 0 : 1;
  const perConstraint = constraints.map((c) => {
    const counts = new Map<string, number>();
    const value = (j: number): string => labelValue(nodes[feasible[j % n]!]!.labels, c.topologyKey) ?? '';
    const add = (j: number, d: number): void => {
      if (!scored[j % n]) return;
      const v = c.topologyKey === HOSTNAME ? '' : value(j);
      const next = (counts.get(v) ?? 0) + d;
      if (next === 0) counts.delete(v);
      else counts.set(v, next);
    };
    const out = new Int32Array(n);
    for (let j = 0; j < k; j++) add(j, 1);
    for (let start = 0; start < n; start++) {
      out[start] = c.topologyKey === HOSTNAME ? (counts.get('') ?? 0) : counts.size;
      add(start, -1);
      add(start + k, 1);
    }
    return out;
  });
  const ids = new Int32Array(n);
  const known = new Map<string, number>();
  const vectors: number[][] = [];
  for (let start = 0; start < n; start++) {
    const vector = perConstraint.map((counts) => counts[start]!);
    const key = vector.join(',');
    let id = known.get(key);
    if (id === undefined) {
      id = vectors.length;
      known.set(key, id);
      vectors.push(vector);
    }
    ids[start] = id;
  }
  return { ids, vectors };
}
