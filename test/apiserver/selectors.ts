// Label and field selectors, with the syntax and matching rules of k8s.io/apimachinery/pkg/labels and
// pkg/fields: `=`, `==`, `!=`, `in (...)`, `notin (...)`, `key`, `!key`, plus `>`/`<` (integer-valued labels);
// field selectors support `=`, `==`, `!=` with `\`-escaping. Errors become 400 BadRequest, as on the real server.

import { errors } from './errors.js';
import type { LabelSelector } from './types.js';

export type Labels = Readonly<Record<string, string>> | undefined;

type Operator = 'in' | 'notin' | 'exists' | 'doesnotexist' | 'gt' | 'lt';

export interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

/** A compiled selector. `nothing` selects no object (a nil metav1.LabelSelector); no requirements = everything. */
export interface Selector {
  readonly nothing: boolean;
  readonly requirements: readonly Requirement[];
  matches(labels: Labels): boolean;
  /** True when the selector selects every object. */
  readonly empty: boolean;
}

function requirementMatches(req: Requirement, labels: Labels): boolean {
  const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, req.key);
  const value = has ? labels[req.key] : undefined;
  switch (req.op) {
    case 'in':
      return has && req.values.includes(value ?? '');
    case 'notin':
      return !has || !req.values.includes(value ?? '');
    case 'exists':
      return has;
    case 'doesnotexist':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || !/^-?\d+$/.test(value ?? '')) return false;
      const actual = Number(value);
      const bound = Number(req.values[0]);
      return req.op === 'gt' ? actual > bound : actual < bound;
    }
  }
}

export function compileRequirements(requirements: Requirement[]): Selector {
  return {
    nothing: false,
    requirements,
    empty: requirements.length === 0,
    matches: (labels) => requirements.every((req) => requirementMatches(req, labels)),
  };
}

export const NOTHING: Selector = { nothing: true, requirements: [], empty: false, matches: () => false };
export const EVERYTHING: Selector = compileRequirements([]);

// ---- validation of keys and values (qualified names and label values) ----------------------------------------

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return 'prefix part must be a valid DNS subdomain';
    }
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME_PART.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value === '') return undefined;
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!NAME_PART.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

function checkKey(key: string): void {
  const problem = labelKeyProblem(key);
  if (problem !== undefined) {
    throw errors.badRequest(`unable to parse requirement: <nil>: Invalid value: ${JSON.stringify(key)}: ${problem}`);
  }
}

function checkValue(value: string): void {
  const problem = labelValueProblem(value);
  if (problem !== undefined) {
    throw errors.badRequest(
      `unable to parse requirement: values[0]: Invalid value: ${JSON.stringify(value)}: ${problem}`,
    );
  }
}

// ---- the label selector string syntax -----------------------------------------------------------------------

type Token = { kind: 'id'; text: string } | { kind: 'op'; text: string } | { kind: 'end' };

const SPECIAL = new Set(['!', '(', ')', ',', '=', '>', '<']);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text.charAt(i);
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const two = text.slice(i, i + 2);
    if (two === '!=' || two === '==') {
      tokens.push({ kind: 'op', text: two });
      i += 2;
      continue;
    }
    if (SPECIAL.has(ch)) {
      tokens.push({ kind: 'op', text: ch });
      i++;
      continue;
    }
    let j = i;
    while (j < text.length && !SPECIAL.has(text.charAt(j)) && !/\s/.test(text.charAt(j))) j++;
    tokens.push({ kind: 'id', text: text.slice(i, j) });
    i = j;
  }
  tokens.push({ kind: 'end' });
  return tokens;
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos] ?? { kind: 'end' };
  }

  private next(): Token {
    const token = this.peek();
    this.pos++;
    return token;
  }

  private fail(found: Token, expected: string): never {
    const what = found.kind === 'end' ? 'EOF' : `'${found.text}'`;
    throw errors.badRequest(`unable to parse requirement: found ${what}, expected: ${expected}`);
  }

  parse(): Requirement[] {
    const requirements: Requirement[] = [];
    for (;;) {
      requirements.push(this.requirement());
      const token = this.next();
      if (token.kind === 'end') return requirements;
      if (token.kind !== 'op' || token.text !== ',') this.fail(token, "',' or end of string");
    }
  }

  private identifier(expected: string): string {
    const token = this.next();
    if (token.kind !== 'id') this.fail(token, expected);
    return token.text;
  }

  private requirement(): Requirement {
    const first = this.peek();
    if (first.kind === 'op' && first.text === '!') {
      this.next();
      const key = this.identifier('identifier');
      checkKey(key);
      return { key, op: 'doesnotexist', values: [] };
    }
    const key = this.identifier('identifier');
    checkKey(key);
    const token = this.peek();
    if (token.kind === 'end' || (token.kind === 'op' && token.text === ',')) return { key, op: 'exists', values: [] };
    if (token.kind === 'id' && (token.text === 'in' || token.text === 'notin')) {
      this.next();
      return { key, op: token.text, values: this.valueSet() };
    }
    if (token.kind === 'op' && ['=', '==', '!=', '>', '<'].includes(token.text)) {
      this.next();
      const value = this.optionalValue();
      if (token.text === '>' || token.text === '<') {
        if (!/^-?\d+$/.test(value)) this.fail({ kind: 'id', text: value }, 'an integer');
        return { key, op: token.text === '>' ? 'gt' : 'lt', values: [value] };
      }
      checkValue(value);
      return { key, op: token.text === '!=' ? 'notin' : 'in', values: [value] };
    }
    return this.fail(token, "'=', '!=', '==', 'in', 'notin', '>', '<'");
  }

  private optionalValue(): string {
    const token = this.peek();
    if (token.kind === 'id') {
      this.next();
      return token.text;
    }
    return '';
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== 'op' || open.text !== '(') this.fail(open, "'('");
    const values: string[] = [];
    for (;;) {
      const value = this.optionalValue();
      checkValue(value);
      values.push(value);
      const token = this.next();
      if (token.kind === 'op' && token.text === ')') break;
      if (token.kind !== 'op' || token.text !== ',') this.fail(token, "',' or ')'");
    }
    if (values.length === 1 && values[0] === '') {
      throw errors.badRequest("unable to parse requirement: for 'in', 'notin' operators, values set can't be empty");
    }
    return values;
  }
}

/** Parses the `labelSelector` query parameter. Throws a 400 ApiError on bad syntax. */
export function parseLabelSelector(text: string | undefined | null): Selector {
  if (text === undefined || text === null || text.trim() === '') return EVERYTHING;
  return compileRequirements(new Parser(tokenize(text)).parse());
}

/**
 * Compiles a metav1.LabelSelector (as in PDB and ReplicaSet specs). `null`/`undefined` selects nothing and `{}`
 * everything (metav1.LabelSelectorAsSelector). An invalid selector throws.
 */
export function compileLabelSelector(selector: LabelSelector | null | undefined): Selector {
  if (selector === null || selector === undefined) return NOTHING;
  const requirements: Requirement[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    requirements.push({ key, op: 'in', values: [value] });
  }
  for (const expr of selector.matchExpressions ?? []) {
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) throw new Error(`${expr.operator} requires at least one value`);
        requirements.push({ key: expr.key, op: expr.operator === 'In' ? 'in' : 'notin', values });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) throw new Error(`${expr.operator} takes no values`);
        requirements.push({ key: expr.key, op: expr.operator === 'Exists' ? 'exists' : 'doesnotexist', values: [] });
        break;
      default:
        throw new Error(`${JSON.stringify(expr.operator)} is not a valid label selector operator`);
    }
  }
  return compileRequirements(requirements);
}

/** Like compileLabelSelector, but an invalid selector selects nothing (how the disruption controller treats it). */
export function compileLabelSelectorOrNothing(selector: LabelSelector | null | undefined): Selector {
  try {
    return compileLabelSelector(selector);
  } catch {
    return NOTHING;
  }
}

// ---- field selectors --------------------------------------------------------------------------------------------

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    if (ch === '\\' && i + 1 < text.length) {
      current += ch + text.charAt(i + 1);
      i++;
    } else if (ch === separator) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

function unescapeFieldValue(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value.charAt(i);
    if (ch !== '\\') {
      if (ch === ',' || ch === '=') throw errors.badRequest(`invalid field selector: unescaped ${ch} in value`);
      out += ch;
      continue;
    }
    const escaped = value.charAt(i + 1);
    if (!['\\', ',', '=', '!'].includes(escaped)) {
      throw errors.badRequest(`invalid field selector: invalid escape sequence \\${escaped}`);
    }
    out += escaped;
    i++;
  }
  return out;
}

/** Parses `fieldSelector`; each field must be one the resource supports (else 400 `field label not supported`). */
export function parseFieldSelector(
  text: string | undefined | null,
  supported: ReadonlySet<string>,
): FieldRequirement[] {
  if (text === undefined || text === null || text.trim() === '') return [];
  const requirements: FieldRequirement[] = [];
  for (const term of splitUnescaped(text, ',')) {
    if (term === '') continue;
    let found: { index: number; op: string } | undefined;
    for (let i = 0; i < term.length && found === undefined; i++) {
      if (term.charAt(i) === '\\') {
        i++;
        continue;
      }
      for (const op of ['!=', '==', '=']) {
        if (term.startsWith(op, i)) {
          found = { index: i, op };
          break;
        }
      }
    }
    if (found === undefined) throw errors.badRequest(`invalid selector: '${term}'; can't understand '${term}'`);
    const field = term.slice(0, found.index).trim();
    const value = unescapeFieldValue(term.slice(found.index + found.op.length));
    if (!supported.has(field)) throw errors.badRequest(`field label not supported: ${field}`);
    requirements.push({ field, op: found.op === '!=' ? '!=' : '=', value });
  }
  return requirements;
}

export function fieldsMatch(requirements: readonly FieldRequirement[], fields: (field: string) => string): boolean {
  for (const req of requirements) {
    const actual = fields(req.field);
    if (req.op === '=' ? actual !== req.value : actual === req.value) return false;
  }
  return true;
}
