// The operator's view of the cluster: the compact objects the informers deliver, indexed the way the cycle and the
// executor read them, and nothing else.
//
// - snapshot() builds the planner's ClusterSnapshot from the stores alone (no API call). PodDisruptionBudget
//   allowances in it are what the Eviction API would check right now: status.disruptionsAllowed as last seen, minus
//   the evictions this operator has sent that the cached status does not reflect yet (see PdbDebits), and 0 while the
//   budget's status is missing or older than its spec (the API answers 429 then).
// - Pods are indexed by workload (`namespace/Kind/name`), so ready counts and replacement checks cost O(replicas).
// - waitUntil() lets the executor wait for a condition on a workload or a budget without polling: every change
//   notifies the keys it touches, and only the waiters on those keys re-check.
// - Pods without spec.priority get theirs from PriorityClasses, which may arrive after the pod; such pods are
//   re-resolved when a snapshot is taken (the API server's admission normally sets spec.priority, so this is rare).
import type { KubeVersion } from '../model/kubeVersion.js';
import { isObj } from '../model/rawJson.js';
import { matchesSelector } from '../model/labels.js';
import { nodeChange } from '../model/nodeChange.js';
import { pdbKey } from '../model/pdb.js';
import type {
  ClusterSnapshot,
  CsiNodeInfo,
  NamespaceInfo,
  NodeInfo,
  PdbInfo,
  PersistentVolumeClaimInfo,
  PersistentVolumeInfo,
  PodInfo,
  PriorityClassInfo,
  StorageClassInfo,
} from '../model/types.js';
import { withCsiNodeLimits, withVolumeTopology } from '../model/volumes.js';
import { workloadKey } from '../planner/budget.js';
import { ConversionCache, convertPod, makePriorityResolver, type PriorityResolver } from '../snapshot/convert.js';
import type { Clock } from '../clock.js';
import type { Cached, InformerHandlers } from '../kube/informers.js';
import {
  pdbEntryFrom,
  policyEntryFrom,
  type PdbEntry,
  type PodEntry,
  type PolicyEntry,
  type PolicyListener,
} from './cacheEntries.js';
import { KeyedWaiters } from './keyedWaiters.js';

// What the cache holds moved to cacheEntries.ts, the waiting to keyedWaiters.ts (docs/adr/0015); importers still find
// the entry types here.
export type { LastPlanStatus, PolicyCondition } from './status.js';
export type { PdbEntry, PodEntry, PolicyEntry, PolicyListener, PolicyStatusSeen } from './cacheEntries.js';

const workloadWaitKey = (key: string): string => `wl:${key}`;
const pdbWaitKey = (key: string): string => `pdb:${key}`;

export { workloadWaitKey, pdbWaitKey };

export class ClusterCache {
  private readonly nodes = new Map<string, NodeInfo>();
  /** When each node was last added or changed so that pods may land where they could not (nodeChangedAfter). */
  private readonly nodeChangedAt = new Map<string, number>();
  private readonly pods = new Map<string, PodEntry>();
  private readonly podsByWorkload = new Map<string, Map<string, PodInfo>>();
  private readonly pdbs = new Map<string, PdbEntry>();
  private readonly pdbsByNamespace = new Map<string, Map<string, PdbEntry>>();
  private readonly priorityClasses = new Map<string, PriorityClassInfo>();
  private readonly namespaces = new Map<string, NamespaceInfo>();
  private readonly persistentVolumes = new Map<string, PersistentVolumeInfo>();
  private readonly persistentVolumeClaims = new Map<string, PersistentVolumeClaimInfo>();
  private readonly storageClasses = new Map<string, StorageClassInfo>();
  private readonly csiNodes = new Map<string, CsiNodeInfo>();
  private readonly policies = new Map<string, PolicyEntry>();
  private readonly policyListeners: PolicyListener[] = [];
  private readonly waiters: KeyedWaiters;
  private resolver: PriorityResolver = makePriorityResolver([]);
  private version = 0;

  /** The minor whose scheduler the placement follows: the API server's, once the operator has read /version. */
  kubeVersion: KubeVersion | undefined = undefined;

  constructor(private readonly clock: Clock) {
    this.waiters = new KeyedWaiters(clock);
  }

  // ---- conversion (called by the informers on arrival) -------------------------------------------------------

  /** What the pods converted so far share with the next ones, for the cache's whole life. */
  private readonly conversions = new ConversionCache();

  readonly convertPod = (raw: unknown): PodEntry => {
    const spec = isObj(raw) ? raw['spec'] : undefined;
    const explicitPriority = isObj(spec) && typeof spec['priority'] === 'number';
    return { info: convertPod(raw, this.conversions, this.resolver), explicitPriority };
  };

  readonly convertPdb: (raw: unknown) => PdbEntry = pdbEntryFrom;

  readonly convertPolicy: (raw: unknown) => PolicyEntry = policyEntryFrom;

  // ---- informer handlers -------------------------------------------------------------------------------------

  readonly nodeHandlers: InformerHandlers<NodeInfo> = {
    upsert: (e) =>
      this.apply(e, (v) => {
        const before = this.nodes.get(v.name);
        if (nodeChange(before, v) !== undefined) this.nodeChangedAt.set(v.name, this.clock.now());
        this.nodes.set(v.name, v);
      }),
    remove: (e) =>
      this.change(() => {
        this.nodes.delete(e.metadata.name);
        this.nodeChangedAt.delete(e.metadata.name);
      }),
  };

  /**
   * Whether `node` was added, became Ready or schedulable, or changed its labels or taints after `at` (this cache's
   * clock; model/nodeChange.ts): a replacement that landed there may have done so because of that change, which a
   * plan made before it could not see (a node back from NotReady, uncordoned, added by an autoscaler).
   */
  nodeChangedAfter(node: string, at: number): boolean {
    return (this.nodeChangedAt.get(node) ?? -Infinity) > at;
  }

  readonly podHandlers: InformerHandlers<PodEntry> = {
    upsert: (e) => {
      if (e.value !== undefined) this.putPod(e.value);
      else this.removePod(this.objectKey(e));
    },
    remove: (e) => this.removePod(this.objectKey(e)),
  };

  readonly pdbHandlers: InformerHandlers<PdbEntry> = {
    upsert: (e) => {
      if (e.value !== undefined) this.putPdb(e.value);
      else this.removePdb(this.objectKey(e));
    },
    remove: (e) => this.removePdb(this.objectKey(e)),
  };

  readonly priorityClassHandlers: InformerHandlers<PriorityClassInfo> = {
    upsert: (e) =>
      this.apply(e, (v) => {
        this.priorityClasses.set(v.name, v);
        this.resolver = makePriorityResolver([...this.priorityClasses.values()]);
      }),
    remove: (e) =>
      this.change(() => {
        this.priorityClasses.delete(e.metadata.name);
        this.resolver = makePriorityResolver([...this.priorityClasses.values()]);
      }),
  };

  readonly namespaceHandlers: InformerHandlers<NamespaceInfo> = {
    upsert: (e) => this.apply(e, (v) => this.namespaces.set(v.name, v)),
    remove: (e) => this.change(() => this.namespaces.delete(e.metadata.name)),
  };

  readonly persistentVolumeHandlers: InformerHandlers<PersistentVolumeInfo> = {
    upsert: (e) => this.apply(e, (v) => this.persistentVolumes.set(v.name, v)),
    remove: (e) => this.change(() => this.persistentVolumes.delete(e.metadata.name)),
  };

  readonly persistentVolumeClaimHandlers: InformerHandlers<PersistentVolumeClaimInfo> = {
    upsert: (e) => this.apply(e, (v) => this.persistentVolumeClaims.set(`${v.namespace}/${v.name}`, v)),
    remove: (e) => this.change(() => this.persistentVolumeClaims.delete(this.objectKey(e))),
  };

  readonly storageClassHandlers: InformerHandlers<StorageClassInfo> = {
    upsert: (e) => this.apply(e, (v) => this.storageClasses.set(v.name, v)),
    remove: (e) => this.change(() => this.storageClasses.delete(e.metadata.name)),
  };

  readonly csiNodeHandlers: InformerHandlers<CsiNodeInfo> = {
    upsert: (e) => this.apply(e, (v) => this.csiNodes.set(v.name, v)),
    remove: (e) => this.change(() => this.csiNodes.delete(e.metadata.name)),
  };

  readonly policyHandlers: InformerHandlers<PolicyEntry> = {
    upsert: (e) => {
      if (e.value === undefined) return;
      const entry = e.value.name === '' ? { ...e.value, name: e.metadata.name } : e.value;
      this.policies.set(entry.name, entry);
      for (const listener of this.policyListeners) listener('upsert', entry);
    },
    remove: (e) => {
      const entry = this.policies.get(e.metadata.name);
      if (entry === undefined) return;
      this.policies.delete(e.metadata.name);
      for (const listener of this.policyListeners) listener('delete', entry);
    },
  };

  private objectKey(e: Cached<unknown>): string {
    return `${e.metadata.namespace ?? 'default'}/${e.metadata.name}`;
  }

  private apply<T>(e: Cached<T>, put: (value: T) => void): void {
    const value = e.value;
    if (value === undefined) return;
    this.change(() => put(value));
  }

  private change(fn: () => void): void {
    fn();
    this.version++;
  }

  private putPod(entry: PodEntry): void {
    const info = entry.info;
    const key = `${info.namespace}/${info.name}`;
    const previous = this.pods.get(key);
    if (previous !== undefined && workloadKey(previous.info) !== workloadKey(info)) this.removePod(key);
    this.pods.set(key, entry);
    const wk = workloadKey(info);
    let members = this.podsByWorkload.get(wk);
    if (members === undefined) this.podsByWorkload.set(wk, (members = new Map<string, PodInfo>()));
    members.set(key, info);
    this.version++;
    this.notify(workloadWaitKey(wk));
  }

  private removePod(key: string): void {
    const entry = this.pods.get(key);
    if (entry === undefined) return;
    this.pods.delete(key);
    const wk = workloadKey(entry.info);
    const members = this.podsByWorkload.get(wk);
    members?.delete(key);
    if (members?.size === 0) this.podsByWorkload.delete(wk);
    this.version++;
    this.notify(workloadWaitKey(wk));
  }

  private putPdb(entry: PdbEntry): void {
    const key = pdbKey(entry.info);
    this.pdbs.set(key, entry);
    let inNs = this.pdbsByNamespace.get(entry.info.namespace);
    if (inNs === undefined) this.pdbsByNamespace.set(entry.info.namespace, (inNs = new Map<string, PdbEntry>()));
    inNs.set(key, entry);
    this.version++;
    this.notify(pdbWaitKey(key));
  }

  private removePdb(key: string): void {
    const entry = this.pdbs.get(key);
    if (entry === undefined) return;
    this.pdbs.delete(key);
    const inNs = this.pdbsByNamespace.get(entry.info.namespace);
    inNs?.delete(key);
    if (inNs?.size === 0) this.pdbsByNamespace.delete(entry.info.namespace);
    this.version++;
    this.notify(pdbWaitKey(key));
  }

  // ---- reads -------------------------------------------------------------------------------------------------

  /** Increases with every change; a cheap "did anything change" check. */
  get changes(): number {
    return this.version;
  }

  onPolicy(listener: PolicyListener): void {
    this.policyListeners.push(listener);
  }

  policy(name: string): PolicyEntry | undefined {
    return this.policies.get(name);
  }

  policyList(): PolicyEntry[] {
    return [...this.policies.values()];
  }

  pod(namespace: string, name: string): PodInfo | undefined {
    return this.pods.get(`${namespace}/${name}`)?.info;
  }

  node(name: string): NodeInfo | undefined {
    return this.nodes.get(name);
  }

  /** The pods of a workload (`namespace/Kind/name`), terminating ones included. */
  workloadPods(key: string): readonly PodInfo[] {
    const members = this.podsByWorkload.get(key);
    return members === undefined ? [] : [...members.values()];
  }

  /** Pods of the workload that are Ready and not terminating. */
  readyCount(key: string): number {
    let n = 0;
    for (const pod of this.podsByWorkload.get(key)?.values() ?? []) if (pod.ready && !pod.terminating) n++;
    return n;
  }

  /** The budgets covering a pod, as cached. */
  pdbsFor(pod: Pick<PodInfo, 'namespace' | 'labels'>): PdbEntry[] {
    const out: PdbEntry[] = [];
    for (const entry of this.pdbsByNamespace.get(pod.namespace)?.values() ?? []) {
      if (matchesSelector(entry.info.selector, pod.labels)) out.push(entry);
    }
    return out;
  }

  pdb(key: string): PdbEntry | undefined {
    return this.pdbs.get(key);
  }

  /** Names of the namespaces in the cache, and every cached pod: what a policy's scope is checked against. */
  scopeView(): { readonly namespaces: ReadonlySet<string>; readonly pods: Iterable<PodInfo> } {
    const pods = this.pods;
    return {
      namespaces: new Set(this.namespaces.keys()),
      pods: {
        *[Symbol.iterator]() {
          for (const e of pods.values()) yield e.info;
        },
      },
    };
  }

  counts(): {
    nodes: number;
    pods: number;
    pdbs: number;
    priorityClasses: number;
    namespaces: number;
    policies: number;
  } {
    return {
      nodes: this.nodes.size,
      pods: this.pods.size,
      pdbs: this.pdbs.size,
      priorityClasses: this.priorityClasses.size,
      namespaces: this.namespaces.size,
      policies: this.policies.size,
    };
  }

  /**
   * The allowance the Eviction API would grant for this budget now, as far as the cache knows: 0 while the status
   * is missing or stale (observedGeneration < generation), else disruptionsAllowed minus `debit` (evictions sent
   * that the cached status does not reflect yet).
   */
  static allowance(entry: PdbEntry, debit: number): number {
    if (entry.observedGeneration === undefined || entry.observedGeneration < entry.generation) return 0;
    return Math.max(0, (entry.info.statusAllowed ?? 0) - debit);
  }

  /** The planner's input, from the stores alone. `debit(pdbKey)` subtracts evictions in flight. */
  snapshot(debit: (pdbKey: string, entry: PdbEntry) => number = () => 0): ClusterSnapshot {
    const pods: PodInfo[] = [];
    for (const entry of this.pods.values()) {
      const info = entry.info;
      if (entry.explicitPriority) {
        pods.push(info);
        continue;
      }
      const priority = this.resolver(info.priorityClassName);
      pods.push(priority === info.priority ? info : { ...info, priority });
    }
    const pdbs: PdbInfo[] = [];
    for (const [key, entry] of this.pdbs) {
      const allowed = ClusterCache.allowance(entry, debit(key, entry));
      pdbs.push(allowed === entry.info.statusAllowed ? entry.info : { ...entry.info, statusAllowed: allowed });
    }
    return {
      // A CSINode may arrive before or after its Node: its attach limits join the node per snapshot.
      nodes: withCsiNodeLimits([...this.nodes.values()], this.csiNodes.values()),
      // Claims bind after their pods are seen: volume topology is resolved per snapshot, not per pod event.
      pods: withVolumeTopology(pods, {
        persistentVolumes: [...this.persistentVolumes.values()],
        persistentVolumeClaims: [...this.persistentVolumeClaims.values()],
        storageClasses: [...this.storageClasses.values()],
      }),
      pdbs,
      priorityClasses: [...this.priorityClasses.values()],
      namespaces: [...this.namespaces.values()],
      now: this.clock.wall(),
      kubeVersion: this.kubeVersion,
    };
  }

  // ---- waiting -----------------------------------------------------------------------------------------------

  /**
   * Resolves true as soon as `check()` holds (re-checked whenever one of `keys` changes), false on timeout or
   * abort. `check` must be cheap: it runs on every change of its keys.
   */
  waitUntil(keys: readonly string[], check: () => boolean, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return this.waiters.waitUntil(keys, check, timeoutMs, signal);
  }

  /** Re-checks the waiters of `key`. Public so the executor can wake waiters when its own bookkeeping changes. */
  notify(key: string): void {
    this.waiters.notify(key);
  }
}
