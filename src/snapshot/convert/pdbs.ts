// PodDisruptionBudget → PdbInfo.
import { FieldError } from '../../errors.js';
import { intern } from '../../model/intern.js';
import { compileLabelSelector, MATCH_NOTHING } from '../../model/labels.js';
import { isObj, present, typeName, type Obj } from '../../model/rawJson.js';
import type { IntOrPercent, PdbInfo } from '../../model/types.js';
import { childPath, getInt, getObj, getString, requireString, root } from './fields.js';

const PERCENT = /^(\d+)%$/;

/** An IntOrString that must be a non-negative integer or a percentage "N%" of at most 100%. */
function intOrPercent(parent: Obj, key: string, path: string): IntOrPercent | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  const fieldPath = childPath(path, key);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new FieldError(fieldPath, `must be a non-negative integer or a percentage such as "50%" (got ${value})`);
    return { kind: 'int', value };
  }
  const match = typeof value === 'string' ? PERCENT.exec(value) : null;
  if (match === null)
    throw new FieldError(
      fieldPath,
      `must be a non-negative integer or a percentage such as "50%" (got ${typeName(value)})`,
    );
  const pct = Number(match[1]);
  if (pct > 100) throw new FieldError(fieldPath, `must not be greater than 100% (got ${JSON.stringify(value)})`);
  return { kind: 'percent', value: pct };
}

/** PodDisruptionBudget (policy/v1; policy/v1beta1 is read with its own empty-selector rule). */
export function convertPdb(raw: unknown): PdbInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const namespace = intern(getString(meta, 'namespace', 'metadata') || 'default');
  const spec = getObj(o, 'spec', '') ?? {};
  const rawSelector = spec['selector'];
  // policy/v1: a nil selector matches nothing and an empty one every pod of the namespace;
  // policy/v1beta1 treated an empty selector as matching nothing.
  const v1beta1 = o['apiVersion'] === 'policy/v1beta1';
  const emptySelector = isObj(rawSelector) && Object.keys(rawSelector).every((k) => !present(rawSelector[k]));
  const selector = v1beta1 && emptySelector ? MATCH_NOTHING : compileLabelSelector(rawSelector, 'spec.selector');
  const minAvailable = intOrPercent(spec, 'minAvailable', 'spec');
  const maxUnavailable = intOrPercent(spec, 'maxUnavailable', 'spec');
  if (minAvailable !== undefined && maxUnavailable !== undefined) {
    throw new FieldError('spec.maxUnavailable', 'cannot be set together with spec.minAvailable');
  }
  const status = getObj(o, 'status', '');
  const allowed = getInt(status, 'disruptionsAllowed', 'status');
  return { namespace, name: intern(name), selector, statusAllowed: allowed, minAvailable, maxUnavailable };
}
