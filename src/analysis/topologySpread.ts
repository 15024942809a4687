// Topology spread analysis with kube-scheduler's PodTopologySpread semantics (see eligibility.ts for domains).
// Pods that carry an identical constraint form a group; the group's domain counts include every counted pod of
// the namespace that matches the selector (whatever its owner), and skew = max − min over eligible domains,
// with the minimum taken as 0 when there are fewer eligible domains than minDomains.
import { DomainCounts } from '../model/domainCounts.js';
import { selectorFromLabels, selectorText } from '../model/labels.js';
import { isPodActive } from '../model/pods.js';
import { tolerationsText } from '../model/taints.js';
import type { Labels, PodInfo, SpreadConstraint, WhenUnsatisfiable } from '../model/types.js';
import type { DefaultConstraint } from '../strategies/topologySpread/policy.js';
import type { EligibilityCache } from './eligibility.js';
import { eligibilityKey, type EligibilityInput } from './eligibility.js';
import type { PodIndex } from './podIndex.js';
import type { NamespaceScope } from './scope.js';

export interface SpreadGroup extends EligibilityInput {
  readonly id: string;
  readonly namespace: string;
  /** Live pods that carry this constraint: their replacements are scheduled under it. */
  readonly members: readonly PodInfo[];
  /** node name → domain, eligible nodes only. */
  readonly domainsByNode: ReadonlyMap<string, string>;
  /** domain → number of matching counted pods (every eligible domain present, zeros included). */
  readonly counts: DomainCounts;
  /** Counted pods matching the selector on eligible nodes. */
  readonly matching: readonly PodInfo[];
  readonly min: number;
  readonly max: number;
  readonly skew: number;
  /** `Kind/name` of the members' workloads, sorted. */
  readonly workloads: readonly string[];
}

export function workloadName(pod: PodInfo): string {
  return `${pod.workload.kind}/${pod.workload.name}`;
}

// Labels that differ per pod of one workload. The scheduler builds default-constraint selectors from the owning
// Service/ReplicaSet/StatefulSet selectors, which never include these; a snapshot has no controllers, so the
// pod's labels without them stand in for the workload's selector.
const PER_INSTANCE_LABELS: ReadonlySet<string> = new Set([
  'statefulset.kubernetes.io/pod-name',
  'apps.kubernetes.io/pod-index',
  'controller-revision-hash',
  'pod-template-generation',
  // Copied from its node at binding by the PodTopologyLabels admission (beta, on since 1.35): per pod.
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
]);

// The scheduler derives default selectors only from ReplicationControllers, ReplicaSets and StatefulSets
// (and Services, which a snapshot lacks), so DaemonSet, Job and bare pods get no default constraints.
const DEFAULTED_OWNER_KINDS: ReadonlySet<string> = new Set(['ReplicaSet', 'StatefulSet', 'ReplicationController']);

const defaultSelectorCache = new WeakMap<Labels, SpreadConstraint['selector']>();

function workloadSelector(labels: Labels): SpreadConstraint['selector'] {
  let selector = defaultSelectorCache.get(labels);
  if (!selector) {
    const kept: Record<string, string> = {};
    for (const key of Object.keys(labels)) if (!PER_INSTANCE_LABELS.has(key)) kept[key] = labels[key]!;
    selector = selectorFromLabels(kept);
    defaultSelectorCache.set(labels, selector);
  }
  return selector;
}

/** The constraints the scheduler applies to a pod: its own, else the cluster defaults with the workload selector. */
export function effectiveConstraints(
  pod: PodInfo,
  defaults: readonly DefaultConstraint[],
): readonly SpreadConstraint[] {
  if (pod.spreadConstraints.length > 0) return pod.spreadConstraints;
  if (defaults.length === 0 || pod.owner === undefined || !DEFAULTED_OWNER_KINDS.has(pod.owner.kind)) return [];
  // Replicas share their (interned) labels object, so they share one constraint list too.
  let perLabels = defaultedCache.get(defaults);
  if (!perLabels) defaultedCache.set(defaults, (perLabels = new WeakMap()));
  let constraints = perLabels.get(pod.labels);
  if (!constraints) {
    const selector = workloadSelector(pod.labels);
    constraints =
      selector.kind === 'requirements' && selector.requirements.length === 0
        ? []
        : defaults.map((d) => ({ ...d, selector, fromDefaults: true }));
    perLabels.set(pod.labels, constraints);
  }
  return constraints;
}

const defaultedCache = new WeakMap<readonly DefaultConstraint[], WeakMap<Labels, readonly SpreadConstraint[]>>();

function siblingKeysOf(constraints: readonly SpreadConstraint[], kind: WhenUnsatisfiable): string[] {
  const keys = new Set<string>();
  for (const c of constraints) if (c.whenUnsatisfiable === kind) keys.add(c.topologyKey);
  return [...keys].sort();
}

function groupId(namespace: string, input: EligibilityInput): string {
  const c = input.constraint;
  return [
    namespace,
    c.maxSkew,
    c.whenUnsatisfiable,
    selectorText(c.selector),
    c.minDomains,
    c.nodeAffinityPolicy,
    c.nodeTaintsPolicy,
    eligibilityKey(input),
  ].join('\u0001');
}

interface GroupDraft extends EligibilityInput {
  readonly id: string;
  readonly namespace: string;
  readonly members: PodInfo[];
}

/**
 * The key under which a pod stands for its controller's pod template: same namespace, same controller, same
 * node affinity and tolerations. Undefined for bare pods.
 */
function templateKey(pod: PodInfo, cache: Map<string, TemplateKeyEntry>): string | undefined {
  if (pod.owner === undefined) return undefined;
  const owner = pod.owner.uid || `${pod.owner.kind}/${pod.owner.name}`;
  // Replicas share their interned affinity and tolerations objects: one string per controller, not per pod.
  const hit = cache.get(owner);
  if (
    hit &&
    hit.affinity === pod.requiredNodeAffinity &&
    hit.tolerations === pod.tolerations &&
    hit.namespace === pod.namespace
  ) {
    return hit.key;
  }
  const key = [pod.namespace, owner, pod.requiredNodeAffinity.text, tolerationsText(pod.tolerations)].join('\u0000');
  cache.set(owner, { affinity: pod.requiredNodeAffinity, tolerations: pod.tolerations, namespace: pod.namespace, key });
  return key;
}

interface TemplateKeyEntry {
  readonly affinity: PodInfo['requiredNodeAffinity'];
  readonly tolerations: PodInfo['tolerations'];
  readonly namespace: string;
  readonly key: string;
}

/** The group ids and inputs of one constraint list, for pods sharing its node affinity and tolerations. */
interface ConstraintSetEntry {
  readonly namespace: string;
  readonly affinity: PodInfo['requiredNodeAffinity'];
  readonly tolerations: PodInfo['tolerations'];
  readonly inputs: readonly EligibilityInput[];
  readonly ids: readonly string[];
}

function constraintSet(
  pod: PodInfo,
  constraints: readonly SpreadConstraint[],
  cache: WeakMap<readonly SpreadConstraint[], ConstraintSetEntry>,
): ConstraintSetEntry {
  const hit = cache.get(constraints);
  if (
    hit &&
    hit.namespace === pod.namespace &&
    hit.affinity === pod.requiredNodeAffinity &&
    hit.tolerations === pod.tolerations
  ) {
    return hit;
  }
  const hardKeys = siblingKeysOf(constraints, 'DoNotSchedule');
  const softKeys = siblingKeysOf(constraints, 'ScheduleAnyway');
  const inputs = constraints.map((constraint): EligibilityInput => ({
    constraint,
    siblingKeys: constraint.whenUnsatisfiable === 'DoNotSchedule' ? hardKeys : softKeys,
    nodeAffinity: pod.requiredNodeAffinity,
    tolerations: pod.tolerations,
  }));
  const entry: ConstraintSetEntry = {
    namespace: pod.namespace,
    affinity: pod.requiredNodeAffinity,
    tolerations: pod.tolerations,
    inputs,
    ids: inputs.map((input) => groupId(pod.namespace, input)),
  };
  cache.set(constraints, entry);
  return entry;
}

/** Groups live in-scope pods by identical constraint (the pod's own, or the policy defaults). */
export function collectGroups(
  pods: readonly PodInfo[],
  defaults: readonly DefaultConstraint[],
  inScope: NamespaceScope,
): GroupDraft[] {
  const drafts = new Map<string, GroupDraft>();
  // A replacement is created from the controller's template, not from the evicted pod. A pod without constraints
  // whose controller also owns otherwise-identical pods that carry constraints (a StatefulSet mid-rollout, or pods
  // written by hand) is taken to be a replica of that template: it joins those pods' groups, so its replacement is
  // scheduled under their constraints and it can be moved to rebalance them, as the descheduler moves every pod the
  // selector matches. Pods whose node affinity or tolerations differ are not assumed to share the template.
  const byTemplate = new Map<string, Set<GroupDraft>>();
  const caches: GroupingCaches = { sets: new WeakMap(), templates: new Map() };
  const unconstrained: PodInfo[] = [];
  for (const pod of pods) {
    if (!isPodActive(pod) || !inScope(pod.namespace)) continue;
    if (pod.spreadConstraints.length === 0) {
      unconstrained.push(pod);
      continue;
    }
    addPodToGroups(pod, pod.spreadConstraints, drafts, caches, byTemplate);
  }
  for (const pod of unconstrained) {
    const key = templateKey(pod, caches.templates);
    const siblings = key === undefined ? undefined : byTemplate.get(key);
    if (siblings !== undefined) {
      for (const draft of siblings) draft.members.push(pod);
      continue;
    }
    const constraints = effectiveConstraints(pod, defaults);
    if (constraints.length > 0) addPodToGroups(pod, constraints, drafts, caches, undefined);
  }
  return [...drafts.values()];
}

interface GroupingCaches {
  readonly sets: WeakMap<readonly SpreadConstraint[], ConstraintSetEntry>;
  readonly templates: Map<string, TemplateKeyEntry>;
}

function addPodToGroups(
  pod: PodInfo,
  constraints: readonly SpreadConstraint[],
  drafts: Map<string, GroupDraft>,
  caches: GroupingCaches,
  byTemplate: Map<string, Set<GroupDraft>> | undefined,
): void {
  const set = constraintSet(pod, constraints, caches.sets);
  const key = byTemplate === undefined ? undefined : templateKey(pod, caches.templates);
  for (let i = 0; i < set.ids.length; i++) {
    const id = set.ids[i]!;
    let draft = drafts.get(id);
    if (draft) draft.members.push(pod);
    else {
      const input = set.inputs[i]!;
      // Spelled out, not spread: one object shape for every draft, built a thousand times per analysis.
      draft = {
        constraint: input.constraint,
        siblingKeys: input.siblingKeys,
        nodeAffinity: input.nodeAffinity,
        tolerations: input.tolerations,
        id,
        namespace: pod.namespace,
        members: [pod],
      };
      drafts.set(id, draft);
    }
    if (key !== undefined) {
      let siblings = byTemplate!.get(key);
      if (!siblings) byTemplate!.set(key, (siblings = new Set()));
      siblings.add(draft);
    }
  }
}

/** The distinct `Kind/name` of the pods' workloads, sorted; replicas are usually adjacent, so few strings are built. */
function workloadNames(pods: readonly PodInfo[]): string[] {
  const names = new Set<string>();
  let last: PodInfo['workload'] | undefined;
  for (const pod of pods) {
    const w = pod.workload;
    if (last !== undefined && w.kind === last.kind && w.name === last.name) continue;
    last = w;
    names.add(workloadName(pod));
  }
  return [...names].sort();
}

/** Domain counts and skew for one group. */
export function measureGroup(draft: GroupDraft, index: PodIndex, eligibility: EligibilityCache): SpreadGroup {
  const domainsByNode = eligibility.domainsByNode(draft);
  const counts = new DomainCounts(eligibility.domainsOf(domainsByNode));
  const matching: PodInfo[] = [];
  for (const pod of index.select(draft.namespace, draft.constraint.selector)) {
    const domain = domainsByNode.get(pod.nodeName!);
    if (domain === undefined) continue;
    matching.push(pod);
    counts.add(domain, 1);
  }
  const { min, max } = skewBounds(counts, draft.constraint.minDomains);
  const workloads = workloadNames(draft.members);
  return {
    constraint: draft.constraint,
    siblingKeys: draft.siblingKeys,
    nodeAffinity: draft.nodeAffinity,
    tolerations: draft.tolerations,
    id: draft.id,
    namespace: draft.namespace,
    members: draft.members,
    domainsByNode,
    counts,
    matching,
    min,
    max,
    skew: max - min,
    workloads,
  };
}

/** The scheduler's global minimum (0 when eligible domains < minDomains) and the maximum. */
export function skewBounds(counts: ReadonlyMap<string, number>, minDomains: number): { min: number; max: number } {
  if (counts.size === 0) return { min: 0, max: 0 };
  if (counts instanceof DomainCounts) {
    let max = 0;
    let min = counts.zeros > 0 ? 0 : Infinity;
    counts.positive().forEach((n) => {
      if (n < min) min = n;
      if (n > max) max = n;
    });
    return { min: counts.size < minDomains ? 0 : min, max };
  }
  let min = Infinity;
  let max = 0;
  for (const n of counts.values()) {
    if (n < min) min = n;
    if (n > max) max = n;
  }
  if (counts.size < minDomains) min = 0;
  return { min, max };
}

export function analyzeTopologySpread(
  pods: readonly PodInfo[],
  defaults: readonly DefaultConstraint[],
  inScope: NamespaceScope,
  index: PodIndex,
  eligibility: EligibilityCache,
): SpreadGroup[] {
  return collectGroups(pods, defaults, inScope).map((draft) => measureGroup(draft, index, eligibility));
}
