// PodLifeTime: pods older than maxPodLifeTime (by creationTimestamp, as the descheduler measures), optionally only
// those in one of `states` (a phase, the pod's status reason, or a container's waiting or terminated reason), oldest
// first. Running pods; Pending ones too when `states` names Pending or a waiting reason (a pod stuck pulling its
// image is Pending); Succeeded and Failed ones when `states` names them. exitCodes, ownerKinds and conditions (a status
// condition's type, status, reason and time since its last transition) narrow the selection further: every filter
// given must hold, as in the descheduler, so each one only ever removes pods.
import type { PodInfo, PodPhase } from '../../model/types.js';
import { containerReasons, exitCodesOf, formatAge, oldestFirst, secondsAsDuration } from '../housekeeping.js';
import { stringItems } from '../../model/rawJson.js';
import type { HousekeepingCandidate, HousekeepingStrategy } from '../types.js';
import {
  CONDITION_STATUSES,
  LIFETIME_STATES,
  podLifeTimeSection,
  TERMINATED_REASONS,
  WAITING_REASONS,
  type PodConditionFilter,
  type PodLifeTimeConfig,
} from './policy.js';

const NAME = 'PodLifeTime';

const CONTAINER_REASONS: readonly string[] = [...WAITING_REASONS, ...TERMINATED_REASONS];

function phasesOf(config: PodLifeTimeConfig): readonly PodPhase[] {
  // Init containers run while the pod is Pending: with includingInitContainers a terminated reason (Error, …) or an
  // exit code can be an init container's, which leaves its pod Pending.
  const containerReason: readonly string[] =
    config.includingInitContainers === true ? CONTAINER_REASONS : WAITING_REASONS;
  const initExitCodes = config.includingInitContainers === true && (config.exitCodes ?? []).length > 0;
  const pending =
    initExitCodes || config.states.includes('Pending') || config.states.some((s) => containerReason.includes(s));
  const phases: PodPhase[] = pending ? ['Running', 'Pending'] : ['Running'];
  // Finished pods only when named: an empty states list keeps its meaning (every Running pod).
  for (const finished of ['Succeeded', 'Failed'] as const) if (config.states.includes(finished)) phases.push(finished);
  return phases;
}

/**
 * The waiting and terminated reasons `states` is matched against: the pod's containers', its init containers' with
 * includingInitContainers and its ephemeral containers' with includingEphemeralContainers (the descheduler's rule).
 */
function containerStates(pod: PodInfo, config: PodLifeTimeConfig): readonly string[] {
  const own = containerReasons(pod, config.includingInitContainers === true);
  const ephemeral = config.includingEphemeralContainers === true ? pod.statusDetail?.ephemeralReasons : undefined;
  return ephemeral === undefined || ephemeral.length === 0 ? own : [...own, ...ephemeral];
}

/** ownerKinds: the pod's controller kind is included (when a list is given) and not excluded; a bare pod has none. */
function ownerKindOk(pod: PodInfo, config: PodLifeTimeConfig): boolean {
  const kinds = config.ownerKinds;
  if (kinds === undefined) return true;
  const kind = pod.owner?.kind;
  if (kinds.include.length > 0 && (kind === undefined || !kinds.include.includes(kind))) return false;
  return kind === undefined || !kinds.exclude.includes(kind);
}

/**
 * conditions: the text of the first of the pod's status conditions that one of the filters matches (filters ORed, a
 * filter's fields ANDed, as the descheduler's PodConditionFilter), or undefined when none does. A filter with a minimum
 * time since the last transition skips a condition with no transition time or one in the future.
 */
function matchingCondition(pod: PodInfo, filters: readonly PodConditionFilter[], now: number): string | undefined {
  const conditions = pod.conditions;
  if (conditions === undefined) return undefined;
  for (const f of filters) {
    for (const [i, c] of conditions.entries.entries()) {
      if (f.type !== undefined && c.type !== f.type) continue;
      if (f.status !== undefined && c.status !== f.status) continue;
      if (f.reason !== undefined && c.reason !== f.reason) continue;
      const text = `${c.type}=${c.status}${c.reason === undefined ? '' : ` (${c.reason})`}`;
      if (f.minTimeSinceLastTransitionMs === undefined) return text;
      const at = conditions.transitions[i];
      if (at === undefined) continue;
      const since = now - at;
      if (since < 0 || since < f.minTimeSinceLastTransitionMs) continue;
      return `${text} for ${formatAge(since)}`;
    }
  }
  return undefined;
}

export const podLifeTime: HousekeepingStrategy<PodLifeTimeConfig, 'podLifeTime'> = {
  kind: 'housekeeping',
  name: NAME,
  key: 'podLifeTime',
  policy: podLifeTimeSection,

  phases: phasesOf,

  select(ctx, config) {
    const phases = phasesOf(config);
    const limit = formatAge(config.maxPodLifeTimeMs);
    const out: HousekeepingCandidate[] = [];
    // Filtered before sorting: of a large cluster's pods, few are past the age.
    const old = ctx.pods.filter(
      (p) => phases.includes(p.phase) && ctx.now - p.createdAt > config.maxPodLifeTimeMs && ownerKindOk(p, config),
    );
    for (const pod of old.sort(oldestFirst)) {
      const age = ctx.now - pod.createdAt;
      let state = '';
      if (config.states.length > 0) {
        const matched = [pod.phase, pod.statusDetail?.reason, ...containerStates(pod, config)].find(
          (s) => s !== undefined && config.states.includes(s),
        );
        if (matched === undefined) continue;
        state = `, in state ${matched}`;
      }
      const codes = config.exitCodes ?? [];
      if (codes.length > 0) {
        const code = exitCodesOf(pod, config.includingInitContainers === true).find((c) => codes.includes(c));
        if (code === undefined) continue;
        state += `, a container exited with ${code}`;
      }
      const filters = config.conditions ?? [];
      if (filters.length > 0) {
        const condition = matchingCondition(pod, filters, ctx.now);
        if (condition === undefined) continue;
        state += `, condition ${condition}`;
      }
      out.push({ pod, reason: () => `pod is ${formatAge(age)} old, older than maxPodLifeTime ${limit}${state}` });
    }
    return out;
  },

  descheduler: {
    plugin: 'PodLifeTime',
    convertArgs(args, section, notes) {
      const seconds = args['maxPodLifeTimeSeconds'];
      // Unset, the plugin filters by no age (its other filters select); "0s" says the same here, where the section's
      // own default (168h) would spare every younger pod the plugin removes.
      section['maxPodLifeTime'] = typeof seconds === 'number' ? secondsAsDuration(seconds) : '0s';
      // v1alpha1's podStatusPhases came before states.
      const states = [...new Set([...stringItems(args['states']), ...stringItems(args['podStatusPhases'])])];
      const known = states.filter((s) => LIFETIME_STATES.includes(s));
      const dropped = states.filter((s) => !known.includes(s));
      if (known.length > 0) section['states'] = known;
      if (dropped.length > 0) {
        notes.push(
          `PodLifeTime.states ${dropped.join(', ')}: not carried over: not a phase, status reason or container ` +
            'reason podLifeTime matches',
        );
      }
      if (states.length > 0 && known.length === 0) {
        // Without its states the section would select every old pod: far more than the plugin did.
        section['enabled'] = false;
        notes.push('PodLifeTime: none of its states is one podLifeTime acts on, so the section is left disabled');
      }
      const exitCodes = args['exitCodes'];
      if (Array.isArray(exitCodes) && exitCodes.length > 0) section['exitCodes'] = exitCodes;
      const owners = args['ownerKinds'];
      if (typeof owners === 'object' && owners !== null) {
        const o = owners as Record<string, unknown>;
        section['ownerKinds'] = { include: stringItems(o['include']), exclude: stringItems(o['exclude']) };
      }
      convertConditions(args['conditions'], section, notes);
      for (const field of ['includingInitContainers', 'includingEphemeralContainers'] as const)
        if (typeof args[field] === 'boolean') section[field] = args[field];
    },
  },
};

/**
 * PodLifeTime.conditions → conditions (minTimeSinceLastTransitionSeconds as a duration). A filter that cannot be
 * carried leaves the section disabled: without it the section would select pods the plugin did not.
 */
function convertConditions(value: unknown, section: Record<string, unknown>, notes: string[]): void {
  if (!Array.isArray(value) || value.length === 0) return;
  const out: Record<string, unknown>[] = [];
  const problems: string[] = [];
  value.forEach((item: unknown, i) => {
    const f = typeof item === 'object' && item !== null ? (item as Record<string, unknown>) : {};
    const filter: Record<string, unknown> = {};
    for (const key of ['type', 'reason'] as const) {
      if (typeof f[key] === 'string' && f[key] !== '') filter[key] = f[key];
    }
    const status = f['status'];
    if (typeof status === 'string' && status !== '') {
      if ((CONDITION_STATUSES as readonly string[]).includes(status)) filter['status'] = status;
      else problems.push(`[${i}] status ${JSON.stringify(status)} is not True, False or Unknown`);
    }
    const seconds = f['minTimeSinceLastTransitionSeconds'];
    if (typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 0) {
      filter['minTimeSinceLastTransition'] = secondsAsDuration(seconds);
    }
    if (Object.keys(filter).length === 0)
      problems.push(`[${i}] sets none of type, status, reason, minTimeSinceLastTransitionSeconds`);
    out.push(filter);
  });
  if (problems.length > 0) {
    section['enabled'] = false;
    notes.push(`PodLifeTime.conditions${problems.join('; ')}: not carried over, so the section is left disabled`);
    return;
  }
  section['conditions'] = out;
}
