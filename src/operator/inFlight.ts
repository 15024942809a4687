// Reservations that must be taken before an await and given back if the eviction does not happen.
//
// - InFlightEvictions: one workload's pods evicted and not yet replaced by a Ready pod, shared by every run of every
//   policy in the process. `maxPerWorkload` bounds this number *at any moment* (DESIGN.md), so two policies that
//   select the same Deployment can never have two of its pods in flight with maxPerWorkload 1: the slot is taken
//   synchronously before the eviction call and released when pacing saw the replacement Ready, when the call did not
//   evict, or when the run ends.
// - RunLimits: maxPerCycle, maxPerNode and maxPerNamespace (and, for a run that is not paced, maxPerWorkload) of one run. Lanes run
//   concurrently and each awaits a budget and the API call; checking a limit before the await and counting it after
//   lets every lane pass the check at once. reserve() checks and counts in one synchronous step; release() undoes a
//   reservation whose eviction was not made.
import type { PodInfo } from '../model/types.js';
import { workloadKey } from '../planner/budget.js';
import type { PolicySpec } from '../policy/types.js';

export class InFlightEvictions {
  private readonly byWorkload = new Map<string, number>();

  /** Takes a slot when fewer than `max` evictions of `workload` are in flight; false (nothing taken) otherwise. */
  tryReserve(workload: string, max: number): boolean {
    const current = this.byWorkload.get(workload) ?? 0;
    if (current >= max) return false;
    this.byWorkload.set(workload, current + 1);
    return true;
  }

  release(workload: string): void {
    const current = this.byWorkload.get(workload) ?? 0;
    if (current <= 1) this.byWorkload.delete(workload);
    else this.byWorkload.set(workload, current - 1);
  }

  count(workload: string): number {
    return this.byWorkload.get(workload) ?? 0;
  }

  /** Workloads with at least `max` evictions in flight. */
  *saturated(max: number): Iterable<string> {
    for (const [workload, n] of this.byWorkload) if (n >= max) yield workload;
  }
}

export class RunLimits {
  private total = 0;
  private readonly perNode = new Map<string, number>();
  private readonly perNamespace = new Map<string, number>();
  private readonly perWorkload = new Map<string, number>();

  /**
   * `perWorkloadInRun`: count maxPerWorkload within the run too (a run that executes one plan whole); a paced run
   * leaves it to the shared in-flight slot, which frees as each replacement becomes Ready.
   */
  constructor(
    private readonly limits: PolicySpec['eviction'],
    private readonly opts: { readonly perWorkloadInRun: boolean } = { perWorkloadInRun: true },
  ) {}

  /** Which limit one more eviction of this pod would exceed, or undefined. */
  exceeded(pod: PodInfo): string | undefined {
    const l = this.limits;
    if (this.total >= l.maxPerCycle) return `limit maxPerCycle (${l.maxPerCycle}) reached`;
    const node = pod.nodeName ?? '';
    if ((this.perNode.get(node) ?? 0) >= l.maxPerNode)
      return `limit maxPerNode (${l.maxPerNode}) reached on node ${node}`;
    if ((this.perNamespace.get(pod.namespace) ?? 0) >= l.maxPerNamespace) {
      return `limit maxPerNamespace (${l.maxPerNamespace}) reached in namespace ${pod.namespace}`;
    }
    if (this.opts.perWorkloadInRun && (this.perWorkload.get(workloadKey(pod)) ?? 0) >= l.maxPerWorkload) {
      return `limit maxPerWorkload (${l.maxPerWorkload}) reached for ${pod.workload.kind}/${pod.workload.name}`;
    }
    return undefined;
  }

  /** Checks and counts one eviction in one step: undefined when reserved, else the limit that is reached. */
  reserve(pod: PodInfo): string | undefined {
    const reached = this.exceeded(pod);
    if (reached === undefined) this.add(pod, 1);
    return reached;
  }

  /** Gives back a reservation whose eviction was not made. */
  release(pod: PodInfo): void {
    this.add(pod, -1);
  }

  /** Evictions reserved or made in this run. */
  get reserved(): number {
    return this.total;
  }

  get cycleFull(): boolean {
    return this.total >= this.limits.maxPerCycle;
  }

  private add(pod: PodInfo, delta: number): void {
    this.total += delta;
    const bump = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + delta);
    bump(this.perNode, pod.nodeName ?? '');
    bump(this.perNamespace, pod.namespace);
    bump(this.perWorkload, workloadKey(pod));
  }
}
