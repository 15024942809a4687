// spec.strategies.podAffinity: only switched on or off.
import { enabledOnly } from '../sections.js';
import type { PolicySection, StrategyConfig } from '../types.js';

export type PodAffinityConfig = StrategyConfig;

export const podAffinitySection: PolicySection<PodAffinityConfig> = enabledOnly({
  // Off: "co-locate with X" violations usually mean X moved; chasing them can cascade evictions.
  enabled: false,
});
