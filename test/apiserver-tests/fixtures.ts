// Small builders and helpers for the test API server's own tests.
import { ApiException } from '@kubernetes/client-node';
import type { RawNode, RawPdb, RawPod, Status } from '../apiserver/index.js';
import { runningStatus } from '../apiserver/index.js';

export function node(name: string, labels: Record<string, string> = {}): RawNode {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
    spec: {},
    status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '4', memory: '16Gi', pods: '110' } },
  };
}

export interface PodOptions {
  namespace?: string;
  labels?: Record<string, string>;
  /** Bound to this node; the pod is Running and Ready unless `ready: false` or another phase is given. */
  nodeName?: string;
  ready?: boolean;
  phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed';
  ownerReferences?: RawPod['metadata']['ownerReferences'];
}

export function pod(name: string, options: PodOptions = {}): RawPod {
  const p: RawPod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: options.namespace ?? 'default', labels: options.labels ?? {} },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1.0' }] },
  };
  if (options.ownerReferences) p.metadata.ownerReferences = options.ownerReferences;
  if (options.nodeName !== undefined) {
    p.spec.nodeName = options.nodeName;
    p.status = runningStatus(p, Date.now(), options.ready ?? true);
  }
  if (options.phase !== undefined) p.status = { ...(p.status ?? {}), phase: options.phase };
  if (options.phase === undefined && options.nodeName === undefined) p.status = { phase: 'Pending' };
  return p;
}

export interface PdbOptions {
  namespace?: string;
  minAvailable?: number | string;
  maxUnavailable?: number | string;
  matchLabels?: Record<string, string>;
  unhealthyPodEvictionPolicy?: 'IfHealthyBudget' | 'AlwaysAllow';
}

export function pdb(name: string, options: PdbOptions): RawPdb {
  const spec: RawPdb['spec'] = { selector: { matchLabels: options.matchLabels ?? {} } };
  if (options.minAvailable !== undefined) spec.minAvailable = options.minAvailable;
  if (options.maxUnavailable !== undefined) spec.maxUnavailable = options.maxUnavailable;
  if (options.unhealthyPodEvictionPolicy !== undefined)
    spec.unhealthyPodEvictionPolicy = options.unhealthyPodEvictionPolicy;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace: options.namespace ?? 'default' },
    spec,
  };
}

export interface CaughtApiError {
  code: number;
  status: Status;
  headers: Record<string, string>;
}

/** Awaits a client-node call that must fail and returns its HTTP code, parsed Status body and headers. */
export async function apiError(call: Promise<unknown>): Promise<CaughtApiError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof ApiException) {
      const raw: unknown = err.body;
      const status = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Status;
      return { code: err.code, status, headers: err.headers };
    }
    throw err;
  }
  throw new Error('expected the call to fail');
}

/** Polls `check` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false && value !== 0 && value !== '') return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
