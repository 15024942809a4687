// Reads metrics.k8s.io (NodeMetrics and PodMetrics, what `kubectl top` shows) for the utilization strategies with
// `usage: Metrics`: one list of each per cycle (the metrics API has no watch), through the operator's client, so the
// shared rate limiter, the credentials and the transport's Retry-After handling apply. PodMetrics are listed for all
// namespaces (one request; the policy's namespaces filter the candidates, not the usage of the nodes).
//
// When the API does not answer with metrics:
//   - 404 (no metrics-server, or its APIService is not registered), 503 (the APIService is registered but its
//     backend is unavailable), 403 (the role lacks metrics.k8s.io): unavailable, with the reason and the status;
//   - 429 (already retried by the transport after each Retry-After, capped), a 5xx, a network error or an answer that
//     does not convert: the last good reading is used again while it is younger than STALE_READING_MS, so one
//     throttled cycle does not stop a policy; after that, unavailable.
// An unavailable reading makes those strategies plan nothing and their policy Degraded (reason MetricsUnavailable),
// never a silent fallback to requests.
import type { Clock } from '../clock.js';
import { FieldError } from '../errors.js';
import type { UsageMetrics, UsageReading } from '../model/types.js';
import { convertNodeMetrics, convertPodMetrics, describeObject, usageReading } from '../snapshot/convert.js';
import { ApiError, type KubeApi } from './kubeClient.js';

export const METRICS_GROUP = 'metrics.k8s.io';
export const METRICS_VERSION = 'v1beta1';

/** How long a reading may stand in for one that failed transiently (two metrics-server scrape windows and more). */
export const STALE_READING_MS = 120_000;

/** Where each pod runs now (the reading keeps it: PodMetrics do not say). */
export type PodNodeLookup = (namespace: string, name: string) => string | undefined;

/** Why metrics.k8s.io gave no metrics, by HTTP status; undefined for a status worth retrying next cycle. */
export function metricsApiProblem(status: number, resource: string, detail = ''): string | undefined {
  const what = `${METRICS_GROUP}/${METRICS_VERSION} ${resource}: HTTP ${status}${detail !== '' ? ` (${detail})` : ''}`;
  if (status === 404) return `${what}: the metrics API is not served (no metrics-server, or no APIService for it)`;
  if (status === 503) return `${what}: the metrics APIService is registered but its backend is unavailable`;
  if (status === 403) return `${what}: not allowed to list it (the ClusterRole needs get/list)`;
  // Not a grant: the request was not authenticated at all (an expired or revoked token, a rotated certificate).
  if (status === 401) return `${what}: the API server did not accept this client's credentials`;
  return undefined;
}

/** Converts listed NodeMetrics and PodMetrics items; FieldError names the object. */
export function readingFromItems(
  nodes: readonly unknown[],
  pods: readonly unknown[],
  nodeOf: PodNodeLookup,
  readAt: number,
): UsageReading {
  const convert = <T>(kind: string, items: readonly unknown[], f: (raw: unknown) => T): T[] =>
    items.map((raw, i) => {
      try {
        return f(raw);
      } catch (err) {
        if (!(err instanceof FieldError)) throw err;
        const object = describeObject(kind, raw) ?? `${kind} at items[${i}]`;
        throw new FieldError(`${object}: ${err.field}`, err.problem);
      }
    });
  return usageReading(
    convert('NodeMetrics', nodes, convertNodeMetrics),
    convert('PodMetrics', pods, convertPodMetrics),
    nodeOf,
    readAt,
  );
}

export interface MetricsReaderOptions {
  readonly clock: Clock;
  /** Default STALE_READING_MS. */
  readonly maxStaleMs?: number;
  /**
   * Told when a stale reading stands in, or why there is none (for the log). A missing or refused API is told once,
   * not every cycle (the policy's Degraded condition carries it meanwhile), and again only when the problem changes.
   */
  readonly onProblem?: (message: string, reused: boolean) => void;
  /** Told once when the API answers again after a problem was told. */
  readonly onRecovered?: () => void;
}

export class MetricsReader {
  private last: { readonly reading: UsageReading; readonly at: number } | undefined;
  /** One read at a time: policies whose cycles start together share it. */
  private pending: Promise<UsageMetrics> | undefined;
  /** The unavailability last told, so that a cluster without metrics-server is not reported every cycle. */
  private told: string | undefined;

  constructor(
    private readonly api: Pick<KubeApi, 'custom'>,
    private readonly opts: MetricsReaderOptions,
  ) {}

  read(nodeOf: PodNodeLookup): Promise<UsageMetrics> {
    this.pending ??= this.readOnce(nodeOf).finally(() => (this.pending = undefined));
    return this.pending;
  }

  private async list(plural: 'nodes' | 'pods'): Promise<readonly unknown[]> {
    const answer = await this.api.custom.listClusterCustomObject({
      group: METRICS_GROUP,
      version: METRICS_VERSION,
      plural,
    });
    const items: unknown = answer.items;
    if (!Array.isArray(items)) throw new FieldError(`${plural}: items`, 'the answer is not a list');
    return items as readonly unknown[];
  }

  private async readOnce(nodeOf: PodNodeLookup): Promise<UsageMetrics> {
    const readAt = this.opts.clock.wall();
    let failure: string;
    let resource: 'nodes' | 'pods' = 'nodes';
    try {
      const nodes = await this.list(resource);
      resource = 'pods';
      const pods = await this.list(resource);
      const reading = readingFromItems(nodes, pods, nodeOf, readAt);
      this.last = { reading, at: this.opts.clock.now() };
      if (this.told !== undefined) {
        this.told = undefined;
        this.opts.onRecovered?.();
      }
      return reading;
    } catch (err) {
      if (err instanceof ApiError) {
        const definite = metricsApiProblem(err.code, resource, apiMessage(err));
        if (definite !== undefined) {
          this.tell(definite);
          return { available: false, message: definite };
        }
        failure = `${METRICS_GROUP}/${METRICS_VERSION} ${resource}: HTTP ${err.code}${
          err.code === 429 ? ' (still throttled after the Retry-After waits)' : ''
        }`;
      } else if (err instanceof FieldError) {
        failure = `${METRICS_GROUP}/${METRICS_VERSION}: ${err.field !== '' ? `${err.field}: ` : ''}${err.problem}`;
      } else {
        failure = `${METRICS_GROUP}/${METRICS_VERSION}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
      }
    }
    const last = this.last;
    const age = last === undefined ? Infinity : this.opts.clock.now() - last.at;
    if (last !== undefined && age <= (this.opts.maxStaleMs ?? STALE_READING_MS)) {
      this.opts.onProblem?.(`${failure}; using the reading of ${Math.round(age / 1000)}s ago`, true);
      return last.reading;
    }
    const message =
      last === undefined ? failure : `${failure}; the last reading (${Math.round(age / 1000)}s ago) is too old to use`;
    this.tell(message);
    return { available: false, message };
  }

  private tell(message: string): void {
    if (message === this.told) return;
    this.told = message;
    this.opts.onProblem?.(message, false);
  }
}

/** The Status message of an error answer, if it has one. */
function apiMessage(err: ApiError): string {
  try {
    const body = JSON.parse(err.body) as { message?: unknown };
    return typeof body.message === 'string' ? body.message : '';
  } catch {
    return '';
  }
}
