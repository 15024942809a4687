// The anatomy every strategy shares, after the descheduler's plugins (args, defaults, validation, the plugin):
// a strategy is one folder under src/strategies/ with
//   policy.ts   its section of spec.strategies: the type, the defaults (one commented value each), the validation;
//   strategy.ts what it detects (violations of running pods, or the spread groups whose skew it acts on), the
//               candidates of a move and the justification an eviction needs, and its descheduler equivalent;
// and it is listed in registry.ts, the one list the policy parser, the analysis, the planner, the metrics, the
// descheduler converter and the CRD test iterate over.
//
// Strategies sit below policy, analysis, scheduling and the planner (see test/architecture/imports.test.ts): they
// reach the cluster only through the small contexts declared here, which those layers implement.
import type { Obj } from '../model/rawJson.js';
import type { SkewTuple } from '../model/spread.js';
import type { Labels, NodeInfo, PodAffinityTerm, PodInfo, PodPhase, SpreadConstraint } from '../model/types.js';

// ---- the policy section ----------------------------------------------------------------------------------------

/** Every strategy's section of spec.strategies can be switched off. */
export interface StrategyConfig {
  readonly enabled: boolean;
}

/**
 * The policy parser's reader, as a section reads its fields with it: every getter returns undefined for an absent,
 * null or invalid value, and records each invalid one as a problem with its field path, so a policy's problems are
 * all reported at once.
 */
export interface SectionReader {
  fail(field: string, problem: string): undefined;
  /** An object whose keys must all be in `known` (unknown ones are problems naming the closest known field). */
  objectValue(value: unknown, path: string, known: readonly string[]): Obj | undefined;
  bool(parent: Obj | undefined, key: string, path: string): boolean | undefined;
  string(parent: Obj | undefined, key: string, path: string): string | undefined;
  integer(parent: Obj | undefined, key: string, path: string, min?: number): number | undefined;
  oneOf<T extends string>(parent: Obj | undefined, key: string, path: string, allowed: readonly T[]): T | undefined;
  /** A non-negative Go duration ("90s", "168h"), in milliseconds. */
  duration(parent: Obj | undefined, key: string, path: string): number | undefined;
  /** A list of distinct strings, each checked by `check` (a problem text, or undefined when fine). */
  stringList(
    parent: Obj | undefined,
    key: string,
    path: string,
    check: (s: string) => string | undefined,
  ): string[] | undefined;
}

/** What a section's fields read to: absent or invalid fields are undefined and get their defaults. */
export type SectionInput<C> = { readonly [K in keyof C]?: C[K] | undefined };

export interface PolicySection<C extends StrategyConfig> {
  /** The section's field names: exactly the CRD's properties of spec.strategies.<key> (a test holds them equal). */
  readonly fields: readonly string[];
  /** Every field's default: the CRD's `default:` values (a test holds them equal). */
  readonly defaults: C;
  /** Reads the section (undefined when absent; its unknown fields are already reported) at `path`. */
  read(r: SectionReader, section: Obj | undefined, path: string): SectionInput<C>;
}

// ---- detection ---------------------------------------------------------------------------------------------------

/** A rule a running pod breaks where it runs now. */
export interface ViolationRecord {
  /** The name of the strategy that found it. */
  readonly strategy: string;
  readonly pod: PodInfo;
  readonly node: string;
  readonly reason: string;
  /** Preferences (preferred node affinity, PreferNoSchedule) are reported; acting on them is the policy's choice. */
  readonly soft: boolean;
  /**
   * For a rule of one pod that matches others (inter-pod anti-affinity): the other pod of the conflicting pair.
   * The planner clears such a rule as a set: its owner moves, or every pod it matches in its domain does.
   */
  readonly peer?: PodInfo;
  /** The pod whose rule is broken (`pod` or `peer`), when `peer` is set. */
  readonly ruleOwner?: PodInfo;
}

/** What detection may read of the cluster, built once per analysis. */
export interface DetectionContext {
  readonly nodes: ReadonlyMap<string, NodeInfo>;
  readonly inScope: (namespace: string) => boolean;
  readonly namespaceLabels: (namespace: string) => Labels;
  /** The node a counted pod runs on. */
  nodeOf(pod: PodInfo): NodeInfo | undefined;
  /** Counted pods that a term matches (its selector and namespaces), memoised for the analysis. */
  podsMatching(term: PodAffinityTerm, owner: PodInfo): readonly PodInfo[];
}

/** Checks one counted, in-scope pod on its node and appends what it breaks to `out`. */
export type ViolationCheck = (pod: PodInfo, node: NodeInfo, out: ViolationRecord[]) => void;

// ---- planning ----------------------------------------------------------------------------------------------------

/** What a justification may ask of the planner's simulation. */
export interface MoveContext {
  /** spec.eviction.nodeFit: off, only the rules a move is about are checked on the target, not resources. */
  readonly nodeFit: boolean;
  /**
   * A check of single nodes for a replacement of `pod`, evicted from `from`, its context built once: `all` is every
   * filter the scheduler applies; `interPod` only pod (anti-)affinity.
   */
  fits(pod: PodInfo, from: NodeInfo, scope: 'all' | 'interPod'): (node: NodeInfo) => boolean;
}

/** A spread constraint's group, as the analysis measured it (members, domains, skew). */
export interface SpreadGroupView {
  readonly id: string;
  readonly namespace: string;
  readonly constraint: SpreadConstraint;
  /** Live pods that carry the constraint: their replacements are scheduled under it. */
  readonly members: readonly PodInfo[];
  /**
   * Every counted pod the selector matches on an eligible node, members or not: each one counts in its domain, so
   * moving any of them changes the skew (the descheduler, too, evicts whatever pod the selector counts).
   */
  readonly matching: readonly PodInfo[];
  /** node name → domain, eligible nodes only. */
  readonly domainsByNode: ReadonlyMap<string, string>;
  readonly skew: number;
  /** `Kind/name` of the members' workloads, sorted. */
  readonly workloads: readonly string[];
}

/** For `convert --descheduler-policy`: the descheduler strategy (v1alpha1) or plugin (v1alpha2) it stands for. */
export interface DeschedulerEquivalent {
  readonly plugin: string;
  /** Sets the section's fields from the plugin's args; what does not carry over is noted, one line each. */
  convertArgs(args: Obj, section: Obj, notes: string[]): void;
}

interface StrategyBase<C extends StrategyConfig, K extends string> {
  /** Its name in plans, skipped lists, Events and the `strategy` label of the metrics (DESIGN.md). */
  readonly name: string;
  /** Its key under spec.strategies. */
  readonly key: K;
  readonly policy: PolicySection<C>;
  readonly descheduler?: DeschedulerEquivalent;
}

/**
 * A rule running pods must keep (node affinity, taints, inter-pod affinity): detected pod by pod, cleared by one
 * move of the violating pod (or, for a rule with a peer, by a set of moves) whose replacement lands where the rule
 * holds.
 */
export interface RuleStrategy<
  C extends StrategyConfig = StrategyConfig,
  K extends string = string,
> extends StrategyBase<C, K> {
  readonly kind: 'rule';
  /** The planner fixes hard violations before soft ones, then strategies in this order (lower first). */
  readonly fixOrder: number;
  /** Detection, set up once per analysis (memos live in the closure). */
  detector(ctx: DetectionContext, config: C): ViolationCheck;
  /** Whether the policy acts on the strategy's soft violations (hard ones are always acted on). */
  actsOnSoft(config: C): boolean;
  /**
   * The justification: for one candidate `pod` of violation `v`, whether its replacement landing on a target leaves
   * the rule cleared. Built once per candidate, then asked about many targets.
   */
  clears(v: ViolationRecord, pod: PodInfo, from: NodeInfo, ctx: MoveContext): (target: NodeInfo) => boolean;
  /**
   * nodeFit off: a hard violation is cleared even when no current node can take the replacement (it waits for
   * capacity, as the descheduler's nodeFit: false allows). False where a replacement with nowhere to go cannot help.
   */
  readonly withoutTarget: boolean;
}

/**
 * Skew of spread constraint groups (topology spread): the analysis measures every group; the planner balances the
 * groups a skew strategy acts on, one simulated move at a time.
 */
export interface SkewStrategy<
  C extends StrategyConfig = StrategyConfig,
  K extends string = string,
> extends StrategyBase<C, K> {
  readonly kind: 'skew';
  /** Detection: whether the policy acts on this group's skew (it is measured and reported either way). */
  actsOn(group: SpreadGroupView, config: C): boolean;
  /**
   * The candidates of one step: the live pods the constraint counts (`matching`, members or not) that run in a
   * fullest domain. `at` is the node of a live pod (undefined for one already moved or gone); `counts` the domain counts now.
   */
  candidates(
    group: SpreadGroupView,
    counts: ReadonlyMap<string, number>,
    at: (pod: PodInfo) => NodeInfo | undefined,
  ): PodInfo[];
  /** The justification: a move is worth making when it lowers the group's measure (strict: the skew itself). */
  helps(after: SkewTuple, before: SkewTuple, strict: boolean): boolean;
  /** The reason an eviction of this group gives, from the counts before the move. */
  reason(
    group: SpreadGroupView,
    counts: ReadonlyMap<string, number>,
    from: NodeInfo,
    target: NodeInfo | undefined,
  ): string;
}

// ---- node load (utilization, duplicates) -----------------------------------------------------------------------

/** How a node's utilization compares with a strategy's thresholds (DESIGN.md: under | appropriate | over). */
export type NodeClass = 'under' | 'appropriate' | 'over';

/** Per resource (cpu, memory, pods, ephemeral-storage, extended resources): a share of allocatable, 0–1. */
export type Utilization = Readonly<Record<string, number>>;

/** The classification a load strategy planned with, for the plan's `nodes` and the metrics. */
export interface NodeClassification {
  readonly strategy: string;
  /** The resources its thresholds name, in the order they are shown. */
  readonly resources: readonly string[];
  readonly classes: ReadonlyMap<string, NodeClass>;
}

/**
 * Where a node's usage comes from: the requests of its pods (the descheduler's default), metrics.k8s.io, or (only
 * lowNodeUtilization, as in the descheduler) a Prometheus query giving each node one value in 0–1.
 */
export type UsageSource = 'Requests' | 'Metrics' | 'Prometheus';

/** Where `usage: Prometheus` reads: the server, the query, and the Secret holding the bearer token (if any). */
export interface PrometheusSource {
  readonly url?: string;
  readonly query?: string;
  readonly authToken?: { readonly secretReference: { readonly namespace: string; readonly name: string } };
}

/** A simulated landing, as a load strategy judges it: the scheduler's choice and the nodes it ties with. */
export interface Landing {
  readonly target: NodeInfo;
  readonly ties: readonly NodeInfo[];
}

/**
 * What a load strategy may ask of the planner. A move goes through every gate the planner has (protections,
 * priority threshold, PodDisruptionBudgets, limits, held workloads), then the simulated reschedule; `lands` is asked
 * about every node the scheduler might choose (`[target, ...ties]`) and the planner adds its own rule: the replacement
 * breaks no spread, affinity or taint rule another enabled strategy acts on, on any of them.
 */
export interface LoadContext {
  /**
   * Every node, in the snapshot's order; with `usage: Metrics`, every node metrics.k8s.io reported (a node without
   * NodeMetrics cannot be classified, so it is neither relieved nor filled).
   */
  readonly nodes: readonly NodeInfo[];
  /**
   * What the node uses now, in the plan's state, by resource, in the strategy's measure (LoadStrategy.usage): the
   * requests of its pods, or with `usage: Metrics` its cpu and memory from NodeMetrics, with the usage of each pod
   * moved off it taken away and of each replacement added. `pods` is its number of pods either way.
   */
  requested(node: NodeInfo): Readonly<Record<string, number>>;
  /** What the pod adds to a node in the same measure (its requests, or its PodMetrics usage for cpu and memory). */
  amountOf(pod: PodInfo): Readonly<Record<string, number>>;
  /** The original pods running on the node that are still there in the plan's state (replacements never move). */
  podsOn(node: NodeInfo): readonly PodInfo[];
  /** The descheduler's eviction order: lower priority first, then BestEffort, Burstable, Guaranteed. */
  compare(a: PodInfo, b: PodInfo): number;
  /**
   * Plans the eviction of `pod` when every gate passes and `lands` (why the landing would not help, or undefined)
   * accepts every node the replacement may land on. Without nodeFit, `lands` is asked about single nodes and the
   * first it accepts is the target.
   */
  move(pod: PodInfo, reason: string, lands: (targets: readonly NodeInfo[]) => string | undefined): Landing | string;
  /** The number of moves planned so far, to drop the moves after it with undo(). */
  mark(): number;
  /** Drops the moves planned after `mark`; with `why`, each dropped pod is reported with it in `skipped`. */
  undo(mark: number, why?: string): void;
  /** Reports a pod this strategy did not evict, and why. */
  skip(pod: PodInfo, reason: string): void;
  /** No eviction fits in this cycle any more. */
  readonly cycleFull: boolean;
}

/**
 * A strategy that balances how much runs on each node rather than where one pod's rules say it must be
 * (lowNodeUtilization, highNodeUtilization, removeDuplicates): it plans its own moves through a LoadContext, after
 * the rules and the spread groups, and a move counts only where every tied landing helps.
 */
export interface LoadStrategy<
  C extends StrategyConfig = StrategyConfig,
  K extends string = string,
> extends StrategyBase<C, K> {
  readonly kind: 'load';
  /**
   * Where node usage comes from (default Requests); with Metrics the planner measures by metrics.k8s.io, with
   * Prometheus by the query `prometheus` names (read by the operator once per cycle).
   */
  usage?(config: C): UsageSource;
  /** With `usage: Prometheus`: where to read. */
  prometheus?(config: C): PrometheusSource;
  /** Plans the strategy's moves; returns the node classification it planned with, if it classifies nodes. */
  plan(ctx: LoadContext, config: C): NodeClassification | undefined;
}

/** One pod a housekeeping strategy selects, with the figure behind it (age, restarts, failure reason). */
export interface HousekeepingCandidate {
  readonly pod: PodInfo;
  /**
   * The eviction's `reason` in the plan, the table and the Event; written only for the few pods planned or skipped
   * (a large cluster can have tens of thousands of candidates).
   */
  readonly reason: () => string;
}

/** What a housekeeping strategy's selection may read. */
export interface HousekeepingContext {
  /** The snapshot's instant (epoch ms): ages are measured against it. */
  readonly now: number;
  /** Every pod on a known node, whatever its phase; scope, podSelector and protections are the planner's. */
  readonly pods: readonly PodInfo[];
}

/**
 * Housekeeping after the descheduler's plugins of the same names (pod age, restarts, failed pods): candidates are
 * chosen pod by pod from what the pod's own status says, and need no landing. The planner still applies every gate
 * (scope, podSelector, opt-outs, priority, minPodAge, budgets, limits); where the owner recreates the pod, the
 * executor paces on the replacement as for any eviction.
 */
export interface HousekeepingStrategy<
  C extends StrategyConfig = StrategyConfig,
  K extends string = string,
> extends StrategyBase<C, K> {
  readonly kind: 'housekeeping';
  /** The phases of the pods it may act on (every other strategy acts on Running pods only). */
  phases(config: C): readonly PodPhase[];
  /** The pods the section selects, in the order they are to be evicted, each with its reason. */
  select(ctx: HousekeepingContext, config: C): HousekeepingCandidate[];
}

/** Any strategy, as the registry holds it. */
export type AnyStrategy = RuleStrategy | SkewStrategy | LoadStrategy | HousekeepingStrategy;
