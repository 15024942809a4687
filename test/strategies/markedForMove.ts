// A trivial strategy, kept in test/ on purpose: a pod labelled `<label>: "true"` must move, and any other node that
// takes its replacement clears the rule. It is registered at run time (STRATEGIES.with(markedForMove)), never in
// src/strategies/registry.ts, so a test that plans, reports and counts with it shows that the registry is the only
// seam between a strategy and the parser, the analysis, the planner, the report and the metrics.
import type { RuleStrategy, StrategyConfig } from '../../src/strategies/types.js';

export interface MarkedForMoveConfig extends StrategyConfig {
  /** The label that marks a pod; its value must be "true". */
  readonly label: string;
}

const NAME = 'MarkedForMove';

export const markedForMove: RuleStrategy<MarkedForMoveConfig, 'markedForMove'> = {
  kind: 'rule',
  name: NAME,
  key: 'markedForMove',
  policy: {
    fields: ['enabled', 'label'],
    defaults: { enabled: false, label: 'example.com/move' },
    read: (r, section, path) => ({
      enabled: r.bool(section, 'enabled', path),
      label: r.string(section, 'label', path),
    }),
  },
  fixOrder: 10,
  detector: (_ctx, config) => (pod, node, out) => {
    if (pod.labels[config.label] !== 'true') return;
    out.push({
      strategy: NAME,
      pod,
      node: node.name,
      soft: false,
      reason: `marked ${config.label}=true on ${node.name}`,
    });
  },
  actsOnSoft: () => false,
  clears: (_v, _pod, from) => (target) => target.name !== from.name,
  withoutTarget: false,
};
