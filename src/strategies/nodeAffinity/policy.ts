// spec.strategies.nodeAffinity: its type, defaults and validation.
import type { PolicySection, StrategyConfig } from '../types.js';

export interface NodeAffinityConfig extends StrategyConfig {
  /** Act on pods whose node no longer matches their required node affinity (or nodeSelector). */
  readonly required: boolean;
  /** Act on pods that another admitting node would score higher for their preferred node affinity. */
  readonly preferred: boolean;
}

export const nodeAffinitySection: PolicySection<NodeAffinityConfig> = {
  fields: ['enabled', 'required', 'preferred'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // Required affinity is a hard rule that label changes can break after placement.
    required: true,
    // Preferences are weighed against everything else by the scheduler, so evicting for them is opt-in.
    preferred: false,
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    required: r.bool(section, 'required', path),
    preferred: r.bool(section, 'preferred', path),
  }),
};
