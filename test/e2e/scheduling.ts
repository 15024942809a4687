// The project's scheduler simulation plugged into the test API server's scheduler: for a Pending pod, the raw
// objects are converted with the snapshot converters, analysed, and placeReplacement() (src/scheduling/placement.ts)
// picks the node, exactly as the planner predicts replacements. So in these tests the cluster schedules
// replacements the way the planner expects kube-scheduler to (spread, affinity, taints, resources).
//
// The test scheduler hands every candidate of one pass the same ClusterState object; the converted state is built
// once per pass and each placement is added to it, so the next candidate sees it. `scope` trims the pods the
// simulation looks at, for big clusters: `all` (exact), or `workload` (only the pending pod's own
// namespace/controller siblings; fine when nodes have room to spare, since resources of other pods are ignored).
import type { ClusterState as RawClusterState, RawPod, ScheduleFunction } from '../apiserver/index.js';
import { analyze } from '../../src/analysis/analyze.js';
import type { NodeInfo, PodInfo } from '../../src/model/types.js';
import { DEFAULT_POLICY } from '../../src/policy/parse.js';
import type { PolicySpec } from '../../src/policy/types.js';
import { ClusterState } from '../../src/scheduling/clusterState.js';
import { placeReplacement } from '../../src/scheduling/placement.js';
import { ConversionCache, convertNode, convertPod, makePriorityResolver } from '../../src/snapshot/convert.js';

export interface ProjectSchedulerOptions {
  /**
   * The pods the simulation looks at: `all` (exact), or `workload`: only the bound pods `siblings(pending)` returns
   * (its own Deployment's), which is fine when nodes have room to spare, since other pods' resources are ignored.
   */
  readonly scope?: 'all' | 'workload';
  readonly siblings?: (pending: RawPod) => readonly RawPod[];
  /** Called with every placement decision (for assertions). */
  readonly onPlace?: (pod: RawPod, node: string | undefined, reason: string | undefined) => void;
}

/** Every namespace in scope, so any pod's spread groups exist in the analysis. */
const SPEC: PolicySpec = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

interface Pass {
  readonly nodes: NodeInfo[];
  /** Bound pods (scope `all`), with this pass's placements added. */
  readonly pods: PodInfo[];
  /** Placements made in this pass (scope `workload`), by namespace. */
  readonly placed: PodInfo[];
}

const resolve = makePriorityResolver([]);

export function projectScheduler(opts: ProjectSchedulerOptions = {}): ScheduleFunction {
  const passes = new WeakMap<RawClusterState, Pass>();
  const conversions = new ConversionCache();
  const scope = opts.scope ?? 'all';

  function pass(raw: RawClusterState): Pass {
    let found = passes.get(raw);
    if (found !== undefined) return found;
    const pods: PodInfo[] = [];
    if (scope === 'all') for (const p of raw.pods) if (p.spec.nodeName) pods.push(convertPod(p, conversions, resolve));
    found = { nodes: raw.nodes.map((n) => convertNode(n)), pods, placed: [] };
    passes.set(raw, found);
    return found;
  }

  function podsFor(p: Pass, pending: RawPod, pod: PodInfo): PodInfo[] {
    if (scope === 'all') return p.pods;
    const siblings = (opts.siblings?.(pending) ?? []).filter((o) => o.spec.nodeName);
    const known = new Set(siblings.map((o) => o.metadata.uid));
    return [
      ...siblings.map((o) => convertPod(o, conversions, resolve)),
      ...p.placed.filter((o) => o.namespace === pod.namespace && !known.has(o.uid)),
    ];
  }

  return (pending, raw) => {
    const p = pass(raw);
    const pod = convertPod(pending, conversions, resolve);
    const snapshot = {
      nodes: p.nodes,
      pods: [...podsFor(p, pending, pod), pod],
      pdbs: [],
      priorityClasses: [],
      namespaces: [],
      now: Date.now(),
    };
    const state = new ClusterState(analyze(snapshot, SPEC));
    const placement = placeReplacement(state, pod, undefined);
    const node = placement.node?.name;
    opts.onPlace?.(pending, node, placement.reason);
    if (node !== undefined) {
      // The next candidate of this pass sees this pod where it was bound.
      (scope === 'all' ? p.pods : p.placed).push({ ...pod, nodeName: node, phase: 'Running' });
    }
    return node;
  };
}
