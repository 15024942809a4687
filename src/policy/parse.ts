// RebalancePolicy parsing: validate a raw object (from the cluster, a snapshot or a --policy file), report every
// problem at once with its field path, then apply the defaults (defaults.ts). The rules mirror the CRD schema and its
// CEL rules, so a file accepted here would be accepted by the API server and vice versa (docs/adr/0006, and
// test/policy/crdMirror.test.ts holds the two together); in addition, unknown fields are errors, because a typo in a
// hand-written policy (`maxPerCycel`) must not silently fall back to a default. Each strategy reads its own section
// of spec.strategies (src/strategies/<key>/policy.ts) with this file's Reader.
import { isObj, present, typeName, type Obj } from '../model/rawJson.js';
import { validate as validateCron } from 'node-cron';
import { cronProblem } from './cron.js';
import { InputError, FieldError } from '../errors.js';
import { compileLabelSelector } from '../model/labels.js';
import type { PriorityClassInfo, Selector } from '../model/types.js';
import { BUILTIN_PRIORITY_CLASSES, describeObject } from '../snapshot/convert.js';
import { flattenObjects, parseDocuments, readInputFile } from '../snapshot/load.js';
import { STRATEGIES, type StrategyRegistry } from '../strategies/registry.js';
import type { SectionReader } from '../strategies/types.js';
import { applyDefaults, type PolicyInput } from './defaults.js';
import { DurationError, parseDuration } from './duration.js';
import type { MaintenanceWindow, NoEvictionPolicy, Policy, PolicyMode, PriorityThreshold } from './types.js';
import { timeZoneProblem, windowScheduleProblem } from './windows.js';

export { DEFAULT_POLICY } from './defaults.js';

export interface PolicyProblem {
  readonly field: string;
  readonly problem: string;
}

export interface PolicyWhere {
  readonly file: string;
  readonly object?: string;
}

/** `path.key`, or just `key` at the root. */
function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function suggestion(key: string, known: readonly string[]): string {
  let best: string | undefined,
    bestDistance = 3;
  for (const k of known) {
    const d = k.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return best === undefined ? `known fields: ${known.join(', ')}` : `did you mean ${best}?`;
}

/** Collects problems while reading; each getter returns undefined for absent, null or invalid values. */
class Reader implements SectionReader {
  readonly problems: PolicyProblem[] = [];

  fail(field: string, problem: string): undefined {
    this.problems.push({ field, problem });
    return undefined;
  }

  /** A nested object whose keys must all be in `known`; undefined when absent or null. */
  object(parent: Obj | undefined, key: string, path: string, known: readonly string[]): Obj | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    return this.objectValue(value, join(path, key), known);
  }

  objectValue(value: unknown, path: string, known: readonly string[]): Obj | undefined {
    if (!isObj(value)) return this.fail(path, `must be an object (got ${typeName(value)})`);
    for (const k of Object.keys(value)) {
      if (!known.includes(k)) this.fail(join(path, k), `unknown field (${suggestion(k, known)})`);
    }
    return value;
  }

  bool(parent: Obj | undefined, key: string, path: string): boolean | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'boolean') return this.fail(join(path, key), `must be true or false (got ${typeName(value)})`);
    return value;
  }

  string(parent: Obj | undefined, key: string, path: string): string | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string') return this.fail(join(path, key), `must be a string (got ${typeName(value)})`);
    return value;
  }

  integer(parent: Obj | undefined, key: string, path: string, min?: number): number | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    const bound = min === undefined ? '' : ` ≥ ${min}`;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || (min !== undefined && value < min)) {
      return this.fail(join(path, key), `must be an integer${bound} (got ${typeName(value)})`);
    }
    return value;
  }

  oneOf<T extends string>(parent: Obj | undefined, key: string, path: string, allowed: readonly T[]): T | undefined {
    const value = this.string(parent, key, path);
    if (value === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(value)) {
      return this.fail(join(path, key), `must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
    }
    return value as T;
  }

  /** A non-negative Go duration, in milliseconds. */
  duration(parent: Obj | undefined, key: string, path: string): number | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    const field = join(path, key);
    if (typeof value !== 'string') {
      return this.fail(field, `must be a duration string such as "90s", "5m" or "1h30m" (got ${typeName(value)})`);
    }
    try {
      const ms = parseDuration(value);
      if (ms < 0) return this.fail(field, `must not be negative (got ${JSON.stringify(value)})`);
      return ms;
    } catch (error) {
      if (error instanceof DurationError) return this.fail(field, `${error.message}; use e.g. "90s", "5m" or "1h30m"`);
      throw error;
    }
  }

  stringList(
    parent: Obj | undefined,
    key: string,
    path: string,
    check: (s: string) => string | undefined,
  ): string[] | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    const field = join(path, key);
    if (!Array.isArray(value)) return this.fail(field, `must be a list of strings (got ${typeName(value)})`);
    const out: string[] = [];
    value.forEach((item, i) => {
      if (typeof item !== 'string') return this.fail(`${field}[${i}]`, `must be a string (got ${typeName(item)})`);
      const problem = check(item);
      if (problem !== undefined) return this.fail(`${field}[${i}]`, problem);
      if (out.includes(item)) return this.fail(`${field}[${i}]`, `duplicate entry ${JSON.stringify(item)}`);
      out.push(item);
    });
    return out;
  }

  /** A metav1.LabelSelector; unknown keys are reported before compiling, as a typo would widen the selection. */
  selector(parent: Obj | undefined, key: string, path: string): Selector | undefined {
    const value = parent?.[key];
    if (value === undefined || value === null) return undefined;
    const field = join(path, key);
    const raw = this.objectValue(value, field, ['matchLabels', 'matchExpressions']);
    if (raw === undefined) return undefined;
    const expressions = raw['matchExpressions'];
    if (Array.isArray(expressions)) {
      expressions.forEach((e, i) => {
        if (isObj(e)) this.objectValue(e, `${field}.matchExpressions[${i}]`, ['key', 'operator', 'values']);
      });
    }
    try {
      return compileLabelSelector(raw, field);
    } catch (error) {
      if (error instanceof FieldError) return this.fail(error.field, error.problem);
      throw error;
    }
  }
}

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const CLASS_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MODES: readonly PolicyMode[] = ['DryRun', 'Evict'];

function namespaceProblem(name: string): string | undefined {
  return name.length <= 63 && NAMESPACE_NAME.test(name)
    ? undefined
    : `${JSON.stringify(name)} is not a valid namespace name`;
}

function scheduleProblem(schedule: string): string | undefined {
  return cronProblem(schedule, validateCron);
}

function readStrategies(r: Reader, spec: Obj | undefined, strategies: StrategyRegistry): PolicyInput['strategies'] {
  const path = 'spec.strategies';
  const s = r.object(
    spec,
    'strategies',
    'spec',
    strategies.all.map((st) => st.key),
  );
  // Every section's unknown fields first, then the fields, in the registry's order.
  const sections = strategies.all.map((st) => [st, r.object(s, st.key, path, st.policy.fields)] as const);
  const out: Record<string, object | undefined> = {};
  // An absent (or null) section stays undefined: that strategy is off (defaults.ts, "what a policy names is what runs").
  for (const [st, section] of sections) {
    out[st.key] = section === undefined ? undefined : st.policy.read(r, section, `${path}.${st.key}`);
  }
  return out;
}

function readPriorityThreshold(r: Reader, eviction: Obj | undefined): PriorityThreshold | undefined {
  const path = 'spec.eviction';
  const pt = r.object(eviction, 'priorityThreshold', path, ['value', 'className']);
  if (pt === undefined) return undefined;
  const ptPath = `${path}.priorityThreshold`;
  const hasValue = present(pt['value']);
  const hasClass = present(pt['className']);
  if (hasValue === hasClass) return r.fail(ptPath, 'must set exactly one of value and className');
  if (hasValue) {
    const value = r.integer(pt, 'value', ptPath);
    return value === undefined ? undefined : { value };
  }
  const className = r.string(pt, 'className', ptPath);
  if (className === undefined) return undefined;
  if (className.length > 253 || !CLASS_NAME.test(className)) {
    return r.fail(`${ptPath}.className`, `${JSON.stringify(className)} is not a valid PriorityClass name`);
  }
  return { className };
}

const NO_EVICTION_POLICIES: readonly NoEvictionPolicy[] = ['Mandatory', 'Preferred'];

/**
 * The classes narrow the protection evictPodsWithPVC: false gives; with evictPodsWithPVC true (the default) there is
 * no such protection to narrow, and a list there would read as protecting pods that are in fact evicted.
 */
function readProtectedStorageClasses(r: Reader, e: Obj | undefined, path: string): string[] | undefined {
  const classes = r.stringList(e, 'protectedStorageClasses', path, (name) =>
    name.length <= 253 && CLASS_NAME.test(name)
      ? undefined
      : `${JSON.stringify(name)} is not a valid StorageClass name`,
  );
  if (classes !== undefined && classes.length > 0 && e?.['evictPodsWithPVC'] !== false)
    return r.fail(
      `${path}.protectedStorageClasses`,
      'protects only with evictPodsWithPVC: false (pods with claims are evicted otherwise); set it, or remove the list',
    );
  return classes;
}

function readEviction(r: Reader, spec: Obj | undefined): PolicyInput['eviction'] {
  const path = 'spec.eviction';
  const e = r.object(spec, 'eviction', 'spec', [
    'priorityThreshold',
    'maxPerCycle',
    'maxPerNode',
    'maxPerNamespace',
    'maxPerWorkload',
    'minPodAge',
    'evictLocalStoragePods',
    'evictBarePods',
    'evictPodsWithPVC',
    'protectedStorageClasses',
    'noEvictionPolicy',
    'evictSystemCriticalPods',
    'evictFailedBarePods',
    'evictPodsWithoutPDB',
    'minReplicas',
    'gracePeriodSeconds',
    'nodeFit',
    'waitForReplacement',
    'replacementTimeout',
    'cooldown',
  ]);
  return {
    priorityThreshold: readPriorityThreshold(r, e),
    // Limits are integers ≥ 0, as in the CRD (minimum: 0). 0 is meaningful: no evictions at that scope,
    // so for example maxPerCycle: 0 turns an Evict policy into one that plans and reports only.
    maxPerCycle: r.integer(e, 'maxPerCycle', path, 0),
    maxPerNode: r.integer(e, 'maxPerNode', path, 0),
    maxPerNamespace: r.integer(e, 'maxPerNamespace', path, 0),
    maxPerWorkload: r.integer(e, 'maxPerWorkload', path, 0),
    minPodAgeMs: r.duration(e, 'minPodAge', path),
    evictLocalStoragePods: r.bool(e, 'evictLocalStoragePods', path),
    evictBarePods: r.bool(e, 'evictBarePods', path),
    evictPodsWithPVC: r.bool(e, 'evictPodsWithPVC', path),
    protectedStorageClasses: readProtectedStorageClasses(r, e, path),
    noEvictionPolicy: r.oneOf(e, 'noEvictionPolicy', path, NO_EVICTION_POLICIES),
    evictSystemCriticalPods: r.bool(e, 'evictSystemCriticalPods', path),
    evictFailedBarePods: r.bool(e, 'evictFailedBarePods', path),
    evictPodsWithoutPDB: r.bool(e, 'evictPodsWithoutPDB', path),
    minReplicas: r.integer(e, 'minReplicas', path, 0),
    gracePeriodSeconds: r.integer(e, 'gracePeriodSeconds', path, 0),
    nodeFit: r.bool(e, 'nodeFit', path),
    waitForReplacement: r.bool(e, 'waitForReplacement', path),
    replacementTimeoutMs: r.duration(e, 'replacementTimeout', path),
    cooldownMs: r.duration(e, 'cooldown', path),
  };
}

function readTriggers(r: Reader, spec: Obj | undefined): PolicyInput['triggers'] {
  const t = r.object(spec, 'triggers', 'spec', ['nodeChanges', 'debounce']);
  return {
    nodeChanges: r.bool(t, 'nodeChanges', 'spec.triggers'),
    debounceMs: r.duration(t, 'debounce', 'spec.triggers'),
  };
}

const MAX_WINDOWS = 16;

function readWindows(r: Reader, spec: Obj | undefined): MaintenanceWindow[] | undefined {
  const value = spec?.['windows'];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return r.fail('spec.windows', `must be a list (got ${typeName(value)})`);
  if (value.length > MAX_WINDOWS)
    return r.fail('spec.windows', `must have at most ${MAX_WINDOWS} windows (got ${value.length})`);
  const out: MaintenanceWindow[] = [];
  value.forEach((item, i) => {
    const p = `spec.windows[${i}]`;
    const w = r.objectValue(item, p, ['schedule', 'duration']);
    if (w === undefined) return;
    let schedule = r.string(w, 'schedule', p);
    if (!present(w['schedule'])) r.fail(`${p}.schedule`, "is required (a cron expression of the window's start)");
    else if (schedule !== undefined) {
      const problem = scheduleProblem(schedule) ?? windowScheduleProblem(schedule);
      if (problem !== undefined) schedule = r.fail(`${p}.schedule`, problem);
    }
    let durationMs = r.duration(w, 'duration', p);
    if (!present(w['duration'])) r.fail(`${p}.duration`, 'is required (a Go duration such as "6h")');
    else if (durationMs === 0) durationMs = r.fail(`${p}.duration`, 'must be positive (got "0s")');
    if (schedule !== undefined && durationMs !== undefined) out.push({ schedule, durationMs });
  });
  return out;
}

function readTimeZone(r: Reader, spec: Obj | undefined): string | undefined {
  const zone = r.string(spec, 'timeZone', 'spec');
  if (zone === undefined) return undefined;
  const problem = timeZoneProblem(zone);
  return problem === undefined ? zone : r.fail('spec.timeZone', problem);
}

function readSpec(r: Reader, spec: Obj | undefined, strategies: StrategyRegistry): PolicyInput {
  const schedule = r.string(spec, 'schedule', 'spec');
  if (schedule !== undefined) {
    const problem = scheduleProblem(schedule);
    if (problem !== undefined) r.fail('spec.schedule', problem);
  }
  const ns = r.object(spec, 'namespaces', 'spec', ['include', 'exclude', 'labelSelector']);
  const include = r.stringList(ns, 'include', 'spec.namespaces', namespaceProblem);
  const exclude = r.stringList(ns, 'exclude', 'spec.namespaces', namespaceProblem);
  const both = include?.filter((n) => exclude?.includes(n)) ?? [];
  if (both.length > 0) r.fail('spec.namespaces', `include and exclude must not share a namespace (${both.join(', ')})`);
  return {
    schedule,
    suspend: r.bool(spec, 'suspend', 'spec'),
    mode: r.oneOf(spec, 'mode', 'spec', MODES),
    namespaces: { include, exclude, labelSelector: r.selector(ns, 'labelSelector', 'spec.namespaces') },
    podSelector: r.selector(spec, 'podSelector', 'spec'),
    nodeSelector: r.selector(spec, 'nodeSelector', 'spec'),
    strategies: readStrategies(r, spec, strategies),
    eviction: readEviction(r, spec),
    triggers: readTriggers(r, spec),
    windows: readWindows(r, spec),
    timeZone: readTimeZone(r, spec),
  };
}

/**
 * Validates a raw RebalancePolicy and applies the defaults. Returns the policy, or every problem found (then
 * `policy` is undefined). For the operator, which reports problems in the policy's Invalid condition.
 * `strategies`: whose sections spec.strategies has (the built-in strategies unless a caller registered more).
 */
export function checkPolicy(
  raw: unknown,
  strategies: StrategyRegistry = STRATEGIES,
): { policy: Policy | undefined; problems: PolicyProblem[] } {
  const r = new Reader();
  const o = r.objectValue(raw, '', ['apiVersion', 'kind', 'metadata', 'spec', 'status']);
  if (o === undefined)
    return {
      policy: undefined,
      problems: [{ field: '', problem: `must be a RebalancePolicy object (got ${typeName(raw)})` }],
    };
  const apiVersion = r.string(o, 'apiVersion', '');
  if (apiVersion !== undefined && apiVersion !== 'rebalancer.dev/v1alpha1') {
    r.fail('apiVersion', `must be rebalancer.dev/v1alpha1 (got ${JSON.stringify(apiVersion)})`);
  }
  const kind = r.string(o, 'kind', '');
  if (kind !== undefined && kind !== 'RebalancePolicy')
    r.fail('kind', `must be RebalancePolicy (got ${JSON.stringify(kind)})`);
  // metadata is the API server's; only name and generation are read, other fields (managedFields, …) are allowed.
  const meta = o['metadata'];
  const metaObj = isObj(meta) ? meta : undefined;
  if (meta !== undefined && meta !== null && metaObj === undefined)
    r.fail('metadata', `must be an object (got ${typeName(meta)})`);
  // A policy written by hand for --policy may have no name; it is then reported as "default".
  const name = r.string(metaObj, 'name', 'metadata') || 'default';
  const generation = r.integer(metaObj, 'generation', 'metadata', 0) ?? 0;
  const spec = r.object(o, 'spec', '', [
    'schedule',
    'suspend',
    'mode',
    'namespaces',
    'podSelector',
    'nodeSelector',
    'strategies',
    'eviction',
    'triggers',
    'windows',
    'timeZone',
  ]);
  const input = readSpec(r, spec, strategies);
  if (r.problems.length > 0) return { policy: undefined, problems: r.problems };
  return { policy: { name, generation, spec: applyDefaults(input, strategies) }, problems: [] };
}

/** Validates a raw RebalancePolicy and applies the defaults; every problem is listed in one InputError. */
export function parsePolicy(raw: unknown, where: PolicyWhere, strategies: StrategyRegistry = STRATEGIES): Policy {
  const { policy, problems } = checkPolicy(raw, strategies);
  if (policy !== undefined) return policy;
  const object = where.object ?? describeObject('RebalancePolicy', raw);
  if (problems.length === 1) {
    const only = problems[0]!;
    throw new InputError(where.file, object, only.field || undefined, only.problem);
  }
  const list = problems.map((p) => (p.field === '' ? p.problem : `${p.field}: ${p.problem}`)).join('; ');
  throw new InputError(where.file, object, undefined, `${problems.length} problems: ${list}`);
}

/** The numeric priority threshold: pods at or above it are never evicted. An unknown class is an InputError. */
export function resolvePriorityThreshold(
  policy: Policy,
  priorityClasses: readonly PriorityClassInfo[],
  where?: PolicyWhere,
): number {
  const threshold = policy.spec.eviction.priorityThreshold;
  if ('value' in threshold) return threshold.value;
  // The built-in classes exist in every cluster with fixed values (system-cluster-critical 2000000000,
  // system-node-critical 2000001000), whether or not the snapshot lists them.
  const builtin = BUILTIN_PRIORITY_CLASSES.get(threshold.className);
  if (builtin !== undefined) return builtin;
  const found = priorityClasses.find((c) => c.name === threshold.className);
  if (found !== undefined) return found.value;
  const known = priorityClasses.map((c) => c.name).join(', ');
  throw new InputError(
    where?.file ?? 'policy',
    where?.object ?? (policy.name === '' ? undefined : `RebalancePolicy ${policy.name}`),
    'spec.eviction.priorityThreshold.className',
    `PriorityClass ${JSON.stringify(threshold.className)} does not exist${known === '' ? ' (the snapshot has no PriorityClasses)' : ` (known: ${known})`}`,
  );
}

/** The first RebalancePolicy in a YAML/JSON file (Lists and several documents allowed). */
export function loadPolicyFile(path: string): Policy {
  const objects = flattenObjects(parseDocuments(readInputFile(path), path), path);
  const found = objects.find((o) => o.kind === 'RebalancePolicy');
  if (found === undefined) {
    const kinds = [...new Set(objects.map((o) => o.kind))].join(', ');
    throw new InputError(
      path,
      undefined,
      undefined,
      `contains no RebalancePolicy${kinds === '' ? '' : ` (found ${kinds})`}`,
    );
  }
  return parsePolicy(found.raw, { file: path, object: describeObject('RebalancePolicy', found.raw) ?? found.where });
}
