// What one cycle may still spend: PodDisruptionBudget allowances and the policy's eviction limits.
// Both are consumed as evictions are planned, so a plan never schedules more than either allows.
import { pdbKey, pdbsForPod } from '../model/pdb.js';
import type { PdbInfo, PodInfo } from '../model/types.js';
import type { PolicySpec } from '../policy/types.js';

/**
 * The Eviction API deletes a Pending, Succeeded or Failed pod (and a terminating one) without looking at its
 * budgets (v1.26 pkg/registry/core/pod/storage/eviction.go, canIgnorePDB): such a pod counts as healthy for none,
 * so removing it takes nothing from them. Only the housekeeping strategies act on such pods.
 */
export function budgetsIgnored(pod: PodInfo): boolean {
  return pod.phase === 'Pending' || pod.phase === 'Succeeded' || pod.phase === 'Failed' || pod.terminating;
}

export function workloadKey(pod: PodInfo): string {
  return `${pod.namespace}/${pod.workload.kind}/${pod.workload.name}`;
}

/** The Eviction API refuses a pod that more than one budget selects: why, or undefined for one budget or none. */
export function multipleBudgetsRefusal(pdbs: readonly PdbInfo[]): string | undefined {
  if (pdbs.length <= 1) return undefined;
  return `pod is selected by ${pdbs.length} PodDisruptionBudgets (${pdbs.map(pdbKey).join(', ')}); the Eviction API refuses such pods`;
}

export class DisruptionBudgets {
  private readonly remaining: Map<string, number>;
  private readonly byNamespace = new Map<string, PdbInfo[]>();

  constructor(
    pdbs: readonly PdbInfo[],
    private readonly allowances: ReadonlyMap<string, number>,
  ) {
    this.remaining = new Map(allowances);
    for (const pdb of pdbs) {
      const list = this.byNamespace.get(pdb.namespace);
      if (list) list.push(pdb);
      else this.byNamespace.set(pdb.namespace, [pdb]);
    }
  }

  /** Namespace → label set → the budgets selecting it: replicas share their labels object, and budgets never change. */
  private readonly selecting = new Map<string, WeakMap<PodInfo['labels'], readonly PdbInfo[]>>();

  private pdbsOf(pod: PodInfo): readonly PdbInfo[] {
    if (budgetsIgnored(pod)) return [];
    let perLabels = this.selecting.get(pod.namespace);
    if (perLabels === undefined) {
      perLabels = new WeakMap();
      this.selecting.set(pod.namespace, perLabels);
    }
    let pdbs = perLabels.get(pod.labels);
    if (pdbs === undefined) {
      pdbs = pdbsForPod(pod, this.byNamespace.get(pod.namespace) ?? []);
      perLabels.set(pod.labels, pdbs);
    }
    return pdbs;
  }

  /**
   * Why the Eviction API would refuse this pod now, or undefined if one more eviction fits its budget.
   * `pacing`: a budget that only this plan spent does not refuse (the executor evicts one at a time as replacements
   * become Ready, and the budget is whole again by then); a budget the cluster reported as spent still does.
   */
  refusal(pod: PodInfo, pacing = false): string | undefined {
    const pdbs = this.pdbsOf(pod);
    const several = multipleBudgetsRefusal(pdbs);
    if (several !== undefined) return several;
    const pdb = pdbs[0];
    if (pdb === undefined) return undefined;
    const key = pdbKey(pdb);
    const left = this.remaining.get(key) ?? 0;
    if (left > 0) return undefined;
    // A budget this plan spent is not one the cluster reported as spent: say which it is.
    const allowed = this.allowances.get(key) ?? 0;
    if (pacing && allowed > 0) return undefined;
    return allowed > 0
      ? `PodDisruptionBudget ${key}: budget used by this plan (${allowed} of ${allowed})`
      : `PodDisruptionBudget ${key} allows 0 disruptions`;
  }

  /** Records a planned eviction against the pod's budget. Call only after refusal() returned undefined. */
  consume(pod: PodInfo): void {
    const pdb = this.pdbsOf(pod)[0];
    if (pdb === undefined) return;
    const key = pdbKey(pdb);
    this.remaining.set(key, (this.remaining.get(key) ?? 0) - 1);
  }

  /** Gives back what consume() took, for a planned eviction that is dropped again. */
  release(pod: PodInfo): void {
    const pdb = this.pdbsOf(pod)[0];
    if (pdb === undefined) return;
    const key = pdbKey(pdb);
    this.remaining.set(key, (this.remaining.get(key) ?? 0) + 1);
  }
}

/**
 * What earlier steps of the same run already spent of the per-cycle limits. A run that goes on as replacements
 * become Ready plans again after each step; a plan that started its counts at zero would pick a pod on a node (or in
 * a namespace) the run has used up, where a pod elsewhere would do, and the run would stop there with work left.
 * maxPerWorkload is not here: in such a run it bounds evictions in flight, which the executor keeps to.
 */
export interface SpentLimits {
  readonly total: number;
  readonly perNode: ReadonlyMap<string, number>;
  readonly perNamespace: ReadonlyMap<string, number>;
}

export class EvictionLimits {
  private total: number;
  private readonly perNode: Map<string, number>;
  private readonly perNamespace: Map<string, number>;
  private readonly perWorkload = new Map<string, number>();

  /** What the run had spent before this plan: a step's cap counts from it. */
  private readonly startTotal: number;

  constructor(
    private readonly limits: PolicySpec['eviction'],
    spent?: SpentLimits,
    /** The most evictions this plan may add (a paced run's step, PlanOptions.maxMoves); unbounded when absent. */
    private readonly stepCap?: number,
  ) {
    this.total = spent?.total ?? 0;
    this.startTotal = this.total;
    this.perNode = new Map(spent?.perNode);
    this.perNamespace = new Map(spent?.perNamespace);
  }

  /** The cycle-wide counts so far, for the next plan of the same run. */
  spent(): SpentLimits {
    return { total: this.total, perNode: new Map(this.perNode), perNamespace: new Map(this.perNamespace) };
  }

  /**
   * Which limit one more eviction of this pod would exceed, or undefined. `pacing`: maxPerWorkload does not count,
   * since it bounds the workload's evictions in flight at once, which the executor keeps to as it goes.
   */
  exceeded(pod: PodInfo, pacing = false): string | undefined {
    const l = this.limits;
    if (this.total >= l.maxPerCycle) return `limit maxPerCycle (${l.maxPerCycle}) reached`;
    if (this.stepFull) {
      return `planned in a later step of this run (a paced run plans ${this.stepCap} evictions at a time, the next as they land)`;
    }
    const node = pod.nodeName ?? '';
    if ((this.perNode.get(node) ?? 0) >= l.maxPerNode)
      return `limit maxPerNode (${l.maxPerNode}) reached on node ${node}`;
    if ((this.perNamespace.get(pod.namespace) ?? 0) >= l.maxPerNamespace) {
      return `limit maxPerNamespace (${l.maxPerNamespace}) reached in namespace ${pod.namespace}`;
    }
    if (!pacing && (this.perWorkload.get(workloadKey(pod)) ?? 0) >= l.maxPerWorkload) {
      return `limit maxPerWorkload (${l.maxPerWorkload}) reached for ${pod.workload.kind}/${pod.workload.name}`;
    }
    return undefined;
  }

  /** True once no further eviction can be planned this cycle. */
  get cycleFull(): boolean {
    return this.total >= this.limits.maxPerCycle || this.stepFull;
  }

  /** This plan holds its step's share (PlanOptions.maxMoves): what is left is planned in a later step of the run. */
  get stepFull(): boolean {
    return this.stepCap !== undefined && this.total - this.startTotal >= this.stepCap;
  }

  consume(pod: PodInfo): void {
    this.count(pod, 1);
  }

  /** Gives back what consume() took, for a planned eviction that is dropped again. */
  release(pod: PodInfo): void {
    this.count(pod, -1);
  }

  private count(pod: PodInfo, delta: 1 | -1): void {
    this.total += delta;
    const bump = (m: Map<string, number>, k: string): void => void m.set(k, (m.get(k) ?? 0) + delta);
    bump(this.perNode, pod.nodeName ?? '');
    bump(this.perNamespace, pod.namespace);
    bump(this.perWorkload, workloadKey(pod));
  }
}
