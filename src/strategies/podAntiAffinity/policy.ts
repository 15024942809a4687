// spec.strategies.podAntiAffinity: only switched on or off.
import { enabledOnly } from '../sections.js';
import type { PolicySection, StrategyConfig } from '../types.js';

export type PodAntiAffinityConfig = StrategyConfig;

export const podAntiAffinitySection: PolicySection<PodAntiAffinityConfig> = enabledOnly({
  // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
  enabled: true,
});
