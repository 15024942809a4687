// In-place pod resize (GA in 1.35): a running pod's spec may ask for more or less than its node has allocated to it.
// The scheduler's node cache counts, per resource, the larger of the spec, what status.containerStatuses[] say was
// allocated (allocatedResources) and what is actuated (resources.requests); when the resize is Infeasible
// (condition PodResizePending, reason Infeasible) the spec is left out, since the kubelet will not grant it
// (component-helpers resource.AggregateContainerRequests with UseStatusResources). The replacement of an evicted pod is
// created from its spec, so PodInfo.requests stays the spec and this is kept apart, only for pods where it differs.
import { internResources } from '../../model/intern.js';
import { isObj, present, type Obj } from '../../model/rawJson.js';
import type { PodInfo, Resources } from '../../model/types.js';
import { getList, getObj, sameJson } from './fields.js';
import {
  aggregateRequests,
  containers,
  nonZeroOf,
  podLevelRequests,
  resourceList,
  withPodLevelAndOverhead,
  type ContainerResources,
} from './resources.js';

interface StatusResources {
  readonly allocated: Record<string, number> | undefined;
  readonly actuated: Record<string, number> | undefined;
}

type Held = NonNullable<PodInfo['held']>;

/** Every container status that reports resources, by container name; undefined when none does (the common case). */
function reportedStatuses(status: Obj | undefined): Map<string, Obj> | undefined {
  let out: Map<string, Obj> | undefined;
  for (const key of ['containerStatuses', 'initContainerStatuses'] as const) {
    for (const cs of getList(status, key, 'status') ?? []) {
      if (!isObj(cs) || typeof cs['name'] !== 'string') continue;
      const resources = cs['resources'];
      const reports = present(cs['allocatedResources']) || (isObj(resources) && present(resources['requests']));
      if (reports) (out ??= new Map()).set(cs['name'], cs);
    }
  }
  return out;
}

/**
 * Whether every reported status repeats its container's spec requests string for string: what the kubelet writes
 * for a pod that was never resized (the API server stores quantities canonically), so nothing needs parsing.
 */
function statusRepeatsSpec(spec: Obj | undefined, statuses: ReadonlyMap<string, Obj>): boolean {
  for (const key of ['containers', 'initContainers'] as const) {
    for (const c of getList(spec, key, 'spec') ?? []) {
      if (!isObj(c) || typeof c['name'] !== 'string') continue;
      const cs = statuses.get(c['name']);
      if (cs === undefined) continue;
      const requests = isObj(c['resources']) ? c['resources']['requests'] : undefined;
      const allocated = cs['allocatedResources'];
      const actuated = isObj(cs['resources']) ? cs['resources']['requests'] : undefined;
      if (present(allocated) && !sameJson(allocated, requests)) return false;
      if (present(actuated) && !sameJson(actuated, requests)) return false;
    }
  }
  return true;
}

function resizeInfeasible(status: Obj | undefined): boolean {
  for (const c of getList(status, 'conditions', 'status') ?? []) {
    if (isObj(c) && c['type'] === 'PodResizePending') return c['reason'] === 'Infeasible';
  }
  return false;
}

function maxOf(...lists: ReadonlyArray<Readonly<Record<string, number>>>): Record<string, number> {
  const out: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const list of lists) {
    for (const name in list) if (out[name] === undefined || list[name]! > out[name]) out[name] = list[name]!;
  }
  return out;
}

function sameResources(a: Resources, b: Resources): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** What a resized pod holds on its node, or undefined when that is its spec (see the header). */
export function heldResources(
  spec: Obj | undefined,
  status: Obj | undefined,
  requests: Resources,
  nonZero: { readonly cpu: number; readonly memory: number },
): Held | undefined {
  const statuses = reportedStatuses(status);
  if (statuses === undefined || statusRepeatsSpec(spec, statuses)) return undefined;
  const byName = new Map<string, StatusResources>();
  for (const [name, cs] of statuses) {
    const path = `status.containerStatuses[${name}]`;
    byName.set(name, {
      allocated: resourceList(cs, 'allocatedResources', path),
      actuated: resourceList(getObj(cs, 'resources', path), 'requests', `${path}.resources`),
    });
  }
  const infeasible = resizeInfeasible(status);
  const allocated = (c: ContainerResources): Readonly<Record<string, number>> | undefined =>
    byName.get(c.name)?.allocated ?? (infeasible ? undefined : c.requests);
  const actuated = (c: ContainerResources): Readonly<Record<string, number>> | undefined => {
    const s = byName.get(c.name);
    return s?.actuated ?? s?.allocated ?? (infeasible ? undefined : c.requests);
  };
  const regular = containers(spec, 'containers');
  const init = containers(spec, 'initContainers');
  const picks = infeasible ? [allocated, actuated] : [undefined, allocated, actuated];
  const podLevel = podLevelRequests(spec);
  const overhead = resourceList(spec, 'overhead', 'spec');
  const held = withPodLevelAndOverhead(
    maxOf(...picks.map((p) => aggregateRequests(regular, init, p))),
    podLevel,
    overhead,
  );
  const heldNonZero = picks
    .map((p) => nonZeroOf(regular, init, p, podLevel, overhead, held))
    .reduce((a, b) => ({ cpu: Math.max(a.cpu, b.cpu), memory: Math.max(a.memory, b.memory) }));
  // 1.35 and 1.36 (determineEffectiveRequests) take the larger per container instead, and only for a regular or sidecar
  // container whose status has `resources`; an ordinary init container counts its spec.
  const hasResources = (c: ContainerResources): boolean => isObj(statuses.get(c.name)?.['resources']);
  const perContainer = (c: ContainerResources): Readonly<Record<string, number>> => {
    if ((init.includes(c) && !c.restartable) || !hasResources(c)) return c.requests;
    const s = byName.get(c.name);
    const lists = [s?.actuated ?? {}, s?.allocated ?? {}];
    return maxOf(...(infeasible ? lists : [c.requests, ...lists]));
  };
  const byContainer = withPodLevelAndOverhead(aggregateRequests(regular, init, perContainer), podLevel, overhead);
  const byContainerNonZero = nonZeroOf(regular, init, perContainer, podLevel, overhead, byContainer);
  const same = (r: Resources, n: { cpu: number; memory: number }): boolean =>
    sameResources(r, requests) && n.cpu === nonZero.cpu && n.memory === nonZero.memory;
  if (same(held, heldNonZero) && same(byContainer, byContainerNonZero)) return undefined;
  return {
    requests: internResources(held),
    nonZeroRequests: heldNonZero,
    byContainer: { requests: internResources(byContainer), nonZeroRequests: byContainerNonZero },
  };
}
