// Pacing and loop detection after an eviction, read from the watch caches only.
//
// waitForReplacement: after evicting a pod of workload W, W's next eviction waits until
//   - the evicted pod is gone or terminating,
//   - W's Ready (non-terminating) pod count is back to what it was before the eviction, and
//   - the pod's PodDisruptionBudget, if any, has a status newer than the one the eviction was checked against,
//     observed by its controller (observedGeneration >= generation), allowing a disruption again,
// or until `timeoutMs` passes. At the timeout the outcome says whether a replacement is still Pending (the policy
// must then be marked Degraded and paused: its evictions cannot come back) or merely not Ready yet.
//
// Loop detection (the `cooldown` of DESIGN.md): a replacement is a pod of W that did not exist before the eviction.
// When one is scheduled back onto the node its pod was evicted from, or into the same domain of a topology key the
// move was meant to change, the move achieved nothing; `onLoop` is told once, and the caller holds W for the cooldown.
import { isPendingForScheduler } from '../../model/pods.js';
import type { NodeInfo, PodInfo } from '../../model/types.js';
import type { Strategy } from '../../model/plan.js';
import { ClusterCache, pdbWaitKey, workloadWaitKey, type PdbEntry } from '../clusterCache.js';

/** What is remembered about one eviction for pacing and loop detection. */
export interface EvictionRecord {
  readonly workload: string;
  readonly pod: PodInfo;
  readonly strategy: Strategy;
  /** The node the pod ran on when evicted. */
  readonly from: NodeInfo | undefined;
  /** Topology keys whose domain the move was meant to change (TopologySpread only). */
  readonly loopKeys: readonly string[];
  /** Ready pods of the workload just before the eviction (the evicted one included). */
  readonly readyBefore: number;
  /** Uids of the workload's pods just before the eviction. */
  readonly podsBefore: ReadonlySet<string>;
  /** The budget the eviction was checked against and the resourceVersion it had then. */
  readonly pdb: { readonly key: string; readonly resourceVersion: string } | undefined;
}

export interface LoopDetection {
  readonly workload: string;
  readonly evicted: PodInfo;
  readonly replacement: PodInfo;
  /** `node node-a1` or `topology.kubernetes.io/zone=zone-a`. */
  readonly where: string;
}

export type PacingOutcome =
  | { readonly kind: 'replaced' }
  | { readonly kind: 'pending'; readonly replacement: PodInfo }
  | { readonly kind: 'not_ready'; readonly replacement: PodInfo | undefined }
  | { readonly kind: 'aborted' };

/**
 * The topology keys a move is meant to change: for a move that repairs spread skew (`spreadKey` set), those of the
 * pod's spread constraints whose domain differs. A move that clears a rule's violation has none: its replacement
 * landing in the same zone is no loop.
 */
export function loopKeysFor(
  pod: PodInfo,
  spreadKey: string | undefined,
  from: NodeInfo | undefined,
  target: NodeInfo | undefined,
  defaultKeys: readonly string[],
): string[] {
  if (spreadKey === undefined) return [];
  const keys = new Set(
    pod.spreadConstraints.length > 0 ? pod.spreadConstraints.map((c) => c.topologyKey) : defaultKeys,
  );
  const out: string[] = [];
  for (const key of keys) {
    if (target === undefined || from === undefined || from.labels[key] !== target.labels[key]) out.push(key);
  }
  return out;
}

/** Where the replacement landed back, if it did. */
export function landedBack(
  record: EvictionRecord,
  replacementNode: NodeInfo | undefined,
  nodeName: string,
): string | undefined {
  if (record.from === undefined) return undefined;
  if (nodeName === record.from.name) return `node ${nodeName}`;
  if (replacementNode === undefined) return undefined;
  for (const key of record.loopKeys) {
    const value = record.from.labels[key];
    if (value !== undefined && replacementNode.labels[key] === value) return `${key}=${value}`;
  }
  return undefined;
}

function budgetSettled(record: EvictionRecord, entry: PdbEntry | undefined): boolean {
  if (record.pdb === undefined || entry === undefined) return true;
  if (entry.resourceVersion === record.pdb.resourceVersion) return false;
  return ClusterCache.allowance(entry, 0) >= 1;
}

export interface PacingOptions {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly onLoop: (loop: LoopDetection) => void;
}

export async function waitForReplacement(
  cache: ClusterCache,
  record: EvictionRecord,
  opts: PacingOptions,
): Promise<PacingOutcome> {
  let loopReported = false;
  const replacements = (): PodInfo[] =>
    cache.workloadPods(record.workload).filter((p) => !record.podsBefore.has(p.uid) && !p.terminating);
  const evictedGone = (): boolean => {
    const current = cache.pod(record.pod.namespace, record.pod.name);
    return current === undefined || current.uid !== record.pod.uid || current.terminating;
  };
  const replaced = (): boolean => evictedGone() && cache.readyCount(record.workload) >= record.readyBefore;
  const check = (): boolean => {
    if (!loopReported) {
      for (const pod of replacements()) {
        if (pod.nodeName === undefined) continue;
        const where = landedBack(record, cache.node(pod.nodeName), pod.nodeName);
        if (where !== undefined) {
          loopReported = true;
          opts.onLoop({ workload: record.workload, evicted: record.pod, replacement: pod, where });
          break;
        }
      }
    }
    return replaced() && budgetSettled(record, record.pdb === undefined ? undefined : cache.pdb(record.pdb.key));
  };
  const keys = [workloadWaitKey(record.workload), ...(record.pdb !== undefined ? [pdbWaitKey(record.pdb.key)] : [])];
  const done = await cache.waitUntil(keys, check, opts.timeoutMs, opts.signal);
  if (done) return { kind: 'replaced' };
  if (opts.signal.aborted) return { kind: 'aborted' };
  // Timed out. Ready again but the budget's status did not catch up: pacing is over all the same.
  if (replaced()) return { kind: 'replaced' };
  const fresh = replacements();
  // Unschedulable, or bound but never started (an image that does not pull): either way it cannot come back.
  const pending = fresh.find(isPendingForScheduler);
  if (pending !== undefined) return { kind: 'pending', replacement: pending };
  return { kind: 'not_ready', replacement: fresh.find((p) => !p.ready) };
}
