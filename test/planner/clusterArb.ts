// fast-check arbitraries for small, realistic clusters and RebalancePolicies, plus the oracles the safety
// properties check plans against. Everything is generated as plain data first (so fast-check can shrink it and a
// failure can be printed), then materialised as RAW objects with the test builders and loaded through the real
// loader. The oracles read the generated data, never the planner's own predicates: they restate DESIGN.md
// ("Never evicted unless a policy says otherwise", RebalancePolicy eviction fields, PDB allowances).
import fc from 'fast-check';
import {
  HOSTNAME,
  NOW,
  ZONE,
  buildSnapshot,
  makeNamespace,
  makeNode,
  makePdb,
  makePod,
  makePolicy,
  makePriorityClass,
} from '../builders.js';
import type { ClusterSnapshot } from '../../src/model/types.js';
import { parsePolicy } from '../../src/policy/parse.js';
import type { Policy } from '../../src/policy/types.js';

type Json = Record<string, unknown>;

/**
 * fast-check parameters of a property test: `runs` cases from its own fixed `seed`, unless FC_SEED (and FC_PATH, both
 * printed by fast-check on a failure) replay one.
 */
export function propertyParams<T>(seed: number, runs: number): fc.Parameters<T> {
  const override = process.env['FC_SEED'];
  const path = process.env['FC_PATH'];
  return {
    numRuns: runs,
    seed: override !== undefined ? Number(override) : seed,
    ...(path !== undefined ? { path } : {}),
    endOnFailure: false,
  };
}

// ---- the generated data ------------------------------------------------------------------------------------------

export const ZONES = ['zone-a', 'zone-b', 'zone-c', 'zone-d'] as const;
export const NAMESPACES = ['ns-a', 'ns-b', 'ns-c'] as const;
const HASHES = ['5d8f7c9b4a', '7f6d5c4b3a'] as const;
const CLASSES = { low: 100, mid: 5000, high: 1_000_000 } as const;

export type Effect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface TaintGen {
  readonly key: 'dedicated' | 'maintenance';
  readonly value: 'infra' | 'batch' | undefined;
  readonly effect: Effect;
}

export interface NodeGen {
  /** Index into the cluster's zones (mod zoneCount); null: the node has no zone label. */
  readonly zone: number | null;
  readonly disk: 'ssd' | 'hdd' | null;
  readonly taints: readonly TaintGen[];
  readonly cordoned: boolean;
  readonly notReady: boolean;
  /** Limited allocatable: 2 cpu, 4Gi memory and this many pods. */
  readonly podCap: number | null;
}

export interface ConstraintGen {
  readonly key: 'zone' | 'hostname';
  readonly hard: boolean;
  readonly maxSkew: number;
  readonly minDomains: number | undefined;
  /** Whose pods the selector counts: the workload's own app label (two spellings) or the shared tier label. */
  readonly selector: 'app' | 'appExpr' | 'tier';
  readonly matchLabelKeys: boolean;
  readonly nodeAffinityPolicy: 'Honor' | 'Ignore' | undefined;
  readonly nodeTaintsPolicy: 'Honor' | 'Ignore' | undefined;
}

export type WorkloadKind = 'Deployment' | 'StatefulSet' | 'ReplicaSet' | 'Job' | 'Bare' | 'DaemonSet';
export type Annotation =
  | 'never'
  | 'karpenter'
  | 'safe-to-evict'
  | 'prefer-no-eviction'
  | 'always'
  | 'descheduler-evict'
  | 'safe-to-evict-true';
export type Toleration = 'dedicated' | 'dedicated-infra-noschedule' | 'all' | 'unschedulable' | 'maintenance';

export interface PodGen {
  readonly node: number;
  readonly state: 'Running' | 'Pending' | 'Unscheduled' | 'Succeeded' | 'Terminating' | 'NotReady';
  readonly age: 'old' | 'ten-minutes' | 'young';
  readonly annotation: Annotation | null;
  readonly volume: 'emptyDir' | 'hostPath' | 'pvc' | null;
  readonly mirror: boolean;
  /** A Deployment pod of the other ReplicaSet (rollout in progress). */
  readonly altHash: boolean;
}

export type PriorityGen =
  | { readonly kind: 'none' }
  | { readonly kind: 'value'; readonly value: number }
  | { readonly kind: 'class'; readonly name: string };

export interface WorkloadGen {
  readonly ns: number;
  readonly kind: WorkloadKind;
  readonly tier: 'web' | 'api';
  readonly constraints: readonly ConstraintGen[];
  readonly nodeAffinity: 'none' | 'ssd' | 'not-hdd' | 'selector-ssd' | 'zone-a-or-b';
  readonly tolerations: readonly Toleration[];
  /** 'other': the app label of the next workload (index + 1), so the term does not select the pod itself. */
  readonly anti: {
    readonly key: 'zone' | 'hostname';
    readonly target: 'self' | 'tier' | 'tier-all-namespaces' | 'other';
  } | null;
  readonly affinity: { readonly key: 'zone' | 'hostname'; readonly target: 'self' | 'tier' | 'other' } | null;
  readonly priority: PriorityGen;
  readonly qos: 'BestEffort' | 'Burstable' | 'Guaranteed';
  /** cpu request in millicores (Burstable, Guaranteed). */
  readonly cpu: number;
  readonly pods: readonly PodGen[];
}

export type PdbBudget =
  | { readonly kind: 'status'; readonly allowed: number }
  | { readonly kind: 'minAvailable' | 'maxUnavailable'; readonly value: number | string };

export interface PdbGen {
  readonly ns: number;
  /** A workload's app label (index mod workloads), the tier label, or everything in the namespace ({}). */
  readonly selector:
    | { readonly kind: 'app'; readonly workload: number }
    | { readonly kind: 'tier'; readonly tier: 'web' | 'api' }
    | { readonly kind: 'all' };
  readonly budget: PdbBudget;
}

export interface PolicyGen {
  readonly include: readonly string[] | undefined;
  readonly exclude: readonly string[] | undefined;
  readonly podSelector: 'none' | 'empty' | 'tier-web' | 'not-batch' | 'no-canary';
  readonly includeSoftConstraints: boolean;
  readonly spreadEnabled: boolean;
  readonly defaultZoneConstraint: boolean;
  readonly includePreferNoSchedule: boolean;
  readonly excludedTaints: readonly string[];
  readonly preferredNodeAffinity: boolean;
  readonly podAffinity: boolean;
  readonly threshold: { readonly value: number } | { readonly className: string } | undefined;
  readonly maxPerCycle: number;
  readonly maxPerNode: number;
  readonly maxPerNamespace: number;
  readonly maxPerWorkload: number;
  readonly minPodAge: '0s' | '5m' | '1h' | undefined;
  readonly evictLocalStoragePods: boolean | undefined;
  readonly evictBarePods: boolean | undefined;
  readonly evictPodsWithPVC: boolean | undefined;
  readonly nodeFit: boolean | undefined;
}

export interface ClusterGen {
  readonly zoneCount: number;
  readonly nodes: readonly NodeGen[];
  readonly workloads: readonly WorkloadGen[];
  readonly pdbs: readonly PdbGen[];
  readonly globalDefaultClass: boolean;
  /** Pods labelled canary=true (every third pod of workloads with an odd index), for podSelector tests. */
  readonly canaries: boolean;
}

export interface Scenario {
  readonly cluster: ClusterGen;
  readonly policy: PolicyGen;
  /** Indices (mod workloads) of workloads the operator holds back this cycle. */
  readonly held: readonly number[];
}

// ---- arbitraries -------------------------------------------------------------------------------------------------

const taintArb: fc.Arbitrary<TaintGen> = fc.record({
  key: fc.constantFrom('dedicated' as const, 'maintenance' as const),
  value: fc.constantFrom('infra' as const, 'batch' as const, undefined),
  effect: fc.constantFrom<Effect>('NoSchedule', 'PreferNoSchedule', 'NoExecute'),
});

const nodeArb: fc.Arbitrary<NodeGen> = fc.record({
  zone: fc.oneof({ weight: 9, arbitrary: fc.nat(3) }, { weight: 1, arbitrary: fc.constant(null) }),
  disk: fc.constantFrom('ssd' as const, 'hdd' as const, null),
  taints: fc.oneof(
    { weight: 3, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.array(taintArb, { maxLength: 2 }) },
  ),
  cordoned: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  notReady: fc.oneof({ weight: 7, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  podCap: fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }) },
  ),
});

const constraintArb: fc.Arbitrary<ConstraintGen> = fc
  .record({
    key: fc.constantFrom('zone' as const, 'hostname' as const),
    hard: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    maxSkew: fc.oneof(
      { weight: 4, arbitrary: fc.constant(1) },
      { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) },
    ),
    minDomains: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) },
    ),
    selector: fc.constantFrom('app' as const, 'appExpr' as const, 'tier' as const),
    matchLabelKeys: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    nodeAffinityPolicy: fc.constantFrom('Honor' as const, 'Ignore' as const, undefined),
    nodeTaintsPolicy: fc.constantFrom('Honor' as const, 'Ignore' as const, undefined, undefined),
  })
  // minDomains is only valid with DoNotSchedule.
  .map((c) => (c.hard ? c : { ...c, minDomains: undefined }));

const podArb: fc.Arbitrary<PodGen> = fc.record({
  node: fc.nat(11),
  state: fc.oneof(
    { weight: 20, arbitrary: fc.constant('Running' as const) },
    { weight: 1, arbitrary: fc.constantFrom('Pending' as const, 'Unscheduled' as const, 'Succeeded' as const) },
    { weight: 1, arbitrary: fc.constantFrom('Terminating' as const, 'NotReady' as const) },
  ),
  age: fc.oneof(
    { weight: 14, arbitrary: fc.constant('old' as const) },
    { weight: 1, arbitrary: fc.constantFrom('ten-minutes' as const, 'young' as const) },
  ),
  annotation: fc.oneof(
    { weight: 14, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Annotation>(
        'never',
        'karpenter',
        'safe-to-evict',
        'prefer-no-eviction',
        'always',
        'descheduler-evict',
        'safe-to-evict-true',
      ),
    },
  ),
  volume: fc.oneof(
    { weight: 14, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.constantFrom('emptyDir' as const, 'hostPath' as const, 'pvc' as const) },
  ),
  mirror: fc.oneof({ weight: 30, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  altHash: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});

const priorityArb: fc.Arbitrary<PriorityGen> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('value' as const),
      value: fc.constantFrom(-10, 0, 100, 999, 1000, 5000, 1_000_000, 2_000_000_000, 2_000_001_000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('class' as const),
      name: fc.constantFrom('low', 'mid', 'high', 'system-cluster-critical', 'system-node-critical'),
    }),
  },
);

const workloadArb: fc.Arbitrary<WorkloadGen> = fc.record({
  ns: fc.nat(2),
  kind: fc.oneof(
    { weight: 8, arbitrary: fc.constant<WorkloadKind>('Deployment') },
    { weight: 2, arbitrary: fc.constantFrom<WorkloadKind>('StatefulSet', 'ReplicaSet', 'Bare') },
    { weight: 1, arbitrary: fc.constantFrom<WorkloadKind>('Job', 'DaemonSet') },
  ),
  tier: fc.constantFrom('web' as const, 'api' as const),
  constraints: fc.oneof(
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 4, arbitrary: fc.array(constraintArb, { minLength: 1, maxLength: 2 }) },
  ),
  nodeAffinity: fc.oneof(
    { weight: 6, arbitrary: fc.constant('none' as const) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('ssd' as const, 'not-hdd' as const, 'selector-ssd' as const, 'zone-a-or-b' as const),
    },
  ),
  tolerations: fc.oneof(
    { weight: 4, arbitrary: fc.constant([]) },
    {
      weight: 1,
      arbitrary: fc.uniqueArray(
        fc.constantFrom<Toleration>('dedicated', 'dedicated-infra-noschedule', 'all', 'unschedulable', 'maintenance'),
        { maxLength: 2 },
      ),
    },
  ),
  anti: fc.oneof(
    { weight: 5, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.record({
        key: fc.constantFrom('zone' as const, 'hostname' as const),
        target: fc.constantFrom('self' as const, 'tier' as const, 'tier-all-namespaces' as const, 'other' as const),
      }),
    },
  ),
  affinity: fc.oneof(
    { weight: 8, arbitrary: fc.constant(null) },
    {
      weight: 1,
      arbitrary: fc.record({
        key: fc.constantFrom('zone' as const, 'hostname' as const),
        target: fc.constantFrom('self' as const, 'tier' as const, 'other' as const),
      }),
    },
  ),
  priority: priorityArb,
  qos: fc.constantFrom('BestEffort' as const, 'Burstable' as const, 'Guaranteed' as const),
  cpu: fc.constantFrom(100, 250, 500, 1000, 1500),
  pods: fc.array(podArb, { minLength: 1, maxLength: 9 }),
});

const pdbArb: fc.Arbitrary<PdbGen> = fc.record({
  ns: fc.nat(2),
  selector: fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('app' as const), workload: fc.nat(5) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('tier' as const),
        tier: fc.constantFrom('web' as const, 'api' as const),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'all' as const }) },
  ),
  budget: fc.oneof(
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('status' as const), allowed: fc.integer({ min: 0, max: 2 }) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constantFrom('minAvailable' as const, 'maxUnavailable' as const),
        value: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('0%', '25%', '50%', '70%', '100%')),
      }),
    },
  ),
});

const clusterArb: fc.Arbitrary<ClusterGen> = fc.record({
  zoneCount: fc.integer({ min: 1, max: 4 }),
  nodes: fc.array(nodeArb, { minLength: 1, maxLength: 12 }),
  workloads: fc.array(workloadArb, { minLength: 1, maxLength: 5 }),
  pdbs: fc.array(pdbArb, { maxLength: 3 }),
  globalDefaultClass: fc.boolean(),
  canaries: fc.boolean(),
});

// Limits 0..5 (0 rarely: it blocks everything at its scope), sometimes large.
const limitArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 10, arbitrary: fc.integer({ min: 1, max: 5 }) },
  { weight: 3, arbitrary: fc.constant(50) },
);

const policyArb: fc.Arbitrary<PolicyGen> = fc
  .record({
    include: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.subarray<string>([...NAMESPACES], { minLength: 1 }) },
    ),
    exclude: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.subarray<string>([...NAMESPACES, 'kube-system']) },
    ),
    podSelector: fc.oneof(
      { weight: 5, arbitrary: fc.constant('none' as const) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('empty' as const, 'tier-web' as const, 'not-batch' as const, 'no-canary' as const),
      },
    ),
    includeSoftConstraints: fc.boolean(),
    spreadEnabled: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    defaultZoneConstraint: fc.oneof(
      { weight: 8, arbitrary: fc.constant(false) },
      { weight: 1, arbitrary: fc.constant(true) },
    ),
    includePreferNoSchedule: fc.boolean(),
    excludedTaints: fc.oneof(
      { weight: 3, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.subarray(['dedicated=infra', 'maintenance']) },
    ),
    preferredNodeAffinity: fc.boolean(),
    podAffinity: fc.boolean(),
    threshold: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      {
        weight: 3,
        arbitrary: fc.constantFrom<PolicyGen['threshold']>(
          { value: 1000 },
          { value: 5000 },
          { className: 'mid' },
          { className: 'high' },
          { className: 'system-cluster-critical' },
        ),
      },
      { weight: 1, arbitrary: fc.constantFrom<PolicyGen['threshold']>({ value: 0 }, { value: 100 }) },
    ),
    maxPerCycle: limitArb,
    maxPerNode: limitArb,
    maxPerNamespace: limitArb,
    maxPerWorkload: limitArb,
    minPodAge: fc.constantFrom('0s' as const, '5m' as const, '1h' as const, undefined),
    evictLocalStoragePods: fc.constantFrom(true, false, undefined),
    evictBarePods: fc.constantFrom(true, false, undefined),
    evictPodsWithPVC: fc.constantFrom(true, false, undefined),
    nodeFit: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.boolean() }),
  })
  // include and exclude must not share a namespace (a CEL rule of the CRD).
  .map((p) => ({ ...p, exclude: p.exclude?.filter((n) => !(p.include ?? []).includes(n)) }));

const anyScenarioArb: fc.Arbitrary<Scenario> = fc.record({
  cluster: clusterArb,
  policy: policyArb,
  held: fc.oneof(
    { weight: 4, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: fc.array(fc.nat(4), { maxLength: 2 }) },
  ),
});

/**
 * The same clusters with the pod-level protections mostly stripped (Running, old, no annotation, no local
 * volume, not a mirror pod) and no priority threshold in the way, so that plans actually evict and the properties
 * about where evictions go (skew, limits, targets) get exercised, not only the refusals.
 */
function permissive(s: Scenario): Scenario {
  const pod = (p: PodGen): PodGen => ({
    ...p,
    state: 'Running',
    age: 'old',
    annotation: null,
    volume: null,
    mirror: false,
  });
  return {
    ...s,
    cluster: {
      ...s.cluster,
      workloads: s.cluster.workloads.map((w) => ({
        ...w,
        kind: w.kind === 'DaemonSet' || w.kind === 'Bare' ? 'Deployment' : w.kind,
        priority: w.priority.kind === 'value' ? { kind: 'value', value: Math.min(w.priority.value, 999) } : w.priority,
        pods: w.pods.map(pod),
      })),
    },
    policy: { ...s.policy, threshold: undefined, podSelector: 'none', include: undefined, exclude: undefined },
  };
}

export const scenarioArb: fc.Arbitrary<Scenario> = fc.oneof(anyScenarioArb, anyScenarioArb.map(permissive));

// ---- materialising: builders, recorded as code -------------------------------------------------------------------

function literal(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value.replace(/'/g, "\\'")}'`;
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    const key = (k: string): string => (/^[A-Za-z_$][\w$]*$/.test(k) ? k : literal(k));
    return `{ ${entries.map(([k, v]) => `${key(k)}: ${literal(v)}`).join(', ')} }`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/** Wraps a builder so that every method call is also written, as builder code, into `sink[line]`. */
function recorded<T extends object>(target: T, head: string, sink: string[]): T {
  const line = sink.push(head) - 1;
  const proxy: T = new Proxy(target, {
    get(t, prop) {
      const value: unknown = Reflect.get(t, prop, t);
      if (typeof value !== 'function' || prop === 'obj') return value;
      return (...args: unknown[]) => {
        sink[line] += `.${String(prop)}(${args.map(literal).join(', ')})`;
        (value as (...a: unknown[]) => unknown).apply(t, args);
        return proxy;
      };
    },
  });
  return proxy;
}

/** What the oracles know about a generated pod (from the generated data, not from the converter). */
export interface PodFacts {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly nodeName: string | undefined;
  readonly gen: PodGen;
  readonly workload: WorkloadGen;
  readonly workloadIndex: number;
  /** `namespace/Kind/name`, the workload as DESIGN.md and the limits see it. */
  readonly workloadKey: string;
  readonly priority: number;
  readonly cpuMilli: number;
  readonly memoryBytes: number;
  readonly hasController: boolean;
  readonly daemonSet: boolean;
  readonly mirror: boolean;
  readonly createdAt: number;
}

export interface NodeFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly gen: NodeGen;
  readonly cpuMilli: number;
  readonly memoryBytes: number;
  readonly pods: number;
}

export interface PdbFacts {
  readonly namespace: string;
  readonly name: string;
  readonly selector: Json;
  readonly gen: PdbGen;
}

export interface Built {
  readonly scenario: Scenario;
  readonly policyGen: PolicyGen;
  readonly objects: Json[];
  readonly snapshot: ClusterSnapshot;
  readonly policy: Policy;
  readonly rawPolicy: Json;
  readonly held: ReadonlyMap<string, string>;
  readonly pods: ReadonlyMap<string, PodFacts>;
  readonly nodes: ReadonlyMap<string, NodeFacts>;
  readonly pdbs: readonly PdbFacts[];
  readonly priorityClasses: ReadonlyMap<string, number>;
  /** The whole scenario as builder code, for failure messages. */
  readonly code: string;
}

const GI = 1024 ** 3;
const MINUTE = 60_000;

function topologyKey(key: 'zone' | 'hostname'): string {
  return key === 'zone' ? ZONE : HOSTNAME;
}

export function workloadName(i: number): string {
  return `w${i}`;
}

function tolerationsOf(t: Toleration): Json {
  switch (t) {
    case 'dedicated':
      return { key: 'dedicated', operator: 'Exists' };
    case 'dedicated-infra-noschedule':
      return { key: 'dedicated', operator: 'Equal', value: 'infra', effect: 'NoSchedule' };
    case 'all':
      return { operator: 'Exists' };
    case 'unschedulable':
      return { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' };
    case 'maintenance':
      return { key: 'maintenance', operator: 'Exists', effect: 'NoExecute' };
  }
}

export function rawPolicyOf(p: PolicyGen): Json {
  const eviction: Json = {
    maxPerCycle: p.maxPerCycle,
    maxPerNode: p.maxPerNode,
    maxPerNamespace: p.maxPerNamespace,
    maxPerWorkload: p.maxPerWorkload,
  };
  if (p.threshold !== undefined) eviction['priorityThreshold'] = p.threshold;
  if (p.minPodAge !== undefined) eviction['minPodAge'] = p.minPodAge;
  if (p.evictLocalStoragePods !== undefined) eviction['evictLocalStoragePods'] = p.evictLocalStoragePods;
  if (p.evictBarePods !== undefined) eviction['evictBarePods'] = p.evictBarePods;
  if (p.evictPodsWithPVC !== undefined) eviction['evictPodsWithPVC'] = p.evictPodsWithPVC;
  if (p.nodeFit !== undefined) eviction['nodeFit'] = p.nodeFit;
  const spec: Json = {
    strategies: {
      topologySpread: {
        enabled: p.spreadEnabled,
        includeSoftConstraints: p.includeSoftConstraints,
        ...(p.defaultZoneConstraint
          ? { defaultConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: 'DoNotSchedule' }] }
          : {}),
      },
      podAntiAffinity: {},
      podAffinity: { enabled: p.podAffinity },
      nodeAffinity: { preferred: p.preferredNodeAffinity },
      nodeTaints: { includePreferNoSchedule: p.includePreferNoSchedule, excludedTaints: [...p.excludedTaints] },
    },
    eviction,
  };
  if (p.include !== undefined || p.exclude !== undefined) {
    const ns: Json = {};
    if (p.include !== undefined) ns['include'] = [...p.include];
    if (p.exclude !== undefined) ns['exclude'] = [...p.exclude];
    spec['namespaces'] = ns;
  }
  switch (p.podSelector) {
    case 'none':
      break;
    case 'empty':
      spec['podSelector'] = {};
      break;
    case 'tier-web':
      spec['podSelector'] = { matchLabels: { tier: 'web' } };
      break;
    case 'not-batch':
      spec['podSelector'] = { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['batch'] }] };
      break;
    case 'no-canary':
      spec['podSelector'] = { matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' }] };
      break;
  }
  return makePolicy('prop', spec);
}

/** The independent priority oracle: spec.priority, else the class's value, else the globalDefault's, else 0. */
function resolvePriority(
  p: PriorityGen,
  classes: ReadonlyMap<string, number>,
  globalDefault: number | undefined,
): number {
  if (p.kind === 'value') return p.value;
  if (p.kind === 'class') {
    const v = classes.get(p.name);
    if (v !== undefined) return v;
  }
  return globalDefault ?? 0;
}

export function build(s: Scenario): Built {
  const c = s.cluster;
  const code: string[] = [];
  const objects: Json[] = [];
  const add = (b: { obj(): Json }): void => void objects.push(b.obj());

  // Priority classes (always present, so a className threshold resolves); one globalDefault optionally.
  const priorityClasses = new Map<string, number>([
    ['system-cluster-critical', 2_000_000_000],
    ['system-node-critical', 2_000_001_000],
  ]);
  for (const [name, value] of Object.entries(CLASSES)) {
    priorityClasses.set(name, value);
    objects.push(makePriorityClass(name, value));
    code.push(`makePriorityClass('${name}', ${value})`);
  }
  const globalDefault = c.globalDefaultClass ? 10 : undefined;
  if (globalDefault !== undefined) {
    priorityClasses.set('default-priority', globalDefault);
    objects.push(makePriorityClass('default-priority', globalDefault, true));
    code.push(`makePriorityClass('default-priority', ${globalDefault}, true)`);
  }
  for (const ns of NAMESPACES) {
    objects.push(makeNamespace(ns, { team: ns }));
    code.push(`makeNamespace('${ns}', { team: '${ns}' })`);
  }

  const nodes = new Map<string, NodeFacts>();
  const nodeNames: string[] = [];
  c.nodes.forEach((n, i) => {
    const name = `n${i}`;
    nodeNames.push(name);
    const b = recorded(makeNode(name), `makeNode('${name}')`, code);
    const labels: Record<string, string> = { [HOSTNAME]: name };
    if (n.zone !== null) {
      const zone = ZONES[n.zone % c.zoneCount]!;
      b.zone(zone);
      labels[ZONE] = zone;
    }
    if (n.disk !== null) {
      b.label('disk', n.disk);
      labels['disk'] = n.disk;
    }
    for (const t of n.taints) b.taint(t.key, t.value, t.effect);
    if (n.cordoned) b.unschedulable();
    if (n.notReady) b.notReady();
    if (n.podCap !== null) b.allocatable({ cpu: '2', memory: '4Gi', pods: String(n.podCap) });
    add(b);
    nodes.set(name, {
      name,
      labels,
      gen: n,
      cpuMilli: n.podCap !== null ? 2000 : 16000,
      memoryBytes: n.podCap !== null ? 4 * GI : 64 * GI,
      pods: n.podCap ?? 110,
    });
  });

  const pods = new Map<string, PodFacts>();
  c.workloads.forEach((w, wi) => {
    const wname = workloadName(wi);
    const ns = NAMESPACES[w.ns]!;
    const selectorOf = (sel: ConstraintGen['selector'] | 'self' | 'tier' | 'other'): Json => {
      if (sel === 'tier') return { matchLabels: { tier: w.tier } };
      if (sel === 'other') return { matchLabels: { app: workloadName((wi + 1) % c.workloads.length) } };
      if (sel === 'appExpr') return { matchExpressions: [{ key: 'app', operator: 'In', values: [wname] }] };
      return { matchLabels: { app: wname } };
    };
    w.pods.forEach((p, pi) => {
      const name = `${wname}-${pi}`;
      const b = recorded(makePod(name, ns), `makePod('${name}', '${ns}')`, code);
      const labels: Record<string, string> = { app: wname, tier: w.tier };
      b.label('app', wname).label('tier', w.tier);
      if (c.canaries && wi % 2 === 1 && pi % 3 === 0) {
        b.label('canary', 'true');
        labels['canary'] = 'true';
      }
      const node = p.state === 'Unscheduled' ? undefined : nodeNames[p.node % nodeNames.length]!;
      if (node !== undefined) b.node(node);
      let workloadKey: string;
      switch (w.kind) {
        case 'Deployment': {
          const hash = HASHES[p.altHash ? 1 : 0];
          b.deployment(wname, hash);
          labels['pod-template-hash'] = hash;
          workloadKey = `${ns}/Deployment/${wname}`;
          break;
        }
        case 'StatefulSet':
          b.owner('StatefulSet', wname).label('statefulset.kubernetes.io/pod-name', name);
          labels['statefulset.kubernetes.io/pod-name'] = name;
          workloadKey = `${ns}/StatefulSet/${wname}`;
          break;
        case 'ReplicaSet':
          b.owner('ReplicaSet', wname);
          workloadKey = `${ns}/ReplicaSet/${wname}`;
          break;
        case 'Job':
          b.owner('Job', wname);
          workloadKey = `${ns}/Job/${wname}`;
          break;
        case 'DaemonSet':
          b.daemonSet(wname);
          workloadKey = `${ns}/DaemonSet/${wname}`;
          break;
        case 'Bare':
          workloadKey = `${ns}/Pod/${name}`;
          break;
      }
      const mirror = p.mirror && node !== undefined;
      if (mirror) {
        b.mirror();
        workloadKey = `${ns}/Node/${node}`;
      }
      for (const cg of w.constraints) {
        b.spread({
          topologyKey: topologyKey(cg.key),
          maxSkew: cg.maxSkew,
          whenUnsatisfiable: cg.hard ? 'DoNotSchedule' : 'ScheduleAnyway',
          labelSelector: selectorOf(cg.selector),
          ...(cg.minDomains !== undefined ? { minDomains: cg.minDomains } : {}),
          ...(cg.matchLabelKeys ? { matchLabelKeys: ['pod-template-hash'] } : {}),
          ...(cg.nodeAffinityPolicy !== undefined ? { nodeAffinityPolicy: cg.nodeAffinityPolicy } : {}),
          ...(cg.nodeTaintsPolicy !== undefined ? { nodeTaintsPolicy: cg.nodeTaintsPolicy } : {}),
        });
      }
      switch (w.nodeAffinity) {
        case 'none':
          break;
        case 'ssd':
          b.nodeAffinityIn('disk', ['ssd']);
          break;
        case 'not-hdd':
          b.nodeAffinityTerms([{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['hdd'] }] }]);
          break;
        case 'selector-ssd':
          b.nodeSelector({ disk: 'ssd' });
          break;
        case 'zone-a-or-b':
          b.nodeAffinityTerms([
            { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a'] }] },
            { matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-b'] }] },
          ]);
          break;
      }
      for (const t of w.tolerations) b.toleration(tolerationsOf(t));
      if (w.anti?.target === 'tier-all-namespaces') {
        b.podAntiAffinity({
          topologyKey: topologyKey(w.anti.key),
          labelSelector: selectorOf('tier'),
          namespaceSelector: {},
        });
      } else if (w.anti) {
        b.podAntiAffinity({ topologyKey: topologyKey(w.anti.key), labelSelector: selectorOf(w.anti.target) });
      }
      if (w.affinity)
        b.podAffinity({ topologyKey: topologyKey(w.affinity.key), labelSelector: selectorOf(w.affinity.target) });
      if (w.priority.kind === 'value') b.priority(w.priority.value);
      if (w.priority.kind === 'class') b.priorityClass(w.priority.name);
      let cpuMilli = 0;
      let memoryBytes = 0;
      if (w.qos === 'Burstable') {
        b.requests({ cpu: `${w.cpu}m` });
        cpuMilli = w.cpu;
      } else if (w.qos === 'Guaranteed') {
        b.requests({ cpu: `${w.cpu}m`, memory: '256Mi' }).limits({ cpu: `${w.cpu}m`, memory: '256Mi' });
        cpuMilli = w.cpu;
        memoryBytes = 256 * 1024 * 1024;
      }
      switch (p.state) {
        case 'Running':
          break;
        case 'Pending':
        case 'Unscheduled':
          b.phase('Pending').notReady();
          break;
        case 'Succeeded':
          b.phase('Succeeded').notReady();
          break;
        case 'Terminating':
          b.terminating();
          break;
        case 'NotReady':
          b.notReady();
          break;
      }
      const createdAt =
        p.age === 'old' ? NOW - 60 * MINUTE : p.age === 'ten-minutes' ? NOW - 10 * MINUTE : NOW - 2 * MINUTE;
      if (p.age !== 'old') b.createdAt(createdAt);
      switch (p.annotation) {
        case null:
          break;
        case 'never':
          b.annotation('rebalancer.dev/evict', 'never');
          break;
        case 'always':
          b.annotation('rebalancer.dev/evict', 'always');
          break;
        case 'karpenter':
          b.annotation('karpenter.sh/do-not-disrupt', 'true');
          break;
        case 'safe-to-evict':
          b.annotation('cluster-autoscaler.kubernetes.io/safe-to-evict', 'false');
          break;
        case 'safe-to-evict-true':
          b.annotation('cluster-autoscaler.kubernetes.io/safe-to-evict', 'true');
          break;
        case 'prefer-no-eviction':
          b.annotation('descheduler.alpha.kubernetes.io/prefer-no-eviction', '');
          break;
        case 'descheduler-evict':
          b.annotation('descheduler.alpha.kubernetes.io/evict', 'true');
          break;
      }
      if (p.volume === 'emptyDir') b.emptyDir();
      if (p.volume === 'hostPath') b.hostPath();
      if (p.volume === 'pvc') b.pvc(`data-${name}`);
      add(b);
      pods.set(`${ns}/${name}`, {
        namespace: ns,
        name,
        labels,
        nodeName: node,
        gen: p,
        workload: w,
        workloadIndex: wi,
        workloadKey,
        priority: resolvePriority(w.priority, priorityClasses, globalDefault),
        cpuMilli,
        memoryBytes,
        hasController: w.kind !== 'Bare' || mirror,
        daemonSet: w.kind === 'DaemonSet' && !mirror,
        mirror,
        createdAt,
      });
    });
  });

  const pdbs: PdbFacts[] = [];
  c.pdbs.forEach((d, i) => {
    const ns = NAMESPACES[d.ns]!;
    const name = `pdb${i}`;
    const b = recorded(makePdb(name, ns), `makePdb('${name}', '${ns}')`, code);
    const selector: Json =
      d.selector.kind === 'app'
        ? { matchLabels: { app: workloadName(d.selector.workload % c.workloads.length) } }
        : d.selector.kind === 'tier'
          ? { matchLabels: { tier: d.selector.tier } }
          : {};
    b.selector(selector);
    if (d.budget.kind === 'status') b.minAvailable(1).allowed(d.budget.allowed);
    else if (d.budget.kind === 'minAvailable') b.minAvailable(d.budget.value);
    else b.maxUnavailable(d.budget.value);
    add(b);
    pdbs.push({ namespace: ns, name, selector, gen: d });
  });

  const rawPolicy = rawPolicyOf(s.policy);
  code.push(`makePolicy('prop', ${literal(rawPolicy['spec'])})`);
  const policy = parsePolicy(rawPolicy, { file: 'generated-policy' });

  const held = new Map<string, string>();
  for (const h of s.held) {
    const wi = h % c.workloads.length;
    const w = c.workloads[wi]!;
    const ns = NAMESPACES[w.ns]!;
    const kind = w.kind === 'Bare' ? 'Pod' : w.kind;
    const name = w.kind === 'Bare' ? `${workloadName(wi)}-0` : workloadName(wi);
    held.set(`${ns}/${kind}/${name}`, `held for the test (${kind}/${name})`);
  }

  const snapshot = buildSnapshot(objects);
  const text = [
    'buildSnapshot([',
    ...code.filter((l) => !l.startsWith('makePolicy')).map((l) => `  ${l},`),
    ']);',
    `// policy: ${code.find((l) => l.startsWith('makePolicy')) ?? ''}`,
    held.size > 0 ? `// heldWorkloads: ${literal([...held.keys()])}` : '',
  ].join('\n');
  return {
    scenario: s,
    policyGen: s.policy,
    objects,
    snapshot,
    policy,
    rawPolicy,
    held,
    pods,
    nodes,
    pdbs,
    priorityClasses,
    code: text,
  };
}

// ---- independent oracles -----------------------------------------------------------------------------------------

/** A raw metav1.LabelSelector against labels: matchLabels and matchExpressions ANDed; {} matches everything. */
export function rawSelectorMatches(selector: Json, labels: Readonly<Record<string, string>>): boolean {
  const ml = (selector['matchLabels'] ?? {}) as Record<string, string>;
  for (const [k, v] of Object.entries(ml)) if (labels[k] !== v) return false;
  const exprs = (selector['matchExpressions'] ?? []) as Array<{ key: string; operator: string; values?: string[] }>;
  for (const e of exprs) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    const ok =
      e.operator === 'In'
        ? has && (e.values ?? []).includes(value!)
        : e.operator === 'NotIn'
          ? !has || !(e.values ?? []).includes(value!)
          : e.operator === 'Exists'
            ? has
            : !has;
    if (!ok) return false;
  }
  return true;
}

/** Whether a PDB covers the pod: same namespace and its selector matches. */
export function pdbSelects(pdb: PdbFacts, pod: PodFacts): boolean {
  return pdb.namespace === pod.namespace && rawSelectorMatches(pdb.selector, pod.labels);
}

/** DESIGN.md: status.disruptionsAllowed when the PDB has a status, else computed from spec against matching pods. */
export function independentAllowance(pdb: PdbFacts, pods: Iterable<PodFacts>): number {
  const budget = pdb.gen.budget;
  if (budget.kind === 'status') return budget.allowed;
  let expected = 0;
  let healthy = 0;
  for (const p of pods) {
    if (!pdbSelects(pdb, p)) continue;
    if (p.gen.state === 'Terminating' || p.gen.state === 'Succeeded') continue;
    expected++;
    if (p.gen.state === 'Running') healthy++;
  }
  if (expected === 0) return 0;
  const scaled = (v: number | string): number =>
    typeof v === 'number' ? v : Math.ceil((Number(v.slice(0, -1)) * expected) / 100);
  const desired = budget.kind === 'minAvailable' ? scaled(budget.value) : Math.max(0, expected - scaled(budget.value));
  return Math.max(0, healthy - desired);
}

/** The numeric threshold: the value, or the class's value; default system-cluster-critical. */
export function independentThreshold(p: PolicyGen, classes: ReadonlyMap<string, number>): number {
  if (p.threshold === undefined) return 2_000_000_000;
  if ('value' in p.threshold) return p.threshold.value;
  return classes.get(p.threshold.className)!;
}

function minPodAgeMs(p: PolicyGen): number {
  return p.minPodAge === '0s' ? 0 : p.minPodAge === '1h' ? 60 * MINUTE : 5 * MINUTE;
}

function namespaceInScope(p: PolicyGen, ns: string): boolean {
  const include = p.include ?? [];
  const exclude = p.exclude ?? ['kube-system'];
  return !exclude.includes(ns) && (include.length === 0 || include.includes(ns));
}

function podSelectorMatches(p: PolicyGen, labels: Readonly<Record<string, string>>): boolean {
  switch (p.podSelector) {
    case 'none':
    case 'empty':
      return true;
    case 'tier-web':
      return labels['tier'] === 'web';
    case 'not-batch':
      return labels['tier'] !== 'batch';
    case 'no-canary':
      return !Object.hasOwn(labels, 'canary');
  }
}

/**
 * DESIGN.md "Never evicted unless a policy says otherwise", restated from the generated data: every reason the pod
 * must not be evicted (empty: evictable as far as protections go). PDBs and priority are checked separately.
 */
export function protections(pod: PodFacts, p: PolicyGen): string[] {
  const out: string[] = [];
  const a = pod.gen.annotation;
  const always = a === 'always' || a === 'descheduler-evict';
  if (pod.daemonSet) out.push('DaemonSet pod');
  if (pod.mirror) out.push('mirror pod');
  if (pod.gen.state === 'Terminating') out.push('terminating');
  if (pod.gen.state === 'Pending' || pod.gen.state === 'Unscheduled' || pod.gen.state === 'Succeeded')
    out.push('not Running');
  if (a === 'never' || a === 'karpenter' || a === 'safe-to-evict' || a === 'prefer-no-eviction')
    out.push(`opt-out annotation ${a}`);
  if (!namespaceInScope(p, pod.namespace)) out.push('namespace outside the policy');
  if (!podSelectorMatches(p, pod.labels)) out.push("outside the policy's podSelector");
  if (NOW - pod.createdAt < minPodAgeMs(p)) out.push('younger than minPodAge');
  if (!pod.hasController && p.evictBarePods !== true && !always) out.push('bare pod');
  const local = pod.gen.volume === 'emptyDir' || pod.gen.volume === 'hostPath';
  if (local && p.evictLocalStoragePods !== true && !always) out.push('local storage');
  if (pod.gen.volume === 'pvc' && p.evictPodsWithPVC === false) out.push('PVC');
  return out;
}

function tolerates(
  tolerations: readonly Toleration[],
  key: string,
  value: string | undefined,
  effect: Effect,
): boolean {
  return tolerations.some((t) => {
    const raw = tolerationsOf(t) as { key?: string; operator?: string; value?: string; effect?: string };
    if (raw.effect !== undefined && raw.effect !== effect) return false;
    if (raw.key !== undefined && raw.key !== key) return false;
    return raw.operator === 'Exists' || raw.value === value;
  });
}

/** Why the node would not admit a replacement of the pod at the node level (empty: admits). */
export function admissionProblems(pod: PodFacts, node: NodeFacts): string[] {
  const w = pod.workload;
  const out: string[] = [];
  const disk = node.labels['disk'];
  const zone = node.labels[ZONE];
  if (w.nodeAffinity === 'ssd' && disk !== 'ssd') out.push('node affinity disk In [ssd]');
  if (w.nodeAffinity === 'not-hdd' && disk === 'hdd') out.push('node affinity disk NotIn [hdd]');
  if (w.nodeAffinity === 'selector-ssd' && disk !== 'ssd') out.push('nodeSelector disk=ssd');
  if (w.nodeAffinity === 'zone-a-or-b' && zone !== 'zone-a' && zone !== 'zone-b') out.push('node affinity zone a or b');
  for (const t of node.gen.taints) {
    if (t.effect !== 'PreferNoSchedule' && !tolerates(w.tolerations, t.key, t.value, t.effect)) {
      out.push(`taint ${t.key}=${t.value ?? ''}:${t.effect}`);
    }
  }
  if (node.gen.cordoned && !tolerates(w.tolerations, 'node.kubernetes.io/unschedulable', undefined, 'NoSchedule')) {
    out.push('cordoned');
  }
  if (node.gen.notReady && !tolerates(w.tolerations, 'node.kubernetes.io/not-ready', undefined, 'NoSchedule')) {
    out.push('NotReady');
  }
  return out;
}
