// spec.strategies.tooManyRestarts: its type, defaults and validation.
import type { PolicySection, StrategyConfig } from '../types.js';

/** The states a pod may be picked in (the descheduler's): its phase, or a container waiting in CrashLoopBackOff. */
export const RESTART_STATES = ['Running', 'CrashLoopBackOff'] as const;

export interface TooManyRestartsConfig extends StrategyConfig {
  readonly podRestartThreshold: number;
  readonly includingInitContainers: boolean;
  /** Only pods in one of these states (empty: every Running pod). */
  readonly states?: readonly string[];
}

export const tooManyRestartsSection: PolicySection<TooManyRestartsConfig> = {
  fields: ['enabled', 'podRestartThreshold', 'includingInitContainers', 'states'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // The descheduler's examples use 100: far past a rollout's or a node hiccup's few restarts.
    podRestartThreshold: 100,
    // Init containers restart with the pod's own restarts counted separately; opt in to add them.
    includingInitContainers: false,
    // Empty: every Running pod past the threshold.
    states: [],
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    podRestartThreshold: r.integer(section, 'podRestartThreshold', path, 1),
    includingInitContainers: r.bool(section, 'includingInitContainers', path),
    states: r.stringList(section, 'states', path, (s) =>
      (RESTART_STATES as readonly string[]).includes(s) ? undefined : `must be one of ${RESTART_STATES.join(', ')}`,
    ),
  }),
};
