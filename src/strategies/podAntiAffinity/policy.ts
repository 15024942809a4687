// spec.strategies.podAntiAffinity: only switched on or off.
import { enabledOnly } from '../sections.js';
import type { PolicySection, StrategyConfig } from '../types.js';

export type PodAntiAffinityConfig = StrategyConfig;

export const podAntiAffinitySection: PolicySection<PodAntiAffinityConfig> = enabledOnly({
  // Required anti-affinity violations are hard-rule breaches; fixing them is safe and expected.
  enabled: true,
});
