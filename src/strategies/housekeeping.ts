// Pieces the housekeeping strategies (podLifeTime, tooManyRestarts, failedPods) share: what a pod's status says
// (its reasons, exit codes, restarts), ages as people read them, owner kinds, and the list fields of their sections.
import { typeName, type Obj } from '../model/rawJson.js';
import type { PodInfo } from '../model/types.js';
import type { SectionReader } from './types.js';

/** The waiting or terminated reasons of the pod's containers (and init containers when asked). */
export function containerReasons(pod: PodInfo, includingInit: boolean): readonly string[] {
  const d = pod.statusDetail;
  if (d === undefined) return [];
  return includingInit ? [...d.reasons, ...d.initReasons] : d.reasons;
}

/** The exit codes of the pod's terminated containers (and init containers when asked). */
export function exitCodesOf(pod: PodInfo, includingInit: boolean): readonly number[] {
  const d = pod.statusDetail;
  if (d === undefined) return [];
  return includingInit ? [...d.exitCodes, ...d.initExitCodes] : d.exitCodes;
}

/** The kind of the pod's controller (`ReplicaSet`, `Job`, …), or undefined for a bare pod. */
export function ownerKind(pod: PodInfo): string | undefined {
  return pod.owner?.kind;
}

/** An age or duration as people read it: 45s, 12m, 5h20m, 8d3h. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  return h % 24 === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${h % 24}h`;
}

/** Oldest first, then by namespace and name, so a plan is the same whatever the order of the snapshot. */
export function oldestFirst(a: PodInfo, b: PodInfo): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A Kubernetes kind: an UpperCamelCase identifier. */
export function kindProblem(kind: string): string | undefined {
  return /^[A-Z][A-Za-z0-9]{0,62}$/.test(kind) ? undefined : 'must be a resource kind such as Job or ReplicaSet';
}

/** A list of distinct container exit codes (int32). */
export function readExitCodes(r: SectionReader, section: Obj | undefined, path: string): number[] | undefined {
  const value = section?.['exitCodes'];
  if (value === undefined || value === null) return undefined;
  const field = `${path}.exitCodes`;
  if (!Array.isArray(value)) return r.fail(field, `must be a list of integers (got ${typeName(value)})`);
  const out: number[] = [];
  value.forEach((item: unknown, i) => {
    if (typeof item !== 'number' || !Number.isInteger(item) || item < -2147483648 || item > 2147483647) {
      return r.fail(`${field}[${i}]`, `must be an integer exit code (got ${typeName(item)})`);
    }
    if (out.includes(item)) return r.fail(`${field}[${i}]`, `duplicate entry ${item}`);
    out.push(item);
  });
  return out;
}

/** A descheduler `...Seconds` value as a Go duration: 86400 → "24h", 5400 → "1h30m", 90 → "1m30s". */
export function secondsAsDuration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const [h, m, rest] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const text = `${h > 0 ? `${h}h` : ''}${m > 0 ? `${m}m` : ''}${rest > 0 ? `${rest}s` : ''}`;
  return text === '' ? '0s' : text;
}
