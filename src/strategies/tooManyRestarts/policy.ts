// spec.strategies.tooManyRestarts: its type, defaults and validation.
import type { PolicySection, StrategyConfig } from '../types.js';

export interface TooManyRestartsConfig extends StrategyConfig {
  readonly podRestartThreshold: number;
  readonly includingInitContainers: boolean;
}

export const tooManyRestartsSection: PolicySection<TooManyRestartsConfig> = {
  fields: ['enabled', 'podRestartThreshold', 'includingInitContainers'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // The descheduler's examples use 100: far past a rollout's or a node hiccup's few restarts.
    podRestartThreshold: 100,
    // Init containers restart with the pod's own restarts counted separately; opt in to add them.
    includingInitContainers: false,
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    podRestartThreshold: r.integer(section, 'podRestartThreshold', path, 1),
    includingInitContainers: r.bool(section, 'includingInitContainers', path),
  }),
};
