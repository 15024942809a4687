// A live cluster read into a ClusterSnapshot with each page converted as it arrives, as the operator's informers
// convert: only the compact records are kept, never the raw objects of the whole cluster (a 10,000-pod cluster's
// raw pods are several hundred MiB of JSON objects). The result is the one snapshotFromObjects builds from the same
// objects saved to a file: the same converters, PriorityClasses read before the pods that resolve against them,
// CSINode limits and volume topology applied once everything is read, namespaces implied by pods and budgets.
import { FieldError, InputError } from '../errors.js';
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
} from '../model/types.js';
import { withCsiNodeLimits, withVolumeTopology } from '../model/volumes.js';
import {
  ConversionCache,
  convertCsiNode,
  convertNamespace,
  convertNode,
  convertPdb,
  convertPersistentVolume,
  convertPersistentVolumeClaim,
  convertPod,
  convertPriorityClass,
  convertStorageClass,
  describeObject,
  makePriorityResolver,
} from '../snapshot/convert.js';
import { addImpliedNamespaces, type LoadResult, type RawPolicy } from '../snapshot/load.js';
import { LISTED_KINDS, listKindInto, type Getter, type ListedKind, type ReadOptions } from './read.js';

type Named = { readonly name: string; readonly namespace?: string };

/** Converts the pages of one kind into `out`, naming the source, object and field of what does not convert. */
function converting<T extends Named>(
  file: string,
  kind: string,
  convert: (raw: unknown) => T,
  out: { items: T[] },
): { reset(): void; add(items: readonly unknown[]): void } {
  let seen = new Set<string>();
  return {
    reset: () => {
      out.items = [];
      seen = new Set();
    },
    add: (items) => {
      for (const raw of items) {
        let value: T;
        try {
          value = convert(raw);
        } catch (error) {
          if (!(error instanceof FieldError)) throw error;
          const object = describeObject(kind, raw) ?? kind;
          throw new InputError(file, object, error.field === '' ? undefined : error.field, error.problem);
        }
        const key = `${value.namespace ?? ''}/${value.name}`;
        if (seen.has(key)) {
          throw new InputError(file, describeObject(kind, raw) ?? kind, undefined, 'listed twice');
        }
        seen.add(key);
        out.items.push(value);
      }
    },
  };
}

export interface LiveSnapshotOptions extends ReadOptions {
  /** Names the cluster in errors (`context <name>`). */
  readonly file: string;
  readonly now?: number;
  /** The release whose scheduler is modelled (the server's /version, or --kube-version). */
  readonly kubeVersion?: KubeVersion;
}

/** The live cluster as a snapshot, converted page by page, and its RebalancePolicies (raw: there are few). */
export async function readLiveSnapshot(get: Getter, opts: LiveSnapshotOptions): Promise<LoadResult> {
  const { file } = opts;
  const priorityClasses = { items: [] as PriorityClassInfo[] };
  const nodes = { items: [] as NodeInfo[] };
  const csiNodes = { items: [] as CsiNodeInfo[] };
  const pods = { items: [] as PodInfo[] };
  const pdbs = { items: [] as PdbInfo[] };
  const namespaces = { items: [] as NamespaceInfo[] };
  const pvs = { items: [] as PersistentVolumeInfo[] };
  const pvcs = { items: [] as PersistentVolumeClaimInfo[] };
  const storageClasses = { items: [] as StorageClassInfo[] };
  let policies: RawPolicy[] = [];
  const conversions = new ConversionCache();
  let resolve = makePriorityResolver([]);
  const sinkFor = (listed: ListedKind) => {
    const k = listed.kind;
    switch (k) {
      case 'Namespace':
        return converting(file, k, convertNamespace, namespaces);
      case 'Node':
        return converting(file, k, convertNode, nodes);
      case 'PriorityClass':
        return converting(file, k, convertPriorityClass, priorityClasses);
      case 'Pod':
        // PriorityClasses are listed before pods (LISTED_KINDS), so every pod resolves against all of them.
        resolve = makePriorityResolver(priorityClasses.items);
        return converting(file, k, (raw) => convertPod(raw, conversions, resolve), pods);
      case 'PodDisruptionBudget':
        return converting(file, k, convertPdb, pdbs);
      case 'PersistentVolume':
        return converting(file, k, convertPersistentVolume, pvs);
      case 'PersistentVolumeClaim':
        return converting(file, k, convertPersistentVolumeClaim, pvcs);
      case 'StorageClass':
        return converting(file, k, convertStorageClass, storageClasses);
      case 'CSINode':
        return converting(file, k, convertCsiNode, csiNodes);
      case 'RebalancePolicy':
        return {
          reset: () => (policies = []),
          add: (items: readonly unknown[]) => {
            for (const raw of items) policies.push({ raw, object: describeObject(k, raw) ?? k });
          },
        };
      default:
        throw new Error(`no conversion for listed kind ${k}`);
    }
  };
  for (const listed of LISTED_KINDS) await listKindInto(get, listed, sinkFor(listed), opts);

  const total = nodes.items.length + pods.items.length + namespaces.items.length + priorityClasses.items.length;
  if (total === 0) throw new InputError(file, undefined, undefined, 'contains no Kubernetes objects');
  const withVolumes = withVolumeTopology(pods.items, {
    persistentVolumes: pvs.items,
    persistentVolumeClaims: pvcs.items,
    storageClasses: storageClasses.items,
  });
  // Namespaces implied by pods and budgets, as the file loader adds them.
  addImpliedNamespaces(namespaces.items, withVolumes, pdbs.items);
  const allNamespaces = namespaces.items;
  const snapshot: ClusterSnapshot = {
    nodes: withCsiNodeLimits(nodes.items, csiNodes.items),
    pods: withVolumes,
    pdbs: pdbs.items,
    priorityClasses: priorityClasses.items,
    namespaces: allNamespaces,
    now: opts.now ?? Date.now(),
    ...(opts.kubeVersion !== undefined ? { kubeVersion: opts.kubeVersion } : {}),
  };
  return { snapshot, policies };
}
