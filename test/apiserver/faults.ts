// Fault injection and the request log. Both key requests the way Kubernetes' RequestInfo does: a verb (get, list,
// watch, create, update, patch, delete, deletecollection), an API group, a resource with its subresource
// (`pods`, `pods/eviction`, `poddisruptionbudgets/status`), a namespace and a name.

import type { Clock } from './clock.js';

export interface RequestInfo {
  verb: string;
  group: string;
  version: string;
  /** Plural resource, with `/subresource` when there is one. Empty for non-resource paths. */
  resource: string;
  namespace: string | undefined;
  name: string | undefined;
  /** The raw path and query. */
  url: string;
  /** The User-Agent header (empty when absent or not known). */
  userAgent?: string;
}

/** Which requests a fault or a count applies to; every given field must match (verbs: any of). */
export interface RequestMatch {
  verb?: string | string[];
  group?: string;
  /** Exact: `pods` does not match `pods/eviction`. */
  resource?: string;
  namespace?: string;
  name?: string;
  /** Lists only: true matches a request carrying a `continue` token (a page after the first), false one without. */
  continued?: boolean;
  /** Matches when the User-Agent header contains this text (one client among several). */
  userAgent?: string;
}

export function requestMatches(match: RequestMatch, info: RequestInfo): boolean {
  if (match.verb !== undefined) {
    const verbs = Array.isArray(match.verb) ? match.verb : [match.verb];
    if (!verbs.includes(info.verb)) return false;
  }
  if (match.group !== undefined && match.group !== info.group) return false;
  if (match.resource !== undefined && match.resource !== info.resource) return false;
  if (match.namespace !== undefined && match.namespace !== info.namespace) return false;
  if (match.name !== undefined && match.name !== info.name) return false;
  if (match.userAgent !== undefined && !(info.userAgent ?? '').includes(match.userAgent)) return false;
  if (match.continued !== undefined && /[?&]continue=/.test(info.url) !== match.continued) return false;
  return true;
}

export interface FailureSpec extends RequestMatch {
  /** HTTP status to answer with (e.g. 500, 503, 429). */
  status: number;
  /** How many matching requests fail (default 1; Infinity for "until cleared"). */
  count?: number;
  /** Sets the Retry-After header and details.retryAfterSeconds. */
  retryAfterSeconds?: number;
  message?: string;
}

export interface LatencySpec extends RequestMatch {
  ms: number;
  /** Default: every matching request until cleared. */
  count?: number;
}

export interface FaultHandle {
  /** Matching requests still to be affected. */
  remaining(): number;
  cancel(): void;
}

interface Armed<T> {
  spec: T;
  left: number;
}

export interface WatchControl {
  /** Closes matching open watch streams: `end` finishes the response cleanly, `destroy` resets the socket. */
  drop(match: RequestMatch, mode: 'end' | 'destroy'): number;
}

export class Faults {
  private failures: Armed<FailureSpec>[] = [];
  private latencies: Armed<LatencySpec>[] = [];
  private expiries: Armed<RequestMatch>[] = [];

  constructor(private readonly watches: WatchControl) {}

  /** The next `count` (default 1) requests matching `spec` fail with `spec.status`. */
  failNext(spec: FailureSpec): FaultHandle {
    return this.arm(this.failures, spec, spec.count ?? 1);
  }

  /** Adds `ms` of latency before matching requests are handled. */
  delay(spec: LatencySpec): FaultHandle {
    return this.arm(this.latencies, spec, spec.count ?? Infinity);
  }

  /** The next `count` matching watches get a watch event ERROR with a 410 Expired Status, then the stream ends. */
  expireNextWatch(match: RequestMatch & { count?: number } = {}): FaultHandle {
    return this.arm(this.expiries, { ...match, verb: 'watch' }, match.count ?? 1);
  }

  /** Closes the open watch streams matching `match` now; returns how many were closed. */
  dropWatches(match: RequestMatch = {}, mode: 'end' | 'destroy' = 'end'): number {
    return this.watches.drop(match, mode);
  }

  clear(): void {
    this.failures = [];
    this.latencies = [];
    this.expiries = [];
  }

  private arm<T extends RequestMatch>(list: Armed<T>[], spec: T, count: number): FaultHandle {
    const armed = { spec, left: count };
    list.push(armed);
    return {
      remaining: () => armed.left,
      cancel: () => {
        armed.left = 0;
      },
    };
  }

  private take<T extends RequestMatch>(list: Armed<T>[], info: RequestInfo): T | undefined {
    for (const armed of list) {
      if (armed.left > 0 && requestMatches(armed.spec, info)) {
        armed.left--;
        return armed.spec;
      }
    }
    return undefined;
  }

  /** @internal Latency to add to this request (sums every matching rule). */
  latencyFor(info: RequestInfo): number {
    let total = 0;
    for (const armed of this.latencies) {
      if (armed.left > 0 && requestMatches(armed.spec, info)) {
        armed.left--;
        total += armed.spec.ms;
      }
    }
    return total;
  }

  /** @internal The failure to inject into this request, if any. */
  failureFor(info: RequestInfo): FailureSpec | undefined {
    return this.take(this.failures, info);
  }

  /** @internal Whether this watch must be answered with 410 Expired. */
  expireWatch(info: RequestInfo): boolean {
    return this.take(this.expiries, info) !== undefined;
  }
}

export interface RequestRecord extends RequestInfo {
  /** Order of arrival, from 1. */
  seq: number;
  /** Clock time the request arrived (ms since epoch). */
  time: number;
  /** HTTP status answered (for watches: the status the stream opened with). */
  code: number;
  /** Time to the response (watches: to the response headers). */
  durationMs: number;
  /** True when `faults` produced the answer. */
  injected: boolean;
}

export interface CountFilter extends RequestMatch {
  code?: number;
}

export class Stats {
  private records: RequestRecord[] = [];
  private seq = 0;

  constructor(
    private readonly clock: Clock,
    private readonly limit: number,
  ) {}

  /** @internal */
  record(info: RequestInfo, start: number, code: number, injected: boolean): void {
    this.seq++;
    this.records.push({ ...info, seq: this.seq, time: start, code, durationMs: this.clock.now() - start, injected });
    if (this.records.length > this.limit) this.records.splice(0, this.records.length - this.limit);
  }

  /** Every request recorded (the last `requestLogLimit`), oldest first, optionally only those after `sinceSeq`. */
  requests(filter: CountFilter = {}, sinceSeq = 0): RequestRecord[] {
    return this.records.filter(
      (r) => r.seq > sinceSeq && requestMatches(filter, r) && (filter.code === undefined || filter.code === r.code),
    );
  }

  count(filter: CountFilter = {}, sinceSeq = 0): number {
    return this.requests(filter, sinceSeq).length;
  }

  /** Counters keyed `verb group/resource` (core group empty: `list /pods`). */
  counters(sinceSeq = 0): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const r of this.records) {
      if (r.seq <= sinceSeq) continue;
      const key = `${r.verb} ${r.group}/${r.resource}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  /** A sequence mark: pass it to `requests`/`count`/`counters` to see only what came after. */
  mark(): number {
    return this.seq;
  }

  reset(): void {
    this.records = [];
  }
}
