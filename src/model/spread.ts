// Topology spread constraints as kube-scheduler reads them (pkg/scheduler/framework/plugins/podtopologyspread):
// the defaults of a constraint's optional fields, and the skew measure of a group's domain counts.
import { DomainCounts } from './domainCounts.js';
import type { NodeInclusionPolicy, SpreadConstraint, WhenUnsatisfiable } from './types.js';

export const WHEN_UNSATISFIABLE: readonly WhenUnsatisfiable[] = ['DoNotSchedule', 'ScheduleAnyway'];
export const NODE_INCLUSION_POLICIES: readonly NodeInclusionPolicy[] = ['Honor', 'Ignore'];

/** The API's rule for minDomains (and the CRD's CEL rule for a policy's default constraints). */
export const MIN_DOMAINS_NEEDS_DO_NOT_SCHEDULE = 'can only be set when whenUnsatisfiable is DoNotSchedule';

export type SpreadConstraintOptions = Pick<SpreadConstraint, 'minDomains' | 'nodeAffinityPolicy' | 'nodeTaintsPolicy'>;

/**
 * The one place a constraint's optional fields get their defaults, for a pod's own constraints and for a policy's
 * defaultConstraints alike: minDomains nil means 1 (the global minimum is then the smallest domain count);
 * nodeAffinityPolicy nil means Honor (only nodes matching the pod's nodeSelector and required affinity are domains);
 * nodeTaintsPolicy nil means Ignore (tainted nodes are domains too), as the scheduler defaults them.
 */
export function spreadConstraintDefaults(
  minDomains: number | undefined,
  nodeAffinityPolicy: NodeInclusionPolicy | undefined,
  nodeTaintsPolicy: NodeInclusionPolicy | undefined,
): SpreadConstraintOptions {
  return {
    minDomains: minDomains ?? 1,
    nodeAffinityPolicy: nodeAffinityPolicy ?? 'Honor',
    nodeTaintsPolicy: nodeTaintsPolicy ?? 'Ignore',
  };
}

/** A skew measure that strictly decreases with every useful move: (skew, domains at max, domains at min). */
export type SkewTuple = readonly [number, number, number];

/** Calls `visit` with each domain's count and how many domains have it. */
type EachCount = (visit: (count: number, domains: number) => void) => void;

/** The tuple of the counts `each` gives (`size` domains in all), with the scheduler's minDomains rule. */
function tupleOver(each: EachCount, size: number, minDomains: number): SkewTuple {
  let min = Infinity;
  let max = 0;
  each((n, domains) => {
    if (domains === 0) return;
    if (n < min) min = n;
    if (n > max) max = n;
  });
  let atMax = 0;
  let atMin = 0;
  each((n, domains) => {
    if (n === max) atMax += domains;
    if (n === min) atMin += domains;
  });
  // The scheduler's global minimum is 0 while there are fewer eligible domains than minDomains.
  if (size < minDomains) {
    atMin = 0;
    min = 0;
  }
  return [max - min, atMax, atMin];
}

/** The tuple of `counts`, optionally with one pod moved out of `minus` and into `plus` (no copy made). */
export function skewTuple(
  counts: ReadonlyMap<string, number>,
  minDomains: number,
  minus?: string,
  plus?: string,
): SkewTuple {
  if (counts.size === 0) return [0, 0, 0];
  if (counts instanceof DomainCounts) return sparseSkewTuple(counts, minDomains, minus, plus);
  // forEach, not for…of over entries: a [domain, count] pair per entry per call was a large part of a plan's garbage
  // (groups with hundreds of hostname domains, measured thousands of times per plan; issue 24).
  const each: EachCount = (visit) =>
    counts.forEach((raw, domain) => visit(raw - (domain === minus ? 1 : 0) + (domain === plus ? 1 : 0), 1));
  return tupleOver(each, counts.size, minDomains);
}

/**
 * skewTuple over the domains with pods only: the rest are `zeros` domains at 0. A moved pod's domain without pods
 * (the `plus` of a move into an empty domain) leaves the zeros and counts 1.
 */
function sparseSkewTuple(counts: DomainCounts, minDomains: number, minus?: string, plus?: string): SkewTuple {
  const positive = counts.positive();
  // The moved pod's domains that hold no pod now leave the zeros: `plus` with 1, `minus` (never in a real move) −1.
  const emptyMinus = minus !== plus && minus !== undefined && counts.has(minus) && !positive.has(minus);
  const emptyPlus = minus !== plus && plus !== undefined && counts.has(plus) && !positive.has(plus);
  const zeros = counts.zeros - (emptyMinus ? 1 : 0) - (emptyPlus ? 1 : 0);
  const tuple = (): SkewTuple => {
    const each: EachCount = (visit) => {
      visit(0, zeros);
      if (emptyMinus) visit(-1, 1);
      if (emptyPlus) visit(1, 1);
      positive.forEach((raw, domain) => visit(raw - (domain === minus ? 1 : 0) + (domain === plus ? 1 : 0), 1));
    };
    return tupleOver(each, counts.size, minDomains);
  };
  // Into any domain without pods the tuple is the same: a replacement's possible landings (hundreds of empty
  // hostname domains at 1,000 nodes) are each checked against the group, and all but a few read the memo.
  return emptyPlus && !emptyMinus ? counts.intoEmptyTuple(minus, minDomains, tuple) : tuple();
}

export function tupleLess(a: SkewTuple, b: SkewTuple): boolean {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}
