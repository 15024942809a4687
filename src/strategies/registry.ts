// The one list of strategies. The policy parser and its defaults compose spec.strategies from it, the analysis runs
// its detectors, the planner its candidates and justifications, the metrics label by its names, `convert` maps the
// descheduler's plugins through it, and the CRD test holds the CRD's spec.strategies to it. Strategies are listed
// here explicitly, never registered by importing their modules; a caller may build another registry (a test's
// extra strategy) with createRegistry and pass it in.
import { failedPods } from './failedPods/strategy.js';
import { highNodeUtilization } from './highNodeUtilization/strategy.js';
import { lowNodeUtilization } from './lowNodeUtilization/strategy.js';
import { nodeAffinity } from './nodeAffinity/strategy.js';
import { nodeTaints } from './nodeTaints/strategy.js';
import { podAffinity } from './podAffinity/strategy.js';
import { podAntiAffinity } from './podAntiAffinity/strategy.js';
import { podLifeTime } from './podLifeTime/strategy.js';
import { removeDuplicates } from './removeDuplicates/strategy.js';
import { tooManyRestarts } from './tooManyRestarts/strategy.js';
import { topologySpread } from './topologySpread/strategy.js';
import type {
  AnyStrategy,
  HousekeepingStrategy,
  LoadStrategy,
  PolicySection,
  RuleStrategy,
  SkewStrategy,
  StrategyConfig,
} from './types.js';

/** The built-in strategies, in DESIGN.md's order: the order of spec.strategies, the CRD and the metrics. */
export const BUILTIN_STRATEGIES = [
  topologySpread,
  podAntiAffinity,
  podAffinity,
  nodeAffinity,
  nodeTaints,
  lowNodeUtilization,
  highNodeUtilization,
  removeDuplicates,
  podLifeTime,
  tooManyRestarts,
  failedPods,
] as const;

type Builtin = (typeof BUILTIN_STRATEGIES)[number];

/** The sections of spec.strategies the built-in strategies define, by key, each with its own type. */
export type BuiltinSections = { readonly [S in Builtin as S['key']]: S['policy']['defaults'] };

/** spec.strategies after defaulting: the built-in sections, and any other registered strategy's by its key. */
export type StrategySections = BuiltinSections & { readonly [key: string]: StrategyConfig | undefined };

export interface StrategyRegistry {
  /** Every strategy, in registration order. */
  readonly all: readonly AnyStrategy[];
  /** The rule strategies, in the order the planner fixes their violations. */
  readonly rules: readonly RuleStrategy[];
  /** The strategies acting on the skew of spread groups. */
  readonly skew: readonly SkewStrategy[];
  /** The strategies balancing node load (utilization, duplicates), in the order they plan. */
  readonly load: readonly LoadStrategy[];
  /** The housekeeping strategies (pod age, restarts, failed pods), in the order the planner runs them. */
  readonly housekeeping: readonly HousekeepingStrategy[];
  /** Every strategy's name: the values of the metrics' `strategy` label. */
  readonly names: readonly string[];
  byName(name: string): AnyStrategy | undefined;
  /** The strategy that stands for a descheduler strategy or plugin, if one does. */
  byDeschedulerPlugin(plugin: string): AnyStrategy | undefined;
  /** A registry with `more` registered after these strategies (so the built-in ones are always there). */
  with(...more: readonly AnyStrategy[]): StrategyRegistry;
}

/** A registry of `strategies`; names, keys and descheduler plugins must be unique. */
function createRegistry(strategies: readonly AnyStrategy[]): StrategyRegistry {
  const byName = new Map<string, AnyStrategy>();
  const byKey = new Map<string, AnyStrategy>();
  const byPlugin = new Map<string, AnyStrategy>();
  for (const s of strategies) {
    for (const [map, id, what] of [
      [byName, s.name, 'name'],
      [byKey, s.key, 'key'],
      [byPlugin, s.descheduler?.plugin, 'descheduler plugin'],
    ] as const) {
      if (id === undefined) continue;
      if (map.has(id)) throw new Error(`two strategies have the ${what} ${JSON.stringify(id)}`);
      map.set(id, s);
    }
  }
  const rules = strategies.filter((s): s is RuleStrategy => s.kind === 'rule').sort((a, b) => a.fixOrder - b.fixOrder);
  return {
    all: strategies,
    rules,
    skew: strategies.filter((s): s is SkewStrategy => s.kind === 'skew'),
    load: strategies.filter((s): s is LoadStrategy => s.kind === 'load'),
    housekeeping: strategies.filter((s): s is HousekeepingStrategy => s.kind === 'housekeeping'),
    names: strategies.map((s) => s.name),
    byName: (name) => byName.get(name),
    byDeschedulerPlugin: (plugin) => byPlugin.get(plugin),
    with: (...more) => createRegistry([...strategies, ...more]),
  };
}

/** The registry of the built-in strategies: what the operator and the CLI run, and what every registry extends. */
export const STRATEGIES: StrategyRegistry = createRegistry(BUILTIN_STRATEGIES);

/**
 * A strategy's section of a policy's (defaulted) spec.strategies. A policy read before the strategy was registered
 * has no such section, and a section a policy does not name is off.
 */
export function configOf<C extends StrategyConfig>(
  sections: Readonly<Record<string, StrategyConfig | undefined>>,
  strategy: { readonly key: string; readonly policy: PolicySection<C> },
): C {
  return (sections[strategy.key] as C | undefined) ?? { ...strategy.policy.defaults, enabled: false };
}
