// The resource names a pod's containers and init containers request (PodInfo.requestedResources): a name counts when
// its key is there, also with a zero quantity, as the descheduler's HighNodeUtilization OnlyThresholdingResources
// reads it. Pod-level requests and overhead are not container requests and do not count. The list is interned: a
// cluster has few distinct ones.
import { intern } from '../../model/intern.js';
import { isObj, type Obj } from '../../model/rawJson.js';
import { BoundedCache } from './boundedCache.js';
import { EMPTY } from './fields.js';

const lists = new BoundedCache<string, readonly string[]>(10_000);

export function requestedResourceNames(spec: Obj | undefined): readonly string[] {
  let names: string[] | undefined;
  for (const key of ['containers', 'initContainers'] as const) {
    const list = spec?.[key];
    if (!Array.isArray(list)) continue;
    for (const c of list as unknown[]) {
      const resources = isObj(c) ? c['resources'] : undefined;
      const requests = isObj(resources) ? resources['requests'] : undefined;
      if (!isObj(requests)) continue;
      for (const name of Object.keys(requests)) if (!names?.includes(name)) (names ??= []).push(name);
    }
  }
  if (names === undefined) return EMPTY;
  names.sort();
  const key = names.join('\n');
  let shared = lists.get(key);
  if (shared === undefined) {
    shared = Object.freeze(names.map(intern));
    lists.set(key, shared);
  }
  return shared;
}
