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

export interface ContainerResources {
  readonly name: string;
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
  return { name: getString(raw, 'name', path) ?? '', requests, limits, restartable };
}

/**
 * The containers' requests as the scheduler's resource helper aggregates them (component-helpers resource.PodRequests,
 * 1.35–1.37): regular containers and restartable (sidecar) init containers run together, so they are summed; each
 * ordinary init container runs alone next to the sidecars started before it; the pod needs the larger of the two, per
 * resource. `extra` (per resource) is added to every container lacking that resource: the scoring's non-zero
 * defaults. `pick` chooses a container's list: its spec, or what its status says was allocated (in-place resize).
 */
export function aggregateRequests(
  containers: readonly ContainerResources[],
  initContainers: readonly ContainerResources[],
  pick: (c: ContainerResources) => Readonly<Record<string, number>> | undefined = (c) => c.requests,
  extra?: Readonly<Record<string, number>>,
): Record<string, number> {
  const own = (c: ContainerResources): Readonly<Record<string, number>> => {
    const list = pick(c) ?? NONE;
    if (extra === undefined) return list;
    const out: Record<string, number> = Object.create(null) as Record<string, number>;
    addInto(out, list);
    for (const name in extra) if (out[name] === undefined) out[name] = extra[name]!;
    return out;
  };
  const sum: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const c of containers) addInto(sum, own(c));
  if (initContainers.length > 0) {
    const sidecars: Record<string, number> = Object.create(null) as Record<string, number>;
    const initPeak: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const c of initContainers) {
      const r = own(c);
      if (c.restartable) {
        addInto(sum, r);
        addInto(sidecars, r);
        maxInto(initPeak, sidecars);
      } else {
        const alone: Record<string, number> = Object.create(null) as Record<string, number>;
        addInto(alone, r);
        addInto(alone, sidecars);
        maxInto(initPeak, alone);
      }
    }
    maxInto(sum, initPeak);
  }
  return sum;
}

const NONE: Readonly<Record<string, number>> = Object.freeze(Object.create(null) as Record<string, number>);

/** The resources pod-level spec.resources may set (1.34+ PodLevelResources): cpu, memory and hugepages. */
function podLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

/**
 * Pod-level requests when they set a resource the scheduler honours there; undefined otherwise (then the containers'
 * sum alone counts).
 */
export function podLevelRequests(spec: Obj | undefined): Record<string, number> | undefined {
  const resources = getObj(spec, 'resources', 'spec');
  const requests = resourceList(resources, 'requests', 'spec.resources');
  if (requests === undefined) return undefined;
  for (const name in requests) if (podLevelResource(name)) return requests;
  return undefined;
}

/** PodRequests' last two steps: pod-level values replace the containers' for the resources they set; overhead added. */
export function withPodLevelAndOverhead(
  sum: Record<string, number>,
  podLevel: Readonly<Record<string, number>> | undefined,
  overhead: Readonly<Record<string, number>> | undefined,
): Record<string, number> {
  if (podLevel !== undefined) for (const name in podLevel) if (podLevelResource(name)) sum[name] = podLevel[name]!;
  if (overhead !== undefined) addInto(sum, overhead);
  return sum;
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

export function containers(spec: Obj | undefined, key: 'containers' | 'initContainers'): ContainerResources[] {
  const list = getList(spec, key, 'spec');
  if (list === undefined) return [];
  return list.map((c, i) => containerResources(c, `spec.${key}[${i}]`, key === 'initContainers'));
}

export interface PodResources {
  readonly requests: Resources;
  readonly qos: QosClass;
  readonly nonZeroRequests: { readonly cpu: number; readonly memory: number };
  readonly fitNonZeroRequests: { readonly cpu: number; readonly memory: number } | undefined;
}

/** The scheduler's defaults for a container that requests no cpu or memory, used by its scoring only. */
export const NON_ZERO_CPU = 100;
export const NON_ZERO_MEMORY = 200 * 1024 * 1024;

/**
 * cpu and memory as the scheduler's scoring counts them (framework PodInfo.CalculateResource): the requests
 * aggregated again with 100m cpu and 200Mi memory added to each container lacking them (one set explicitly to 0
 * counts 0); with pod-level requests set, a default is added only for a resource neither the pod nor any container
 * requests, and the pod-level values win.
 */
export function nonZeroOf(
  regular: readonly ContainerResources[],
  init: readonly ContainerResources[],
  pick: ((c: ContainerResources) => Readonly<Record<string, number>> | undefined) | undefined,
  podLevel: Readonly<Record<string, number>> | undefined,
  overhead: Readonly<Record<string, number>> | undefined,
  requests: Readonly<Record<string, number>>,
): { readonly cpu: number; readonly memory: number } {
  const extra: Record<string, number> = Object.create(null) as Record<string, number>;
  if (podLevel === undefined || requests['cpu'] === undefined) extra['cpu'] = NON_ZERO_CPU;
  if (podLevel === undefined || requests['memory'] === undefined) extra['memory'] = NON_ZERO_MEMORY;
  const sum = withPodLevelAndOverhead(aggregateRequests(regular, init, pick, extra), podLevel, overhead);
  return { cpu: sum['cpu'] ?? 0, memory: sum['memory'] ?? 0 };
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
  key = appendResourceList(key, spec?.['overhead']);
  const podLevel = spec?.['resources'];
  if (key === undefined || podLevel === undefined || podLevel === null) return key;
  return isObj(podLevel) ? appendResourceList(`${key}P`, podLevel['requests']) : undefined;
}

/** The pod's requests and QoS, computed once per raw shape (`cache`, keyed by rawResourcesKey). */
export function podResources(spec: Obj | undefined, cache: BoundedCache<string, PodResources>): PodResources {
  const key = rawResourcesKey(spec);
  const known = key === undefined ? undefined : cache.get(key);
  if (known !== undefined) return known;
  const regular = containers(spec, 'containers');
  const init = containers(spec, 'initContainers');
  const overhead = resourceList(spec, 'overhead', 'spec');
  const podLevel = podLevelRequests(spec);
  const requests = withPodLevelAndOverhead(aggregateRequests(regular, init), podLevel, overhead);
  const value: PodResources = {
    requests: internResources(requests),
    qos: computeQos(init.length === 0 ? regular : [...init, ...regular]),
    nonZeroRequests: nonZeroOf(regular, init, undefined, podLevel, overhead, requests),
    fitNonZeroRequests:
      podLevel === undefined ? undefined : nonZeroOf(regular, init, undefined, undefined, overhead, requests),
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
