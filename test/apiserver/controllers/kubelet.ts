// A kubelet stand-in for every node: a pod bound to an existing node that is still Pending becomes Running with
// every container started and Ready `readyDelayMs` after it was bound (default 0), through a status write like the
// kubelet's. Pods matching the `stayPending` predicate are left Pending forever (e.g. an image that never pulls).
// Graceful termination is handled by the API layer (see podTerminationDelayMs), not here.

import type { KubeApi } from '../api.js';
import type { TimerHandle, TimerSet } from '../clock.js';
import { isTerminal, isTerminating, runningStatus } from '../pods.js';
import type { StoreEvent } from '../store.js';
import type { RawPod } from '../types.js';
import { objectKey } from '../types.js';

export interface KubeletOptions {
  /** Time from binding to Running+Ready. Default 0. */
  readyDelayMs?: number;
  /** Pods for which this returns true never start. */
  stayPending?: (pod: RawPod) => boolean;
}

export interface Start {
  namespace: string;
  name: string;
  node: string;
  time: number;
}

export class Kubelet {
  private readonly starting = new Map<string, { uid: string; due: number; timer: TimerHandle | undefined }>();
  private unsubscribe: (() => void) | undefined;
  private readyDelayMs: number;
  private stayPending: (pod: RawPod) => boolean;
  /** Every pod started, in order. */
  readonly started: Start[] = [];

  constructor(
    private readonly api: KubeApi,
    private readonly timers: TimerSet,
    options: KubeletOptions = {},
  ) {
    this.readyDelayMs = options.readyDelayMs ?? 0;
    this.stayPending = options.stayPending ?? (() => false);
  }

  get running(): boolean {
    return this.unsubscribe !== undefined;
  }

  setReadyDelay(ms: number): void {
    this.readyDelayMs = ms;
  }

  setStayPending(predicate: (pod: RawPod) => boolean): void {
    this.stayPending = predicate;
  }

  start(): void {
    if (this.running) return;
    this.unsubscribe = this.api.store.onEvent((event) => this.observe(event));
    for (const pod of this.api.store.iterate<RawPod>('pods')) this.consider(pod);
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const entry of this.starting.values()) this.timers.clear(entry.timer);
    this.starting.clear();
  }

  /** Pods bound and waiting to start (including those whose delay has not elapsed). */
  pending(): number {
    return this.starting.size;
  }

  /** Pods whose start is due now (their delay has elapsed). */
  due(): number {
    const now = this.api.now();
    let n = 0;
    for (const entry of this.starting.values()) if (entry.due <= now) n++;
    return n;
  }

  /** Starts every pod whose delay has elapsed. */
  syncNow(): void {
    const now = this.api.now();
    for (const [key, entry] of [...this.starting]) {
      if (entry.due <= now) this.run(key);
    }
  }

  private observe(event: StoreEvent): void {
    if (event.storage === 'nodes' && event.type === 'ADDED') {
      for (const pod of this.api.store.iterate<RawPod>('pods')) {
        if (pod.spec.nodeName === event.object.metadata.name) this.consider(pod);
      }
      return;
    }
    if (event.storage !== 'pods') return;
    if (event.type === 'DELETED') {
      const key = objectKey(event.object.metadata.namespace, event.object.metadata.name ?? '');
      this.timers.clear(this.starting.get(key)?.timer);
      this.starting.delete(key);
      return;
    }
    this.consider(event.object as RawPod);
  }

  private wantsStart(pod: RawPod): boolean {
    return (
      Boolean(pod.spec.nodeName) &&
      (pod.status?.phase === undefined || pod.status.phase === 'Pending') &&
      !isTerminating(pod) &&
      !isTerminal(pod) &&
      this.api.store.get('nodes', undefined, pod.spec.nodeName ?? '') !== undefined &&
      !this.stayPending(pod)
    );
  }

  private consider(pod: RawPod): void {
    const key = objectKey(pod.metadata.namespace, pod.metadata.name ?? '');
    const existing = this.starting.get(key);
    if (existing !== undefined && existing.uid === pod.metadata.uid) return;
    if (!this.wantsStart(pod)) return;
    const entry = {
      uid: pod.metadata.uid ?? '',
      due: this.api.now() + this.readyDelayMs,
      timer: undefined as TimerHandle | undefined,
    };
    this.starting.set(key, entry);
    entry.timer = this.timers.set(() => this.run(key), this.readyDelayMs);
  }

  private run(key: string): void {
    const entry = this.starting.get(key);
    if (entry === undefined) return;
    this.timers.clear(entry.timer);
    this.starting.delete(key);
    const [namespace, name] = key.split('/') as [string, string];
    const pod = this.api.store.get<RawPod>('pods', namespace, name);
    if (pod === undefined || pod.metadata.uid !== entry.uid || !this.wantsStart(pod)) return;
    const next: RawPod = { ...pod, status: runningStatus(pod, this.api.now()) };
    this.api.commitUpdate(this.api.resource('pods'), next, pod);
    this.started.push({ namespace, name, node: pod.spec.nodeName ?? '', time: this.api.now() });
  }
}
