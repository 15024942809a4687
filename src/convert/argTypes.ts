// The JSON type of every argument the descheduler (v0.36, sigs.k8s.io/descheduler pkg/framework/plugins/*/types.go
// and pkg/api/v1alpha2) decodes, per plugin and for the policy's top level. The descheduler refuses a policy whose
// value does not decode into its Go type ("twenty" for a percentage, -1 for a uint), so convert does too, naming the
// DeschedulerPolicy field: copying such a value through would only move the refusal to `kubectl apply`.
import { InputError } from '../errors.js';
import { isObj } from '../model/rawJson.js';

/** uint: an integer ≥ 0; int: any integer; number: a float (percentages); the rest as named. */
export type ArgType = 'uint' | 'int' | 'number' | 'bool' | 'string' | 'strings' | 'ints' | 'object' | 'list' | 'map';

const NAMESPACED: Readonly<Record<string, ArgType>> = { namespaces: 'object', labelSelector: 'object' };

/** Each plugin's arguments (v0.36); a plugin absent here takes none. */
export const PLUGIN_ARGS: Readonly<Record<string, Readonly<Record<string, ArgType>>>> = {
  DefaultEvictor: {
    nodeSelector: 'string',
    labelSelector: 'object',
    namespaceLabelSelector: 'object',
    priorityThreshold: 'object',
    nodeFit: 'bool',
    minReplicas: 'uint',
    minPodAge: 'string',
    noEvictionPolicy: 'string',
    podProtections: 'object',
    evictLocalStoragePods: 'bool',
    evictDaemonSetPods: 'bool',
    evictSystemCriticalPods: 'bool',
    ignorePvcPods: 'bool',
    ignorePodsWithoutPDB: 'bool',
    evictFailedBarePods: 'bool',
  },
  LowNodeUtilization: {
    useDeviationThresholds: 'bool',
    thresholds: 'map',
    targetThresholds: 'map',
    numberOfNodes: 'int',
    metricsUtilization: 'object',
    evictableNamespaces: 'object',
    evictionLimits: 'object',
  },
  HighNodeUtilization: {
    thresholds: 'map',
    numberOfNodes: 'int',
    evictionModes: 'strings',
    evictableNamespaces: 'object',
  },
  PodLifeTime: {
    ...NAMESPACED,
    ownerKinds: 'object',
    maxPodLifeTimeSeconds: 'uint',
    states: 'strings',
    conditions: 'list',
    exitCodes: 'ints',
    includingInitContainers: 'bool',
    includingEphemeralContainers: 'bool',
  },
  RemoveDuplicates: { namespaces: 'object', excludeOwnerKinds: 'strings' },
  RemoveFailedPods: {
    ...NAMESPACED,
    excludeOwnerKinds: 'strings',
    minPodLifetimeSeconds: 'uint',
    reasons: 'strings',
    exitCodes: 'ints',
    includingInitContainers: 'bool',
  },
  RemovePodsHavingTooManyRestarts: {
    ...NAMESPACED,
    podRestartThreshold: 'int',
    includingInitContainers: 'bool',
    states: 'strings',
  },
  RemovePodsViolatingInterPodAntiAffinity: NAMESPACED,
  RemovePodsViolatingNodeAffinity: { ...NAMESPACED, nodeAffinityType: 'strings' },
  RemovePodsViolatingNodeTaints: {
    ...NAMESPACED,
    includePreferNoSchedule: 'bool',
    excludedTaints: 'strings',
    includedTaints: 'strings',
  },
  RemovePodsViolatingTopologySpreadConstraint: {
    ...NAMESPACED,
    constraints: 'strings',
    topologyBalanceNodeFit: 'bool',
  },
};

/** The v1alpha2 DeschedulerPolicy's own fields besides apiVersion, kind and profiles. */
export const TOP_ARGS: Readonly<Record<string, ArgType>> = {
  nodeSelector: 'string',
  maxNoOfPodsToEvictPerNode: 'uint',
  maxNoOfPodsToEvictPerNamespace: 'uint',
  maxNoOfPodsToEvictTotal: 'uint',
  evictionFailureEventNotification: 'bool',
  metricsCollector: 'object',
  metricsProviders: 'list',
  gracePeriodSeconds: 'int',
};

function problem(type: ArgType, value: unknown): string | undefined {
  const integer = typeof value === 'number' && Number.isInteger(value);
  switch (type) {
    case 'uint':
      return integer && value >= 0 ? undefined : 'must be an integer ≥ 0';
    case 'int':
      return integer ? undefined : 'must be an integer';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a number';
    case 'bool':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'strings':
      return Array.isArray(value) && value.every((v) => typeof v === 'string')
        ? undefined
        : 'must be a list of strings';
    case 'ints':
      return Array.isArray(value) && value.every((v) => typeof v === 'number' && Number.isInteger(v))
        ? undefined
        : 'must be a list of integers';
    case 'list':
      return Array.isArray(value) ? undefined : 'must be a list';
    case 'object':
    case 'map':
      return isObj(value) ? undefined : 'must be an object';
  }
}

/** The path of one field: `a.b`, or `a["odd key"]` when the key is not a plain name. */
export function fieldPath(path: string, key: string): string {
  const plain = /^[A-Za-z_][\w-]*$/.test(key) && !key.includes('.');
  if (!plain) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

/**
 * Every argument of `args` whose value the descheduler could not decode, as `path: problem`. A threshold map's
 * values are percentages (numbers). Unknown arguments are the caller's to note, not a type error.
 */
export function argProblems(
  args: Record<string, unknown>,
  types: Readonly<Record<string, ArgType>>,
  path: string,
): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    const type = types[key];
    if (type === undefined || value === null) continue;
    const where = fieldPath(path, key);
    const p = problem(type, value);
    if (p !== undefined) {
      out.push(`${where}: ${p} (got ${JSON.stringify(value)})`);
      continue;
    }
    if (type === 'map') {
      for (const [resource, percent] of Object.entries(value as Record<string, unknown>)) {
        const q = problem('number', percent);
        if (q !== undefined)
          out.push(`${fieldPath(where, resource)}: ${q}, a percentage (got ${JSON.stringify(percent)})`);
      }
    }
  }
  return out;
}

/** One InputError for every problem found, the first one's field named when it is the only one. */
export function refuse(file: string, object: string | undefined, problems: readonly string[]): void {
  if (problems.length === 0) return;
  if (problems.length === 1) {
    const only = problems[0]!;
    const colon = only.indexOf(': ');
    throw new InputError(file, object, only.slice(0, colon), only.slice(colon + 2));
  }
  throw new InputError(file, object, undefined, `${problems.length} problems: ${problems.join('; ')}`);
}
