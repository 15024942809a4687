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
import { convertNode, convertPod, makePriorityResolver } from '../../src/snapshot/convert.js';

export interface ProjectSchedulerOptions {
  readonly scope?: 'all' | 'workload';
  /** Called with every placement decision (for assertions). */
  readonly onPlace?: (pod: RawPod, node: string | undefined, reason: string | undefined) => void;
}

/** Every namespace in scope, so any pod's spread groups exist in the analysis. */
const SPEC: PolicySpec = { ...DEFAULT_POLICY.spec, namespaces: { include: [], exclude: [] } };

interface Pass {
  readonly nodes: NodeInfo[];
  readonly pods: PodInfo[];
  readonly nodesByName: Map<string, NodeInfo>;
  readonly resolve: (className: string | undefined) => number;
}

function controllerUid(pod: RawPod): string | undefined {
  return pod.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
}

export function projectScheduler(opts: ProjectSchedulerOptions = {}): ScheduleFunction {
  const passes = new WeakMap<RawClusterState, Pass>();
  const rawByPass = new WeakMap<RawClusterState, RawPod[]>();

  function pass(raw: RawClusterState): Pass {
    let found = passes.get(raw);
    if (found !== undefined) return found;
    const nodes = raw.nodes.map((n) => convertNode(n));
    const resolve = makePriorityResolver([]);
    const pods: PodInfo[] = [];
    if ((opts.scope ?? 'all') === 'all') {
      for (const p of raw.pods) if (p.spec.nodeName) pods.push(convertPod(p, resolve));
    } else {
      rawByPass.set(raw, raw.pods);
    }
    found = { nodes, pods, nodesByName: new Map(nodes.map((n) => [n.name, n])), resolve };
    passes.set(raw, found);
    return found;
  }

  return (pending, raw) => {
    const p = pass(raw);
    const pod = convertPod(pending, p.resolve);
    let pods = p.pods;
    if (opts.scope === 'workload') {
      const owner = controllerUid(pending);
      pods = (rawByPass.get(raw) ?? [])
        .filter(
          (o) =>
            o.spec.nodeName &&
            o.metadata.namespace === pending.metadata.namespace &&
            (owner === undefined ? o.metadata.name === pending.metadata.name : controllerUid(o) === owner),
        )
        .map((o) => convertPod(o, p.resolve));
    }
    const snapshot = {
      nodes: p.nodes,
      pods: [...pods, { ...pod, nodeName: undefined }],
      pdbs: [],
      priorityClasses: [],
      namespaces: [],
      now: Date.now(),
    };
    const state = new ClusterState(analyze(snapshot, SPEC));
    const placement = placeReplacement(state, pod, undefined);
    const node = placement.node?.name;
    opts.onPlace?.(pending, node, placement.reason);
    if (node !== undefined && (opts.scope ?? 'all') === 'all') {
      // The next candidate of this pass sees this pod where it was bound.
      p.pods.push({ ...pod, nodeName: node, phase: 'Running' });
    }
    return node;
  };
}
