// The snapshot loader: a saved cluster (YAML or JSON, as `kubectl get nodes,pods,pdb,priorityclasses,namespaces,
// rebalancepolicies,pv,pvc,storageclasses,csinodes -A -o yaml|json` prints it) → ClusterSnapshot, plus the raw
// RebalancePolicies it holds. Volumes are not kept: each pod carries the topology of the volumes it mounts, and each
// node its CSINode's attach limits.
//
// Accepted layouts: one object, a `kind: List` (or any `*List`) with `items` (nested lists too), several YAML
// documents, or several concatenated JSON documents. NodeMetrics and PodMetrics (metrics.k8s.io) make the usage
// reading `usage: Metrics` plans with. Kinds other than the twelve used are counted and reported in one
// warning line. Every problem with the input surfaces as an InputError naming the file, the object and the field;
// nothing in here lets a stack trace reach the user for bad input.
import { FieldError, InputError } from '../errors.js';
import { internLabels } from '../model/intern.js';
import type { KubeVersion } from '../model/kubeVersion.js';
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
  UsageReading,
} from '../model/types.js';
import { withCsiNodeLimits, withVolumeTopology } from '../model/volumes.js';
import {
  ConversionCache,
  convertCsiNode,
  convertNamespace,
  convertNode,
  convertNodeMetrics,
  convertPodMetrics,
  convertPdb,
  convertPersistentVolume,
  convertPersistentVolumeClaim,
  convertPod,
  convertPriorityClass,
  convertStorageClass,
  describeObject,
  makePriorityResolver,
  usageReading,
  type NodeMetricsInfo,
  type PodMetricsInfo,
} from './convert.js';
import { parseDocuments, readInputFile } from './documents.js';
import { flattenObjects, type LocatedObject } from './located.js';

// Reading a file and flattening its documents live in documents.ts and located.ts (docs/adr/0014); the policy parser,
// `convert` and the scheduler configuration still import them from here, as before the move.
export { parseDocuments, readInputFile } from './documents.js';
export { flattenObjects } from './located.js';

export interface LoadOptions {
  /** The instant the snapshot describes (pod ages are measured against it); default: the current time. */
  readonly now?: number;
  /** Receives warning lines (ignored kinds); default: dropped. */
  readonly warn?: (line: string) => void;
  /** Receives what the load is doing now (for a progress line); default: dropped. */
  readonly progress?: (text: string) => void;
  /** The minor whose scheduler the placement follows (default: the newest supported). */
  readonly kubeVersion?: KubeVersion;
}

export interface RawPolicy {
  readonly raw: unknown;
  /** `RebalancePolicy name`, or the document position when it has no name. */
  readonly object: string;
}

export interface LoadResult {
  readonly snapshot: ClusterSnapshot;
  /** RebalancePolicies in file order, unparsed (parsePolicy validates them with this object name). */
  readonly policies: RawPolicy[];
}

const USED_KINDS = new Set([
  'Node',
  'Pod',
  'PodDisruptionBudget',
  'PriorityClass',
  'Namespace',
  'RebalancePolicy',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'StorageClass',
  'CSINode',
  'NodeMetrics',
  'PodMetrics',
]);

function ignoredWarning(file: string, counts: ReadonlyMap<string, number>): string | undefined {
  if (counts.size === 0) return undefined;
  let total = 0;
  for (const n of counts.values()) total += n;
  const list = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([kind, n]) => `${kind} ×${n}`)
    .join(', ');
  const noun = total === 1 ? 'object of another kind' : 'objects of other kinds';
  return `warning: ${file}: ignored ${total} ${noun} (${list})`;
}

/** Converts each object, wrapping FieldError into InputError with the file and object; rejects duplicates. */
function convertAll<T extends { readonly name: string; readonly namespace?: string }>(
  items: readonly LocatedObject[],
  file: string,
  convert: (raw: unknown) => T,
): T[] {
  const out: T[] = [];
  // namespace ('' when cluster-scoped) → name → where it was first seen
  const seen = new Map<string, Map<string, LocatedObject>>();
  let current: LocatedObject | undefined;
  try {
    for (const item of items) {
      current = item;
      const value = convert(item.raw);
      const ns = value.namespace ?? '';
      let names = seen.get(ns);
      if (names === undefined) seen.set(ns, (names = new Map<string, LocatedObject>()));
      const before = names.get(value.name);
      if (before !== undefined) {
        const object = describeObject(item.kind, item.raw) ?? item.where;
        throw new InputError(file, object, undefined, `appears twice (${before.where} and ${item.where})`);
      }
      names.set(value.name, item);
      out.push(value);
    }
  } catch (error) {
    if (error instanceof FieldError && current !== undefined) {
      // An object without a name is located by its place in the file, and its kind is said too.
      const object = describeObject(current.kind, current.raw) ?? `${current.kind} at ${current.where}`;
      throw new InputError(file, object, error.field === '' ? undefined : error.field, error.problem);
    }
    throw error;
  }
  return out;
}

/**
 * Builds a snapshot from already-parsed documents (each a Kubernetes object or a List). `file` names the source in
 * errors and warnings. PriorityClasses are converted first so pod priorities resolve against all of them.
 */
export function snapshotFromObjects(
  objects: readonly unknown[],
  opts: LoadOptions & { readonly file: string },
): LoadResult {
  const { file } = opts;
  const located = flattenObjects(objects, file);
  opts.progress?.(`${file}: converting ${located.length.toLocaleString('en-US')} objects`);
  if (located.length === 0) throw new InputError(file, undefined, undefined, 'contains no Kubernetes objects');

  const byKind = new Map<string, LocatedObject[]>();
  const ignored = new Map<string, number>();
  for (const item of located) {
    if (!USED_KINDS.has(item.kind)) {
      ignored.set(item.kind, (ignored.get(item.kind) ?? 0) + 1);
      continue;
    }
    let list = byKind.get(item.kind);
    if (list === undefined) byKind.set(item.kind, (list = []));
    list.push(item);
  }
  const of = (kind: string): LocatedObject[] => byKind.get(kind) ?? [];

  const priorityClasses = convertAll<PriorityClassInfo>(of('PriorityClass'), file, convertPriorityClass);
  const resolve = makePriorityResolver(priorityClasses);
  const nodes = withCsiNodeLimits(
    convertAll<NodeInfo>(of('Node'), file, convertNode),
    convertAll<CsiNodeInfo>(of('CSINode'), file, convertCsiNode),
  );
  // One cache for the load: its pods share what their replicas repeat.
  const conversions = new ConversionCache();
  const converted = convertAll<PodInfo>(of('Pod'), file, (raw) => convertPod(raw, conversions, resolve));
  const pods = withVolumeTopology(converted, {
    persistentVolumes: convertAll<PersistentVolumeInfo>(of('PersistentVolume'), file, convertPersistentVolume),
    persistentVolumeClaims: convertAll<PersistentVolumeClaimInfo>(
      of('PersistentVolumeClaim'),
      file,
      convertPersistentVolumeClaim,
    ),
    storageClasses: convertAll<StorageClassInfo>(of('StorageClass'), file, convertStorageClass),
  });
  const pdbs = convertAll<PdbInfo>(of('PodDisruptionBudget'), file, convertPdb);
  const namespaces = convertAll<NamespaceInfo>(of('Namespace'), file, convertNamespace);
  addImpliedNamespaces(namespaces, pods, pdbs);

  const policies = of('RebalancePolicy').map((item) => ({
    raw: item.raw,
    object: describeObject('RebalancePolicy', item.raw) ?? item.where,
  }));

  const warning = ignoredWarning(file, ignored);
  if (warning !== undefined) opts.warn?.(warning);

  const now = opts.now ?? Date.now();
  // NodeMetrics make a metrics.k8s.io reading (usage: Metrics); without them the snapshot has none.
  const nodeMetrics = convertAll<NodeMetricsInfo>(of('NodeMetrics'), file, convertNodeMetrics);
  const podMetrics = convertAll<PodMetricsInfo>(of('PodMetrics'), file, convertPodMetrics);
  let metrics: UsageReading | undefined;
  if (nodeMetrics.length > 0) {
    const where = new Map(pods.map((p) => [`${p.namespace}/${p.name}`, p.nodeName]));
    metrics = usageReading(nodeMetrics, podMetrics, (ns, name) => where.get(`${ns}/${name}`), now);
  } else if (podMetrics.length > 0) {
    opts.warn?.(`warning: ${file}: PodMetrics without NodeMetrics are not used (usage: Metrics needs both)`);
  }

  return {
    snapshot: {
      nodes,
      pods,
      pdbs,
      priorityClasses,
      namespaces,
      now,
      ...(metrics !== undefined ? { metrics } : {}),
      ...(opts.kubeVersion !== undefined ? { kubeVersion: opts.kubeVersion } : {}),
    },
    policies,
  };
}

/**
 * A snapshot without Namespace objects still has the namespaces its pods live in. They are added with the label
 * every namespace carries (kubernetes.io/metadata.name), so pod-affinity namespaceSelectors on that label still work.
 */
export function addImpliedNamespaces(
  namespaces: NamespaceInfo[],
  pods: readonly PodInfo[],
  pdbs: readonly PdbInfo[],
): void {
  const known = new Set(namespaces.map((n) => n.name));
  const add = (name: string): void => {
    if (known.has(name)) return;
    known.add(name);
    namespaces.push({ name, labels: internLabels({ 'kubernetes.io/metadata.name': name }) });
  };
  for (const p of pods) add(p.namespace);
  for (const p of pdbs) add(p.namespace);
}

/** Reads and converts a snapshot file ('-' = stdin). */
export function loadSnapshotFile(path: string, opts: LoadOptions = {}): LoadResult {
  opts.progress?.(`${path}: reading`);
  const text = readInputFile(path);
  opts.progress?.(`${path}: parsing ${(text.length / 2 ** 20).toFixed(1)} MiB`);
  const documents = parseDocuments(text, path);
  return snapshotFromObjects(documents, { ...opts, file: path });
}
