// What the descheduler refuses when it loads a policy, beyond its arguments' types (argTypes.ts): each plugin's
// validation.go. Convert refuses the same, naming the field, rather than giving a meaning of its own to a policy the
// descheduler never ran.
import { fieldPath } from './argTypes.js';
import { RESTART_STATES } from '../strategies/tooManyRestarts/policy.js';
import type { PluginSettings } from './types.js';

const FILTERS = ['maxPodLifeTimeSeconds', 'states', 'conditions', 'exitCodes'] as const;

function given(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return !Array.isArray(value) || value.length > 0;
}

/**
 * PodLifeTime must select by something: v0.35.1 on, one of maxPodLifeTimeSeconds, states, conditions or exitCodes
 * (without any it would evict every pod); before, and in v1alpha1, maxPodLifeTimeSeconds itself.
 */
function podLifeTimeProblems(plugin: PluginSettings, v1alpha1: boolean): string[] {
  const args = plugin.args;
  if (v1alpha1) {
    if (given(args['maxPodLifeTimeSeconds'])) return [];
    return [
      `${fieldPath(plugin.path, 'podLifeTime')}.maxPodLifeTimeSeconds: must be set: the descheduler refuses a ` +
        'PodLifeTime strategy without it ("MaxPodLifeTimeSeconds not set")',
    ];
  }
  if (FILTERS.some((f) => given(args[f]))) return [];
  return [
    `${plugin.path}: PodLifeTime must set at least one of ${FILTERS.join(', ')}: the descheduler refuses it ` +
      'otherwise (v0.35.1 on; before, maxPodLifeTimeSeconds alone was required), as it would select every pod',
  ];
}

/** RemovePodsHavingTooManyRestarts' states: a phase it allows (Running) or the waiting reason CrashLoopBackOff. */
function tooManyRestartsProblems(plugin: PluginSettings): string[] {
  const states = plugin.args['states'];
  if (!Array.isArray(states)) return [];
  return states.flatMap((s: unknown, i) =>
    (RESTART_STATES as readonly unknown[]).includes(s)
      ? []
      : [
          `${fieldPath(plugin.path, 'states')}[${i}]: must be one of ${RESTART_STATES.join(', ')} (got ` +
            `${JSON.stringify(s)}): the descheduler refuses any other`,
        ],
  );
}

/** Every refusal of the descheduler for this plugin's settings, as `field: problem`. */
export function pluginProblems(plugin: PluginSettings, v1alpha1: boolean): string[] {
  if (plugin.name === 'PodLifeTime') return podLifeTimeProblems(plugin, v1alpha1);
  if (plugin.name === 'RemovePodsHavingTooManyRestarts') return tooManyRestartsProblems(plugin);
  return [];
}
