// Container resources → the pod's scheduling requests and QoS class, as the scheduler and the kubelet compute them.
// Replicas of one workload share their raw resource strings, so a pod's requests are parsed once per distinct shape.
import { FieldError } from '../../errors.js';
import { internResources } from '../../model/intern.js';
import { isObj, typeName, type Obj } from '../../model/rawJson.js';
import { parseQuantity, toMilli } from '../../model/quantity.js';
import type { QosClass, Resources } from '../../model/types.js';
import type { BoundedCache } from './boundedCache.js';
import { childPath, getList, getObj, getString, sameJson } from './fields.js';

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
export function resourceList(parent: Obj | undefined, key: string, path: string): Record<string, number> | undefined {
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

function containers(spec: Obj | undefined, key: 'containers' | 'initContainers'): ContainerResources[] {
  const list = getList(spec, key, 'spec');
  if (list === undefined) return [];
  return list.map((c, i) => containerResources(c, `spec.${key}[${i}]`, key === 'initContainers'));
}

export interface PodResources {
  readonly requests: Resources;
  readonly qos: QosClass;
  readonly nonZeroRequests: { readonly cpu: number; readonly memory: number };
}

/** The scheduler's defaults for a container that requests no cpu or memory, used by its scoring only. */
export const NON_ZERO_CPU = 100;
export const NON_ZERO_MEMORY = 200 * 1024 * 1024;

/**
 * cpu and memory as kube-scheduler v1.26's scoring counts them (schedutil.GetNonzeroRequests): a container without
 * a cpu (memory) request counts 100m (200Mi), one set explicitly to 0 counts 0; the regular containers are summed,
 * the pod needs at least each init container's, plus the overhead.
 */
function nonZeroRequests(
  containers: readonly ContainerResources[],
  initContainers: readonly ContainerResources[],
  overhead: Record<string, number> | undefined,
): { readonly cpu: number; readonly memory: number } {
  let cpu = 0;
  let memory = 0;
  for (const c of containers) {
    cpu += c.requests['cpu'] ?? NON_ZERO_CPU;
    memory += c.requests['memory'] ?? NON_ZERO_MEMORY;
  }
  for (const c of initContainers) {
    cpu = Math.max(cpu, c.requests['cpu'] ?? NON_ZERO_CPU);
    memory = Math.max(memory, c.requests['memory'] ?? NON_ZERO_MEMORY);
  }
  return { cpu: cpu + (overhead?.['cpu'] ?? 0), memory: memory + (overhead?.['memory'] ?? 0) };
}

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

/** The pod's requests and QoS, computed once per raw shape (`cache`, keyed by rawResourcesKey). */
export function podResources(spec: Obj | undefined, cache: BoundedCache<string, PodResources>): PodResources {
  const key = rawResourcesKey(spec);
  const known = key === undefined ? undefined : cache.get(key);
  if (known !== undefined) return known;
  const regular = containers(spec, 'containers');
  const init = containers(spec, 'initContainers');
  const overhead = resourceList(spec, 'overhead', 'spec');
  const value: PodResources = {
    requests: podRequests(regular, init, overhead),
    qos: computeQos(init.length === 0 ? regular : [...init, ...regular]),
    nonZeroRequests: nonZeroRequests(regular, init, overhead),
  };
  if (key !== undefined) cache.set(key, value);
  return value;
}

export function sameContainerResources(a: unknown, b: unknown): boolean {
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
