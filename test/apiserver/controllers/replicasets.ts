// A ReplicaSet controller (with the part of the Deployment controller that keeps one ReplicaSet's size equal to its
// Deployment's). `createDeployment` stores an apps/v1 Deployment and its ReplicaSet `<name>-<pod-template-hash>`
// (hash computed like the real controller: FNV-1a of the template, safe-encoded), optionally with pods already
// running on given nodes. While started, the controller keeps every ReplicaSet in the store at spec.replicas
// active pods (not terminating, not Succeeded/Failed): a missing pod is replaced by a new Pending, unscheduled pod
// named `<rs>-<5 random chars>` (generateName), created through the API (defaults and admission apply); surplus
// pods are deleted. Like the real controller it creates the replacement as soon as the old pod is terminating.
// ReplicaSet and Deployment status (replicas, readyReplicas, availableReplicas, observedGeneration) is kept current.
// Not simulated: rollouts (template changes), minReadySeconds, expectations, burst limits.

import type { KubeApi } from '../api.js';
import type { TimerHandle, TimerSet } from '../clock.js';
import { deepClone, deepEqual } from '../patch.js';
import { controllerOf, isPodReady, isTerminal, isTerminating, runningStatus } from '../pods.js';
import type { StoreEvent } from '../store.js';
import type { KubeObject, ObjectMeta, PodSpec, RawPod, RawReplicaSet } from '../types.js';
import { objectKey } from '../types.js';

const RS = 'replicasets.apps';
const DEPLOY = 'deployments.apps';
const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

export interface WorkloadSpec {
  namespace: string;
  name: string;
  replicas: number;
  /** The pod template: labels (the selector is built from them), annotations and the full pod spec. */
  template: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; spec: PodSpec };
  /**
   * Node names of pods that already run when the workload is created: one pod per entry is stored bound,
   * Running and Ready (as in a cluster that has been up for a while). The controller creates the rest.
   */
  placement?: string[];
  /** `Deployment` (default: Deployment + ReplicaSet) or a bare `ReplicaSet`. */
  kind?: 'Deployment' | 'ReplicaSet';
}

export interface Workload {
  namespace: string;
  name: string;
  kind: 'Deployment' | 'ReplicaSet';
  replicaSetName: string;
  replicaSetUid: string;
  deploymentUid: string | undefined;
  podTemplateHash: string;
  /** matchLabels of the ReplicaSet selector (template labels plus pod-template-hash). */
  selector: Record<string, string>;
}

export interface ReplicaSetControllerOptions {
  /** Delay between noticing a missing pod and creating its replacement. Default 0. */
  createDelayMs?: number;
}

/** Stable FNV-1a 32-bit hash of a JSON value (keys sorted), encoded like rand.SafeEncodeString. */
export function podTemplateHash(template: unknown): string {
  const canonical = (value: unknown): string => {
    if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
    }
    return JSON.stringify(value);
  };
  let hash = 0x811c9dc5;
  for (const ch of Buffer.from(canonical(template), 'utf8')) {
    hash ^= ch;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return [...String(hash)].map((digit) => SAFE.charAt(digit.charCodeAt(0) % SAFE.length)).join('');
}

/** ActivePods ordering, simplified: the first pods in this order are the first deleted on scale-down. */
function deletionRank(pod: RawPod): number {
  if (!pod.spec.nodeName) return 0;
  if (pod.status?.phase === 'Pending') return 1;
  if (!isPodReady(pod)) return 2;
  return 3;
}

export class ReplicaSetController {
  private readonly dirty = new Set<string>();
  /** Pods by the uid of their controller, maintained while the controller runs (avoids namespace scans). */
  private readonly podsByOwner = new Map<string, Map<string, RawPod>>();
  private flushTimer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private createDelayMs: number;
  /** Pods created by the controller (replacements and scale-ups). */
  created = 0;
  /** Failures of the last reconcile (e.g. a pod create rejected by admission), newest last. */
  readonly errors: string[] = [];

  constructor(
    private readonly api: KubeApi,
    private readonly timers: TimerSet,
    options: ReplicaSetControllerOptions = {},
  ) {
    this.createDelayMs = options.createDelayMs ?? 0;
  }

  get running(): boolean {
    return this.unsubscribe !== undefined;
  }

  start(): void {
    if (this.running) return;
    this.unsubscribe = this.api.store.onEvent((event) => this.observe(event));
    for (const pod of this.api.store.iterate<RawPod>('pods')) this.indexPod(pod, undefined);
    for (const rs of this.api.store.iterate<RawReplicaSet>(RS))
      this.dirty.add(objectKey(rs.metadata.namespace, rs.metadata.name ?? ''));
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.timers.clear(this.flushTimer);
    this.flushTimer = undefined;
    this.dirty.clear();
    this.podsByOwner.clear();
  }

  setCreateDelay(ms: number): void {
    this.createDelayMs = ms;
  }

  pending(): number {
    return this.dirty.size;
  }

  /** Creates a Deployment (or bare ReplicaSet) and its ReplicaSet, plus the pods of `spec.placement`. */
  createDeployment(spec: WorkloadSpec): Workload {
    const kind = spec.kind ?? 'Deployment';
    const labels = { ...(spec.template.metadata?.labels ?? {}) };
    const hash = podTemplateHash(spec.template);
    const rsName = kind === 'Deployment' ? `${spec.name}-${hash}` : spec.name;
    const rsLabels = kind === 'Deployment' ? { ...labels, 'pod-template-hash': hash } : labels;
    const template = {
      metadata: {
        labels: rsLabels,
        ...(spec.template.metadata?.annotations ? { annotations: spec.template.metadata.annotations } : {}),
      },
      spec: deepClone(spec.template.spec),
    };
    let deploymentUid: string | undefined;
    const ownerReferences: ObjectMeta['ownerReferences'] = [];
    if (kind === 'Deployment') {
      const deployment = this.api.create(this.api.resource(DEPLOY), spec.namespace, {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: spec.name, namespace: spec.namespace, labels },
        spec: {
          replicas: spec.replicas,
          selector: { matchLabels: labels },
          template: { ...template, metadata: { labels } },
        },
      }).body as KubeObject;
      deploymentUid = deployment.metadata.uid;
      ownerReferences.push({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: spec.name,
        uid: deploymentUid ?? '',
        controller: true,
        blockOwnerDeletion: true,
      });
    }
    const rs = this.api.create(this.api.resource(RS), spec.namespace, {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: rsName,
        namespace: spec.namespace,
        labels: rsLabels,
        ...(ownerReferences.length > 0 ? { ownerReferences } : {}),
      },
      spec: { replicas: spec.replicas, selector: { matchLabels: rsLabels }, template },
    }).body as RawReplicaSet;
    for (const nodeName of spec.placement ?? []) this.createRunningPod(rs, nodeName);
    return {
      namespace: spec.namespace,
      name: spec.name,
      kind,
      replicaSetName: rsName,
      replicaSetUid: rs.metadata.uid ?? '',
      deploymentUid,
      podTemplateHash: hash,
      selector: rsLabels,
    };
  }

  /** Sets the desired replicas of a workload created by `createDeployment` (Deployment or bare ReplicaSet). */
  scale(namespace: string, name: string, replicas: number): void {
    const deployment = this.api.store.get<RawReplicaSet>(DEPLOY, namespace, name);
    const target = deployment ?? this.api.store.get<RawReplicaSet>(RS, namespace, name);
    if (target === undefined) throw new Error(`no Deployment or ReplicaSet ${namespace}/${name}`);
    const def = this.api.resource(deployment ? DEPLOY : RS);
    this.api.update(def, namespace, name, { ...target, spec: { ...target.spec, replicas } });
    if (deployment !== undefined) this.propagateScale(deployment.metadata.uid ?? '', namespace, replicas);
  }

  /** Active pods (not terminating, not finished) owned by the ReplicaSet of a workload or the ReplicaSet itself. */
  podsOf(namespace: string, name: string): RawPod[] {
    const rs = this.replicaSetFor(namespace, name);
    if (rs === undefined) return [];
    return this.activePods(rs);
  }

  private replicaSetFor(namespace: string, name: string): RawReplicaSet | undefined {
    const direct = this.api.store.get<RawReplicaSet>(RS, namespace, name);
    if (direct !== undefined) return direct;
    const deployment = this.api.store.get<RawReplicaSet>(DEPLOY, namespace, name);
    if (deployment === undefined) return undefined;
    for (const rs of this.api.store.iterate<RawReplicaSet>(RS, namespace)) {
      if (controllerOf(rs)?.uid === deployment.metadata.uid) return rs;
    }
    return undefined;
  }

  private propagateScale(deploymentUid: string, namespace: string, replicas: number): void {
    for (const rs of this.api.store.iterate<RawReplicaSet>(RS, namespace)) {
      if (controllerOf(rs)?.uid !== deploymentUid) continue;
      const current = rs;
      if (current.spec?.replicas === replicas) continue;
      this.api.update(this.api.resource(RS), namespace, rs.metadata.name ?? '', {
        ...current,
        spec: { ...current.spec, replicas },
      });
    }
  }

  private podBody(rs: RawReplicaSet): RawPod {
    const template = rs.spec?.template ?? {};
    const meta = template.metadata ?? {};
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        generateName: `${rs.metadata.name ?? ''}-`,
        namespace: rs.metadata.namespace ?? '',
        labels: { ...(meta.labels ?? {}) },
        ...(meta.annotations ? { annotations: { ...meta.annotations } } : {}),
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'ReplicaSet',
            name: rs.metadata.name ?? '',
            uid: rs.metadata.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: deepClone(template.spec ?? { containers: [] }),
    };
  }

  /** Stores a pod of `rs` that is already bound to `nodeName`, Running and Ready (seeding, not via the API). */
  private createRunningPod(rs: RawReplicaSet, nodeName: string): void {
    const prepared = this.api.create(this.api.resource('pods'), rs.metadata.namespace, this.podBody(rs), true)
      .body as RawPod;
    const pod: RawPod = { ...prepared, spec: { ...prepared.spec, nodeName } };
    pod.status = runningStatus(pod, this.api.now());
    this.api.store.commitCreate('pods', pod);
  }

  private schedule(): void {
    if (this.flushTimer !== undefined || this.dirty.size === 0 || !this.running) return;
    this.flushTimer = this.timers.set(() => {
      this.flushTimer = undefined;
      this.syncNow();
    }, this.createDelayMs);
  }

  private observe(event: StoreEvent): void {
    if (event.storage === RS) {
      if (event.type !== 'DELETED')
        this.dirty.add(objectKey(event.object.metadata.namespace, event.object.metadata.name ?? ''));
    } else if (event.storage === DEPLOY) {
      const replicas = (o: RawReplicaSet | undefined): unknown => o?.spec?.replicas;
      if (event.type === 'MODIFIED' && replicas(event.object) !== replicas(event.prev)) {
        const value = replicas(event.object);
        if (typeof value === 'number') {
          this.propagateScale(event.object.metadata.uid ?? '', event.object.metadata.namespace ?? '', value);
        }
      }
      return;
    } else if (event.storage === 'pods') {
      this.indexPod(event.type === 'DELETED' ? undefined : (event.object as RawPod), event.prev as RawPod | undefined);
      const ref = controllerOf(event.object) ?? (event.prev ? controllerOf(event.prev) : undefined);
      if (ref === undefined || ref.kind !== 'ReplicaSet') return;
      this.dirty.add(objectKey(event.object.metadata.namespace, ref.name));
    } else {
      return;
    }
    this.schedule();
  }

  private indexPod(pod: RawPod | undefined, prev: RawPod | undefined): void {
    if (prev !== undefined) {
      const uid = controllerOf(prev)?.uid;
      if (uid !== undefined)
        this.podsByOwner.get(uid)?.delete(objectKey(prev.metadata.namespace, prev.metadata.name ?? ''));
    }
    if (pod === undefined) return;
    const uid = controllerOf(pod)?.uid;
    if (uid === undefined) return;
    let owned = this.podsByOwner.get(uid);
    if (owned === undefined) {
      owned = new Map();
      this.podsByOwner.set(uid, owned);
    }
    owned.set(objectKey(pod.metadata.namespace, pod.metadata.name ?? ''), pod);
  }

  private activePods(rs: RawReplicaSet): RawPod[] {
    const uid = rs.metadata.uid;
    const candidates = this.running
      ? (this.podsByOwner.get(uid ?? '')?.values() ?? [])
      : this.api.store.iterate<RawPod>('pods', rs.metadata.namespace ?? '');
    const pods: RawPod[] = [];
    for (const pod of candidates) {
      if (controllerOf(pod)?.uid !== uid) continue;
      if (isTerminating(pod) || isTerminal(pod)) continue;
      pods.push(pod);
    }
    return pods;
  }

  /** Reconciles every ReplicaSet with pending changes now. */
  syncNow(): void {
    this.timers.clear(this.flushTimer);
    this.flushTimer = undefined;
    const keys = [...this.dirty];
    this.dirty.clear();
    for (const key of keys) {
      const [namespace, name] = key.includes('/') ? (key.split('/') as [string, string]) : ['', key];
      const rs = this.api.store.get<RawReplicaSet>(RS, namespace, name);
      if (rs !== undefined) this.reconcile(rs);
    }
  }

  private reconcile(rs: RawReplicaSet): void {
    const desired = rs.spec?.replicas ?? 1;
    const active = this.activePods(rs);
    if (active.length < desired) {
      for (let i = active.length; i < desired; i++) {
        try {
          this.api.create(this.api.resource('pods'), rs.metadata.namespace, this.podBody(rs));
          this.created++;
        } catch (err) {
          this.errors.push(`${rs.metadata.namespace ?? ''}/${rs.metadata.name ?? ''}: ${(err as Error).message}`);
          break;
        }
      }
    } else if (active.length > desired) {
      const victims = [...active]
        .sort(
          (a, b) =>
            deletionRank(a) - deletionRank(b) ||
            ((b.metadata.creationTimestamp ?? '') < (a.metadata.creationTimestamp ?? '') ? -1 : 1),
        )
        .slice(0, active.length - desired);
      for (const pod of victims) {
        this.api.delete(this.api.resource('pods'), pod.metadata.namespace, pod.metadata.name ?? '');
      }
    }
    this.updateStatus(rs);
  }

  private updateStatus(rs: RawReplicaSet): void {
    const current = this.api.store.get<RawReplicaSet>(RS, rs.metadata.namespace, rs.metadata.name ?? '');
    if (current === undefined) return;
    const pods = this.activePods(current);
    const ready = pods.filter(isPodReady).length;
    const status = {
      replicas: pods.length,
      fullyLabeledReplicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      observedGeneration: current.metadata.generation ?? 1,
    };
    if (!deepEqual(status, current.status)) {
      this.api.commitUpdate(this.api.resource(RS), { ...current, status }, current);
    }
    const owner = controllerOf(current);
    if (owner?.kind !== 'Deployment') return;
    const deployment = this.api.store.get<RawReplicaSet>(DEPLOY, current.metadata.namespace, owner.name);
    if (deployment === undefined || deployment.metadata.uid !== owner.uid) return;
    const dStatus = {
      observedGeneration: deployment.metadata.generation ?? 1,
      replicas: pods.length,
      updatedReplicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      ...(pods.length - ready > 0 ? { unavailableReplicas: pods.length - ready } : {}),
    };
    if (!deepEqual(dStatus, deployment.status)) {
      this.api.commitUpdate(this.api.resource(DEPLOY), { ...deployment, status: dStatus }, deployment);
    }
  }
}
