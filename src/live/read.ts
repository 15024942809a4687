// Reading a live cluster for `plan`/`simulate --kubeconfig`: GET-only list calls, in pages (limit + continue), that
// return the same raw objects `kubectl get … -o json` prints, so they convert exactly as a saved file's objects and
// the plan is the one `--snapshot` would give. The GETs go through the operator's client runtime (getter.ts: its
// limiter, Retry-After, deadlines, keep-alive resend), and liveSnapshot.ts converts each page as it arrives.
//
// Kinds a cluster may not serve are optional: the RebalancePolicy CRD may not be installed, and a test or trimmed-down
// API server may not serve storage objects. Their 404 is "none", and a 403 on them is a warning (a read-only role
// without storage access still gets a plan); a failure on the core kinds the plan needs is an error.
//
// metrics.k8s.io (NodeMetrics, PodMetrics) is read only for a policy with `usage: Metrics` (readUsageMetrics); when
// it does not answer, the plan says so (its `degraded` list) rather than failing or planning on requests.
import { FieldError } from '../errors.js';
import { LiveReadError, type Getter } from '../kube/getter.js';
import {
  METRICS_GROUP,
  METRICS_VERSION,
  metricsApiProblem,
  readingFromItems,
  type PodNodeLookup,
} from '../kube/metricsReader.js';
import { isObj } from '../model/rawJson.js';
import type { UsageMetrics } from '../model/types.js';

export { kubeGetter, LiveReadError, type Getter, type HttpAnswer } from '../kube/getter.js';

export interface ListedKind {
  readonly kind: string;
  readonly apiVersion: string;
  /** The collection path, cluster-wide (all namespaces). */
  readonly path: string;
  /** Absent from the cluster (404) or not readable (403) is not an error. */
  readonly optional: boolean;
}

const core = (kind: string, resource: string, optional = false): ListedKind => ({
  kind,
  apiVersion: 'v1',
  path: `/api/v1/${resource}`,
  optional,
});
const grouped = (kind: string, groupVersion: string, resource: string, optional = false): ListedKind => ({
  kind,
  apiVersion: groupVersion,
  path: `/apis/${groupVersion}/${resource}`,
  optional,
});

/** What a plan reads, in the order it is read (PriorityClasses before the pods whose priority they resolve). */
export const LISTED_KINDS: readonly ListedKind[] = [
  core('Namespace', 'namespaces'),
  core('Node', 'nodes'),
  grouped('PriorityClass', 'scheduling.k8s.io/v1', 'priorityclasses'),
  core('Pod', 'pods'),
  grouped('PodDisruptionBudget', 'policy/v1', 'poddisruptionbudgets'),
  core('PersistentVolume', 'persistentvolumes', true),
  core('PersistentVolumeClaim', 'persistentvolumeclaims', true),
  grouped('StorageClass', 'storage.k8s.io/v1', 'storageclasses', true),
  grouped('CSINode', 'storage.k8s.io/v1', 'csinodes', true),
  grouped('RebalancePolicy', 'rebalancer.dev/v1alpha1', 'rebalancepolicies', true),
];

export interface ReadOptions {
  /** Items per page (default 500, as kubectl). */
  readonly pageSize?: number;
  readonly warn?: (line: string) => void;
  /** Called after each page with the kind and how many of it were read so far. */
  readonly progress?: (kind: string, count: number) => void;
}

function statusMessage(body: unknown): string {
  return isObj(body) && typeof body['message'] === 'string' ? body['message'] : '';
}

/** Where the pages of one kind go: `reset` drops what came before (the list starts over after a 410). */
export interface PageSink {
  reset(): void;
  add(items: readonly unknown[]): void;
}

/** Lists started over at most this often for one kind before the 410 is an error (each read is consistent). */
const MAX_RELISTS = 5;

/**
 * Every object of one kind, page by page, handed to `sink` as each page arrives (so a caller may convert and drop
 * the raw objects). A continue token that expired mid-list (410) starts the list over from the beginning, as a
 * reflector does, so the result is never a mix of two versions of the cluster. Returns 'absent' for an optional
 * kind the cluster does not serve or lets this user read.
 */
export async function listKindInto(
  get: Getter,
  listed: ListedKind,
  sink: PageSink,
  opts: ReadOptions = {},
): Promise<'absent' | 'read'> {
  const limit = opts.pageSize ?? 500;
  for (let attempt = 0; ; attempt++) {
    let token: string | undefined;
    let expired = false;
    let count = 0;
    sink.reset();
    do {
      const query = `?limit=${limit}${token !== undefined ? `&continue=${encodeURIComponent(token)}` : ''}`;
      const answer = await get(`${listed.path}${query}`);
      if (answer.status === 410 && token !== undefined && attempt < MAX_RELISTS) {
        expired = true;
        break;
      }
      if (answer.status === 404 && listed.optional) return 'absent';
      if (answer.status === 403 && listed.optional) {
        opts.warn?.(`warning: cannot list ${listed.path} (forbidden): read without ${listed.kind}s`);
        return 'absent';
      }
      if (answer.status !== 200 || !isObj(answer.body) || !Array.isArray(answer.body['items'])) {
        const detail = statusMessage(answer.body);
        throw new LiveReadError(
          `cannot list ${listed.path}: HTTP ${answer.status}${detail !== '' ? `: ${detail}` : ''}`,
        );
      }
      // List items carry no kind of their own; kubectl adds it, and so does this, so the objects are the same.
      const items = (answer.body['items'] as unknown[]).map((item) =>
        isObj(item) ? { apiVersion: listed.apiVersion, kind: listed.kind, ...item } : item,
      );
      count += items.length;
      sink.add(items);
      opts.progress?.(listed.kind, count);
      const meta = answer.body['metadata'];
      const next = isObj(meta) && typeof meta['continue'] === 'string' ? meta['continue'] : '';
      token = next !== '' ? next : undefined;
    } while (token !== undefined);
    if (!expired) return 'read';
  }
}

/** Every object of one kind as raw objects (tests, and small kinds). */
export async function listKind(get: Getter, listed: ListedKind, opts: ReadOptions = {}): Promise<unknown[] | 'absent'> {
  let items: unknown[] = [];
  const read = await listKindInto(
    get,
    listed,
    { reset: () => (items = []), add: (page) => void items.push(...page) },
    opts,
  );
  return read === 'absent' ? 'absent' : items;
}

/** The cluster as one `kind: List`, ready for snapshotFromObjects; absent optional kinds are simply not there. */
export async function readCluster(get: Getter, opts: ReadOptions = {}): Promise<unknown> {
  const items: unknown[] = [];
  for (const listed of LISTED_KINDS) {
    const objects = await listKind(get, listed, opts);
    if (objects !== 'absent') for (const o of objects) items.push(o);
  }
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}

/**
 * NodeMetrics and PodMetrics, for a policy with `usage: Metrics`: one list of each (the metrics API neither pages nor
 * watches). Any status but 200 makes the reading unavailable with that status, for the plan to report.
 */
export async function readUsageMetrics(get: Getter, nodeOf: PodNodeLookup, now: number): Promise<UsageMetrics> {
  const items: Record<'nodes' | 'pods', unknown[]> = { nodes: [], pods: [] };
  for (const plural of ['nodes', 'pods'] as const) {
    const answer = await get(`/apis/${METRICS_GROUP}/${METRICS_VERSION}/${plural}`);
    if (answer.status !== 200 || !isObj(answer.body) || !Array.isArray(answer.body['items'])) {
      const detail = statusMessage(answer.body);
      const message =
        metricsApiProblem(answer.status, plural, detail) ??
        `${METRICS_GROUP}/${METRICS_VERSION} ${plural}: HTTP ${answer.status}${detail !== '' ? ` (${detail})` : ''}`;
      return { available: false, message };
    }
    items[plural] = answer.body['items'] as unknown[];
  }
  try {
    return readingFromItems(items.nodes, items.pods, nodeOf, now);
  } catch (err) {
    if (!(err instanceof FieldError)) throw err;
    return { available: false, message: `${METRICS_GROUP}/${METRICS_VERSION}: ${err.field}: ${err.problem}` };
  }
}
