// spec.strategies.lowNodeUtilization: its type, defaults and validation (the descheduler's LowNodeUtilizationArgs).
import type { PolicySection, StrategyConfig } from '../types.js';
import {
  LOW_USAGE_SOURCES,
  METRIC_RESOURCE,
  readPrometheusSource,
  readThresholds,
  type PrometheusSource,
  type ResourcePercents,
  type UsageSource,
} from '../utilization.js';

export interface LowNodeUtilizationConfig extends StrategyConfig {
  /** A node at or below ALL of these (percent of allocatable) is underutilized: replacements go there. */
  readonly thresholds: ResourcePercents;
  /** A node above ANY of these is overutilized: pods move off it until it is at or below all of them. */
  readonly targetThresholds: ResourcePercents;
  /** Both as percentage points below / above the mean utilization of the nodes. */
  readonly useDeviationThresholds: boolean;
  /** Act only when more nodes than this are underutilized. */
  readonly numberOfNodes: number;
  readonly usage: UsageSource;
  /** With `usage: Prometheus`: the server, the query (one value in 0–1 per node) and the token's Secret. */
  readonly prometheus: PrometheusSource;
}

export const lowNodeUtilizationSection: PolicySection<LowNodeUtilizationConfig> = {
  fields: [
    'enabled',
    'thresholds',
    'targetThresholds',
    'useDeviationThresholds',
    'numberOfNodes',
    'usage',
    'prometheus',
  ],
  defaults: {
    // A section present runs (what a policy names is what runs); `enabled: false` keeps it off.
    enabled: true,
    // The descheduler's documented example: a node using a fifth of its capacity or less has room to take pods.
    thresholds: { cpu: 20, memory: 20, pods: 20 },
    // Above half of any resource, a node sheds pods until it is at or below half of every one.
    targetThresholds: { cpu: 50, memory: 50, pods: 50 },
    // Static thresholds are the easiest to reason about; deviations suit clusters whose mean load moves.
    useDeviationThresholds: false,
    // Any underutilized node is worth filling.
    numberOfNodes: 0,
    // Requests are what the scheduler places by, so a replacement's landing can be predicted from them.
    usage: 'Requests',
    // Read only with `usage: Prometheus`, which needs its url and query.
    prometheus: {},
  },
  read(r, section, path) {
    const thresholds = readThresholds(r, section, 'thresholds', path, true);
    const targetThresholds = readThresholds(r, section, 'targetThresholds', path, true);
    const usage = r.oneOf(section, 'usage', path, LOW_USAGE_SOURCES);
    const prometheus = readPrometheusSource(r, section, path);
    const useDeviationThresholds = r.bool(section, 'useDeviationThresholds', path);
    const d = lowNodeUtilizationSection.defaults;
    const low = thresholds ?? d.thresholds;
    const high = targetThresholds ?? d.targetThresholds;
    // The descheduler's rules: the same resources in both, and (static thresholds) none above its target.
    const lowKeys = Object.keys(low).sort();
    const highKeys = Object.keys(high).sort();
    if (lowKeys.join('\u0000') !== highKeys.join('\u0000')) {
      r.fail(
        `${path}.targetThresholds`,
        `must name the same resources as thresholds (${lowKeys.join(', ')}; got ${highKeys.join(', ')})`,
      );
    } else if (!(useDeviationThresholds ?? d.useDeviationThresholds)) {
      for (const k of lowKeys) {
        if (low[k]! > high[k]!) {
          r.fail(`${path}.thresholds.${k}`, `must not be above targetThresholds.${k} (${low[k]} > ${high[k]})`);
        }
      }
    }
    // The descheduler's Prometheus rules: a query and its server, and one resource, MetricResource, the query's value.
    const byQuery = usage === 'Prometheus';
    if (byQuery) {
      if (prometheus?.url === undefined) r.fail(`${path}.prometheus.url`, 'is required with usage: Prometheus');
      if (prometheus?.query === undefined) r.fail(`${path}.prometheus.query`, 'is required with usage: Prometheus');
    }
    for (const [key, percents] of [
      ['thresholds', low],
      ['targetThresholds', high],
    ] as const) {
      const names = Object.keys(percents);
      if (byQuery && (names.length !== 1 || names[0] !== METRIC_RESOURCE)) {
        r.fail(
          `${path}.${key}`,
          `must name only ${METRIC_RESOURCE} with usage: Prometheus (the query's value per node, in percent; got ${names.join(', ')})`,
        );
      } else if (!byQuery && names.includes(METRIC_RESOURCE)) {
        r.fail(`${path}.${key}.${METRIC_RESOURCE}`, 'is measured only with usage: Prometheus');
      }
    }
    return {
      enabled: r.bool(section, 'enabled', path),
      thresholds,
      targetThresholds,
      useDeviationThresholds,
      numberOfNodes: r.integer(section, 'numberOfNodes', path, 0),
      usage,
      prometheus,
    };
  },
};
