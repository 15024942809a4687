// PodLifeTime: pods older than maxPodLifeTime (by creationTimestamp, as the descheduler measures), optionally only
// those in one of `states` (a phase, the pod's status reason, or a container's waiting or terminated reason), oldest
// first. Running pods; Pending ones too when `states` names Pending or a waiting reason (a pod stuck pulling its
// image is Pending); Succeeded and Failed ones when `states` names them.
import type { PodInfo, PodPhase } from '../../model/types.js';
import { formatAge, oldestFirst, secondsAsDuration } from '../housekeeping.js';
import { stringItems } from '../../model/rawJson.js';
import type { HousekeepingCandidate, HousekeepingStrategy } from '../types.js';
import { LIFETIME_STATES, podLifeTimeSection, WAITING_REASONS, type PodLifeTimeConfig } from './policy.js';

const NAME = 'PodLifeTime';

function phasesOf(config: PodLifeTimeConfig): readonly PodPhase[] {
  const pending =
    config.states.includes('Pending') || config.states.some((s) => (WAITING_REASONS as readonly string[]).includes(s));
  const phases: PodPhase[] = pending ? ['Running', 'Pending'] : ['Running'];
  // Finished pods only when named: an empty states list keeps its meaning (every Running pod).
  for (const finished of ['Succeeded', 'Failed'] as const) if (config.states.includes(finished)) phases.push(finished);
  return phases;
}

/** ownerKinds: the pod's controller kind is included (when a list is given) and not excluded; a bare pod has none. */
function ownerKindOk(pod: PodInfo, config: PodLifeTimeConfig): boolean {
  const kinds = config.ownerKinds;
  if (kinds === undefined) return true;
  const kind = pod.owner?.kind;
  if (kinds.include.length > 0 && (kind === undefined || !kinds.include.includes(kind))) return false;
  return kind === undefined || !kinds.exclude.includes(kind);
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
        const matched = [pod.phase, pod.statusDetail?.reason, ...(pod.statusDetail?.reasons ?? [])].find(
          (s) => s !== undefined && config.states.includes(s),
        );
        if (matched === undefined) continue;
        state = `, in state ${matched}`;
      }
      const codes = config.exitCodes ?? [];
      if (codes.length > 0) {
        const code = pod.statusDetail?.exitCodes.find((c) => codes.includes(c));
        if (code === undefined) continue;
        state += `, a container exited with ${code}`;
      }
      out.push({ pod, reason: () => `pod is ${formatAge(age)} old, older than maxPodLifeTime ${limit}${state}` });
    }
    return out;
  },

  descheduler: {
    plugin: 'PodLifeTime',
    convertArgs(args, section, notes) {
      const seconds = args['maxPodLifeTimeSeconds'];
      if (typeof seconds === 'number') section['maxPodLifeTime'] = secondsAsDuration(seconds);
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
      if (Array.isArray(args['conditions']) && args['conditions'].length > 0 && section['enabled'] !== false) {
        // Without its conditions the section would select more pods than the plugin did: left off, and said.
        section['enabled'] = false;
        notes.push('PodLifeTime: its conditions cannot be carried over, so the section is left disabled');
      }
      for (const [field, why] of [
        [
          'conditions',
          'pod conditions (and their transition times) are not read; states, exitCodes, ownerKinds and ' +
            'maxPodLifeTime select the pods',
        ],
        ['includingInitContainers', "only the containers' own states are matched"],
        ['includingEphemeralContainers', 'ephemeral containers are debugging aids and are not matched'],
      ] as const) {
        if (args[field] !== undefined && args[field] !== false)
          notes.push(`PodLifeTime.${field}: not carried over: ${why}`);
      }
    },
  },
};
