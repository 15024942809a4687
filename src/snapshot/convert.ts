// Converters from raw Kubernetes objects (as the API server or `kubectl -o yaml|json` prints them) to the compact model.
// Shared by the snapshot loader and the watch caches. Each converter reads only the fields the model keeps, validates
// them with the API's rules, and throws FieldError with the exact field path of the first problem; the caller adds the
// file and the object. Nothing of the raw object is retained: labels, resources and tolerations are copied into
// interned frozen values, and the remaining strings are primitives.
//
// Hot path: a cluster snapshot can hold 150,000 pods, so the pod converter avoids per-pod allocations it does not need
// (field paths are built only when reporting an error, label sets are interned, no JSON.stringify, no RegExp creation).
import { isObj, present, typeName, type Obj } from '../model/rawJson.js';
import { FieldError } from '../errors.js';
import { EMPTY_LABELS, intern, internLabels, internResources, internTolerations } from '../model/intern.js';
import { andSelector, compileLabelSelector, labelKeyProblem, MATCH_NOTHING } from '../model/labels.js';
import { parseQuantity, toMilli } from '../model/quantity.js';
import { spreadConstraintDefaults } from '../model/spread.js';
import type {
  EvictAnnotation,
  IntOrPercent,
  LabelRequirement,
  Labels,
  NamespaceInfo,
  NodeInclusionPolicy,
  NodeInfo,
  NodeSelectorOperator,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  OwnerRef,
  PdbInfo,
  PersistentVolumeClaimInfo,
  PersistentVolumeInfo,
  PodAffinityTerm,
  PodInfo,
  PodPhase,
  PreferredSchedulingTerm,
  PriorityClassInfo,
  QosClass,
  RequiredNodeAffinity,
  Resources,
  Selector,
  SpreadConstraint,
  StorageClassInfo,
  Taint,
  TaintEffect,
  Toleration,
  WhenUnsatisfiable,
  WorkloadRef,
} from '../model/types.js';

/** Resolves a pod's priority from its priorityClassName (undefined when it has none); see makePriorityResolver. */
export type PriorityResolver = (className: string | undefined) => number;

// ---- raw field access ------------------------------------------------------------------------------------------

const SIMPLE_KEY = /^[A-Za-z0-9_-]+$/;

/** `path.key`, or `path[key]` when the key contains dots or slashes (label keys, extended resource names). */
export function childPath(path: string, key: string): string {
  if (!SIMPLE_KEY.test(key)) return `${path}[${key}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** A nested object; undefined when absent or null. */
function getObj(parent: Obj | undefined, key: string, path: string): Obj | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) throw new FieldError(childPath(path, key), `must be an object (got ${typeName(value)})`);
  return value;
}

function getList(parent: Obj | undefined, key: string, path: string): readonly unknown[] | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw new FieldError(childPath(path, key), `must be a list (got ${typeName(value)})`);
  return value as readonly unknown[];
}

function getString(parent: Obj | undefined, key: string, path: string): string | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new FieldError(childPath(path, key), `must be a string (got ${typeName(value)})`);
  return value;
}

function requireString(parent: Obj | undefined, key: string, path: string): string {
  const value = getString(parent, key, path);
  if (value === undefined || value === '') throw new FieldError(childPath(path, key), 'is required');
  return value;
}

function getBool(parent: Obj | undefined, key: string, path: string): boolean | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean')
    throw new FieldError(childPath(path, key), `must be true or false (got ${typeName(value)})`);
  return value;
}

function getInt(parent: Obj | undefined, key: string, path: string): number | undefined {
  if (parent === undefined) return undefined;
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new FieldError(childPath(path, key), `must be an integer (got ${typeName(value)})`);
  }
  return value;
}

function getEnum<T extends string>(
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

function root(raw: unknown): Obj {
  if (!isObj(raw)) throw new FieldError('', `must be an object (got ${typeName(raw)})`);
  return raw;
}

/** A string map such as labels or nodeSelector, every value checked to be a string; undefined when absent. */
function getStringMap(
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

function labelsOf(meta: Obj | undefined): Labels {
  const raw = getStringMap(meta, 'labels', 'metadata');
  return raw === undefined ? EMPTY_LABELS : internLabels(raw);
}

function conditionTrue(status: Obj | undefined, type: string, path: string): boolean {
  const conditions = getList(status, 'conditions', path);
  if (conditions === undefined) return false;
  for (const c of conditions) {
    if (isObj(c) && c['type'] === type) return c['status'] === 'True';
  }
  return false;
}

function timestampMs(meta: Obj | undefined, key: string): number | undefined {
  const value = meta?.[key];
  if (value === undefined || value === null) return undefined;
  if (value instanceof Date) return value.getTime();
  const ms = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) {
    throw new FieldError(`metadata.${key}`, `must be an RFC 3339 timestamp (got ${typeName(value)})`);
  }
  return ms;
}

// ---- resources -------------------------------------------------------------------------------------------------

/** A quantity in the model's base unit: cpu in millicores (rounded up), everything else rounded up to an integer. */
function resourceAmount(name: string, raw: unknown, path: string): number {
  const value = parseQuantity(raw);
  if (value === undefined || value < 0) {
    throw new FieldError(
      childPath(path, name),
      `must be a non-negative quantity such as 500m, 2 or 1Gi (got ${typeName(raw)})`,
    );
  }
  if (name === 'cpu') return toMilli(value);
  // Quantity.Value() rounds up; the rounding guard absorbs binary noise (0.1Ki, 1.1e3).
  return Math.ceil(Math.round(value * 1e6) / 1e6);
}

/** A ResourceList as a fresh null-prototype accumulator; undefined when absent. */
function resourceList(parent: Obj | undefined, key: string, path: string): Record<string, number> | undefined {
  const raw = getObj(parent, key, path);
  if (raw === undefined) return undefined;
  const out: Record<string, number> = Object.create(null) as Record<string, number>;
  const listPath = childPath(path, key);
  for (const name in raw) {
    if (Object.hasOwn(raw, name)) out[name] = resourceAmount(name, raw[name], listPath);
  }
  return out;
}

function addInto(target: Record<string, number>, source: Readonly<Record<string, number>>): void {
  for (const name in source) target[name] = (target[name] ?? 0) + source[name]!;
}

function maxInto(target: Record<string, number>, source: Readonly<Record<string, number>>): void {
  for (const name in source) {
    const have = target[name];
    if (have === undefined || source[name]! > have) target[name] = source[name]!;
  }
}

interface ContainerResources {
  readonly requests: Record<string, number>;
  readonly limits: Record<string, number>;
  readonly restartable: boolean;
}

function containerResources(raw: unknown, path: string, init: boolean): ContainerResources {
  if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
  const resources = getObj(raw, 'resources', path);
  const resourcesPath = `${path}.resources`;
  const requests =
    resourceList(resources, 'requests', resourcesPath) ?? (Object.create(null) as Record<string, number>);
  const limits = resourceList(resources, 'limits', resourcesPath) ?? (Object.create(null) as Record<string, number>);
  // API defaulting: a resource with a limit and no request is requested at its limit.
  for (const name in limits) if (requests[name] === undefined) requests[name] = limits[name]!;
  const restartable = init && getString(raw, 'restartPolicy', path) === 'Always';
  return { requests, limits, restartable };
}

/**
 * Effective scheduling requests, as the scheduler's resource helpers compute them: regular containers and
 * restartable (sidecar) init containers run together, so they are summed; each ordinary init container runs alone
 * next to the sidecars started before it; the pod needs the larger of the two, per resource, plus spec.overhead.
 */
function podRequests(
  containers: readonly ContainerResources[],
  initContainers: readonly ContainerResources[],
  overhead: Record<string, number> | undefined,
): Resources {
  const sum: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const c of containers) addInto(sum, c.requests);
  if (initContainers.length > 0) {
    const sidecars: Record<string, number> = Object.create(null) as Record<string, number>;
    const initPeak: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const c of initContainers) {
      if (c.restartable) {
        addInto(sum, c.requests);
        addInto(sidecars, c.requests);
        maxInto(initPeak, sidecars);
      } else {
        const alone: Record<string, number> = Object.create(null) as Record<string, number>;
        addInto(alone, c.requests);
        addInto(alone, sidecars);
        maxInto(initPeak, alone);
      }
    }
    maxInto(sum, initPeak);
  }
  if (overhead !== undefined) addInto(sum, overhead);
  return internResources(sum);
}

/**
 * The QoS class by the kubelet's rules (only cpu and memory count, zero amounts are ignored): no requests or limits
 * anywhere ⇒ BestEffort; every container limits both cpu and memory and the summed requests equal the summed limits
 * ⇒ Guaranteed; otherwise Burstable. Requests here already default to limits, as the API server does.
 */
function computeQos(all: readonly ContainerResources[]): QosClass {
  let requestCpu = 0,
    requestMem = 0,
    limitCpu = 0,
    limitMem = 0;
  let anyRequest = false,
    anyLimit = false,
    guaranteed = true;
  for (const c of all) {
    const rc = c.requests['cpu'] ?? 0,
      rm = c.requests['memory'] ?? 0,
      lc = c.limits['cpu'] ?? 0,
      lm = c.limits['memory'] ?? 0;
    if (rc > 0 || rm > 0) anyRequest = true;
    if (lc > 0 || lm > 0) anyLimit = true;
    if (lc <= 0 || lm <= 0) guaranteed = false;
    requestCpu += rc;
    requestMem += rm;
    limitCpu += lc;
    limitMem += lm;
  }
  if (!anyRequest && !anyLimit) return 'BestEffort';
  if (guaranteed && requestCpu === limitCpu && requestMem === limitMem) return 'Guaranteed';
  return 'Burstable';
}

// ---- node selection --------------------------------------------------------------------------------------------

const NODE_OPERATORS: readonly NodeSelectorOperator[] = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function stringValues(raw: Obj, path: string): string[] {
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

function labelsText(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}=${labels[k]}`)
    .join(',');
}

const NO_REQUIREMENT: RequiredNodeAffinity = Object.freeze({ nodeSelector: undefined, terms: undefined, text: '' });
const requirementCache = new Map<string, RequiredNodeAffinity>();

/**
 * spec.nodeSelector AND required node affinity (terms ORed, sorted and de-duplicated), with canonical text:
 * `nodeSelector: disk=ssd; affinity: (zone in (a,b)) or (field:metadata.name=node-1)`. Equal text ⇔ equal requirement,
 * so identical requirements are shared between pods.
 */
function requiredNodeAffinity(spec: Obj | undefined, nodeAffinity: Obj | undefined): RequiredNodeAffinity {
  const rawSelector = getStringMap(spec, 'nodeSelector', 'spec');
  const required = getObj(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution', 'spec.affinity.nodeAffinity');
  if ((rawSelector === undefined || Object.keys(rawSelector).length === 0) && required === undefined)
    return NO_REQUIREMENT;
  const nodeSelector =
    rawSelector === undefined || Object.keys(rawSelector).length === 0 ? undefined : internLabels(rawSelector);
  let terms: NodeSelectorTerm[] | undefined;
  let termsText = '';
  if (required !== undefined) {
    const path = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution';
    const rawTerms = getList(required, 'nodeSelectorTerms', path);
    if (rawTerms === undefined || rawTerms.length === 0) {
      throw new FieldError(`${path}.nodeSelectorTerms`, 'must have at least one node selector term');
    }
    const canonical = rawTerms.map((t, i) => nodeSelectorTerm(t, `${path}.nodeSelectorTerms[${i}]`));
    canonical.sort((a, b) => compareText(a.text, b.text));
    const unique = canonical.filter((t, i) => i === 0 || t.text !== canonical[i - 1]!.text);
    terms = unique.map((t) => t.term);
    termsText = unique.length === 1 ? unique[0]!.text : unique.map((t) => `(${t.text})`).join(' or ');
  }
  const text = [
    nodeSelector === undefined ? '' : `nodeSelector: ${labelsText(nodeSelector)}`,
    terms === undefined ? '' : `affinity: ${termsText}`,
  ]
    .filter((s) => s !== '')
    .join('; ');
  const known = requirementCache.get(text);
  if (known !== undefined) return known;
  const value: RequiredNodeAffinity = { nodeSelector, terms, text: intern(text) };
  if (requirementCache.size >= 50_000) requirementCache.clear();
  requirementCache.set(text, value);
  return value;
}

function preferredNodeAffinity(nodeAffinity: Obj | undefined): readonly PreferredSchedulingTerm[] {
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

// ---- taints and tolerations ------------------------------------------------------------------------------------

const EFFECTS: readonly TaintEffect[] = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const EMPTY: readonly never[] = Object.freeze([]);

function taints(spec: Obj | undefined): readonly Taint[] {
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

const tolerationsCache = new Map<string, readonly Toleration[]>();

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

function tolerations(spec: Obj | undefined): readonly Toleration[] {
  const list = getList(spec, 'tolerations', 'spec');
  if (list === undefined || list.length === 0) return EMPTY;
  const key = rawTolerationsKey(list);
  const known = key === undefined ? undefined : tolerationsCache.get(key);
  if (known !== undefined) return known;
  const value = validatedTolerations(list);
  if (key !== undefined) {
    if (tolerationsCache.size >= 50_000) tolerationsCache.clear();
    tolerationsCache.set(key, value);
  }
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
    if (rawOperator !== '' && rawOperator !== 'Equal' && rawOperator !== 'Exists') {
      throw new FieldError(`${path}.operator`, `must be Equal or Exists (got ${JSON.stringify(rawOperator)})`);
    }
    // An empty operator means Equal (API default).
    const operator = rawOperator === 'Exists' ? 'Exists' : 'Equal';
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

// ---- topology spread and pod affinity --------------------------------------------------------------------------

const WHEN: readonly WhenUnsatisfiable[] = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION: readonly NodeInclusionPolicy[] = ['Honor', 'Ignore'];

/** The pod's label values for `keys` as requirements (keys the pod lacks are ignored, as the scheduler does). */
function labelKeyRequirements(
  raw: Obj,
  key: 'matchLabelKeys' | 'mismatchLabelKeys',
  path: string,
  podLabels: Readonly<Record<string, string>>,
): LabelRequirement[] {
  const list = getList(raw, key, path);
  if (list === undefined || list.length === 0) return [];
  const out: LabelRequirement[] = [];
  list.forEach((k, i) => {
    if (typeof k !== 'string') throw new FieldError(`${path}.${key}[${i}]`, `must be a string (got ${typeName(k)})`);
    if (Object.hasOwn(podLabels, k)) {
      out.push({ key: k, operator: key === 'matchLabelKeys' ? 'In' : 'NotIn', values: [podLabels[k]!] });
    }
  });
  return out;
}

/** Compiled selectors shared by pods whose raw selector is the same object shape; keyed cheaply, see selectorKey. */
const selectorCache = new Map<string, Selector>();

/**
 * A cheap canonical key for the common selector shapes (matchLabels only); undefined for anything else, which is
 * then compiled without caching. Avoids recompiling (and re-validating) one selector for each of 1,000 replicas.
 */
function selectorKey(raw: unknown): string | undefined {
  if (!isObj(raw)) return undefined;
  let key = '';
  for (const k in raw) {
    if (!Object.hasOwn(raw, k)) continue;
    if (k !== 'matchLabels') return undefined;
    const ml = raw[k];
    if (ml === null) continue;
    if (!isObj(ml)) return undefined;
    for (const lk in ml) {
      if (!Object.hasOwn(ml, lk)) continue;
      const v = ml[lk];
      if (typeof v !== 'string') return undefined;
      key += `${lk.length}:${lk}${v.length}:${v}`;
    }
  }
  return key;
}

const andCache = new Map<string, Selector>();

/** andSelector, shared between pods: a selector with the pod's pod-template-hash ANDed in is the same for a ReplicaSet. */
function andCached(base: Selector, extra: readonly LabelRequirement[]): Selector {
  if (base.kind === 'nothing' || extra.length === 0) return base;
  let key = `${base.text.length}:${base.text}`;
  for (const r of extra) key += `${r.operator}${r.key.length}:${r.key}${r.values[0]!.length}:${r.values[0]}`;
  const known = andCache.get(key);
  if (known !== undefined) return known;
  const value = andSelector(base, extra);
  if (andCache.size >= 50_000) andCache.clear();
  andCache.set(key, value);
  return value;
}

function compileCached(raw: unknown, path: string): Selector {
  const key = selectorKey(raw);
  if (key === undefined) return compileLabelSelector(raw, path);
  const known = selectorCache.get(key);
  if (known !== undefined) return known;
  const compiled = compileLabelSelector(raw, path);
  if (selectorCache.size >= 50_000) selectorCache.clear();
  selectorCache.set(key, compiled);
  return compiled;
}

function spreadConstraints(
  spec: Obj | undefined,
  podLabels: Readonly<Record<string, string>>,
): readonly SpreadConstraint[] {
  const list = getList(spec, 'topologySpreadConstraints', 'spec');
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) => {
    const path = `spec.topologySpreadConstraints[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
    const maxSkew = getInt(raw, 'maxSkew', path);
    if (maxSkew === undefined || maxSkew < 1) throw new FieldError(`${path}.maxSkew`, 'must be an integer ≥ 1');
    const topologyKey = requireString(raw, 'topologyKey', path);
    const whenUnsatisfiable = getEnum(raw, 'whenUnsatisfiable', path, WHEN);
    if (whenUnsatisfiable === undefined)
      throw new FieldError(`${path}.whenUnsatisfiable`, `is required (${WHEN.join(' or ')})`);
    const rawMinDomains = getInt(raw, 'minDomains', path);
    if (rawMinDomains !== undefined) {
      if (rawMinDomains < 1) throw new FieldError(`${path}.minDomains`, 'must be an integer ≥ 1');
      if (whenUnsatisfiable !== 'DoNotSchedule') {
        throw new FieldError(`${path}.minDomains`, 'can only be set when whenUnsatisfiable is DoNotSchedule');
      }
    }
    const base =
      raw['labelSelector'] === undefined || raw['labelSelector'] === null
        ? MATCH_NOTHING
        : compileCached(raw['labelSelector'], `${path}.labelSelector`);
    const selector = andCached(base, labelKeyRequirements(raw, 'matchLabelKeys', path, podLabels));
    return {
      maxSkew,
      topologyKey: intern(topologyKey),
      whenUnsatisfiable,
      selector,
      ...spreadConstraintDefaults(
        rawMinDomains,
        getEnum(raw, 'nodeAffinityPolicy', path, INCLUSION),
        getEnum(raw, 'nodeTaintsPolicy', path, INCLUSION),
      ),
      fromDefaults: false,
    };
  });
}

function podAffinityTerms(
  affinity: Obj | undefined,
  kind: 'podAffinity' | 'podAntiAffinity',
  namespace: string,
  podLabels: Readonly<Record<string, string>>,
): readonly PodAffinityTerm[] {
  const section = getObj(affinity, kind, 'spec.affinity');
  const sectionPath = `spec.affinity.${kind}`;
  const list = getList(section, 'requiredDuringSchedulingIgnoredDuringExecution', sectionPath);
  if (list === undefined || list.length === 0) return EMPTY;
  return list.map((raw, i) => {
    const path = `${sectionPath}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`;
    if (!isObj(raw)) throw new FieldError(path, `must be an object (got ${typeName(raw)})`);
    const base = compileCached(raw['labelSelector'], `${path}.labelSelector`);
    const selector = andCached(base, [
      ...labelKeyRequirements(raw, 'matchLabelKeys', path, podLabels),
      ...labelKeyRequirements(raw, 'mismatchLabelKeys', path, podLabels),
    ]);
    const topologyKey = requireString(raw, 'topologyKey', path);
    const names: string[] = [];
    (getList(raw, 'namespaces', path) ?? []).forEach((n, j) => {
      if (typeof n !== 'string')
        throw new FieldError(`${path}.namespaces[${j}]`, `must be a string (got ${typeName(n)})`);
      names.push(intern(n));
    });
    const rawNsSelector = raw['namespaceSelector'];
    const namespaceSelector = present(rawNsSelector)
      ? compileCached(rawNsSelector, `${path}.namespaceSelector`)
      : undefined;
    // Neither namespaces nor namespaceSelector: the pod's own namespace (filled in here so readers need not).
    if (names.length === 0 && namespaceSelector === undefined) names.push(namespace);
    return { selector, topologyKey: intern(topologyKey), namespaces: names, namespaceSelector };
  });
}

// ---- owners and annotations ------------------------------------------------------------------------------------

const ownerCache = new Map<string, OwnerRef>();
const workloadCache = new WeakMap<OwnerRef, WorkloadRef>();

function controllerOwner(meta: Obj | undefined): OwnerRef | undefined {
  const refs = getList(meta, 'ownerReferences', 'metadata');
  if (refs === undefined) return undefined;
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i];
    const path = `metadata.ownerReferences[${i}]`;
    if (!isObj(ref)) throw new FieldError(path, `must be an object (got ${typeName(ref)})`);
    if (ref['controller'] !== true) continue;
    const kind = requireString(ref, 'kind', path);
    const name = requireString(ref, 'name', path);
    const uid = getString(ref, 'uid', path) ?? '';
    // The replicas of one controller share one OwnerRef.
    const known = ownerCache.get(uid);
    if (known !== undefined && known.kind === kind && known.name === name) return known;
    const owner: OwnerRef = Object.freeze({ kind: intern(kind), name: intern(name), uid });
    if (ownerCache.size >= 50_000) ownerCache.clear();
    ownerCache.set(uid, owner);
    return owner;
  }
  return undefined;
}

function workloadOf(owner: OwnerRef | undefined, podName: string, labels: Labels): WorkloadRef {
  if (owner === undefined) return { kind: 'Pod', name: podName };
  const known = workloadCache.get(owner);
  if (known !== undefined) return known;
  const workload = Object.freeze(deriveWorkload(owner, labels));
  workloadCache.set(owner, workload);
  return workload;
}

function deriveWorkload(owner: OwnerRef, labels: Labels): WorkloadRef {
  if (owner.kind === 'ReplicaSet' && Object.hasOwn(labels, 'pod-template-hash')) {
    const hash = labels['pod-template-hash']!;
    if (hash !== '' && owner.name.length > hash.length + 1 && owner.name.endsWith(`-${hash}`)) {
      return { kind: 'Deployment', name: intern(owner.name.slice(0, owner.name.length - hash.length - 1)) };
    }
  }
  return { kind: owner.kind, name: owner.name };
}

function annotation(annotations: Obj | undefined, key: string): string | undefined {
  if (annotations === undefined || !Object.hasOwn(annotations, key)) return undefined;
  const value = annotations[key];
  return typeof value === 'string' ? value : undefined;
}

function evictAnnotationOf(annotations: Obj | undefined): EvictAnnotation {
  // Case-insensitive, so a hand-typed "Never" protects the pod rather than being silently ignored.
  const own = annotation(annotations, 'rebalancer.dev/evict')?.toLowerCase();
  if (own === 'never') return 'never';
  if (own === 'always') return 'always';
  if (annotations !== undefined && Object.hasOwn(annotations, 'descheduler.alpha.kubernetes.io/evict')) return 'always';
  return undefined;
}

function protectedByOf(annotations: Obj | undefined, evict: EvictAnnotation): string | undefined {
  if (annotations === undefined) return undefined;
  if (evict === 'never') return 'annotation rebalancer.dev/evict: "never"';
  if (annotation(annotations, 'karpenter.sh/do-not-disrupt') === 'true')
    return 'annotation karpenter.sh/do-not-disrupt: "true"';
  if (annotation(annotations, 'cluster-autoscaler.kubernetes.io/safe-to-evict') === 'false') {
    return 'annotation cluster-autoscaler.kubernetes.io/safe-to-evict: "false"';
  }
  if (Object.hasOwn(annotations, 'descheduler.alpha.kubernetes.io/prefer-no-eviction')) {
    return 'annotation descheduler.alpha.kubernetes.io/prefer-no-eviction';
  }
  return undefined;
}

function volumeFlags(
  spec: Obj | undefined,
  podName: string,
): { localStorage: boolean; pvc: boolean; claims: readonly string[] } {
  const volumes = getList(spec, 'volumes', 'spec');
  let localStorage = false,
    pvc = false;
  if (volumes === undefined) return { localStorage, pvc, claims: EMPTY };
  const claims: string[] = [];
  for (const v of volumes) {
    if (!isObj(v)) continue;
    if (present(v['emptyDir']) || present(v['hostPath'])) localStorage = true;
    const claim = v['persistentVolumeClaim'];
    if (present(claim)) {
      pvc = true;
      if (isObj(claim) && typeof claim['claimName'] === 'string') claims.push(intern(claim['claimName']));
    }
    if (present(v['ephemeral'])) {
      pvc = true;
      // The ephemeral volume controller names the claim after the pod and the volume.
      if (typeof v['name'] === 'string') claims.push(intern(`${podName}-${v['name']}`));
    }
  }
  return { localStorage, pvc, claims: claims.length === 0 ? EMPTY : claims };
}

// ---- converters ------------------------------------------------------------------------------------------------

const PHASES: readonly PodPhase[] = ['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown'];
const QOS: readonly QosClass[] = ['BestEffort', 'Burstable', 'Guaranteed'];

export function convertNode(raw: unknown): NodeInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const spec = getObj(o, 'spec', '');
  const status = getObj(o, 'status', '');
  return {
    name: intern(name),
    labels: labelsOf(meta),
    taints: taints(spec),
    unschedulable: getBool(spec, 'unschedulable', 'spec') ?? false,
    ready: conditionTrue(status, 'Ready', 'status'),
    allocatable: internResources(resourceList(status, 'allocatable', 'status') ?? {}),
  };
}

function containers(spec: Obj | undefined, key: 'containers' | 'initContainers'): ContainerResources[] {
  const list = getList(spec, key, 'spec');
  if (list === undefined) return [];
  return list.map((c, i) => containerResources(c, `spec.${key}[${i}]`, key === 'initContainers'));
}

interface PodResources {
  readonly requests: Resources;
  readonly qos: QosClass;
}

const resourcesCache = new Map<string, PodResources>();

function appendResourceList(key: string, list: unknown): string | undefined {
  if (list === undefined || list === null) return `${key}-`;
  if (!isObj(list)) return undefined;
  let out = key;
  for (const name in list) {
    if (!Object.hasOwn(list, name)) continue;
    const v = list[name];
    const text = typeof v === 'string' ? v : typeof v === 'number' ? `#${v}` : undefined;
    if (text === undefined) return undefined;
    out += `${name.length}:${name}${text.length}:${text}`;
  }
  return `${out};`;
}

/**
 * A key made of the raw resource strings of every container (and whether init containers are restartable) and the
 * overhead; replicas of one workload share it, so their requests are parsed once. Undefined for unusual shapes,
 * which then take the validating path.
 */
function rawResourcesKey(spec: Obj | undefined): string | undefined {
  let key: string | undefined = '';
  for (const listKey of ['containers', 'initContainers'] as const) {
    const list = spec?.[listKey];
    if (list !== undefined && list !== null) {
      if (!Array.isArray(list)) return undefined;
      for (const c of list as unknown[]) {
        if (!isObj(c)) return undefined;
        const resources = c['resources'];
        if (listKey === 'initContainers') key += c['restartPolicy'] === 'Always' ? 'A' : 'I';
        if (resources !== undefined && resources !== null) {
          if (!isObj(resources)) return undefined;
          key = appendResourceList(key, resources['requests']);
          if (key === undefined) return undefined;
          key = appendResourceList(key, resources['limits']);
          if (key === undefined) return undefined;
        }
        key += ',';
      }
    }
    key += '|';
  }
  return appendResourceList(key, spec?.['overhead']);
}

function podResources(spec: Obj | undefined): PodResources {
  const key = rawResourcesKey(spec);
  const known = key === undefined ? undefined : resourcesCache.get(key);
  if (known !== undefined) return known;
  const regular = containers(spec, 'containers');
  const init = containers(spec, 'initContainers');
  const overhead = resourceList(spec, 'overhead', 'spec');
  const value: PodResources = {
    requests: podRequests(regular, init, overhead),
    qos: computeQos(init.length === 0 ? regular : [...init, ...regular]),
  };
  if (key !== undefined) {
    if (resourcesCache.size >= 50_000) resourcesCache.clear();
    resourcesCache.set(key, value);
  }
  return value;
}

/** Deep equality of raw JSON values (key order may differ). */
function sameJson(a: unknown, b: unknown): boolean {
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
  const xKeys = Object.keys(x),
    yKeys = Object.keys(y);
  if (xKeys.length !== yKeys.length) return false;
  for (let i = 0; i < xKeys.length; i++) {
    const k = xKeys[i]!;
    if (k !== yKeys[i] && !Object.hasOwn(y, k)) return false;
    if (!sameJson(x[k], y[k])) return false;
  }
  return true;
}

function sameContainerResources(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x: unknown = a[i],
      y: unknown = b[i];
    if (!isObj(x) || !isObj(y)) return false;
    if (x['restartPolicy'] !== y['restartPolicy'] || !sameJson(x['resources'], y['resources'])) return false;
  }
  return true;
}

/**
 * The previous pod's raw parts and what they converted to. kubectl lists a workload's replicas next to each other,
 * and replicas differ only in name, uid, node and status, so comparing with the previous pod (cheap, no allocation)
 * usually skips rebuilding labels, requests, tolerations, affinity and spread constraints. Only the last pod's
 * sub-objects are referenced here, until the next conversion replaces them.
 */
const previous = {
  labelsRaw: undefined as unknown,
  labels: EMPTY_LABELS,
  resourcesSpec: undefined as Obj | undefined,
  resources: undefined as PodResources | undefined,
  tolerationsRaw: undefined as unknown,
  tolerations: EMPTY as readonly Toleration[],
  nodeSelectorRaw: undefined as unknown,
  nodeAffinityRaw: undefined as unknown,
  required: NO_REQUIREMENT,
  preferred: EMPTY as readonly PreferredSchedulingTerm[],
  spreadRaw: undefined as unknown,
  spreadLabels: EMPTY_LABELS,
  spread: EMPTY as readonly SpreadConstraint[],
  affinityRaw: undefined as unknown,
  antiAffinityRaw: undefined as unknown,
  affinityLabels: EMPTY_LABELS,
  affinityNamespace: '',
  podAffinity: EMPTY as readonly PodAffinityTerm[],
  podAntiAffinity: EMPTY as readonly PodAffinityTerm[],
};

function podLabels(meta: Obj | undefined): { raw: Readonly<Record<string, string>>; labels: Labels } {
  const raw = meta?.['labels'];
  if (raw !== undefined && sameJson(raw, previous.labelsRaw)) {
    return { raw: raw as Record<string, string>, labels: previous.labels };
  }
  const validated = getStringMap(meta, 'labels', 'metadata') ?? EMPTY_LABELS;
  const labels = internLabels(validated);
  previous.labelsRaw = raw;
  previous.labels = labels;
  return { raw: validated, labels };
}

function memoResources(spec: Obj | undefined): PodResources {
  const p = previous.resourcesSpec;
  if (
    previous.resources !== undefined &&
    p !== undefined &&
    spec !== undefined &&
    sameContainerResources(spec['containers'], p['containers']) &&
    sameContainerResources(spec['initContainers'], p['initContainers']) &&
    sameJson(spec['overhead'], p['overhead'])
  ) {
    return previous.resources;
  }
  const value = podResources(spec);
  previous.resourcesSpec = spec;
  previous.resources = value;
  return value;
}

function memoTolerations(spec: Obj | undefined): readonly Toleration[] {
  const raw = spec?.['tolerations'];
  if (sameJson(raw, previous.tolerationsRaw)) return previous.tolerations;
  const value = tolerations(spec);
  previous.tolerationsRaw = raw;
  previous.tolerations = value;
  return value;
}

function memoNodeAffinity(spec: Obj | undefined, affinity: Obj | undefined): void {
  const selectorRaw = spec?.['nodeSelector'];
  const affinityRaw = affinity?.['nodeAffinity'];
  if (sameJson(selectorRaw, previous.nodeSelectorRaw) && sameJson(affinityRaw, previous.nodeAffinityRaw)) return;
  const nodeAffinity = getObj(affinity, 'nodeAffinity', 'spec.affinity');
  const required = requiredNodeAffinity(spec, nodeAffinity);
  const preferred = preferredNodeAffinity(nodeAffinity);
  previous.nodeSelectorRaw = selectorRaw;
  previous.nodeAffinityRaw = affinityRaw;
  previous.required = required;
  previous.preferred = preferred;
}

function memoSpread(
  spec: Obj | undefined,
  labels: Labels,
  rawLabels: Readonly<Record<string, string>>,
): readonly SpreadConstraint[] {
  const raw = spec?.['topologySpreadConstraints'];
  if (labels === previous.spreadLabels && sameJson(raw, previous.spreadRaw)) return previous.spread;
  const value = spreadConstraints(spec, rawLabels);
  previous.spreadRaw = raw;
  previous.spreadLabels = labels;
  previous.spread = value;
  return value;
}

function memoPodAffinity(
  affinity: Obj | undefined,
  namespace: string,
  labels: Labels,
  rawLabels: Readonly<Record<string, string>>,
): void {
  const affinityRaw = affinity?.['podAffinity'];
  const antiRaw = affinity?.['podAntiAffinity'];
  if (
    labels === previous.affinityLabels &&
    namespace === previous.affinityNamespace &&
    sameJson(affinityRaw, previous.affinityRaw) &&
    sameJson(antiRaw, previous.antiAffinityRaw)
  ) {
    return;
  }
  const podAffinity = podAffinityTerms(affinity, 'podAffinity', namespace, rawLabels);
  const podAntiAffinity = podAffinityTerms(affinity, 'podAntiAffinity', namespace, rawLabels);
  Object.assign(previous, {
    affinityRaw,
    antiAffinityRaw: antiRaw,
    affinityLabels: labels,
    affinityNamespace: namespace,
    podAffinity,
    podAntiAffinity,
  });
}

/** Pod → PodInfo. `resolvePriority` maps a priorityClassName to a value when spec.priority is not set. */
export function convertPod(raw: unknown, resolvePriority: PriorityResolver = () => 0): PodInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const namespace = intern(getString(meta, 'namespace', 'metadata') || 'default');
  const { raw: rawLabels, labels } = podLabels(meta);
  const annotations = getObj(meta, 'annotations', 'metadata');
  const spec = getObj(o, 'spec', '');
  const status = getObj(o, 'status', '');
  const affinity = getObj(spec, 'affinity', 'spec');

  const owner = controllerOwner(meta);
  const priorityClassName = getString(spec, 'priorityClassName', 'spec') || undefined;
  const priority = getInt(spec, 'priority', 'spec') ?? resolvePriority(priorityClassName);
  const resources = memoResources(spec);
  const evictAnnotation = evictAnnotationOf(annotations);
  const { localStorage, pvc, claims } = volumeFlags(spec, name);
  const nodeName = getString(spec, 'nodeName', 'spec');
  memoNodeAffinity(spec, affinity);
  const spread = memoSpread(spec, labels, rawLabels);
  memoPodAffinity(affinity, namespace, labels, rawLabels);

  return {
    uid: getString(meta, 'uid', 'metadata') || `${namespace}/${name}`,
    namespace,
    name,
    labels,
    nodeName: nodeName === undefined || nodeName === '' ? undefined : intern(nodeName),
    phase: getEnum(status, 'phase', 'status', PHASES) ?? 'Pending',
    terminating: present(meta?.['deletionTimestamp']),
    ready: conditionTrue(status, 'Ready', 'status'),
    createdAt: timestampMs(meta, 'creationTimestamp') ?? 0,
    priority,
    priorityClassName: priorityClassName === undefined ? undefined : intern(priorityClassName),
    qos: getEnum(status, 'qosClass', 'status', QOS) ?? resources.qos,
    owner,
    workload: workloadOf(owner, name, labels),
    requests: resources.requests,
    requiredNodeAffinity: previous.required,
    preferredNodeAffinity: previous.preferred,
    tolerations: memoTolerations(spec),
    spreadConstraints: spread,
    podAffinity: previous.podAffinity,
    podAntiAffinity: previous.podAntiAffinity,
    daemonSet: owner?.kind === 'DaemonSet',
    mirror:
      (annotations !== undefined && Object.hasOwn(annotations, 'kubernetes.io/config.mirror')) ||
      owner?.kind === 'Node',
    localStorage,
    pvc,
    claims,
    // Resolved once the snapshot's volumes are known (withVolumeTopology).
    volumeTopology: EMPTY,
    evictAnnotation,
    protectedBy: protectedByOf(annotations, evictAnnotation),
  };
}

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

export function convertPriorityClass(raw: unknown): PriorityClassInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const value = getInt(o, 'value', '');
  if (value === undefined) throw new FieldError('value', 'is required and must be an integer');
  return { name: intern(name), value, globalDefault: getBool(o, 'globalDefault', '') ?? false };
}

export function convertNamespace(raw: unknown): NamespaceInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  // The API server always sets this label (and it cannot be changed), so namespaceSelectors can rely on it.
  const labels = { ...(getStringMap(meta, 'labels', 'metadata') ?? {}), 'kubernetes.io/metadata.name': name };
  return { name: intern(name), labels: internLabels(labels) };
}

/** The values of the built-in classes, which exist in every cluster even when a snapshot does not list them. */
export const BUILTIN_PRIORITY_CLASSES: ReadonlyMap<string, number> = new Map([
  ['system-cluster-critical', 2_000_000_000],
  ['system-node-critical', 2_000_001_000],
]);

/**
 * priorityClassName → value, for pods without spec.priority: the named class (or a built-in one); otherwise, and for
 * pods without a class, the globalDefault class (the lowest-valued one if several claim it, as the admission plugin
 * picks); otherwise 0.
 */
export function makePriorityResolver(classes: readonly PriorityClassInfo[]): PriorityResolver {
  const byName = new Map<string, number>();
  let globalDefault: number | undefined;
  for (const c of classes) {
    byName.set(c.name, c.value);
    if (c.globalDefault && (globalDefault === undefined || c.value < globalDefault)) globalDefault = c.value;
  }
  return (className) => {
    if (className !== undefined) {
      const value = byName.get(className) ?? BUILTIN_PRIORITY_CLASSES.get(className);
      if (value !== undefined) return value;
    }
    return globalDefault ?? 0;
  };
}

// ---- volumes ---------------------------------------------------------------------------------------------------

/** Terms ORed, with the canonical text of requiredNodeAffinity's terms. */
function termsOf(rawTerms: readonly unknown[], path: string): { terms: NodeSelectorTerm[]; text: string } {
  const canonical = rawTerms.map((t, i) => nodeSelectorTerm(t, `${path}[${i}]`));
  canonical.sort((a, b) => compareText(a.text, b.text));
  const unique = canonical.filter((t, i) => i === 0 || t.text !== canonical[i - 1]!.text);
  const text = unique.length === 1 ? unique[0]!.text : unique.map((t) => `(${t.text})`).join(' or ');
  return { terms: unique.map((t) => t.term), text: intern(text) };
}

export function convertPersistentVolume(raw: unknown): PersistentVolumeInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const spec = getObj(o, 'spec', '');
  const required = getObj(getObj(spec, 'nodeAffinity', 'spec'), 'required', 'spec.nodeAffinity');
  let nodeAffinity: PersistentVolumeInfo['nodeAffinity'];
  if (required !== undefined) {
    const path = 'spec.nodeAffinity.required.nodeSelectorTerms';
    const rawTerms = getList(required, 'nodeSelectorTerms', 'spec.nodeAffinity.required');
    if (rawTerms === undefined || rawTerms.length === 0) {
      throw new FieldError(path, 'must have at least one node selector term');
    }
    nodeAffinity = termsOf(rawTerms, path);
  }
  const storageClassName = getString(spec, 'storageClassName', 'spec') || undefined;
  return { name: intern(name), storageClassName: storageClassName && intern(storageClassName), nodeAffinity };
}

export function convertPersistentVolumeClaim(raw: unknown): PersistentVolumeClaimInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const namespace = intern(getString(meta, 'namespace', 'metadata') || 'default');
  const spec = getObj(o, 'spec', '');
  const volumeName = getString(spec, 'volumeName', 'spec') || undefined;
  const storageClassName = getString(spec, 'storageClassName', 'spec') || undefined;
  return {
    namespace,
    name: intern(name),
    volumeName: volumeName && intern(volumeName),
    storageClassName: storageClassName && intern(storageClassName),
  };
}

const BINDING_MODES = ['Immediate', 'WaitForFirstConsumer'] as const;

export function convertStorageClass(raw: unknown): StorageClassInfo {
  const o = root(raw);
  const meta = getObj(o, 'metadata', '');
  const name = requireString(meta, 'name', 'metadata');
  const volumeBindingMode = getEnum(o, 'volumeBindingMode', '', BINDING_MODES) ?? 'Immediate';
  const rawTopologies = getList(o, 'allowedTopologies', '');
  let allowedTopologies: StorageClassInfo['allowedTopologies'];
  if (rawTopologies !== undefined && rawTopologies.length > 0) {
    // A TopologySelectorTerm's matchLabelExpressions are `key In values` requirements, ANDed.
    const asTerms = rawTopologies.map((t, i) => {
      const path = `allowedTopologies[${i}]`;
      if (!isObj(t)) throw new FieldError(path, `must be an object with matchLabelExpressions (got ${typeName(t)})`);
      const expressions = (getList(t, 'matchLabelExpressions', path) ?? []).map((e, j) => {
        const ePath = `${path}.matchLabelExpressions[${j}]`;
        if (!isObj(e)) throw new FieldError(ePath, `must be an object with key and values (got ${typeName(e)})`);
        const key = requireString(e, 'key', ePath);
        const problem = labelKeyProblem(key);
        if (problem !== undefined) throw new FieldError(`${ePath}.key`, problem);
        const values = stringValues(e, ePath);
        if (values.length === 0) throw new FieldError(`${ePath}.values`, 'must be non-empty');
        return { key, operator: 'In', values };
      });
      return { matchExpressions: expressions };
    });
    allowedTopologies = termsOf(asTerms, 'allowedTopologies');
  }
  return { name: intern(name), volumeBindingMode, allowedTopologies };
}

const NAMESPACED = new Set(['Pod', 'PodDisruptionBudget', 'PersistentVolumeClaim']);

/** `Kind namespace/name` (or `Kind name` for cluster-scoped kinds); undefined when the object has no name. */
export function describeObject(kind: string, raw: unknown): string | undefined {
  if (!isObj(raw)) return undefined;
  const meta = raw['metadata'];
  if (!isObj(meta)) return undefined;
  const name = meta['name'];
  if (typeof name !== 'string' || name === '') return undefined;
  if (!NAMESPACED.has(kind)) return `${kind} ${name}`;
  const ns = meta['namespace'];
  return `${kind} ${typeof ns === 'string' && ns !== '' ? ns : 'default'}/${name}`;
}
