// metav1.LabelSelector: compile (validating, with field paths) and match, with the API server's semantics:
// matchLabels and matchExpressions are ANDed; a nil selector matches nothing, an empty one everything;
// NotIn and DoesNotExist match objects that lack the key.
import { FieldError } from '../errors.js';
import type { LabelOperator, LabelRequirement, Labels, Selector } from './types.js';

const OPERATORS: ReadonlySet<string> = new Set<LabelOperator>(['In', 'NotIn', 'Exists', 'DoesNotExist']);

export const MATCH_NOTHING: Selector = { kind: 'nothing' };
export const MATCH_EVERYTHING: Selector = { kind: 'requirements', requirements: [], text: '' };

// Label keys: optional DNS-1123 subdomain prefix (≤253) + '/' + name (≤63, alphanumeric ends, -_. inside).
const NAME_RE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const PREFIX_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !PREFIX_RE.test(prefix))) {
    return `label key ${JSON.stringify(key)} has an invalid prefix (must be a DNS subdomain)`;
  }
  if (name.length === 0 || name.length > 63 || !NAME_RE.test(name)) {
    return `label key ${JSON.stringify(key)} is invalid (name part: 1-63 characters, alphanumeric at both ends, '-', '_' or '.' inside)`;
  }
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63 || !VALUE_RE.test(value)) {
    return `label value ${JSON.stringify(value)} is invalid (at most 63 characters, alphanumeric at both ends, '-', '_' or '.' inside)`;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compareRequirements(a: LabelRequirement, b: LabelRequirement): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  if (a.operator !== b.operator) return a.operator < b.operator ? -1 : 1;
  const av = a.values.join(','),
    bv = b.values.join(',');
  return av < bv ? -1 : av > bv ? 1 : 0;
}

function requirementText(r: LabelRequirement): string {
  switch (r.operator) {
    case 'In':
      return r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} in (${r.values.join(',')})`;
    case 'NotIn':
      return r.values.length === 1 ? `${r.key}!=${r.values[0]}` : `${r.key} notin (${r.values.join(',')})`;
    case 'Exists':
      return r.key;
    case 'DoesNotExist':
      return `!${r.key}`;
  }
}

/** Builds a selector from requirements; sorts and de-duplicates so equal selectors have equal text. */
export function selectorOf(requirements: readonly LabelRequirement[]): Selector {
  const sorted = [...requirements].sort(compareRequirements);
  const unique = sorted.filter((r, i) => i === 0 || compareRequirements(r, sorted[i - 1]!) !== 0);
  return { kind: 'requirements', requirements: unique, text: unique.map(requirementText).join(',') };
}

/** Every label equal: the selector a workload's own labels define. */
export function selectorFromLabels(labels: Labels): Selector {
  return selectorOf(Object.keys(labels).map((key) => ({ key, operator: 'In' as const, values: [labels[key]!] })));
}

/** ANDs extra requirements into a selector (a nothing-selector stays nothing). */
export function andSelector(selector: Selector, extra: readonly LabelRequirement[]): Selector {
  if (selector.kind === 'nothing' || extra.length === 0) return selector;
  return selectorOf([...selector.requirements, ...extra]);
}

/**
 * Compiles a raw metav1.LabelSelector. `undefined`/`null` → matches nothing (the API's nil selector).
 * Throws FieldError with the path of the first problem.
 */
export function compileLabelSelector(raw: unknown, path: string): Selector {
  if (raw === undefined || raw === null) return MATCH_NOTHING;
  if (!isRecord(raw)) throw new FieldError(path, 'must be a label selector object');
  const requirements: LabelRequirement[] = [];
  const matchLabels = raw['matchLabels'];
  if (matchLabels !== undefined && matchLabels !== null) {
    if (!isRecord(matchLabels)) throw new FieldError(`${path}.matchLabels`, 'must be a map of label key to value');
    for (const [key, value] of Object.entries(matchLabels)) {
      const keyProblem = labelKeyProblem(key);
      if (keyProblem) throw new FieldError(`${path}.matchLabels`, keyProblem);
      if (typeof value !== 'string') throw new FieldError(`${path}.matchLabels.${key}`, 'must be a string');
      const valueProblem = labelValueProblem(value);
      if (valueProblem) throw new FieldError(`${path}.matchLabels.${key}`, valueProblem);
      requirements.push({ key, operator: 'In', values: [value] });
    }
  }
  const expressions = raw['matchExpressions'];
  if (expressions !== undefined && expressions !== null) {
    if (!Array.isArray(expressions)) throw new FieldError(`${path}.matchExpressions`, 'must be a list');
    expressions.forEach((expr, i) => requirements.push(compileRequirement(expr, `${path}.matchExpressions[${i}]`)));
  }
  return selectorOf(requirements);
}

function compileRequirement(raw: unknown, path: string): LabelRequirement {
  if (!isRecord(raw)) throw new FieldError(path, 'must be an object with key, operator and values');
  const key = raw['key'];
  if (typeof key !== 'string') throw new FieldError(`${path}.key`, 'is required and must be a string');
  const keyProblem = labelKeyProblem(key);
  if (keyProblem) throw new FieldError(`${path}.key`, keyProblem);
  const operator = raw['operator'];
  if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
    throw new FieldError(
      `${path}.operator`,
      `must be one of In, NotIn, Exists, DoesNotExist (got ${JSON.stringify(operator)})`,
    );
  }
  const rawValues = raw['values'] ?? [];
  if (!Array.isArray(rawValues)) throw new FieldError(`${path}.values`, 'must be a list of strings');
  const values = rawValues.map((v, i) => {
    if (typeof v !== 'string') throw new FieldError(`${path}.values[${i}]`, 'must be a string');
    const problem = labelValueProblem(v);
    if (problem) throw new FieldError(`${path}.values[${i}]`, problem);
    return v;
  });
  const op = operator as LabelOperator;
  if ((op === 'In' || op === 'NotIn') && values.length === 0) {
    throw new FieldError(`${path}.values`, `must be non-empty when operator is ${op}`);
  }
  if ((op === 'Exists' || op === 'DoesNotExist') && values.length > 0) {
    throw new FieldError(`${path}.values`, `must be empty when operator is ${op}`);
  }
  return { key, operator: op, values: [...new Set(values)].sort() };
}

/** A label's value; own properties only, so keys like `constructor` never read the prototype. */
export function labelValue(labels: Labels, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** The set-based operators on one value (undefined: the object lacks the key); shared with node selectors. */
export function matchesLabelOperator(
  operator: LabelOperator,
  values: readonly string[],
  value: string | undefined,
): boolean {
  switch (operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
  }
}

export function matchesRequirement(r: LabelRequirement, labels: Labels): boolean {
  return matchesLabelOperator(r.operator, r.values, labelValue(labels, r.key));
}

export function matchesSelector(selector: Selector, labels: Labels): boolean {
  if (selector.kind === 'nothing') return false;
  for (const r of selector.requirements) {
    if (!matchesRequirement(r, labels)) return false;
  }
  return true;
}

export function selectorText(selector: Selector): string {
  return selector.kind === 'nothing' ? '<none>' : selector.text;
}
