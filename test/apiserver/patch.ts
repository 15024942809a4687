// PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and a subset of strategic merge patch.
// Strategic merge patch is treated as a merge patch, except that the few lists listed in MERGE_KEYS (those Kubernetes
// declares with a patchMergeKey and this project touches: conditions, containers, ownerReferences, taints, ...) are
// merged by their key, `$patch: delete` removes a keyed list item and `$patch: replace` replaces a map. Every other
// list is replaced, as by a merge patch; `$retainKeys`, `$setElementOrder` and `$deleteFromPrimitiveList` are not
// implemented.

import { errors } from './errors.js';
import { isObject } from './types.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Copies a JSON value (about 7x faster than structuredClone for API objects). A Date, as client-node model
 * objects carry, becomes its RFC 3339 string: the wire form the server stores.
 */
export function deepClone<T>(value: T): T {
  return cloneJson(value) as T;
}

function cloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson);
  if (value instanceof Date) return value.toISOString().replace(/\.000Z$/, 'Z');
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = cloneJson((value as Record<string, unknown>)[key]);
  return out;
}

/** Structural equality of JSON values (object key order ignored; `undefined` members ignored). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a) && isObject(b)) {
    const aKeys = Object.keys(a).filter((k) => a[k] !== undefined);
    const bKeys = Object.keys(b).filter((k) => b[k] !== undefined);
    if (aKeys.length !== bKeys.length) return false;
    for (const key of aKeys) if (!deepEqual(a[key], b[key])) return false;
    return true;
  }
  return false;
}

// ---- JSON merge patch ----------------------------------------------------------------------------------------

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return deepClone(patch);
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

// ---- strategic merge patch (subset) -------------------------------------------------------------------------------

/** Lists merged by key under strategic merge patch, by their path with list indices removed. */
const MERGE_KEYS: Record<string, string> = {
  'metadata.ownerReferences': 'uid',
  'status.conditions': 'type',
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.containers.ports': 'containerPort',
  'spec.containers.env': 'name',
  'spec.containers.volumeMounts': 'mountPath',
  'spec.volumes': 'name',
  'spec.taints': 'key',
  'spec.template.spec.containers': 'name',
  'status.containerStatuses': 'name',
  'status.addresses': 'type',
};

function strategicList(path: string, target: unknown, patch: unknown[]): unknown[] {
  const mergeKey = MERGE_KEYS[path];
  if (mergeKey === undefined || !Array.isArray(target)) {
    return patch.filter((item) => !(isObject(item) && item.$patch === 'delete')).map((item) => deepClone(item));
  }
  const result = target.map((item) => deepClone(item) as unknown);
  for (const item of patch) {
    if (!isObject(item) || !(mergeKey in item)) {
      result.push(deepClone(item));
      continue;
    }
    const index = result.findIndex((existing) => isObject(existing) && deepEqual(existing[mergeKey], item[mergeKey]));
    if (item.$patch === 'delete') {
      if (index >= 0) result.splice(index, 1);
    } else if (index >= 0) {
      result[index] = strategicMerge(path, result[index], item);
    } else {
      result.push(strategicMerge(path, undefined, item));
    }
  }
  return result;
}

export function strategicMerge(path: string, target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return deepClone(patch);
  if (patch.$patch === 'replace') {
    const replaced: Record<string, unknown> = { ...patch };
    delete replaced.$patch;
    return deepClone(replaced);
  }
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch') continue;
    const childPath = path ? `${path}.${key}` : key;
    if (value === null) delete result[key];
    else if (Array.isArray(value)) result[key] = strategicList(childPath, result[key], value);
    else result[key] = strategicMerge(childPath, result[key], value);
  }
  return result;
}

// ---- JSON patch ------------------------------------------------------------------------------------------------

interface Operation {
  op: string;
  path: string;
  from?: string;
  value?: unknown;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`JSON pointer must start with '/': ${pointer}`);
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = Record<string, unknown> | unknown[];

function resolveParent(doc: unknown, tokens: string[], pointer: string): { parent: Container; last: string } {
  if (tokens.length === 0) throw new Error(`cannot address the document root: ${pointer}`);
  let current: unknown = doc;
  for (const token of tokens.slice(0, -1)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length - 1, pointer)];
    else if (isObject(current) && token in current) current = current[token];
    else throw new Error(`doc is missing path: "${pointer}": missing value`);
  }
  if (!Array.isArray(current) && !isObject(current))
    throw new Error(`doc is missing path: "${pointer}": missing value`);
  return { parent: current, last: tokens[tokens.length - 1] ?? '' };
}

function arrayIndex(token: string, max: number, pointer: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new Error(`invalid array index in ${pointer}: ${token}`);
  const index = Number(token);
  if (index > max) throw new Error(`array index out of bounds in ${pointer}: ${index}`);
  return index;
}

function getAt(doc: unknown, pointer: string): unknown {
  let current = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(current)) current = current[arrayIndex(token, current.length - 1, pointer)];
    else if (isObject(current) && token in current) current = current[token];
    else throw new Error(`doc is missing path: "${pointer}": missing value`);
  }
  return current;
}

function addAt(doc: unknown, pointer: string, value: unknown): unknown {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return value;
  const { parent, last } = resolveParent(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    if (last === '-') parent.push(value);
    else parent.splice(arrayIndex(last, parent.length, pointer), 0, value);
  } else {
    parent[last] = value;
  }
  return doc;
}

function removeAt(doc: unknown, pointer: string): unknown {
  const tokens = parsePointer(pointer);
  const { parent, last } = resolveParent(doc, tokens, pointer);
  if (Array.isArray(parent)) {
    parent.splice(arrayIndex(last, parent.length - 1, pointer), 1);
  } else {
    if (!(last in parent)) throw new Error(`Unable to remove nonexistent key: ${last}: missing value`);
    delete parent[last];
  }
  return doc;
}

function applyOperation(doc: unknown, op: Operation): unknown {
  switch (op.op) {
    case 'add':
      return addAt(doc, op.path, deepClone(op.value));
    case 'remove':
      return removeAt(doc, op.path);
    case 'replace':
      getAt(doc, op.path);
      if (op.path === '') return deepClone(op.value);
      return addAt(removeAt(doc, op.path), op.path, deepClone(op.value));
    case 'move': {
      const value = getAt(doc, op.from ?? '');
      return addAt(removeAt(doc, op.from ?? ''), op.path, value);
    }
    case 'copy':
      return addAt(doc, op.path, deepClone(getAt(doc, op.from ?? '')));
    case 'test':
      if (!deepEqual(getAt(doc, op.path), op.value)) throw new Error(`testing value ${op.path} failed: test failed`);
      return doc;
    default:
      throw new Error(`Unexpected kind: ${op.op}`);
  }
}

/**
 * Applies an RFC 6902 patch to a copy of `doc`. A body that is not a list of operations is a 400 BadRequest;
 * an operation that cannot be applied (missing path, failed `test`) is a 422, as the API server answers.
 */
export function jsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch))
    throw errors.badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  const ops: Operation[] = [];
  for (const raw of patch) {
    if (!isObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw errors.badRequest('invalid JSON patch operation');
    }
    ops.push(raw as unknown as Operation);
  }
  let result = deepClone(doc);
  try {
    for (const op of ops) result = applyOperation(result, op);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const apiError = errors.fromCode(422, message);
    throw apiError;
  }
  return result;
}
