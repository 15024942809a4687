// spec.strategies.highNodeUtilization: its type, defaults and validation (the descheduler's HighNodeUtilizationArgs).
import type { PolicySection, StrategyConfig } from '../types.js';
import { readThresholds, USAGE_SOURCES, type ResourcePercents, type UsageSource } from '../utilization.js';

export interface HighNodeUtilizationConfig extends StrategyConfig {
  /** A node at or below ALL of these (percent of allocatable) is underutilized: it is emptied if it can be. */
  readonly thresholds: ResourcePercents;
  /** Act only when more nodes than this are underutilized. */
  readonly numberOfNodes: number;
  readonly usage: UsageSource;
  /**
   * The descheduler's evictionModes. OnlyThresholdingResources: a pod that requests none of the thresholds' resources
   * is never evicted, so a node running one is not emptied (a half-emptied node saves nothing).
   */
  readonly evictionModes: readonly EvictionMode[];
}

export const EVICTION_MODES = ['OnlyThresholdingResources'] as const;
export type EvictionMode = (typeof EVICTION_MODES)[number];

export const highNodeUtilizationSection: PolicySection<HighNodeUtilizationConfig> = {
  fields: ['enabled', 'thresholds', 'numberOfNodes', 'usage', 'evictionModes'],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // A node using a fifth of its cpu and memory or less is worth emptying.
    thresholds: { cpu: 20, memory: 20 },
    // Any underutilized node is worth emptying.
    numberOfNodes: 0,
    // Requests are what the scheduler and the autoscaler go by.
    usage: 'Requests',
    // None: every pod of an emptied node moves, whatever it requests (the descheduler's default).
    evictionModes: [],
  },
  read: (r, section, path) => ({
    enabled: r.bool(section, 'enabled', path),
    thresholds: readThresholds(r, section, 'thresholds', path),
    numberOfNodes: r.integer(section, 'numberOfNodes', path, 0),
    usage: r.oneOf(section, 'usage', path, USAGE_SOURCES),
    evictionModes: r.stringList(section, 'evictionModes', path, (m) =>
      (EVICTION_MODES as readonly string[]).includes(m) ? undefined : `must be one of ${EVICTION_MODES.join(', ')}`,
    ) as EvictionMode[] | undefined,
  }),
};
