// A pod's status.conditions → PodInfo.conditions (podLifeTime's `conditions` filters). The types, statuses and reasons
// repeat across a cluster's pods (PodScheduled, Initialized, ContainersReady, Ready, all True), so their list is shared
// between pods of the same shape and each pod keeps only its transition times: a few numbers, not a few objects.
import { intern } from '../../model/intern.js';
import { isObj, type Obj } from '../../model/rawJson.js';
import type { PodConditionEntry, PodConditions } from '../../model/types.js';
import { BoundedCache } from './boundedCache.js';
import { getList } from './fields.js';

const shapes = new BoundedCache<string, readonly PodConditionEntry[]>(10_000);

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * A time the filters can trust, else undefined: a condition whose transition time is missing or unreadable then
 * matches no minTimeSinceLastTransition filter (the descheduler's rule for a missing time), never more pods.
 */
function transitionMs(v: unknown): number | undefined {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? undefined : v.getTime();
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

export function podConditionsOf(status: Obj | undefined): PodConditions | undefined {
  const list = getList(status, 'conditions', 'status');
  if (list === undefined || list.length === 0) return undefined;
  let key = '';
  const found: { type: string; status: string; reason: string | undefined }[] = [];
  const transitions: (number | undefined)[] = [];
  for (const c of list) {
    if (!isObj(c)) continue;
    const type = text(c['type']);
    if (type === undefined) continue;
    const state = text(c['status']) ?? '';
    const reason = text(c['reason']);
    // Length-prefixed: unambiguous whatever the strings hold.
    key += `${type.length}:${type}${state.length}:${state}${reason === undefined ? '-' : `${reason.length}:${reason}`}`;
    found.push({ type, status: state, reason });
    transitions.push(transitionMs(c['lastTransitionTime']));
  }
  if (found.length === 0) return undefined;
  let entries = shapes.get(key);
  if (entries === undefined) {
    entries = Object.freeze(
      found.map((e) =>
        Object.freeze({
          type: intern(e.type),
          status: intern(e.status),
          reason: e.reason === undefined ? undefined : intern(e.reason),
        }),
      ),
    );
    shapes.set(key, entries);
  }
  return { entries, transitions };
}
