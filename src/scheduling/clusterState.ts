// The cluster as the planner changes it: which pods are gone, where replacements landed, what each node has
// allocated, and the live counts that the scheduler's filters read (spread domains, pod (anti-)affinity).
// Every query can treat one pod as already evicted ("virtual removal"), so a candidate move is evaluated
// without copying the state, and commit() applies it incrementally.
import type { DomainCounts } from '../model/domainCounts.js';
import { labelValue, matchesSelector, selectorText } from '../model/labels.js';
import { requiredAffinityProblem, termSelectsNamespace } from '../model/podAffinity.js';
import { isCounted, isPodTerminal } from '../model/pods.js';
import { skewTuple, type SkewTuple } from '../model/spread.js';
import type { Labels, NodeInfo, PodAffinityTerm, PodInfo, Selector } from '../model/types.js';
import { NEWEST_KUBE_VERSION, type KubeVersion } from '../model/kubeVersion.js';
import {
  DEFAULT_PROFILE,
  DEFAULT_SCHEDULER,
  profilesOf,
  type SchedulerProfile,
  type SchedulerProfiles,
  type SchedulerSetting,
} from './profile.js';
import {
  bumpTerm,
  hasInterPodTerms,
  inCreationOrder,
  NO_WEIGHTED,
  ownNamespaceOnly,
  pushTo,
  termKey,
  type AntiAffinityCheck,
  type AntiTermGroup,
  type ScoreTermGroup,
  type TermCounts,
} from './state/interPodTerms.js';
import { addResources, emptyUsage, type NodeUsage } from './state/nodeUsage.js';
import { PendingSet, type PendingLanding } from './state/pendingSet.js';
import type { Analysis } from '../analysis/analyze.js';
import type { SpreadGroup } from '../analysis/topologySpread.js';

export type { AntiAffinityCheck, ScoreTermGroup, TermCounts } from './state/interPodTerms.js';
export type { NodeUsage } from './state/nodeUsage.js';

export interface GroupState {
  readonly group: SpreadGroup;
  /** The group's counts as the plan has changed them: the analysis' own until a move changes one. */
  readonly counts: DomainCounts;
}

/**
 * A group's counts, copied from the analysis only when a move first changes them: at 30,000 pods a hostname spread
 * per workload makes 3,000 groups of 1,000 domains, and copying them all for every plan of a paced run was most of
 * its garbage (issue 29).
 */
class GroupCounts implements GroupState {
  private own: DomainCounts | undefined;
  constructor(readonly group: SpreadGroup) {}
  get counts(): DomainCounts {
    return this.own ?? this.group.counts;
  }
  writable(): DomainCounts {
    return (this.own ??= this.group.counts.copy());
  }
}

/** The counts of a group of this state, to change (every GroupState a ClusterState hands out is a GroupCounts). */
function bumpCount(g: GroupState, domain: string, delta: number): void {
  (g as GroupCounts).writable().add(domain, delta);
}

/** A namespace's groups (in their order) by one label value each one's selector requires; `rest` require none. */
interface SelectorIndex {
  readonly groups: readonly GroupState[];
  readonly byPair: ReadonlyMap<string, readonly number[]>;
  readonly rest: readonly number[];
}

/** A pod of the simulation: an original pod or a replacement, and the node it is on. */
export interface Placed {
  readonly pod: PodInfo;
  readonly node: NodeInfo;
}

export class ClusterState {
  readonly nodes: ReadonlyMap<string, NodeInfo>;
  readonly nodeList: readonly NodeInfo[];
  /** node name → position in nodeList; per-node arrays below are indexed by it. */
  readonly nodeIndex = new Map<string, number>();
  /** The minor whose scheduler the placement follows (the snapshot's, else the newest supported). */
  readonly kubeVersion: KubeVersion;
  private readonly usage: NodeUsage[] = [];
  private readonly removed = new Set<string>();
  /** Where replacements run; original pods are where their nodeName says. */
  private readonly location = new Map<string, string>();
  private readonly groupStates = new Map<string, GroupState>();
  private readonly groupsByNamespace = new Map<string, GroupState[]>();
  /** Namespace → member uid → its groups, built for a namespace when a pod of it is first placed. */
  private readonly memberGroups = new Map<string, ReadonlyMap<string, readonly GroupState[]>>();
  private readonly selectingCache = new Map<string, WeakMap<Labels, GroupState[]>>();
  private readonly termCounts = new Map<string, TermCounts>();
  private readonly antiGroups = new Map<string, AntiTermGroup>();
  /**
   * The same groups indexed for antiAffinityAgainst(): those whose term selects its owner's namespace only, by that
   * namespace, and the others. A placement checks its namespace's few instead of every anti-affinity term kind of
   * the cluster (600 at 150,000 pods, several times per placement).
   */
  private readonly antiByNamespace = new Map<string, AntiTermGroup[]>();
  private readonly antiAcrossNamespaces: AntiTermGroup[] = [];
  private readonly affinityOwners: Placed[] = [];
  private readonly added: Placed[] = [];
  /** The same replacements by namespace: what a term of its owner's namespace can select (see addedSelectable). */
  private readonly addedByNamespace = new Map<string, Placed[]>();
  /** Bumped by every change, so results that depend on which pods are live can be memoised between changes. */
  private version = 0;
  private readonly allTermsMemo = new Map<string, { version: number; placed: Placed[] }>();

  private readonly scoreTerms = new Map<string, ScoreTermGroup>();
  /** Bound pods already terminating: not in the analysis' pod index, but InterPodAffinity still counts them. */
  private readonly terminatingPods: PodInfo[] = [];

  /** The scheduler configuration replacements are placed by: each pod's spec.schedulerName picks its profile. */
  readonly profiles: SchedulerProfiles;
  /**
   * The default-scheduler profile. Its hardPodAffinityWeight scores every pod (the parser refuses profiles that
   * differ in it).
   */
  readonly profile: SchedulerProfile;

  constructor(
    private readonly analysis: Analysis,
    setting: SchedulerSetting = DEFAULT_PROFILE,
  ) {
    this.profiles = profilesOf(setting);
    this.profile = this.profiles.byName.get(DEFAULT_SCHEDULER) ?? DEFAULT_PROFILE;
    this.kubeVersion = analysis.snapshot.kubeVersion ?? NEWEST_KUBE_VERSION;
    this.nodes = analysis.nodes;
    this.nodeList = analysis.snapshot.nodes;
    this.pending = new PendingSet(this.kubeVersion, this.nodeList.length);
    this.usageStamps = new Uint32Array(this.nodeList.length);
    this.nodeList.forEach((node, i) => {
      this.nodeIndex.set(node.name, i);
      this.usage.push(emptyUsage());
    });
    for (const pod of analysis.snapshot.pods) {
      // Every pod bound to a node holds its resources until it is gone, terminating ones included.
      if (pod.nodeName === undefined || isPodTerminal(pod)) continue;
      const i = this.nodeIndex.get(pod.nodeName);
      if (i !== undefined) addResources(this.usage[i]!, pod, 1, this.kubeVersion);
    }
    for (const group of analysis.groups) {
      const state: GroupState = new GroupCounts(group);
      this.groupStates.set(group.id, state);
      pushTo(this.groupsByNamespace, group.namespace, state);
    }
    for (const pod of analysis.snapshot.pods) {
      // Most pods have no inter-pod terms and are not terminating: nothing below is about them.
      if (!pod.terminating && !hasInterPodTerms(pod)) continue;
      if (!this.isPresent(pod)) continue;
      if (pod.terminating) this.terminatingPods.push(pod);
      const node = this.nodes.get(pod.nodeName!)!;
      for (const term of pod.podAntiAffinity) this.addAnti(term, pod, node, 1);
      if (pod.podAffinity.length > 0) this.affinityOwners.push({ pod, node });
      this.addScoreTerms(pod, node, 1);
    }
  }

  // ---- profiles ----------------------------------------------------------------------------------------------------

  /** The profile that places the pod's replacement; undefined when the configuration has none of its scheduler. */
  profileFor(pod: PodInfo): SchedulerProfile | undefined {
    return this.profiles.byName.get(pod.schedulerName ?? DEFAULT_SCHEDULER);
  }

  /** Why no landing of the pod's replacement can be predicted (another scheduler places it), or undefined. */
  unknownScheduler(pod: PodInfo): string | undefined {
    if (this.profileFor(pod) !== undefined) return undefined;
    return `scheduled by ${pod.schedulerName ?? DEFAULT_SCHEDULER}, which the scheduler configuration given to kube-rebalancer does not describe`;
  }

  // ---- pods ----------------------------------------------------------------------------------------------------

  /** Counted by the scheduler and not evicted in this plan. */
  isLive(pod: PodInfo): boolean {
    return !this.removed.has(pod.uid) && isCounted(pod) && this.nodes.has(pod.nodeName!);
  }

  /**
   * On its node as kube-scheduler's InterPodAffinity sees it: bound, not finished and not evicted in this plan —
   * terminating pods included (upstream does not skip them, unlike PodTopologySpread). The inter-pod counts of the
   * placement use it; a dependency on a terminating partner is not one (see affinityDependents).
   */
  isPresent(pod: PodInfo): boolean {
    return (
      !this.removed.has(pod.uid) && pod.nodeName !== undefined && !isPodTerminal(pod) && this.nodes.has(pod.nodeName)
    );
  }

  isRemoved(pod: PodInfo): boolean {
    return this.removed.has(pod.uid);
  }

  nodeOf(pod: PodInfo): NodeInfo | undefined {
    const name = this.location.get(pod.uid) ?? pod.nodeName;
    return name === undefined ? undefined : this.nodes.get(name);
  }

  usageOf(node: string): NodeUsage {
    return this.usage[this.nodeIndex.get(node)!]!;
  }

  usageAt(index: number): NodeUsage {
    return this.usage[index]!;
  }

  /** Bumped whenever the node's usage changes: what a per-node memo of its scores is valid for (pending.ts). */
  usageStamp(index: number): number {
    return this.usageStamps[index]!;
  }

  private readonly usageStamps: Uint32Array;

  private changeUsage(node: string, pod: PodInfo, sign: 1 | -1): void {
    const i = this.nodeIndex.get(node)!;
    addResources(this.usage[i]!, pod, sign, this.kubeVersion);
    this.usageStamps[i]!++;
  }

  /** The group's domain of every node, aligned with nodeList (undefined: not an eligible domain). */
  nodeDomains(g: GroupState): readonly (string | undefined)[] {
    // Keyed by the domain map, which the analysis shares between the groups of one eligibility (most of them): one
    // array per kind of group rather than one per group, and no key string built per placement.
    const byNode = g.group.domainsByNode;
    let domains = this.domainArrays.get(byNode);
    if (domains === undefined) {
      domains = this.nodeList.map((n) => byNode.get(n.name));
      this.domainArrays.set(byNode, domains);
    }
    return domains;
  }

  private readonly domainArrays = new WeakMap<ReadonlyMap<string, string>, readonly (string | undefined)[]>();

  replacements(): readonly Placed[] {
    return this.added;
  }

  /** Replacements on their way whose landing is not known (pending.ts): sent and not yet bound, or planned earlier. */
  readonly pending: PendingSet;

  /** Adds a replacement on its way; withdrawn in the reverse order (a plan's transaction takes its moves back). */
  addPending(landing: PendingLanding): void {
    this.version++;
    this.pending.add(landing);
  }

  withdrawPending(pod: PodInfo): void {
    this.version++;
    this.pending.withdraw(pod);
  }

  /** Every pod of the snapshot as loaded, evicted ones included (what the plan changed is in the state). */
  snapshotPods(): readonly PodInfo[] {
    return this.analysis.snapshot.pods;
  }

  private readonly memos = new Map<string, unknown>();

  /** Caches values that depend only on pod specs and nodes, which a plan never changes. */
  memo<T>(key: string, compute: () => T): T {
    if (this.memos.has(key)) return this.memos.get(key) as T;
    const value = compute();
    this.memos.set(key, value);
    return value;
  }

  // ---- spread groups --------------------------------------------------------------------------------------------

  groups(): IterableIterator<GroupState> {
    return this.groupStates.values();
  }

  group(id: string): GroupState | undefined {
    return this.groupStates.get(id);
  }

  /** The groups whose constraint the pod carries (its replacement is scheduled under them). */
  groupsOfMember(pod: PodInfo): readonly GroupState[] {
    let members = this.memberGroups.get(pod.namespace);
    if (members === undefined) {
      // Per namespace and on demand: a cycle places replacements in a few namespaces, and indexing every pod of the
      // cluster up front cost more than all of them (150,000 uids). A group's members are all of its namespace.
      const built = new Map<string, readonly GroupState[]>();
      for (const state of this.groupsByNamespace.get(pod.namespace) ?? []) {
        // Most pods are members of one group: they share its one-element list rather than an array each.
        const alone: readonly GroupState[] = [state];
        for (const member of state.group.members) {
          const list = built.get(member.uid);
          built.set(member.uid, list === undefined ? alone : [...list, state]);
        }
      }
      this.memberGroups.set(pod.namespace, built);
      members = built;
    }
    return members.get(pod.uid) ?? [];
  }

  /** The groups that count a pod with these labels in this namespace. */
  groupsSelecting(namespace: string, labels: Labels): readonly GroupState[] {
    let perNs = this.selectingCache.get(namespace);
    if (!perNs) {
      perNs = new WeakMap();
      this.selectingCache.set(namespace, perNs);
    }
    let list = perNs.get(labels);
    if (!list) {
      const index = this.selectorIndex(namespace);
      // Only groups that may match are tested: those requiring one of these labels' values, and the rest. At 30,000
      // pods that is a handful of a namespace's 300 groups, for each of the 3,000 label sets a plan looks up.
      const candidates = new Set<number>(index.rest);
      for (const key in labels) for (const i of index.byPair.get(`${key}\u0000${labels[key]}`) ?? []) candidates.add(i);
      const groups = index.groups;
      list = [...candidates]
        .sort((a, b) => a - b)
        .map((i) => groups[i]!)
        .filter((g) => matchesSelector(g.group.constraint.selector, labels));
      perNs.set(labels, list);
    }
    return list;
  }

  private readonly selectorIndexes = new Map<string, SelectorIndex>();

  /** A namespace's groups by a label value their selector requires (`key=value` or `key in (value)`). */
  private selectorIndex(namespace: string): SelectorIndex {
    let index = this.selectorIndexes.get(namespace);
    if (index === undefined) {
      const groups = this.groupsByNamespace.get(namespace) ?? [];
      const byPair = new Map<string, number[]>();
      const rest: number[] = [];
      groups.forEach((g, i) => {
        const selector = g.group.constraint.selector;
        if (selector.kind === 'nothing') return;
        const required = selector.requirements.find((r) => r.operator === 'In' && r.values.length === 1);
        if (required === undefined) rest.push(i);
        else pushTo(byPair, `${required.key}\u0000${required.values[0]}`, i);
      });
      this.selectorIndexes.set(namespace, (index = { groups, byPair, rest }));
    }
    return index;
  }

  /** The group's skew tuple after moving `pod` from `from` to `to`, without copying the counts. */
  tupleAfter(g: GroupState, pod: PodInfo, from: NodeInfo | undefined, to: NodeInfo | undefined): SkewTuple {
    const selected = matchesSelector(g.group.constraint.selector, pod.labels);
    const fromDomain = selected && from ? g.group.domainsByNode.get(from.name) : undefined;
    const toDomain = selected && to ? g.group.domainsByNode.get(to.name) : undefined;
    if (fromDomain === toDomain) return skewTuple(g.counts, g.group.constraint.minDomains);
    return skewTuple(g.counts, g.group.constraint.minDomains, fromDomain, toDomain);
  }

  // ---- inter-pod affinity -----------------------------------------------------------------------------------------

  /** Live pods matching a term, per domain of its topology key (lazily built, then maintained by commit()). */
  matchCounts(term: PodAffinityTerm, owner: PodInfo): TermCounts {
    const key = termKey(term, owner);
    let tc = this.termCounts.get(key);
    if (!tc) {
      tc = { term, owner, perDomain: new Map(), total: 0 };
      const ns = this.analysis.namespaceLabels;
      for (const namespace of this.analysis.index.namespaceNames()) {
        if (!termSelectsNamespace(term, owner, namespace, ns)) continue;
        for (const pod of this.analysis.index.select(namespace, term.selector)) {
          if (this.isPresent(pod)) bumpTerm(tc, this.nodeOf(pod)!, 1);
        }
      }
      for (const pod of this.terminatingPods) {
        if (this.isPresent(pod) && this.termMatches(term, owner, pod)) bumpTerm(tc, this.nodeOf(pod)!, 1);
      }
      for (const r of this.addedSelectable(term, owner))
        if (this.termMatches(term, owner, r.pod)) bumpTerm(tc, r.node, 1);
      this.termCounts.set(key, tc);
    }
    return tc;
  }

  /**
   * The replacements a term may select: those of its owner's namespace when it selects only there, else all. Exact,
   * and it keeps their order: building a term's counts no longer scans every replacement of the plan (thousands).
   */
  private addedSelectable(term: PodAffinityTerm, owner: PodInfo): readonly Placed[] {
    return ownNamespaceOnly(term) ? (this.addedByNamespace.get(owner.namespace) ?? []) : this.added;
  }

  termMatches(term: PodAffinityTerm, owner: PodInfo, pod: PodInfo): boolean {
    return (
      termSelectsNamespace(term, owner, pod.namespace, this.analysis.namespaceLabels) &&
      matchesSelector(term.selector, pod.labels)
    );
  }

  /**
   * The existing anti-affinity term kinds that select `pod`, with the evicted pod's own terms taken out of
   * the counts. Computed once per placement, then checked against each candidate node.
   */
  antiAffinityAgainst(pod: PodInfo, evicted: Placed | undefined): AntiAffinityCheck[] {
    const out: AntiAffinityCheck[] = [];
    for (const g of inCreationOrder(this.antiByNamespace.get(pod.namespace) ?? [], this.antiAcrossNamespaces)) {
      if (!this.termMatches(g.term, g.owner, pod)) continue;
      let exceptDomain: string | undefined;
      if (evicted && evicted.pod.podAntiAffinity.some((t) => termKey(t, evicted.pod) === g.key)) {
        exceptDomain = labelValue(evicted.node.labels, g.term.topologyKey);
      }
      out.push({ term: g.term, perDomain: g.perDomain, exceptDomain });
    }
    return out;
  }

  /**
   * Live pods (originals not evicted, and replacements) that match every one of `owner`'s terms, with their nodes:
   * the pods kube-scheduler counts towards required pod affinity (an existing pod counts only if it matches all
   * the terms). `owner` itself is included when it is live and matches; callers leave it out as they need.
   */
  podsMatchingAll(terms: readonly PodAffinityTerm[], owner: PodInfo): readonly Placed[] {
    const first = terms[0];
    if (first === undefined) return [];
    // Replicas share their terms: one scan per term set and namespace until the state changes.
    const key = terms.map((t) => termKey(t, owner)).join('\u0001');
    const memo = this.allTermsMemo.get(key);
    if (memo !== undefined && memo.version === this.version) return memo.placed;
    const out: Placed[] = [];
    const matchesAll = (pod: PodInfo): boolean => terms.every((t) => this.termMatches(t, owner, pod));
    for (const namespace of this.analysis.index.namespaceNames()) {
      if (!termSelectsNamespace(first, owner, namespace, this.analysis.namespaceLabels)) continue;
      for (const pod of this.analysis.index.select(namespace, first.selector)) {
        if (this.isPresent(pod) && matchesAll(pod)) out.push({ pod, node: this.nodeOf(pod)! });
      }
    }
    for (const pod of this.terminatingPods) if (matchesAll(pod)) out.push({ pod, node: this.nodeOf(pod)! });
    for (const r of this.addedSelectable(first, owner)) if (matchesAll(r.pod)) out.push(r);
    this.allTermsMemo.set(key, { version: this.version, placed: out });
    return out;
  }

  /**
   * Pods whose required pod affinity holds now and would no longer hold without `pod` (the scheduler's check,
   * see requiredAffinityProblem): evicting `pod` would strand them. An owner is never its own partner: when it
   * matches its own terms, it is left out of the pods that satisfy it, as in the violation analysis.
   */
  affinityDependents(pod: PodInfo, _node: NodeInfo): PodInfo[] {
    const out: PodInfo[] = [];
    for (const owner of this.affinityOwners) {
      // A terminating owner is leaving anyway, and a terminating partner is no partner to depend on.
      if (owner.pod === pod || owner.pod.terminating) continue;
      // An evicted original's entry is stale; its replacement (same uid) has its own entry at the new location.
      if (this.removed.has(owner.pod.uid) && this.location.get(owner.pod.uid) !== owner.node.name) continue;
      const terms = owner.pod.podAffinity;
      if (!terms.every((t) => this.termMatches(t, owner.pod, pod))) continue;
      const others = this.podsMatchingAll(terms, owner.pod).filter((o) => o.pod !== owner.pod && !o.pod.terminating);
      const self = terms.every((t) => this.termMatches(t, owner.pod, owner.pod));
      if (requiredAffinityProblem(terms, owner.node, others, self) !== undefined) continue;
      const without = others.filter((o) => o.pod !== pod);
      if (requiredAffinityProblem(terms, owner.node, without, self) !== undefined) out.push(owner.pod);
    }
    return out;
  }

  private addAnti(term: PodAffinityTerm, owner: PodInfo, node: NodeInfo, delta: number): void {
    const domain = labelValue(node.labels, term.topologyKey);
    if (domain === undefined) return;
    const key = termKey(term, owner);
    let g = this.antiGroups.get(key);
    if (!g) {
      g = { key, seq: this.antiGroups.size, term, owner, perDomain: new Map() };
      this.antiGroups.set(key, g);
      if (ownNamespaceOnly(term)) pushTo(this.antiByNamespace, owner.namespace, g);
      else this.antiAcrossNamespaces.push(g);
    }
    g.perDomain.set(domain, (g.perDomain.get(domain) ?? 0) + delta);
  }

  // ---- scoring ----------------------------------------------------------------------------------------------------

  /** The live pods' affinity terms that score other pods (see ScoreTermGroup), maintained by every change. */
  scoreTermGroups(): IterableIterator<ScoreTermGroup> {
    return this.scoreTerms.values();
  }

  /** Adds (sign 1) or removes (-1) a pod's terms that score incoming pods, at its node's domains. */
  private addScoreTerms(pod: PodInfo, node: NodeInfo, sign: 1 | -1): void {
    const hard = this.profile.hardPodAffinityWeight ?? 1;
    if (hard > 0) for (const term of pod.podAffinity) this.addScoreTerm(term, pod, node, sign * hard);
    for (const p of pod.preferredPodAffinity ?? NO_WEIGHTED) this.addScoreTerm(p.term, pod, node, sign * p.weight);
    for (const p of pod.preferredPodAntiAffinity ?? NO_WEIGHTED) this.addScoreTerm(p.term, pod, node, -sign * p.weight);
  }

  private addScoreTerm(term: PodAffinityTerm, owner: PodInfo, node: NodeInfo, weight: number): void {
    const domain = labelValue(node.labels, term.topologyKey);
    if (domain === undefined) return;
    const key = termKey(term, owner);
    let g = this.scoreTerms.get(key);
    if (!g) {
      g = { term, owner, perDomain: new Map() };
      this.scoreTerms.set(key, g);
    }
    g.perDomain.set(domain, (g.perDomain.get(domain) ?? 0) + weight);
  }

  /**
   * Per node index, how many live pods of `namespace` match `selector` (the replacements included): what
   * PodTopologySpread's scoring counts. Memoised until the state changes.
   */
  matchingPerNode(namespace: string, selector: Selector): ReadonlyMap<number, number> {
    const key = `${namespace}\u0000${selectorText(selector)}`;
    const memo = this.perNodeMemo.get(key);
    if (memo !== undefined && memo.version === this.version) return memo.counts;
    const counts = new Map<number, number>();
    const bump = (node: NodeInfo | undefined): void => {
      const i = node === undefined ? undefined : this.nodeIndex.get(node.name);
      if (i !== undefined) counts.set(i, (counts.get(i) ?? 0) + 1);
    };
    for (const pod of this.analysis.index.select(namespace, selector)) {
      if (this.isLive(pod) && !this.location.has(pod.uid)) bump(this.nodeOf(pod));
    }
    for (const r of this.addedByNamespace.get(namespace) ?? []) {
      if (matchesSelector(selector, r.pod.labels)) bump(r.node);
    }
    if (this.perNodeMemo.size > 4096) this.perNodeMemo.clear();
    this.perNodeMemo.set(key, { version: this.version, counts });
    return counts;
  }

  private readonly perNodeMemo = new Map<string, { version: number; counts: Map<number, number> }>();

  // ---- changes ----------------------------------------------------------------------------------------------------

  /** Applies an eviction of `pod` and, when `target` is given, its replacement landing there. */
  commit(pod: PodInfo, target: NodeInfo | undefined, replacement: PodInfo = pod): void {
    this.version++;
    const from = this.nodeOf(pod);
    this.removed.add(pod.uid);
    if (from) {
      this.changeUsage(from.name, pod, -1);
      for (const term of pod.podAntiAffinity) this.addAnti(term, pod, from, -1);
      this.addScoreTerms(pod, from, -1);
    }
    // In place, as uncommit() undoes it: copying every group's counts cost a map of all its domains per
    // commit (a hostname spread over 300 nodes: most of a 10,000-pod plan's garbage, issue 24).
    if (from) {
      for (const g of this.groupsSelecting(pod.namespace, pod.labels)) {
        if (!matchesSelector(g.group.constraint.selector, pod.labels)) continue;
        const domain = g.group.domainsByNode.get(from.name);
        if (domain !== undefined) bumpCount(g, domain, -1);
      }
    }
    for (const tc of this.termCounts.values()) {
      if (from && this.termMatches(tc.term, tc.owner, pod)) bumpTerm(tc, from, -1);
    }
    if (target) this.place(replacement, target);
  }

  /**
   * Undoes the last commit() of `pod` (evicted from `from`, its replacement on `target`). Undos must come in the
   * reverse order of the commits, so the planner can try a set of moves and drop it when the set does not help.
   */
  uncommit(pod: PodInfo, from: NodeInfo, target: NodeInfo | undefined, replacement: PodInfo = pod): void {
    this.version++;
    if (target) this.unplace(replacement, target);
    this.removed.delete(pod.uid);
    this.changeUsage(from.name, pod, 1);
    for (const term of pod.podAntiAffinity) this.addAnti(term, pod, from, 1);
    this.addScoreTerms(pod, from, 1);
    for (const g of this.groupsSelecting(pod.namespace, pod.labels)) {
      const domain = g.group.domainsByNode.get(from.name);
      if (domain !== undefined) bumpCount(g, domain, 1);
    }
    for (const tc of this.termCounts.values()) if (this.termMatches(tc.term, tc.owner, pod)) bumpTerm(tc, from, 1);
  }

  private unplace(pod: PodInfo, node: NodeInfo): void {
    this.location.delete(pod.uid);
    this.changeUsage(node.name, pod, -1);
    for (const g of this.groupsSelecting(pod.namespace, pod.labels)) {
      const domain = g.group.domainsByNode.get(node.name);
      if (domain !== undefined) bumpCount(g, domain, -1);
    }
    for (const tc of this.termCounts.values()) if (this.termMatches(tc.term, tc.owner, pod)) bumpTerm(tc, node, -1);
    for (const term of pod.podAntiAffinity) this.addAnti(term, pod, node, -1);
    this.addScoreTerms(pod, node, -1);
    this.addedByNamespace.get(pod.namespace)?.pop();
    const last = this.added.pop();
    if (last?.pod !== pod) throw new Error('ClusterState.uncommit: undos must reverse the order of commits');
    if (pod.podAffinity.length > 0) this.affinityOwners.pop();
  }

  /** Adds a pod (a replacement) on a node. */
  place(pod: PodInfo, node: NodeInfo): void {
    this.version++;
    this.location.set(pod.uid, node.name);
    this.changeUsage(node.name, pod, 1);
    for (const g of this.groupsSelecting(pod.namespace, pod.labels)) {
      const domain = g.group.domainsByNode.get(node.name);
      if (domain !== undefined) bumpCount(g, domain, 1);
    }
    for (const tc of this.termCounts.values()) if (this.termMatches(tc.term, tc.owner, pod)) bumpTerm(tc, node, 1);
    for (const term of pod.podAntiAffinity) this.addAnti(term, pod, node, 1);
    this.addScoreTerms(pod, node, 1);
    const placed = { pod, node };
    if (pod.podAffinity.length > 0) this.affinityOwners.push(placed);
    this.added.push(placed);
    pushTo(this.addedByNamespace, pod.namespace, placed);
  }
}
