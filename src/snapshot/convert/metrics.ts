// NodeMetrics and PodMetrics (metrics.k8s.io/v1beta1, what `kubectl get nodes.metrics.k8s.io -o yaml` and
// `kubectl get pods.metrics.k8s.io -A -o yaml` print, and what the operator lists) → usage in the model's units:
// cpu in millicores, memory in bytes, quantities parsed as container requests are.
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import type { Resources, UsageReading } from '../../model/types.js';
import { getList, getObj, getString, requireString, root } from './fields.js';
import { resourceList } from './resources.js';

export interface NodeMetricsInfo {
  readonly name: string;
  readonly usage: Resources;
  /** When metrics-server sampled it (epoch ms); undefined when not given. */
  readonly timestamp: number | undefined;
}

export interface PodMetricsInfo {
  readonly namespace: string;
  readonly name: string;
  /** Its containers' usage, summed. */
  readonly usage: Resources;
  readonly timestamp: number | undefined;
}

function sampledAt(o: Obj): number | undefined {
  const raw = getString(o, 'timestamp', '');
  if (raw === undefined || raw === '') return undefined;
  const ms = Date.parse(raw);
  if (Number.isNaN(ms)) throw new FieldError('timestamp', `must be an RFC 3339 timestamp (got ${typeName(raw)})`);
  return ms;
}

export function convertNodeMetrics(raw: unknown): NodeMetricsInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const usage = resourceList(o, 'usage', '');
  if (usage === undefined) throw new FieldError('usage', 'is required (the node’s cpu and memory usage)');
  return { name: intern(name), usage: { ...usage }, timestamp: sampledAt(o) };
}

export function convertPodMetrics(raw: unknown): PodMetricsInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const namespace = getString(meta, 'namespace', 'metadata') || 'default';
  const usage: Record<string, number> = {};
  (getList(o, 'containers', '') ?? []).forEach((c, i) => {
    const path = `containers[${i}]`;
    if (!isObj(c)) throw new FieldError(path, `must be an object (got ${typeName(c)})`);
    const container = resourceList(c, 'usage', path) ?? {};
    for (const r in container) usage[r] = (usage[r] ?? 0) + container[r]!;
  });
  return { namespace: intern(namespace), name: intern(name), usage, timestamp: sampledAt(o) };
}

/**
 * The reading of a set of NodeMetrics and PodMetrics. `nodeOf` says where each pod ran when it was read (PodMetrics
 * do not say), so the planner can tell a pod that moved since. The reading is as old as its oldest sample (a pod
 * created after it cannot be in its node's figure); `readAt` when no object carries a timestamp.
 */
export function usageReading(
  nodes: readonly NodeMetricsInfo[],
  pods: readonly PodMetricsInfo[],
  nodeOf: (namespace: string, name: string) => string | undefined,
  readAt: number,
): UsageReading {
  let oldest = Infinity;
  for (const m of [...nodes, ...pods]) if (m.timestamp !== undefined) oldest = Math.min(oldest, m.timestamp);
  return {
    available: true,
    nodes: new Map(nodes.map((n) => [n.name, n.usage])),
    pods: new Map(pods.map((p) => [`${p.namespace}/${p.name}`, { usage: p.usage, node: nodeOf(p.namespace, p.name) }])),
    readAt: Number.isFinite(oldest) ? oldest : readAt,
  };
}
