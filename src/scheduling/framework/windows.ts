// Which nodes can win when the scheduler scores only a window of the feasible nodes. Above 100 nodes kube-scheduler
// stops filtering once it has found numFeasibleNodesToFind() feasible nodes, walking its node list from where the
// previous pod's search stopped (schedule_one.go, findNodesThatPassFilters), and scores only those. That start is not
// observable, so every start is possible: the scored set is any run of `k` consecutive feasible nodes in the walk's
// cyclic order, and a node is a possible landing when it has the top total in at least one such window.
//
// A window's totals depend on the window only through each plugin's normalisation over it (its raw scores' min and
// max) and, for PodTopologySpread, the number of domains it scores. Windows agreeing on all of those score every node
// alike; for each such group of windows the totals are worked out once for every feasible node, and node i wins in
// some window of the group exactly when its total equals the smallest window maximum among the group's windows that
// contain it. Sliding-window minima and maxima make each step linear: O(groups × feasible × plugins), not
// O(feasible × k) per placement.
import { MAX_NODE_SCORE } from './normalize.js';
import type { NodeScorer, WindowedScore } from './interface.js';
import type { ScoreBounds } from '../state/pendingSet.js';

export interface WeightedScorer {
  readonly name: string;
  readonly weight: number;
  readonly scorer: NodeScorer;
}

/** Per window start, the minimum (`max` false) or maximum of `values` over the cyclic run [start, start + k). */
export function slidingExtremes(values: Float64Array, k: number, max: boolean, skipNaN = false): Float64Array {
  const n = values.length;
  const out = new Float64Array(n);
  const deque = new Int32Array(n + k);
  let head = 0;
  let tail = 0;
  const better = (a: number, b: number): boolean => (max ? a >= b : a <= b);
  // Indices run over the doubled sequence; the deque holds candidates in order, best at the head.
  for (let j = 0; j < n + k - 1; j++) {
    const v = values[j % n]!;
    if (!(skipNaN && Number.isNaN(v))) {
      while (tail > head && better(v, values[deque[tail - 1]! % n]!)) tail--;
      deque[tail++] = j;
    }
    const start = j - k + 1;
    if (start < 0) continue;
    while (tail > head && deque[head]! < start) head++;
    out[start] = tail > head ? values[deque[head]! % n]! : NaN;
  }
  return out;
}

/** A node's final score from its raw one and the window's min and max, as the plugin's NormalizeScore computes it. */
function scaled(scaling: WindowedScore['scaling'], raw: number, min: number, max: number): number {
  switch (scaling) {
    case 'max':
      return max === 0 ? 0 : Math.trunc((MAX_NODE_SCORE * raw) / max);
    case 'maxReverse':
      return max === 0 ? MAX_NODE_SCORE : MAX_NODE_SCORE - Math.trunc((MAX_NODE_SCORE * raw) / max);
    case 'minMax':
      return max - min > 0 ? Math.trunc(MAX_NODE_SCORE * ((raw - min) / (max - min))) : 0;
    case 'spreadReverse':
      if (Number.isNaN(raw)) return 0;
      return max === 0 ? MAX_NODE_SCORE : Math.trunc((MAX_NODE_SCORE * (max + min - raw)) / max);
  }
}

interface WindowedPart {
  readonly weight: number;
  readonly scaling: WindowedScore['scaling'];
  /** Raw scores per parameter. */
  readonly raws: readonly Float64Array[];
  readonly ids: Int32Array | undefined;
  /** Per parameter, per window start: min and max of the raw scores. */
  readonly mins: readonly Float64Array[];
  readonly maxs: readonly Float64Array[];
}

/**
 * The nodes of `feasible` (node indices, in the walk's order) that have the top total in at least one window of `k`
 * consecutive ones; `k` < feasible.length. Returns a flag per position of `feasible`.
 */
export function windowWinners(
  feasible: Int32Array,
  k: number,
  scorers: readonly WeightedScorer[],
  bounds?: ScoreBounds,
): Uint8Array {
  const n = feasible.length;
  // The window-independent part of every node's total: plugins whose score is the node's own.
  const fixed = new Float64Array(n);
  const scratch = new Float64Array(n);
  const parts: WindowedPart[] = [];
  for (const { weight, scorer } of scorers) {
    const w = scorer.windowed;
    if (w === undefined) {
      scorer.score(feasible, scratch);
      for (let j = 0; j < n; j++) fixed[j]! += scratch[j]! * weight;
      continue;
    }
    const params = w.params?.(feasible, k);
    const count = params?.count ?? 1;
    const raws: Float64Array[] = [];
    const mins: Float64Array[] = [];
    const maxs: Float64Array[] = [];
    for (let p = 0; p < count; p++) {
      const raw = new Float64Array(n);
      w.raw(feasible, p, raw);
      raws.push(raw);
      const skip = w.scaling === 'spreadReverse';
      mins.push(slidingExtremes(raw, k, false, skip));
      maxs.push(slidingExtremes(raw, k, true, skip));
    }
    parts.push({ weight, scaling: w.scaling, raws, ids: params?.ids, mins, maxs });
  }
  // Windows grouped by everything their totals depend on.
  const groups = new Map<string, number[]>();
  for (let start = 0; start < n; start++) {
    let key = '';
    for (const part of parts) {
      const p = part.ids === undefined ? 0 : part.ids[start]!;
      key += `${p}:${part.mins[p]![start]}:${part.maxs[p]![start]};`;
    }
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [start]);
    else list.push(start);
  }
  const winners = new Uint8Array(n);
  const totals = new Float64Array(n);
  const windowTop = new Float64Array(n);
  for (const starts of groups.values()) {
    const first = starts[0]!;
    totals.set(fixed);
    for (const part of parts) {
      const p = part.ids === undefined ? 0 : part.ids[first]!;
      const raw = part.raws[p]!;
      const min = part.mins[p]![first]!;
      const max = part.maxs[p]![first]!;
      for (let j = 0; j < n; j++) totals[j]! += scaled(part.scaling, raw[j]!, min, max) * part.weight;
    }
    // With replacements pending (pending.ts), a window's best node is the one whose lowest total is highest, and a
    // node wins in it when its highest total reaches that.
    const lows = bounds === undefined ? totals : totals.map((t, j) => t + bounds.lo[j]!);
    const tops = slidingExtremes(lows, k, true);
    // The group's windows keep their maximum, the others +∞; node i lies in the windows starting at i-k+1 … i.
    windowTop.fill(Infinity);
    for (const start of starts) windowTop[start] = tops[start]!;
    // Windows containing node i start in the cyclic run [i-k+1, i], itself a run of k window starts.
    const lowest = slidingExtremes(windowTop, k, false);
    for (let i = 0; i < n; i++) {
      const high = bounds === undefined ? totals[i]! : totals[i]! + bounds.hi[i]!;
      if (high >= lowest[(i - k + 1 + n) % n]!) winners[i] = 1;
    }
  }
  return winners;
}
