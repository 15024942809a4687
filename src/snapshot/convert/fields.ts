// Reading raw Kubernetes objects field by field: each reader checks the type the API gives the field and throws
// FieldError with the field's path; absent and null read as undefined.
import { FieldError } from '../../errors.js';
import { EMPTY_LABELS, internLabels } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import type { Labels } from '../../model/types.js';

export const EMPTY: readonly never[] = Object.freeze([]);

const SIMPLE_KEY = /^[A-Za-z0-9_-]+$/;

/** `path.key`, or `path[key]` when the key contains dots or slashes (label keys, extended resource names). */
export function childPath(path: string, key: string): string {
  if (!SIMPLE_KEY.test(key)) return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** A nested object; undefined when absent or null. */
export function getObj(parent: Obj | undefined, key: string, path: string): Obj | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) throw new FieldError(childPath(path, key), `must be an object (got ${typeName(value)})`);
  return value;
}

export function getList(parent: Obj | undefined, key: string, path: string): readonly unknown[] | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new FieldError(childPath(path, key), `must be a list (got ${typeName(value)})`);
  return value as readonly unknown[];
}

export function getString(parent: Obj | undefined, key: string, path: string): string | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new FieldError(childPath(path, key), `must be a string (got ${typeName(value)})`);
  return value;
}

export function requireString(parent: Obj | undefined, key: string, path: string): string {
  const value = getString(parent, key, path);
  if (value === undefined || value === '') throw new FieldError(childPath(path, key), 'is required');
  return value;
}

export function getBool(parent: Obj | undefined, key: string, path: string): boolean | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean')
    throw new FieldError(childPath(path, key), `must be true or false (got ${typeName(value)})`);
  return value;
}

export function getInt(parent: Obj | undefined, key: string, path: string): number | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new FieldError(childPath(path, key), `must be an integer (got ${typeName(value)})`);
  }
  return value;
}

export function getEnum<T extends string>(
  parent: Obj | undefined,
  key: string,
  path: string,
  allowed: readonly T[],
): T | undefined {
  const value = getString(parent, key, path);
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) {
    throw new FieldError(childPath(path, key), `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  }
  return value as T;
}

export function root(raw: unknown): Obj {
  if (!isObj(raw)) throw new FieldError('', `must be an object (got ${typeName(raw)})`);
  return raw;
}

/** A string map such as labels or nodeSelector, every value checked to be a string; undefined when absent. */
export function getStringMap(
  parent: Obj | undefined,
  key: string,
  path: string,
): Readonly<Record<string, string>> | undefined {
  const map = getObj(parent, key, path);
  if (map === undefined) return undefined;
  for (const k in map) {
    if (!Object.hasOwn(map, k)) continue;
    const v = map[k];
    if (typeof v !== 'string')
      throw new FieldError(childPath(childPath(path, key), k), `must be a string (got ${typeName(v)})`);
  }
  return map as Record<string, string>;
}

export function labelsOf(meta: Obj | undefined): Labels {
  const raw = getStringMap(meta, 'labels', 'metadata');
  return raw === undefined ? EMPTY_LABELS : internLabels(raw);
}

export function conditionTrue(status: Obj | undefined, type: string, path: string): boolean {
  const conditions = getList(status, 'conditions', path);
  if (conditions === undefined) return false;
  for (const c of conditions) {
    if (isObj(c) && c['type'] === type) return c['status'] === 'True';
  }
  return false;
}

export function timestampMs(meta: Obj | undefined, key: string): number | undefined {
  const value = meta?.[key];
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) return value.getTime();
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    throw new FieldError(`metadata.${key}`, `must be an RFC 3339 timestamp (got ${typeName(value)})`);
  }
  return ms;
}

/** Deep equality of raw JSON values (key order may differ). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const isArray = Array.isArray(a);
  if (isArray !== Array.isArray(b)) return false;
  if (isArray) {
    const x = a as unknown[],
      y = b as unknown[];
    if (x.length !== y.length) return false;
    for (let i = 0; i < x.length; i++) if (!sameJson(x[i], y[i])) return false;
    return true;
  }
  const x = a as Obj,
    y = b as Obj;
  // for...in, not Object.keys: the pod converter compares every pod with the previous one, and two key arrays per
  // nested object were most of the garbage a conversion made.
  let xKeys = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k)) continue;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
    xKeys++;
  }
  let yKeys = 0;
  for (const k in y) if (Object.hasOwn(y, k)) yKeys++;
  return xKeys === yKeys;
}
