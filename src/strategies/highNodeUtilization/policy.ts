// spec.strategies.highNodeUtilization: its type, defaults and validation (the descheduler's HighNodeUtilizationArgs).
import type { PolicySection, StrategyConfig } from '../types.js';
import { readThresholds, USAGE_SOURCES, type ResourcePercents, type UsageSource } from '../utilization.js';

export interface HighNodeUtilizationConfig extends StrategyConfig {
  /** A node at or below ALL of these (percent of allocatable) is underutilized: it is emptied if it can be. */
  readonly thresholds: ResourcePercents;
  /** Act only when more nodes than this are underutilized. */
  readonly numberOfNodes: number;
  readonly usage: UsageSource;
}

export const highNodeUtilizationSection: PolicySection<HighNodeUtilizationConfig> = {
  fields: ['enabled', 'thresholds', 'numberOfNodes', 'usage'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // A node using a fifth of its cpu and memory or less is worth emptying.
    thresholds: { cpu: 20, memory: 20 },
    // Any underutilized node is worth emptying.
    numberOfNodes: 0,
    // Requests are what the scheduler and the autoscaler go by.
    usage: 'Requests',
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    thresholds: readThresholds(r, section, 'thresholds', path),
    numberOfNodes: r.integer(section, 'numberOfNodes', path, 0),
    usage: r.oneOf(section, 'usage', path, USAGE_SOURCES),
  }),
};
