// What the watch caches hold for pods, budgets and policies beyond the compact model: whether a pod's priority was
// set or resolved, a budget's generations (its status is stale until they match), a policy parsed once on arrival
// with the parts of its status the operator carries over. Apart from clusterCache.ts because reading a policy's
// status is most of the conversion and the cache's indexes do not depend on it.
import { isObj, type Obj } from '../model/rawJson.js';
import type { PdbInfo, PodInfo } from '../model/types.js';
import { checkPolicy, type PolicyProblem } from '../policy/parse.js';
import type { Policy } from '../policy/types.js';
import { convertPdb } from '../snapshot/convert.js';
import { readPersisted, type LastPlanStatus, type PersistedState, type PolicyCondition } from './status.js';

export interface PodEntry {
  readonly info: PodInfo;
  /** spec.priority was set (else the priority was resolved from the class and may need re-resolving). */
  readonly explicitPriority: boolean;
}

export interface PdbEntry {
  readonly info: PdbInfo;
  readonly generation: number;
  /** status.observedGeneration; undefined while the budget has no status. */
  readonly observedGeneration: number | undefined;
  readonly resourceVersion: string;
}

/** The parts of a policy's status the operator carries over (totals survive restarts and leader changes). */
export interface PolicyStatusSeen {
  /** Cooldowns, the Degraded pause and totals as the last leader persisted them. */
  readonly persisted: PersistedState;
  readonly totals: { readonly evicted: number; readonly failed: number } | undefined;
  readonly conditions: readonly PolicyCondition[];
  readonly lastRunTime: string | undefined;
  readonly lastSuccessfulRunTime: string | undefined;
  readonly lastPlan: LastPlanStatus | undefined;
}

export interface PolicyEntry {
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly resourceVersion: string;
  /** The parsed policy, or undefined when it is invalid (then `problems` says why). */
  readonly policy: Policy | undefined;
  readonly problems: readonly PolicyProblem[];
  readonly status: PolicyStatusSeen;
}

export type PolicyListener = (event: 'upsert' | 'delete', entry: PolicyEntry) => void;

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : value instanceof Date ? value.toISOString() : '';
}

/** A budget as the cache keeps it (called by the informer on arrival). */
export function pdbEntryFrom(raw: unknown): PdbEntry {
  const info = convertPdb(raw);
  const o = raw as { metadata?: Obj; status?: Obj };
  return {
    info,
    generation: num(o.metadata?.['generation']) ?? 0,
    observedGeneration: isObj(o.status) ? (num(o.status['observedGeneration']) ?? 0) : undefined,
    resourceVersion: str(o.metadata?.['resourceVersion']),
  };
}

/** A policy as the cache keeps it: parsed, with its problems and the status the operator carries over. */
export function policyEntryFrom(raw: unknown): PolicyEntry {
  const { policy, problems } = checkPolicy(raw);
  const o = isObj(raw) ? raw : {};
  const meta = isObj(o['metadata']) ? o['metadata'] : {};
  const status = isObj(o['status']) ? o['status'] : {};
  const totals = isObj(status['totals']) ? status['totals'] : undefined;
  const lastPlan = isObj(status['lastPlan']) ? status['lastPlan'] : undefined;
  const time = (value: unknown): string | undefined => (str(value) === '' ? undefined : str(value));
  const conditions = Array.isArray(status['conditions']) ? status['conditions'] : [];
  return {
    name: str(meta['name']),
    uid: str(meta['uid']),
    generation: num(meta['generation']) ?? 0,
    resourceVersion: str(meta['resourceVersion']),
    policy,
    problems,
    status: {
      persisted: readPersisted(status),
      totals:
        totals === undefined ? undefined : { evicted: num(totals['evicted']) ?? 0, failed: num(totals['failed']) ?? 0 },
      conditions: conditions.filter(isObj).map((c) => ({
        type: str(c['type']),
        status: c['status'] === 'True' || c['status'] === 'False' ? c['status'] : 'Unknown',
        reason: str(c['reason']),
        message: str(c['message']),
        lastTransitionTime: str(c['lastTransitionTime']),
      })),
      lastRunTime: time(status['lastRunTime']),
      lastSuccessfulRunTime: time(status['lastSuccessfulRunTime']),
      lastPlan:
        lastPlan === undefined
          ? undefined
          : {
              evictions: num(lastPlan['evictions']) ?? 0,
              ...(num(lastPlan['dryRunEvictions']) !== undefined
                ? { dryRunEvictions: num(lastPlan['dryRunEvictions']) }
                : {}),
              skipped: num(lastPlan['skipped']) ?? 0,
              violations: num(lastPlan['violations']) ?? 0,
              maxSkewObserved: num(lastPlan['maxSkewObserved']) ?? 0,
              ...(num(lastPlan['maxSkewBefore']) !== undefined
                ? { maxSkewBefore: num(lastPlan['maxSkewBefore']) }
                : {}),
              skippedReasons: (Array.isArray(lastPlan['skippedReasons']) ? lastPlan['skippedReasons'] : [])
                .filter(isObj)
                .map((r) => ({ reason: str(r['reason']), count: num(r['count']) ?? 0 })),
              ...(str(lastPlan['stoppedBy']) !== '' ? { stoppedBy: str(lastPlan['stoppedBy']) } : {}),
            },
    },
  };
}
