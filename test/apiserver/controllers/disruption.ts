// The disruption controller (kube-controller-manager pkg/controller/disruption), reduced to its status math:
// for each PDB it finds the pods its selector matches in its namespace and writes, through the PDB's status,
//   expectedPods   = len(pods) for an integer minAvailable; otherwise the sum of the scales of the pods' controllers
//                    (a ReplicaSet's spec.replicas, or its owning Deployment's when it has one),
//   desiredHealthy = minAvailable, ceil(minAvailable% x expected), or expected - ceil(maxUnavailable% x expected)
//                    (GetScaledValueFromIntOrPercent with roundUp), never below 0,
//   currentHealthy = Ready pods that are neither terminating nor in disruptedPods (entries younger than
//                    deletionTimeoutMs, default 2 minutes, are kept; older ones are dropped),
//   disruptionsAllowed = currentHealthy - desiredHealthy, but 0 when negative or when expectedPods is 0,
// plus observedGeneration and the DisruptionAllowed condition (SufficientPods / InsufficientPods). A pod with a
// controller the controller cannot find (anything but ReplicaSet/Deployment here) makes the computation fail and,
// as `failSafe` does, sets disruptionsAllowed to 0 with reason SyncFailed without advancing observedGeneration.
// Pods without any controller are ignored in the scale sum (the real controller only emits an event for them).
// It reacts to pod, PDB, ReplicaSet and Deployment changes after `syncDelayMs` (default 0: the next tick).

import type { KubeApi } from '../api.js';
import type { TimerHandle, TimerSet } from '../clock.js';
import { disruptionAllowedCondition } from '../eviction.js';
import { controllerOf, isPodReady, isTerminating, setCondition } from '../pods.js';
import type { Selector } from '../selectors.js';
import { compileLabelSelector, NOTHING } from '../selectors.js';
import type { StoreEvent } from '../store.js';
import type { KubeObject, PdbStatus, RawPdb, RawPod, RawReplicaSet } from '../types.js';
import { objectKey } from '../types.js';

const PDBS = 'poddisruptionbudgets.policy';

export interface DisruptionControllerOptions {
  /** Delay between a change and the status recomputation. Default 0. */
  syncDelayMs?: number;
  /** How long an eviction's disruptedPods entry keeps a pod out of currentHealthy. Default 120000. */
  deletionTimeoutMs?: number;
}

interface IndexedPdb {
  namespace: string;
  name: string;
  selector: Selector;
  selectorError: string | undefined;
  /** The `namespace\0key=value` slot of one equality term of the selector, if it has one. */
  slot: string | undefined;
}

function labelSlot(namespace: string, key: string, value: string): string {
  return `${namespace}\u0000${key}=${value}`;
}

function scaled(value: number | string, total: number): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+)%$/.exec(value);
  if (match === null) throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage`);
  return Math.ceil((Number(match[1]) * total) / 100);
}

function addTo(map: Map<string, Set<string>>, slot: string, key: string): void {
  let set = map.get(slot);
  if (set === undefined) {
    set = new Set();
    map.set(slot, set);
  }
  set.add(key);
}

function removeFrom(map: Map<string, Set<string>>, slot: string, key: string): void {
  const set = map.get(slot);
  if (set === undefined) return;
  set.delete(key);
  if (set.size === 0) map.delete(slot);
}

export class DisruptionController {
  private readonly index = new Map<string, IndexedPdb>();
  private readonly byNamespace = new Map<string, Set<string>>();
  /** PDB keys by one equality term of their selector; PDBs without one are in `unslotted` (per namespace). */
  private readonly pdbsBySlot = new Map<string, Set<string>>();
  private readonly unslotted = new Map<string, Set<string>>();
  private readonly dirty = new Set<string>();
  /** Pod names by `namespace\0key=value`, so a matchLabels selector need not scan its namespace. */
  private readonly podsByLabel = new Map<string, Set<string>>();
  /** The PDB whose status this controller is writing (its own write does not trigger another sync). */
  private writing: string | undefined;
  private readonly rechecks = new Map<string, TimerHandle>();
  private flushTimer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private syncDelayMs: number;
  private readonly deletionTimeoutMs: number;
  /** Number of PDB syncs run (for tests and benchmarks). */
  syncs = 0;

  constructor(
    private readonly api: KubeApi,
    private readonly timers: TimerSet,
    options: DisruptionControllerOptions = {},
  ) {
    this.syncDelayMs = options.syncDelayMs ?? 0;
    this.deletionTimeoutMs = options.deletionTimeoutMs ?? 120_000;
  }

  get running(): boolean {
    return this.unsubscribe !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.unsubscribe = this.api.store.onEvent((event) => this.observe(event));
    for (const pod of this.api.store.iterate('pods')) this.indexPodLabels(pod, 1);
    for (const pdb of this.api.store.iterate<RawPdb>(PDBS)) this.indexPdb(pdb);
    for (const key of this.index.keys()) this.dirty.add(key);
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.timers.clear(this.flushTimer);
    this.flushTimer = undefined;
    for (const handle of this.rechecks.values()) this.timers.clear(handle);
    this.rechecks.clear();
    this.index.clear();
    this.byNamespace.clear();
    this.pdbsBySlot.clear();
    this.unslotted.clear();
    this.dirty.clear();
    this.podsByLabel.clear();
  }

  private indexPodLabels(pod: KubeObject, delta: 1 | -1): void {
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    for (const [key, value] of Object.entries(pod.metadata.labels ?? {})) {
      const slot = labelSlot(ns, key, value);
      let names = this.podsByLabel.get(slot);
      if (delta > 0) {
        if (names === undefined) {
          names = new Set();
          this.podsByLabel.set(slot, names);
        }
        names.add(name);
      } else if (names !== undefined) {
        names.delete(name);
        if (names.size === 0) this.podsByLabel.delete(slot);
      }
    }
  }

  /** Pods of `namespace` the selector matches, narrowed through the label index when it has an equality term. */
  private podsFor(namespace: string, selector: Selector): RawPod[] {
    let narrowest: Set<string> | undefined;
    for (const req of selector.requirements) {
      if (req.op !== 'in' || req.values.length !== 1) continue;
      const names = this.podsByLabel.get(labelSlot(namespace, req.key, req.values[0] ?? '')) ?? new Set<string>();
      if (narrowest === undefined || names.size < narrowest.size) narrowest = names;
    }
    const pods: RawPod[] = [];
    if (narrowest === undefined) {
      for (const pod of this.api.store.iterate<RawPod>('pods', namespace)) {
        if (selector.matches(pod.metadata.labels)) pods.push(pod);
      }
      return pods;
    }
    for (const name of narrowest) {
      const pod = this.api.store.get<RawPod>('pods', namespace, name);
      if (pod !== undefined && selector.matches(pod.metadata.labels)) pods.push(pod);
    }
    return pods;
  }

  setSyncDelay(ms: number): void {
    this.syncDelayMs = ms;
  }

  /** PDBs waiting for a recomputation. */
  pending(): number {
    return this.dirty.size;
  }

  /** Recomputes every PDB with pending changes now. */
  syncNow(): void {
    this.timers.clear(this.flushTimer);
    this.flushTimer = undefined;
    let rounds = 0;
    while (this.dirty.size > 0 && rounds++ < 10) {
      const keys = [...this.dirty];
      this.dirty.clear();
      for (const key of keys) this.sync(key);
    }
  }

  private schedule(): void {
    if (this.flushTimer !== undefined || this.dirty.size === 0) return;
    this.flushTimer = this.timers.set(() => {
      this.flushTimer = undefined;
      this.syncNow();
    }, this.syncDelayMs);
  }

  private indexPdb(pdb: RawPdb): void {
    const namespace = pdb.metadata.namespace ?? '';
    const name = pdb.metadata.name ?? '';
    const key = objectKey(namespace, name);
    this.unslot(key);
    let selector = NOTHING;
    let selectorError: string | undefined;
    try {
      selector = compileLabelSelector(pdb.spec?.selector);
    } catch (err) {
      selectorError = (err as Error).message;
    }
    const equality = selector.requirements.find((req) => req.op === 'in' && req.values.length === 1);
    const slot = equality === undefined ? undefined : labelSlot(namespace, equality.key, equality.values[0] ?? '');
    this.index.set(key, { namespace, name, selector, selectorError, slot });
    addTo(this.byNamespace, namespace, key);
    if (slot === undefined) addTo(this.unslotted, namespace, key);
    else addTo(this.pdbsBySlot, slot, key);
  }

  private unslot(key: string): void {
    const entry = this.index.get(key);
    if (entry === undefined) return;
    if (entry.slot === undefined) removeFrom(this.unslotted, entry.namespace, key);
    else removeFrom(this.pdbsBySlot, entry.slot, key);
  }

  private unindexPdb(pdb: KubeObject): void {
    const namespace = pdb.metadata.namespace ?? '';
    const key = objectKey(namespace, pdb.metadata.name ?? '');
    this.unslot(key);
    this.index.delete(key);
    removeFrom(this.byNamespace, namespace, key);
    this.dirty.delete(key);
    this.timers.clear(this.rechecks.get(key));
    this.rechecks.delete(key);
  }

  /** Marks dirty every PDB whose selector matches the labels of `pod` (found through the slot index). */
  private dirtyPdbsMatching(pod: KubeObject): void {
    const namespace = pod.metadata.namespace ?? '';
    const labels = pod.metadata.labels ?? {};
    const check = (key: string): void => {
      if (this.dirty.has(key)) return;
      if (this.index.get(key)?.selector.matches(labels)) this.dirty.add(key);
    };
    for (const key of this.unslotted.get(namespace) ?? []) check(key);
    for (const [label, value] of Object.entries(labels)) {
      for (const key of this.pdbsBySlot.get(labelSlot(namespace, label, value)) ?? []) check(key);
    }
  }

  private observe(event: StoreEvent): void {
    switch (event.storage) {
      case PDBS:
        if (event.type === 'DELETED') {
          this.unindexPdb(event.object);
          return;
        }
        this.indexPdb(event.object);
        {
          const key = objectKey(event.object.metadata.namespace, event.object.metadata.name ?? '');
          if (key === this.writing) return;
          this.dirty.add(key);
        }
        break;
      case 'pods': {
        if (event.prev !== undefined) this.indexPodLabels(event.prev, -1);
        if (event.type !== 'DELETED') this.indexPodLabels(event.object, 1);
        this.dirtyPdbsMatching(event.object);
        if (event.prev !== undefined) this.dirtyPdbsMatching(event.prev);
        break;
      }
      case 'replicasets.apps':
      case 'deployments.apps': {
        const replicas = (o: RawReplicaSet | undefined): unknown => o?.spec?.replicas;
        if (event.type === 'MODIFIED' && replicas(event.object) === replicas(event.prev)) return;
        for (const key of this.byNamespace.get(event.object.metadata.namespace ?? '') ?? []) this.dirty.add(key);
        break;
      }
      default:
        return;
    }
    this.schedule();
  }

  private sync(key: string): void {
    const entry = this.index.get(key);
    if (entry === undefined) return;
    const pdb = this.api.store.get<RawPdb>(PDBS, entry.namespace, entry.name);
    if (pdb === undefined) return;
    this.syncs++;
    if (entry.selectorError !== undefined) {
      this.failSafe(pdb, entry.selectorError);
      return;
    }
    const pods = this.podsFor(entry.namespace, entry.selector);
    let expected: { expectedCount: number; desiredHealthy: number };
    try {
      expected = this.expectedPodCount(pdb, pods);
    } catch (err) {
      this.failSafe(pdb, (err as Error).message);
      return;
    }
    const now = this.api.now();
    const { disruptedPods, recheckAt } = this.disruptedPodMap(pods, pdb, now);
    let currentHealthy = 0;
    for (const pod of pods) {
      if (isTerminating(pod)) continue;
      if (pod.metadata.name !== undefined && disruptedPods[pod.metadata.name] !== undefined) continue;
      if (isPodReady(pod)) currentHealthy++;
    }
    this.writeStatus(pdb, currentHealthy, expected.desiredHealthy, expected.expectedCount, disruptedPods);
    if (recheckAt !== undefined) this.recheck(key, recheckAt - now);
  }

  private recheck(key: string, delayMs: number): void {
    this.timers.clear(this.rechecks.get(key));
    const handle = this.timers.set(
      () => {
        this.rechecks.delete(key);
        this.dirty.add(key);
        this.schedule();
      },
      Math.max(0, delayMs),
    );
    if (handle !== undefined) this.rechecks.set(key, handle);
  }

  private expectedPodCount(pdb: RawPdb, pods: RawPod[]): { expectedCount: number; desiredHealthy: number } {
    const spec = pdb.spec ?? {};
    if (spec.maxUnavailable !== undefined && spec.maxUnavailable !== null) {
      const expectedCount = this.expectedScale(pods);
      const maxUnavailable = scaled(spec.maxUnavailable, expectedCount);
      return { expectedCount, desiredHealthy: Math.max(0, expectedCount - maxUnavailable) };
    }
    if (spec.minAvailable !== undefined && spec.minAvailable !== null) {
      if (typeof spec.minAvailable === 'number')
        return { expectedCount: pods.length, desiredHealthy: spec.minAvailable };
      const expectedCount = this.expectedScale(pods);
      return { expectedCount, desiredHealthy: scaled(spec.minAvailable, expectedCount) };
    }
    return { expectedCount: 0, desiredHealthy: 0 };
  }

  /** getExpectedScale: the sum of the scales of the distinct controllers of `pods`. */
  private expectedScale(pods: RawPod[]): number {
    const scales = new Map<string, number>();
    for (const pod of pods) {
      const ref = controllerOf(pod);
      if (ref === undefined || scales.has(ref.uid)) continue;
      const found = this.controllerScale(pod.metadata.namespace ?? '', ref);
      if (found === undefined) throw new Error(`found no controllers for pod "${pod.metadata.name ?? ''}"`);
      scales.set(found.uid, found.scale);
    }
    let total = 0;
    for (const scale of scales.values()) total += scale;
    return total;
  }

  private controllerScale(
    namespace: string,
    ref: { kind: string; name: string; uid: string; apiVersion: string },
  ): { uid: string; scale: number } | undefined {
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
    if (ref.kind !== 'ReplicaSet' || (group !== 'apps' && group !== 'extensions')) return undefined;
    const rs = this.api.store.get<RawReplicaSet>('replicasets.apps', namespace, ref.name);
    if (rs === undefined || rs.metadata.uid !== ref.uid) return undefined;
    const owner = controllerOf(rs);
    if (owner === undefined) return { uid: rs.metadata.uid, scale: rs.spec?.replicas ?? 1 };
    if (owner.kind !== 'Deployment') return { uid: rs.metadata.uid, scale: rs.spec?.replicas ?? 1 };
    const deployment = this.api.store.get<RawReplicaSet>('deployments.apps', namespace, owner.name);
    if (deployment === undefined || deployment.metadata.uid !== owner.uid) return undefined;
    return { uid: owner.uid, scale: deployment.spec?.replicas ?? 1 };
  }

  private disruptedPodMap(
    pods: RawPod[],
    pdb: RawPdb,
    now: number,
  ): { disruptedPods: Record<string, string>; recheckAt: number | undefined } {
    const previous = pdb.status?.disruptedPods ?? {};
    const disruptedPods: Record<string, string> = {};
    let recheckAt: number | undefined;
    for (const pod of pods) {
      const name = pod.metadata.name ?? '';
      const since = previous[name];
      if (isTerminating(pod) || since === undefined) continue;
      const expectedDeletion = Date.parse(since) + this.deletionTimeoutMs;
      if (expectedDeletion <= now) continue;
      disruptedPods[name] = since;
      if (recheckAt === undefined || expectedDeletion < recheckAt) recheckAt = expectedDeletion;
    }
    return { disruptedPods, recheckAt };
  }

  private writeStatus(
    pdb: RawPdb,
    currentHealthy: number,
    desiredHealthy: number,
    expectedCount: number,
    disruptedPods: Record<string, string>,
  ): void {
    let disruptionsAllowed = currentHealthy - desiredHealthy;
    if (expectedCount <= 0 || disruptionsAllowed <= 0) disruptionsAllowed = 0;
    const observedGeneration = pdb.metadata.generation ?? 0;
    const status: PdbStatus = {
      observedGeneration,
      ...(Object.keys(disruptedPods).length > 0 ? { disruptedPods } : {}),
      disruptionsAllowed,
      currentHealthy,
      desiredHealthy,
      expectedPods: expectedCount,
      conditions: setCondition(
        pdb.status?.conditions,
        disruptionAllowedCondition(disruptionsAllowed, observedGeneration),
        this.api.now(),
      ),
    };
    this.write(pdb, status);
  }

  private write(pdb: RawPdb, status: PdbStatus): void {
    this.writing = objectKey(pdb.metadata.namespace, pdb.metadata.name ?? '');
    try {
      this.api.commitUpdate(this.api.resource(PDBS), { ...pdb, status }, pdb);
    } finally {
      this.writing = undefined;
    }
  }

  private failSafe(pdb: RawPdb, message: string): void {
    const previous = pdb.status ?? { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
    const status: PdbStatus = {
      ...previous,
      disruptionsAllowed: 0,
      conditions: setCondition(
        previous.conditions,
        {
          type: 'DisruptionAllowed',
          status: 'False',
          reason: 'SyncFailed',
          message,
          observedGeneration: previous.observedGeneration,
        },
        this.api.now(),
      ),
    };
    this.write(pdb, status);
  }
}
