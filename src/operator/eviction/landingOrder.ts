// The closed loop's order within one paced run (DESIGN.md, "The operator checks its own predictions").
//
// A plan is a sequence: the planner placed each replacement where the scheduler would put it and planned the next
// move on that state. Where the scheduler breaks a tie the other way, a later move whose prediction assumed the
// earlier replacement on its target may be wrong (the cascade of issue 29). Two cases:
//   - the later pod is *related* to the earlier one (its spread counts it, the same workload, inter-pod terms, host
//     ports, volumes: scheduling/pending.ts): its prediction assumed the target, so it waits until the earlier
//     replacement has landed, and is planned again unless it landed on its target;
//   - it is unrelated: the earlier replacement only changes the resources of the node it lands on, and the operator's
//     plans predict every later move with it pending on any of its possible landings (PlanOptions.pendingLandings),
//     so the later eviction is sent without waiting; only a replacement landing *outside* its possible landings (or
//     not at all) makes its prediction, and so every later one, stale.
// The plan allowed each move for the replacements planned *before* it; but replacements are created by their
// controllers and queued by the scheduler in no guaranteed order, so one sent later may be scheduled first. Landing
// first, it takes one node, and one only; so an earlier replacement still on its way keeps its prediction as long as
// no more later ones that may land on its nodes are on their way than its slack: the extra landings its prediction
// stands (scheduling/pending.ts, landingSlack), which may be far fewer than its possible landings when only a few of
// them hold the top score for sure. A lane whose replacement could be the one too many waits until the earlier one
// has landed.
// So the lanes of a run queue up in the order their plans made them (a ticket each), and a lane may send its eviction
// only when every lane queued before it has had its turn (sent, or given up), no replacement related to its pod is
// still on its way, no earlier one would be left without a possible landing, and its prediction still stands. A lane that gives up its move (the pod gone, a budget, a limit:
// the plan assumed it moved) makes every queued prediction stale, as does a landing elsewhere; the lanes that have
// not sent drop their moves without holding their workloads, and the run plans those again from the caches.
import type { PodInfo } from '../../model/types.js';
import { relatedLandings } from '../../scheduling/pending.js';

export type Turn = 'go' | 'stale' | 'halted';

/** A replacement on its way: its evicted pod, its possible landings, and how many sent after it may land there too. */
interface OnItsWay {
  readonly pod: PodInfo;
  readonly landings: ReadonlySet<string>;
  /** How many sent after it may land on its nodes first with its prediction standing. */
  readonly slack: number;
  crowdedBy: number;
}

/** What a lane is to send: the pod, and the nodes its replacement may land on (empty: no landing predicted). */
interface Queued {
  readonly pod: PodInfo;
  readonly landings: ReadonlySet<string>;
  readonly slack: number;
}

function overlaps(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const n of small) if (large.has(n)) return true;
  return false;
}

export class LandingOrder {
  private nextTicket = 0;
  /** Tickets not yet settled, in issue order, with what each lane is to evict. */
  private readonly open = new Map<number, Queued>();
  /** Open tickets whose prediction no longer stands. */
  private readonly stale = new Set<number>();
  /** Evicted pods whose replacement has not landed yet (or whose wait has not ended), by uid, in the order sent. */
  private readonly pending = new Map<string, OnItsWay>();
  /** The lanes waiting for their turn, by ticket: only the head and the stale ones are woken (thousands may wait). */
  private readonly waiters = new Map<number, () => void>();
  /**
   * While a plan is made (planSlices.ts: the run goes on meanwhile), the first ticket it will issue and what went
   * stale since it began: every prediction ('all') or those related to a landed pod. Its lanes are queued only when
   * it is done, so these apply to them then (planDone).
   */
  private planning: { readonly from: number; readonly stale: Array<PodInfo | 'all'> } | undefined;

  /** A plan begins, from the state of this instant: what goes stale until planDone applies to its lanes too. */
  planBegins(): void {
    this.planning = { from: this.nextTicket, stale: [] };
  }

  /** The plan that began at planBegins has queued its lanes: those whose prediction went stale meanwhile are. */
  planDone(): void {
    const planning = this.planning;
    this.planning = undefined;
    if (planning === undefined || planning.stale.length === 0) return;
    for (const [ticket, q] of this.open) {
      if (ticket < planning.from) continue;
      if (planning.stale.some((landed) => landed === 'all' || relatedLandings(q.pod, landed))) this.stale.add(ticket);
    }
    this.wake();
  }

  /**
   * A place in the queue for a lane about to evict `pod`, whose replacement may land on `landings`, and whose
   * prediction stands `slack` replacements sent after it landing there first (Move.slack; by default one fewer than
   * `landings`: each takes one node).
   */
  enqueue(pod: PodInfo, landings: readonly string[] = [], slack?: number): number {
    const ticket = this.nextTicket++;
    const set = new Set(landings);
    this.open.set(ticket, { pod, landings: set, slack: slack ?? Math.max(0, set.size - 1) });
    return ticket;
  }

  /** The predictions of every lane queued so far no longer stand: those that have not sent drop their moves. */
  invalidate(): void {
    this.planning?.stale.push('all');
    for (const ticket of this.open.keys()) this.stale.add(ticket);
    this.wake();
  }

  /**
   * `landed`'s replacement took a node its plan did not put it on, among its possible landings: the predictions that
   * assumed its target (those of related pods) no longer stand.
   */
  invalidateRelated(landed: PodInfo): void {
    this.planning?.stale.push(landed);
    for (const [ticket, q] of this.open) if (relatedLandings(q.pod, landed)) this.stale.add(ticket);
    this.wake();
  }

  /** Waits until `ticket` may send, or its prediction went stale, or `signal` fired. */
  async waitTurn(ticket: number, signal: AbortSignal): Promise<Turn> {
    for (;;) {
      if (signal.aborted) return 'halted';
      if (this.stale.has(ticket)) return 'stale';
      if (this.head() === ticket && !this.waitsForLanding(this.open.get(ticket)!)) return 'go';
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(ticket);
          signal.removeEventListener('abort', wake);
          resolve();
        };
        this.waiters.set(ticket, wake);
        signal.addEventListener('abort', wake, { once: true });
      });
    }
  }

  /** The lane of `ticket` had its turn (sent its eviction or gave up): the next one may go. */
  settle(ticket: number): void {
    this.open.delete(ticket);
    this.stale.delete(ticket);
    this.wake();
  }

  /**
   * The lane of `ticket` sends its eviction: its replacement is on its way until landingKnown(). The ones sent before
   * it that it may crowd count it.
   */
  landingAwaited(ticket: number): void {
    const q = this.open.get(ticket);
    if (q === undefined) return;
    for (const earlier of this.pending.values()) if (overlaps(earlier.landings, q.landings)) earlier.crowdedBy++;
    this.pending.set(q.pod.uid, { pod: q.pod, landings: q.landings, slack: q.slack, crowdedBy: 0 });
  }

  landingKnown(pod: PodInfo): void {
    this.pending.delete(pod.uid);
    this.wake();
  }

  /**
   * The replacements of lanes still queued or sent and not yet landed, with their possible landings: every one the
   * next plan must allow for (PlanOptions.inFlight). A queued lane sends before anything that plan adds.
   */
  inFlight(): Array<{ pod: PodInfo; nodes: string[] }> {
    const out: Array<{ pod: PodInfo; nodes: string[] }> = [];
    for (const q of [...this.open.values(), ...this.pending.values()]) {
      if (q.landings.size > 0) out.push({ pod: q.pod, nodes: [...q.landings] });
    }
    return out;
  }

  /**
   * Whether the lane must wait for a landing: a replacement related to its pod is on its way, or one on its way would
   * have its prediction spoiled if this one landed first on a node it may take (past its slack).
   */
  private waitsForLanding(q: Queued): boolean {
    for (const p of this.pending.values()) {
      if (relatedLandings(p.pod, q.pod)) return true;
      if (p.crowdedBy >= p.slack && overlaps(p.landings, q.landings)) return true;
    }
    return false;
  }

  /** The first open ticket whose prediction stands. */
  private head(): number | undefined {
    for (const ticket of this.open.keys()) if (!this.stale.has(ticket)) return ticket;
    return undefined;
  }

  private wake(): void {
    const head = this.head();
    const woken: Array<() => void> = [];
    for (const [ticket, wake] of this.waiters) if (ticket === head || this.stale.has(ticket)) woken.push(wake);
    for (const wake of woken) wake();
  }
}
