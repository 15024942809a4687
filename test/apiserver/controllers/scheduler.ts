// A small scheduler: binds each unscheduled pod (no spec.nodeName, not terminating, not finished, no scheduling
// gates, schedulerName default-scheduler or unset) through the pods/binding logic, choosing the node with a
// pluggable function. Work happens in passes: a pass starts `bindDelayMs` after the first pod is queued and takes
// every queued pod, in priority order then by creation time, handing all of them the same ClusterState (so a
// function may cache per state object; raise bindDelayMs to batch more pods per pass at scale). When the function
// returns undefined the pod gets PodScheduled=False/Unschedulable (as kube-scheduler reports it) and is retried when
// a node is added or changes, when a pod is deleted, and every `retryIntervalMs`.
// The default function picks the least-loaded node (fewest non-finished pods) whose labels satisfy the pod's
// nodeSelector — nothing else (no resources, taints, affinity or spread); tests plug in the real simulation.

import type { KubeApi } from '../api.js';
import type { TimerHandle, TimerSet } from '../clock.js';
import { isTerminal, isTerminating, setCondition } from '../pods.js';
import type { StoreEvent } from '../store.js';
import type { RawNode, RawPod } from '../types.js';
import { objectKey } from '../types.js';

/** What the scheduling function sees: every node and every pod (stored objects: do not mutate them). */
export interface ClusterState {
  nodes: RawNode[];
  pods: RawPod[];
  /**
   * Non-finished pods per node name, kept current by the scheduler (bindings made earlier in the same pass
   * included). Optional for callers that build a state themselves.
   */
  podsPerNode?: ReadonlyMap<string, number>;
}

/** Returns the node to bind `pod` to, or undefined when no node fits. */
export type ScheduleFunction = (pod: RawPod, state: ClusterState) => string | undefined;

function countPodsPerNode(pods: RawPod[]): Map<string, number> {
  const load = new Map<string, number>();
  for (const p of pods) {
    const node = p.spec.nodeName;
    if (node && !isTerminal(p)) load.set(node, (load.get(node) ?? 0) + 1);
  }
  return load;
}

/** The default: the least-loaded node whose labels satisfy the pod's nodeSelector (ties: lowest name). */
export const leastLoadedNodeSelectorOnly: ScheduleFunction = (pod, state) => {
  const selector = Object.entries(pod.spec.nodeSelector ?? {});
  const load = state.podsPerNode ?? countPodsPerNode(state.pods);
  let best: { name: string; load: number } | undefined;
  for (const node of state.nodes) {
    const labels = node.metadata.labels ?? {};
    if (!selector.every(([k, v]) => labels[k] === v)) continue;
    const name = node.metadata.name ?? '';
    const nodeLoad = load.get(name) ?? 0;
    if (best === undefined || nodeLoad < best.load || (nodeLoad === best.load && name < best.name)) {
      best = { name, load: nodeLoad };
    }
  }
  return best?.name;
};

export interface SchedulerOptions {
  schedule?: ScheduleFunction;
  /** Delay between a pod becoming schedulable and its binding. Default 0. */
  bindDelayMs?: number;
  /** Retry period for unschedulable pods. Default 1000. */
  retryIntervalMs?: number;
}

export interface Placement {
  namespace: string;
  name: string;
  node: string;
  time: number;
}

export class Scheduler {
  private readonly queue = new Set<string>();
  private readonly unschedulable = new Set<string>();
  /** Non-finished pods per node, maintained from store events while running. */
  private readonly podsPerNode = new Map<string, number>();
  private flushTimer: TimerHandle | undefined;
  private retryTimer: TimerHandle | undefined;
  private unsubscribe: (() => void) | undefined;
  private scheduleFn: ScheduleFunction;
  private bindDelayMs: number;
  private readonly retryIntervalMs: number;
  /** Every binding made, in order. */
  readonly placements: Placement[] = [];
  /** Errors thrown by the scheduling function or the binding, newest last. */
  readonly errors: string[] = [];

  constructor(
    private readonly api: KubeApi,
    private readonly timers: TimerSet,
    options: SchedulerOptions = {},
  ) {
    this.scheduleFn = options.schedule ?? leastLoadedNodeSelectorOnly;
    this.bindDelayMs = options.bindDelayMs ?? 0;
    this.retryIntervalMs = options.retryIntervalMs ?? 1000;
  }

  get running(): boolean {
    return this.unsubscribe !== undefined;
  }

  setScheduleFunction(fn: ScheduleFunction): void {
    this.scheduleFn = fn;
    this.retryUnschedulable();
  }

  setBindDelay(ms: number): void {
    this.bindDelayMs = ms;
  }

  start(): void {
    if (this.running) return;
    this.unsubscribe = this.api.store.onEvent((event) => this.observe(event));
    for (const pod of this.api.store.iterate<RawPod>('pods')) {
      this.countPod(pod, 1);
      this.consider(pod);
    }
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.timers.clear(this.flushTimer);
    this.timers.clear(this.retryTimer);
    this.flushTimer = undefined;
    this.retryTimer = undefined;
    this.queue.clear();
    this.unschedulable.clear();
    this.podsPerNode.clear();
  }

  private countPod(pod: RawPod, delta: 1 | -1): void {
    const node = pod.spec?.nodeName;
    if (!node || isTerminal(pod)) return;
    const next = (this.podsPerNode.get(node) ?? 0) + delta;
    if (next <= 0) this.podsPerNode.delete(node);
    else this.podsPerNode.set(node, next);
  }

  /** Pods waiting for a scheduling attempt (not counting those found unschedulable). */
  pending(): number {
    return this.queue.size;
  }

  /** Keys (`namespace/name`) of pods the last attempt could not place. */
  unschedulablePods(): string[] {
    return [...this.unschedulable];
  }

  private wantsScheduling(pod: RawPod): boolean {
    const scheduler = pod.spec?.schedulerName;
    return (
      !pod.spec?.nodeName &&
      !isTerminating(pod) &&
      !isTerminal(pod) &&
      (pod.spec?.schedulingGates ?? []).length === 0 &&
      (scheduler === undefined || scheduler === 'default-scheduler')
    );
  }

  private consider(pod: RawPod): void {
    const key = objectKey(pod.metadata.namespace, pod.metadata.name ?? '');
    if (this.wantsScheduling(pod)) {
      if (!this.unschedulable.has(key)) this.queue.add(key);
    } else {
      this.queue.delete(key);
      this.unschedulable.delete(key);
    }
  }

  private observe(event: StoreEvent): void {
    if (event.storage === 'pods') {
      if (event.prev !== undefined) this.countPod(event.prev as RawPod, -1);
      if (event.type !== 'DELETED') this.countPod(event.object as RawPod, 1);
      if (event.type === 'DELETED') {
        const key = objectKey(event.object.metadata.namespace, event.object.metadata.name ?? '');
        this.queue.delete(key);
        this.unschedulable.delete(key);
        this.retryUnschedulable();
      } else {
        this.consider(event.object as RawPod);
      }
    } else if (event.storage === 'nodes') {
      this.retryUnschedulable();
    } else {
      return;
    }
    this.schedule();
  }

  private retryUnschedulable(): void {
    for (const key of this.unschedulable) this.queue.add(key);
    this.unschedulable.clear();
    this.schedule();
  }

  private schedule(): void {
    if (!this.running || this.flushTimer !== undefined || this.queue.size === 0) return;
    this.flushTimer = this.timers.set(() => {
      this.flushTimer = undefined;
      this.syncNow();
    }, this.bindDelayMs);
  }

  /** Runs one scheduling pass over every queued pod now. */
  syncNow(): void {
    this.timers.clear(this.flushTimer);
    this.flushTimer = undefined;
    if (this.queue.size === 0) return;
    const candidates: RawPod[] = [];
    for (const key of this.queue) {
      const [namespace, name] = key.split('/') as [string, string];
      const pod = this.api.store.get<RawPod>('pods', namespace, name);
      if (pod !== undefined && this.wantsScheduling(pod)) candidates.push(pod);
    }
    this.queue.clear();
    candidates.sort(
      (a, b) =>
        (b.spec.priority ?? 0) - (a.spec.priority ?? 0) ||
        ((a.metadata.creationTimestamp ?? '') < (b.metadata.creationTimestamp ?? '') ? -1 : 1),
    );
    // `pods` is listed on first use (the default function never needs it). Later pods of a pass must see earlier
    // bindings: the bound version replaces the pod in the listed array.
    const store = this.api.store;
    let pods: RawPod[] | undefined;
    const state: ClusterState = {
      nodes: store.list<RawNode>('nodes'),
      get pods(): RawPod[] {
        pods ??= store.list<RawPod>('pods');
        return pods;
      },
      podsPerNode: this.podsPerNode,
    };
    let position: Map<RawPod, number> | undefined;
    candidates.forEach((pod, i) => {
      const bound = this.place(pod, state);
      if (bound === undefined || pods === undefined || i === candidates.length - 1) return;
      position ??= new Map(pods.map((p, j) => [p, j]));
      const index = position.get(pod);
      if (index !== undefined) {
        pods[index] = bound;
        position.set(bound, index);
      }
    });
    if (this.unschedulable.size > 0 && this.retryTimer === undefined) {
      this.retryTimer = this.timers.set(() => {
        this.retryTimer = undefined;
        this.retryUnschedulable();
      }, this.retryIntervalMs);
    }
  }

  /** Tries to bind `pod`; returns the bound pod, or undefined when it stays unscheduled. */
  private place(pod: RawPod, state: ClusterState): RawPod | undefined {
    const namespace = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    const key = objectKey(namespace, name);
    let node: string | undefined;
    try {
      node = this.scheduleFn(pod, state);
    } catch (err) {
      this.errors.push(`${key}: ${(err as Error).message}`);
    }
    if (node === undefined) {
      this.unschedulable.add(key);
      this.markUnschedulable(pod, state.nodes.length);
      return undefined;
    }
    try {
      this.api.bind(namespace, name, { metadata: { name }, target: { kind: 'Node', name: node } });
    } catch (err) {
      this.errors.push(`${key}: ${(err as Error).message}`);
      return undefined;
    }
    this.placements.push({ namespace, name, node, time: this.api.now() });
    return this.api.store.get<RawPod>('pods', namespace, name);
  }

  private markUnschedulable(pod: RawPod, nodeCount: number): void {
    const conditions = setCondition(
      pod.status?.conditions,
      {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: `0/${nodeCount} nodes are available: no node fits the test scheduler's placement function.`,
        lastProbeTime: null,
      },
      this.api.now(),
    );
    this.api.commitUpdate(this.api.resource('pods'), { ...pod, status: { ...(pod.status ?? {}), conditions } }, pod);
  }
}
