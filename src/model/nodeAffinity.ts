// Node selection as the scheduler's NodeAffinity filter does it (component-helpers nodeaffinity):
// spec.nodeSelector labels must all match AND, when required affinity is given, at least one term must match;
// within a term, every expression and field requirement must match; a term with no requirements matches nothing;
// Gt/Lt compare the label as an integer against the single value (an unparsable label does not match).
import { labelValue, labelValueProblem, matchesLabelOperator } from './labels.js';
import type {
  Labels,
  NodeInfo,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  RequiredNodeAffinity,
} from './types.js';

const INTEGER_RE = /^[+-]?\d+$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(value, 10, 64): an out-of-range label is a parse error there, so it matches neither Gt nor Lt. */
function parseInteger(value: string): bigint | undefined {
  if (!INTEGER_RE.test(value)) return undefined;
  const n = BigInt(value);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function matchesNodeRequirement(r: NodeSelectorRequirement, value: string | undefined): boolean {
  if (r.operator !== 'Gt' && r.operator !== 'Lt') return matchesLabelOperator(r.operator, r.values, value);
  if (value === undefined || r.values.length !== 1) return false;
  const have = parseInteger(value);
  const want = parseInteger(r.values[0]!);
  if (have === undefined || want === undefined) return false;
  return r.operator === 'Gt' ? have > want : have < want;
}

/**
 * Whether the scheduler can parse the term's expressions. The API server does not validate node selector values,
 * but the scheduler builds them with labels.NewRequirement, which rejects values that are not label values
 * ("a b", "-1", "+5"); such a term is a parse error and matches no node (component-helpers nodeaffinity skips it).
 * Memoised per term: terms are shared between the replicas that carry them.
 */
const parsable = new WeakMap<NodeSelectorTerm, boolean>();

function isParsable(term: NodeSelectorTerm): boolean {
  let ok = parsable.get(term);
  if (ok === undefined) {
    ok = term.matchExpressions.every((r) => r.values.every((v) => labelValueProblem(v) === undefined));
    parsable.set(term, ok);
  }
  return ok;
}

export function matchesNodeSelectorTerm(term: NodeSelectorTerm, node: Pick<NodeInfo, 'name' | 'labels'>): boolean {
  if (term.matchExpressions.length === 0 && term.matchFields.length === 0) return false;
  if (!isParsable(term)) return false;
  for (const r of term.matchExpressions) {
    if (!matchesNodeRequirement(r, labelValue(node.labels, r.key))) return false;
  }
  for (const r of term.matchFields) {
    // metadata.name is the only supported field; validation rejects others.
    if (!matchesNodeRequirement(r, r.key === 'metadata.name' ? node.name : undefined)) return false;
  }
  return true;
}

export function matchesNodeSelectorLabels(selector: Labels, nodeLabels: Labels): boolean {
  for (const key of Object.keys(selector)) {
    if (labelValue(nodeLabels, key) !== selector[key]) return false;
  }
  return true;
}

export function matchesRequiredNodeAffinity(
  req: RequiredNodeAffinity,
  node: Pick<NodeInfo, 'name' | 'labels'>,
): boolean {
  if (req.nodeSelector !== undefined && !matchesNodeSelectorLabels(req.nodeSelector, node.labels)) return false;
  if (req.terms === undefined) return true;
  for (const term of req.terms) if (matchesNodeSelectorTerm(term, node)) return true;
  return false;
}

/**
 * The scheduler's NodeAffinity score of a node before normalisation: the sum of the weights of the preferred terms
 * the node matches. The violation check, the planner's justification and the placement tie-break all use it.
 */
export function preferredScore(
  terms: readonly PreferredSchedulingTerm[],
  node: Pick<NodeInfo, 'name' | 'labels'>,
): number {
  let score = 0;
  for (const t of terms) if (matchesNodeSelectorTerm(t.term, node)) score += t.weight;
  return score;
}

export const NO_NODE_REQUIREMENT: RequiredNodeAffinity = { nodeSelector: undefined, terms: undefined, text: '' };
