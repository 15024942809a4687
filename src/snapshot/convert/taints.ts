// Node taints and pod tolerations. A workload's replicas repeat one toleration list, so a list is validated once per
// distinct raw shape.
import { FieldError } from '../../errors.js';
import { intern, internTolerations } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import type { Taint, TaintEffect, Toleration } from '../../model/types.js';
import type { BoundedCache } from './boundedCache.js';
import { EMPTY, getEnum, getList, getString, requireString } from './fields.js';

const EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/** Lt and Gt are accepted as the 1.35+ API stores them; they tolerate nothing while their gate is off (model/taints). */
const OPERATORS: readonly string[] = ['', 'Equal', 'Exists', 'Lt', 'Gt'];

export function taints(spec: Obj | undefined): readonly Taint[] {
  const list = getList(spec, 'taints', 'spec');
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) => {
    const path = `spec.taints[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object with key, value and effect (got ${typeName(raw)})`);
    const key = requireString(raw, 'key', path);
    const value = getString(raw, 'value', path) ?? '';
    const effect = getEnum(raw, 'effect', path, EFFECTS);
    if (effect === undefined) throw new FieldError(`${path}.effect`, `is required (${EFFECTS.join(', ')})`);
    return Object.freeze({ key: intern(key), value: intern(value), effect });
  });
}

function optionalText(value: unknown): string | undefined {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : undefined;
}

/** A key from the raw fields the model keeps (tolerationSeconds is ignored); undefined for unusual shapes. */
function rawTolerationsKey(list: readonly unknown[]): string | undefined {
  let key = '';
  for (const t of list) {
    if (!isObj(t)) return undefined;
    const k = optionalText(t['key']),
      op = optionalText(t['operator']),
      v = optionalText(t['value']),
      e = optionalText(t['effect']);
    if (k === undefined || op === undefined || v === undefined || e === undefined) return undefined;
    key += `${k.length}:${k}${op.length}:${op}${v.length}:${v}${e.length}:${e}`;
  }
  return key;
}

/** spec.tolerations, validated once per raw shape (`cache`, keyed by rawTolerationsKey). */
export function tolerations(
  spec: Obj | undefined,
  cache: BoundedCache<string, readonly Toleration[]>,
): readonly Toleration[] {
  const list = getList(spec, 'tolerations', 'spec');
  if (list === undefined || list.length === 0) return EMPTY;
  const key = rawTolerationsKey(list);
  const known = key === undefined ? undefined : cache.get(key);
  if (known !== undefined) return known;
  const value = validatedTolerations(list);
  if (key !== undefined) cache.set(key, value);
  return value;
}

function validatedTolerations(list: readonly unknown[]): readonly Toleration[] {
  const out: Toleration[] = [];
  for (let i = 0; i < list.length; i++) {
    const raw = list[i];
    const path = `spec.tolerations[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
    const key = getString(raw, 'key', path) ?? '';
    const rawOperator = getString(raw, 'operator', path) ?? '';
    if (!OPERATORS.includes(rawOperator)) {
      throw new FieldError(`${path}.operator`, `must be Equal, Exists, Lt or Gt (got ${JSON.stringify(rawOperator)})`);
    }
    // An empty operator means Equal (API default).
    const operator = rawOperator === '' ? 'Equal' : (rawOperator as Toleration['operator']);
    const value = getString(raw, 'value', path) ?? '';
    if (operator === 'Exists' && value !== '')
      throw new FieldError(`${path}.value`, 'must be empty when operator is Exists');
    if (key === '' && operator !== 'Exists')
      throw new FieldError(`${path}.operator`, 'must be Exists when key is empty');
    const effect = getString(raw, 'effect', path) ?? '';
    if (effect !== '' && !(EFFECTS as readonly string[]).includes(effect)) {
      throw new FieldError(
        `${path}.effect`,
        `must be empty or one of ${EFFECTS.join(', ')} (got ${JSON.stringify(effect)})`,
      );
    }
    out.push({ key, operator, value, effect: effect as TaintEffect | '' });
  }
  return internTolerations(out);
}
