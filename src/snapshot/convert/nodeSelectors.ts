// Node selector terms and node affinity, validated with the API's rules and given a canonical text: equal text ⇔
// equal requirement, so pods with identical requirements share one value.
import { FieldError } from '../../errors.js';
import { intern, internLabels } from '../../model/intern.js';
import { labelKeyProblem } from '../../model/labels.js';
import { isObj, present, typeName, type Obj } from '../../model/rawJson.js';
import type {
  Labels,
  NodeSelectorOperator,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  RequiredNodeAffinity,
} from '../../model/types.js';
import type { BoundedCache } from './boundedCache.js';
import { EMPTY, getInt, getList, getObj, getString, getStringMap, requireString } from './fields.js';

const NODE_OPERATORS: readonly NodeSelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function stringValues(raw: Obj, path: string): string[] {
  const list = getList(raw, 'values', path) ?? [];
  const values: string[] = [];
  list.forEach((v, i) => {
    if (typeof v !== 'string') throw new FieldError(`${path}.values[${i}]`, `must be a string (got ${typeName(v)})`);
    values.push(v);
  });
  return values;
}

function nodeRequirement(raw: unknown, path: string, field: boolean): NodeSelectorRequirement {
  if (!isObj(raw)) throw new FieldError(path, `must be an object with key, operator and values (got ${typeName(raw)})`);
  const key = requireString(raw, 'key', path);
  if (field) {
    if (key !== 'metadata.name')
      throw new FieldError(
        `${path}.key`,
        `must be metadata.name, the only supported node field (got ${JSON.stringify(key)})`,
      );
  } else {
    const problem = labelKeyProblem(key);
    if (problem !== undefined) throw new FieldError(`${path}.key`, problem);
  }
  const allowed: readonly NodeSelectorOperator[] = field ? ['In', 'NotIn'] : NODE_OPERATORS;
  const operator = getString(raw, 'operator', path);
  if (operator === undefined || !(allowed as readonly string[]).includes(operator)) {
    throw new FieldError(
      `${path}.operator`,
      `must be one of ${allowed.join(', ')} (got ${JSON.stringify(operator ?? null)})`,
    );
  }
  const op = operator as NodeSelectorOperator;
  const values = stringValues(raw, path);
  switch (op) {
    case 'In':
    case 'NotIn':
      if (field && values.length !== 1)
        throw new FieldError(`${path}.values`, `must hold exactly one node name for a field requirement with ${op}`);
      if (values.length === 0) throw new FieldError(`${path}.values`, `must be non-empty when operator is ${op}`);
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) throw new FieldError(`${path}.values`, `must be empty when operator is ${op}`);
      break;
    case 'Gt':
    case 'Lt':
      // The API server only checks the count; a non-integer value is accepted and simply matches no node.
      if (values.length !== 1)
        throw new FieldError(`${path}.values`, `must hold exactly one value when operator is ${op}`);
      break;
  }
  const sorted = values.length > 1 ? [...new Set(values)].sort() : values;
  return { key: intern(key), operator: op, values: sorted.map(intern) };
}

function nodeRequirementText(r: NodeSelectorRequirement, field: boolean): string {
  const key = field ? `field:${r.key}` : r.key;
  switch (r.operator) {
    case 'In':
      return r.values.length === 1 ? `${key}=${r.values[0]}` : `${key} in (${r.values.join(',')})`;
    case 'NotIn':
      return r.values.length === 1 ? `${key}!=${r.values[0]}` : `${key} notin (${r.values.join(',')})`;
    case 'Exists':
      return key;
    case 'DoesNotExist':
      return `!${key}`;
    case 'Gt':
      return `${key}>${r.values[0]}`;
    case 'Lt':
      return `${key}<${r.values[0]}`;
  }
}

interface CanonicalTerm {
  readonly term: NodeSelectorTerm;
  readonly text: string;
}

/** Sorts and de-duplicates a term's requirements (they are ANDed) and gives its canonical text. */
function nodeSelectorTerm(raw: unknown, path: string): CanonicalTerm {
  if (!isObj(raw))
    throw new FieldError(path, `must be an object with matchExpressions and/or matchFields (got ${typeName(raw)})`);
  const parts: Array<{ r: NodeSelectorRequirement; text: string; field: boolean }> = [];
  (getList(raw, 'matchExpressions', path) ?? []).forEach((e, i) => {
    const r = nodeRequirement(e, `${path}.matchExpressions[${i}]`, false);
    parts.push({ r, text: nodeRequirementText(r, false), field: false });
  });
  (getList(raw, 'matchFields', path) ?? []).forEach((e, i) => {
    const r = nodeRequirement(e, `${path}.matchFields[${i}]`, true);
    parts.push({ r, text: nodeRequirementText(r, true), field: true });
  });
  parts.sort((a, b) => compareText(a.text, b.text));
  const unique = parts.filter((p, i) => i === 0 || p.text !== parts[i - 1]!.text);
  const term: NodeSelectorTerm = {
    matchExpressions: unique.filter((p) => !p.field).map((p) => p.r),
    matchFields: unique.filter((p) => p.field).map((p) => p.r),
  };
  return { term, text: unique.length === 0 ? '<empty term>' : unique.map((p) => p.text).join(',') };
}

/** Terms ORed, sorted and de-duplicated, with their canonical text. */
export function termsOf(rawTerms: readonly unknown[], path: string): { terms: NodeSelectorTerm[]; text: string } {
  const canonical = rawTerms.map((t, i) => nodeSelectorTerm(t, `${path}[${i}]`));
  canonical.sort((a, b) => compareText(a.text, b.text));
  const unique = canonical.filter((t, i) => i === 0 || t.text !== canonical[i - 1]!.text);
  const text = unique.length === 1 ? unique[0]!.text : unique.map((t) => `(${t.text})`).join(' or ');
  return { terms: unique.map((t) => t.term), text: intern(text) };
}

/** `parent.nodeSelectorTerms` (required: at least one), as termsOf gives them. */
export function requiredTerms(parent: Obj, path: string): { terms: NodeSelectorTerm[]; text: string } {
  const rawTerms = getList(parent, 'nodeSelectorTerms', path);
  if (rawTerms === undefined || rawTerms.length === 0) {
    throw new FieldError(`${path}.nodeSelectorTerms`, 'must have at least one node selector term');
  }
  return termsOf(rawTerms, `${path}.nodeSelectorTerms`);
}

function labelsText(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

export const NO_REQUIREMENT: RequiredNodeAffinity = Object.freeze({
  nodeSelector: undefined,
  terms: undefined,
  text: '',
});

/**
 * spec.nodeSelector AND required node affinity (terms ORed, sorted and de-duplicated), with canonical text:
 * `nodeSelector: disk=ssd; affinity: (zone in (a,b)) or (field:metadata.name=node-1)`. Equal text ⇔ equal requirement,
 * so identical requirements are shared between pods.
 */
export function requiredNodeAffinity(
  spec: Obj | undefined,
  nodeAffinity: Obj | undefined,
  cache: BoundedCache<string, RequiredNodeAffinity>,
): RequiredNodeAffinity {
  const rawSelector = getStringMap(spec, 'nodeSelector', 'spec');
  const required = getObj(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution', 'spec.affinity.nodeAffinity');
  if ((rawSelector === undefined || Object.keys(rawSelector).length === 0) && required === undefined)
    return NO_REQUIREMENT;
  const nodeSelector =
    rawSelector === undefined || Object.keys(rawSelector).length === 0 ? undefined : internLabels(rawSelector);
  let terms: NodeSelectorTerm[] | undefined;
  let termsText = '';
  if (required !== undefined) {
    ({ terms, text: termsText } = requiredTerms(
      required,
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution',
    ));
  }
  const text = [
    nodeSelector === undefined ? '' : `nodeSelector: ${labelsText(nodeSelector)}`,
    terms === undefined ? '' : `affinity: ${termsText}`,
  ]
    .filter((s) => s !== '')
    .join('; ');
  const known = cache.get(text);
  if (known !== undefined) return known;
  const value: RequiredNodeAffinity = { nodeSelector, terms, text: intern(text) };
  cache.set(text, value);
  return value;
}

export function preferredNodeAffinity(nodeAffinity: Obj | undefined): readonly PreferredSchedulingTerm[] {
  const path = 'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution';
  const list = getList(nodeAffinity, 'preferredDuringSchedulingIgnoredDuringExecution', 'spec.affinity.nodeAffinity');
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) => {
    const itemPath = `${path}[${i}]`;
    if (!isObj(raw))
      throw new FieldError(itemPath, `must be an object with weight and preference (got ${typeName(raw)})`);
    const weight = getInt(raw, 'weight', itemPath);
    if (weight === undefined || weight < 1 || weight > 100) {
      throw new FieldError(`${itemPath}.weight`, 'must be an integer from 1 to 100');
    }
    const preference = raw['preference'];
    if (!present(preference)) throw new FieldError(`${itemPath}.preference`, 'is required');
    return { weight, term: nodeSelectorTerm(preference, `${itemPath}.preference`).term };
  });
}
