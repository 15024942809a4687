// spec.strategies.podLifeTime: its type, defaults and validation.
import { kindProblem, readExitCodes } from '../housekeeping.js';
import type { Obj } from '../../model/rawJson.js';
import type { PolicySection, SectionReader, StrategyConfig } from '../types.js';

/**
 * The pod phases podLifeTime acts on: Running (and Pending when its states say so); Succeeded and Failed only when
 * named in states, as the descheduler's PodLifeTime does (a finished pod is removed, nothing is rescheduled).
 */
export const LIFETIME_PHASES = ['Running', 'Pending', 'Succeeded', 'Failed'] as const;

/** status.reason values a pod can carry (the descheduler's list). */
export const POD_STATUS_REASONS = ['NodeAffinity', 'NodeLost', 'Shutdown', 'UnexpectedAdmissionError'] as const;

/** Container waiting reasons: a pod showing one is usually Pending (CrashLoopBackOff: Running). */
export const WAITING_REASONS = [
  'PodInitializing',
  'ContainerCreating',
  'ImagePullBackOff',
  'CrashLoopBackOff',
  'CreateContainerConfigError',
  'ErrImagePull',
  'CreateContainerError',
  'InvalidImageName',
] as const;

/** Container terminated reasons. */
export const TERMINATED_REASONS = [
  'OOMKilled',
  'Error',
  'Completed',
  'DeadlineExceeded',
  'Evicted',
  'ContainerCannotRun',
  'StartError',
] as const;

/** Every value `states` accepts (the CRD's enum; the descheduler's list without the phases other strategies own). */
export const LIFETIME_STATES: readonly string[] = [
  ...LIFETIME_PHASES,
  ...POD_STATUS_REASONS,
  ...WAITING_REASONS,
  ...TERMINATED_REASONS,
];

export interface PodLifeTimeConfig extends StrategyConfig {
  readonly maxPodLifeTimeMs: number;
  readonly states: readonly string[];
  /** Only pods with a container that terminated with one of these codes (absent or empty: any). */
  readonly exitCodes?: readonly number[];
  /** Only pods whose controller is of one of `include`'s kinds, and none of `exclude`'s (the descheduler's ownerKinds). */
  readonly ownerKinds?: { readonly include: readonly string[]; readonly exclude: readonly string[] };
  /** Only pods with a status condition matching one of these (absent or empty: any); see PodConditionFilter. */
  readonly conditions?: readonly PodConditionFilter[];
  /** states and exitCodes also match the init containers' reasons and exit codes. */
  readonly includingInitContainers?: boolean;
  /** states also match the ephemeral containers' reasons (they have no exit codes worth matching: debug sessions). */
  readonly includingEphemeralContainers?: boolean;
}

/** The status values a pod condition has (Kubernetes' ConditionStatus). */
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;

/**
 * One entry of `conditions` (the descheduler's PodConditionFilter): a condition matches when every field given
 * agrees with it; with minTimeSinceLastTransitionMs its lastTransitionTime must be at least that long ago.
 */
export interface PodConditionFilter {
  readonly type?: string;
  readonly status?: (typeof CONDITION_STATUSES)[number];
  readonly reason?: string;
  readonly minTimeSinceLastTransitionMs?: number;
}

const CONDITION_FIELDS = ['type', 'status', 'reason', 'minTimeSinceLastTransition'] as const;

export const podLifeTimeSection: PolicySection<PodLifeTimeConfig> = {
  fields: [
    'enabled',
    'maxPodLifeTime',
    'states',
    'exitCodes',
    'ownerKinds',
    'conditions',
    'includingInitContainers',
    'includingEphemeralContainers',
  ],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // A week: pods that old are restarted to pick up node and image changes (the descheduler's examples use 24h-7d).
    maxPodLifeTimeMs: 168 * 3_600_000,
    // Empty: any Running pod past the age.
    states: [],
    // Empty: any exit code, any owner (the descheduler's defaults).
    exitCodes: [],
    ownerKinds: { include: [], exclude: [] },
    // Empty: any conditions.
    conditions: [],
    // The pod's own containers only, as the descheduler by default.
    includingInitContainers: false,
    includingEphemeralContainers: false,
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    maxPodLifeTimeMs: r.duration(section, 'maxPodLifeTime', path),
    states: r.stringList(section, 'states', path, (s) =>
      LIFETIME_STATES.includes(s) ? undefined : `must be one of ${LIFETIME_STATES.join(', ')}`,
    ),
    exitCodes: readExitCodes(r, section, path),
    ownerKinds: readOwnerKinds(r, section, path),
    conditions: readConditions(r, section, path),
    includingInitContainers: r.bool(section, 'includingInitContainers', path),
    includingEphemeralContainers: r.bool(section, 'includingEphemeralContainers', path),
  }),
};

/** ownerKinds {include, exclude}: both lists of kinds; absent: every owner. */
function readOwnerKinds(r: SectionReader, section: Obj | undefined, path: string): PodLifeTimeConfig['ownerKinds'] {
  const where = `${path}.ownerKinds`;
  const value = section?.['ownerKinds'];
  if (value === undefined || value === null) return undefined;
  const o = r.objectValue(value, where, ['include', 'exclude']);
  if (o === undefined) return undefined;
  return {
    include: r.stringList(o, 'include', where, kindProblem) ?? [],
    exclude: r.stringList(o, 'exclude', where, kindProblem) ?? [],
  };
}

/** conditions: a list of filters, each naming at least one of its fields (an empty filter would match any pod). */
function readConditions(r: SectionReader, section: Obj | undefined, path: string): PodConditionFilter[] | undefined {
  const value = section?.['conditions'];
  if (value === undefined || value === null) return undefined;
  const field = `${path}.conditions`;
  if (!Array.isArray(value)) return r.fail(field, 'must be a list of condition filters');
  const out: PodConditionFilter[] = [];
  value.forEach((item: unknown, i) => {
    const where = `${field}[${i}]`;
    const o = r.objectValue(item, where, CONDITION_FIELDS);
    if (o === undefined) return;
    const type = r.string(o, 'type', where);
    const status = r.oneOf(o, 'status', where, CONDITION_STATUSES);
    const reason = r.string(o, 'reason', where);
    const minMs = r.duration(o, 'minTimeSinceLastTransition', where);
    if (CONDITION_FIELDS.every((k) => o[k] === undefined || o[k] === null || o[k] === '')) {
      r.fail(where, `must set at least one of ${CONDITION_FIELDS.join(', ')} (an empty filter matches every pod)`);
      return;
    }
    out.push({
      ...(type ? { type } : {}),
      ...(status !== undefined ? { status } : {}),
      ...(reason ? { reason } : {}),
      ...(minMs !== undefined ? { minTimeSinceLastTransitionMs: minMs } : {}),
    });
  });
  return out;
}
