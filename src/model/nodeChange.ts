// What changed about a node that may let pods land on it where they could not before: the node-change trigger's rule
// (operator/triggers.ts), and the landing check's (a replacement that landed elsewhere on such a node went where no
// plan made before the change could send it: operator/clusterCache.ts). Going NotReady, a cordon, heartbeats and
// capacity are not such changes, though the taints the node controller adds are.
import type { NodeInfo, Taint } from './types.js';

function taintText(t: Taint): string {
  return `${t.key}=${t.value}:${t.effect}`;
}

function sameLabels(a: NodeInfo['labels'], b: NodeInfo['labels']): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** What changed about a node that may let pods move, or undefined (heartbeats, capacity, going NotReady). */
export function nodeChange(previous: NodeInfo | undefined, next: NodeInfo): string | undefined {
  const name = next.name;
  if (previous === undefined) return `node ${name} added`;
  if (!previous.ready && next.ready) return `node ${name} became Ready`;
  if (previous.unschedulable && !next.unschedulable) return `node ${name} became schedulable`;
  if (!sameLabels(previous.labels, next.labels)) return `labels of node ${name} changed`;
  const before = previous.taints.map(taintText).sort().join(',');
  const after = next.taints.map(taintText).sort().join(',');
  if (before !== after) return `taints of node ${name} changed (${before || 'none'} → ${after || 'none'})`;
  return undefined;
}
