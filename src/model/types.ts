// The compact cluster model: only what analysis, planning and execution read.
// Full Kubernetes objects are converted into these on arrival (snapshot file or watch cache) and then dropped,
// so memory stays proportional to what the planner needs (see issue "Throughput and footprint").
// Everything here is immutable data; strings are interned by the converters.
import type { KubeVersion } from './kubeVersion.js';

export type Labels = Readonly<Record<string, string>>;

// ---- selectors -------------------------------------------------------------------------------------------------

export type LabelOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and de-duplicated; empty for Exists/DoesNotExist. */
  readonly values: readonly string[];
}

/**
 * A validated, compiled metav1.LabelSelector. `null` in the API (a nil selector) matches nothing
 * for topology spread, pod (anti-)affinity and PDBs, so it is a distinct state, not an empty requirement list.
 */
export type Selector =
  | { readonly kind: 'nothing' }
  | {
      readonly kind: 'requirements';
      /** ANDed; sorted by key then operator, so `text` is canonical. Empty means "everything". */
      readonly requirements: readonly LabelRequirement[];
      /** Canonical string form (`app=web,tier in (a,b),!legacy`), usable as a map key and in output. */
      readonly text: string;
    };

export type NodeSelectorOperator = LabelOperator | 'Gt' | 'Lt';

export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: NodeSelectorOperator;
  readonly values: readonly string[];
}

/** One nodeSelectorTerm: expressions and fields are ANDed; a term with neither matches no node. */
export interface NodeSelectorTerm {
  readonly matchExpressions: readonly NodeSelectorRequirement[];
  /** Only `metadata.name` is a valid field; operators In/NotIn. */
  readonly matchFields: readonly NodeSelectorRequirement[];
}

/**
 * What a pod requires of its node: `spec.nodeSelector` (all labels must match) AND, when present,
 * required node affinity (terms ORed). `terms === undefined` means no required affinity was given.
 */
export interface RequiredNodeAffinity {
  readonly nodeSelector: Labels | undefined;
  readonly terms: readonly NodeSelectorTerm[] | undefined;
  /** Canonical text of both parts; equal text ⇔ equal requirement (used to group pods). */
  readonly text: string;
}

export interface PreferredSchedulingTerm {
  readonly weight: number;
  readonly term: NodeSelectorTerm;
}

// ---- taints and tolerations ------------------------------------------------------------------------------------

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  readonly key: string;
  readonly value: string;
  readonly effect: TaintEffect;
}

export interface Toleration {
  /** Empty key with operator Exists tolerates every taint. */
  readonly key: string;
  /** Lt/Gt compare integer values behind the TaintTolerationComparisonOperators gate (off in 1.35–1.37). */
  readonly operator: 'Equal' | 'Exists' | 'Lt' | 'Gt';
  readonly value: string;
  /** Empty effect tolerates every effect. */
  readonly effect: TaintEffect | '';
}

// ---- resources -------------------------------------------------------------------------------------------------

/** Resource amounts in base units: cpu in millicores, memory and storage in bytes, everything else as counted. */
export type Resources = Readonly<Record<string, number>>;

// ---- topology spread and pod affinity --------------------------------------------------------------------------

export type WhenUnsatisfiable = 'DoNotSchedule' | 'ScheduleAnyway';
export type NodeInclusionPolicy = 'Honor' | 'Ignore';

export interface SpreadConstraint {
  readonly maxSkew: number;
  readonly topologyKey: string;
  readonly whenUnsatisfiable: WhenUnsatisfiable;
  /** The constraint's labelSelector with the pod's `matchLabelKeys` values already ANDed in. */
  readonly selector: Selector;
  /** Defaults applied: minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore. */
  readonly minDomains: number;
  readonly nodeAffinityPolicy: NodeInclusionPolicy;
  readonly nodeTaintsPolicy: NodeInclusionPolicy;
  /** True when the constraint came from the policy's defaultConstraints rather than the pod spec. */
  readonly fromDefaults: boolean;
}

export interface PodAffinityTerm {
  readonly selector: Selector;
  readonly topologyKey: string;
  /**
   * The namespaces the term selects pods from: the listed names, plus every namespace whose labels match
   * `namespaceSelector`. Neither given means the pod's own namespace. An empty namespaceSelector ({}) means all.
   */
  readonly namespaces: readonly string[];
  readonly namespaceSelector: Selector | undefined;
}

/** A preferred (soft) pod (anti-)affinity term: scored, never filtered. */
export interface WeightedPodAffinityTerm {
  readonly weight: number;
  readonly term: PodAffinityTerm;
}

// ---- objects ---------------------------------------------------------------------------------------------------

/** One entry of node.status.images: every name the image is known by, and its size (ImageLocality scoring). */
export interface NodeImage {
  readonly names: readonly string[];
  readonly sizeBytes: number;
}

export interface NodeInfo {
  readonly name: string;
  readonly labels: Labels;
  readonly taints: readonly Taint[];
  readonly unschedulable: boolean;
  readonly ready: boolean;
  readonly allocatable: Resources;
  /** node.status.images (interned: nodes of one pool share the list); absent in hand-written snapshots. */
  readonly images?: readonly NodeImage[];
  /**
   * Attachable CSI volumes per driver (CSINode spec.drivers[].allocatable.count, resolved per snapshot by
   * withCsiNodeLimits); absent when no CSINode gives one. Node allocatable `attachable-volumes-csi-<driver>`, the
   * older form, is read from `allocatable` by the NodeVolumeLimits filter.
   */
  readonly csiVolumeLimits?: Readonly<Record<string, number>>;
  /** status.declaredFeatures (NodeDeclaredFeatures, 1.36+), sorted; absent when the node declares none. */
  readonly declaredFeatures?: readonly string[];
}

/** A port a container binds on its node (spec.containers[].ports[] with hostPort > 0). */
export interface HostPort {
  /** `0.0.0.0` when not given: every address of the node. */
  readonly hostIP: string;
  readonly protocol: 'TCP' | 'UDP' | 'SCTP';
  readonly port: number;
}

/** A CSI volume a pod has attached on its node: what the NodeVolumeLimits filter counts, one per unique handle. */
export interface CsiVolume {
  readonly driver: string;
  /** The PV's spec.csi.volumeHandle, or `<namespace>-<claim>` for a claim its StorageClass has yet to provision. */
  readonly handle: string;
}

export type PodPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
export type QosClass = 'BestEffort' | 'Burstable' | 'Guaranteed';

export interface OwnerRef {
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
}

/** The workload a pod belongs to, for grouping, limits, pacing and metric labels. */
export interface WorkloadRef {
  /** Deployment (resolved from a ReplicaSet's pod-template-hash), StatefulSet, DaemonSet, Job, ReplicaSet, …; `Pod` for bare pods. */
  readonly kind: string;
  readonly name: string;
}

export type EvictAnnotation = 'never' | 'always' | undefined;

export interface PodInfo {
  readonly uid: string;
  readonly namespace: string;
  readonly name: string;
  readonly labels: Labels;
  /** Undefined while unscheduled. */
  readonly nodeName: string | undefined;
  readonly phase: PodPhase;
  /** metadata.deletionTimestamp is set. */
  readonly terminating: boolean;
  /**
   * spec.terminationGracePeriodSeconds; absent when the object does not say (the API server defaults it to 30 at
   * creation). 0 means an eviction deletes the pod at once, without a terminating phase (see scheduling/deletion.ts).
   */
  readonly terminationGracePeriodSeconds?: number;
  /** The Ready condition is True. */
  readonly ready: boolean;
  /** metadata.creationTimestamp in epoch milliseconds. */
  readonly createdAt: number;
  /** Resolved: spec.priority, else the PriorityClass's value, else the globalDefault class, else 0. */
  readonly priority: number;
  readonly priorityClassName: string | undefined;
  /** spec.schedulerName, the profile that schedules it; undefined for default-scheduler (or none given). */
  readonly schedulerName?: string;
  readonly qos: QosClass;
  /** The controller owner reference, if any. */
  readonly owner: OwnerRef | undefined;
  readonly workload: WorkloadRef;
  /** Effective scheduling requests (max of init vs sum of regular containers, plus overhead). */
  readonly requests: Resources;
  /**
   * cpu and memory as the scheduler's scoring counts them: a container that requests none counts 100m cpu and 200Mi
   * memory (upstream's non-zero defaults). Absent: derived from `requests` (see nonZeroRequests in scheduling).
   */
  readonly nonZeroRequests?: { readonly cpu: number; readonly memory: number };
  /**
   * With pod-level requests set: the same from the containers alone, what NodeResourcesFit's score counts for the pod
   * being placed (see plugins/nodeResources/resourceAllocation.ts). Absent otherwise.
   */
  readonly fitNonZeroRequests?: { readonly cpu: number; readonly memory: number };
  /**
   * What the pod holds on its node when an in-place resize makes it differ from `requests` (which stays the spec,
   * what a replacement asks for): the larger of the spec and the resources allocated or actuated in its status, as the
   * scheduler's node cache counts it. Absent when equal to `requests` (nearly every pod).
   */
  readonly held?: HeldResources;
  /** spec.schedulingGates is not empty: the scheduler does not try to place it until they are removed. */
  readonly schedulingGated?: boolean;
  /** The names in spec.resourceClaims (DRA); absent when none. */
  readonly resourceClaims?: readonly string[];
  /** Node features it needs (NodeDeclaredFeatures, inferred from its spec as the scheduler does); absent when none. */
  readonly requiredFeatures?: readonly string[];
  /** The images of spec.containers, normalised as ImageLocality does (`:latest` added when no tag). */
  readonly images?: readonly string[];
  readonly requiredNodeAffinity: RequiredNodeAffinity;
  readonly preferredNodeAffinity: readonly PreferredSchedulingTerm[];
  readonly tolerations: readonly Toleration[];
  /** The pod's own constraints; empty when it has none (policy defaultConstraints are applied by the analysis). */
  readonly spreadConstraints: readonly SpreadConstraint[];
  /** Raw `matchLabelKeys`-free selectors are not kept; see SpreadConstraint.selector. */
  readonly podAffinity: readonly PodAffinityTerm[];
  readonly podAntiAffinity: readonly PodAffinityTerm[];
  /** preferredDuringSchedulingIgnoredDuringExecution of podAffinity and podAntiAffinity (scoring only). */
  readonly preferredPodAffinity?: readonly WeightedPodAffinityTerm[];
  readonly preferredPodAntiAffinity?: readonly WeightedPodAffinityTerm[];
  /** Owned by a DaemonSet. */
  readonly daemonSet: boolean;
  /** A mirror or static pod (kubernetes.io/config.mirror annotation, or owned by a Node). */
  readonly mirror: boolean;
  /** Uses emptyDir or hostPath volumes. */
  readonly localStorage: boolean;
  /** Uses a persistentVolumeClaim (or an ephemeral volume, which creates one). */
  readonly pvc: boolean;
  /** The PersistentVolumeClaims the pod mounts, by name (an ephemeral volume's claim is `<pod>-<volume>`). */
  readonly claims: readonly string[];
  /**
   * The nodes its bound volumes can be reached from (resolved against the snapshot's PersistentVolumes,
   * PersistentVolumeClaims and StorageClasses); empty when no volume limits it. A replacement reuses the claims.
   */
  readonly volumeTopology: readonly VolumeTopology[];
  /** The host ports its containers bind (NodePorts filter); empty for nearly every pod. */
  readonly hostPorts: readonly HostPort[];
  /** Its CSI volumes (resolved with the volume topology); absent when it has none. */
  readonly csiVolumes?: readonly CsiVolume[];
  /** Its claims whose access mode is ReadWriteOncePod (resolved with the volume topology); absent when none. */
  readonly readWriteOncePodClaims?: readonly string[];
  /**
   * The StorageClass of each claim it mounts (resolved with the volume topology), '' for a claim whose class is not
   * known (claim not in the snapshot, or no class); absent when it mounts none. For eviction.protectedStorageClasses.
   */
  readonly storageClasses?: readonly string[];
  /** rebalancer.dev/evict (or descheduler.alpha.kubernetes.io/evict ⇒ 'always'). */
  readonly evictAnnotation: EvictAnnotation;
  /** Set when an opt-out annotation protects the pod; the text names it. */
  readonly protectedBy: string | undefined;
  /** status.containerStatuses[*].restartCount, summed (the housekeeping strategies read it). */
  readonly restarts: number;
  /** The same for status.initContainerStatuses. */
  readonly initRestarts: number;
  /**
   * What the pod's status says beyond its phase: undefined for the common pod with no status reason and every
   * container running (most of a 150k-pod cluster), so the model holds nothing for them.
   */
  readonly statusDetail: PodStatusDetail | undefined;
  /**
   * The resource names its containers and init containers request (the key present, also with a zero quantity; not
   * pod-level requests or overhead), sorted: HighNodeUtilization's evictionModes OnlyThresholdingResources. Absent:
   * taken from `requests` (test-built pods).
   */
  readonly requestedResources?: readonly string[];
  /** status.conditions as podLifeTime's `conditions` filters read them; undefined when the status lists none. */
  readonly conditions?: PodConditions | undefined;
}

/** One status.conditions entry, without its message (the transition time is in PodConditions.transitions). */
export interface PodConditionEntry {
  readonly type: string;
  readonly status: string;
  readonly reason: string | undefined;
}

/**
 * A pod's status.conditions. Nearly every pod of a cluster lists the same types, statuses and reasons, so `entries` is
 * one shared frozen list per distinct shape and a pod holds only its own transition times.
 */
export interface PodConditions {
  readonly entries: readonly PodConditionEntry[];
  /** lastTransitionTime of entries[i] in epoch milliseconds; undefined when the condition has none. */
  readonly transitions: readonly (number | undefined)[];
}

/** The reasons and exit codes of a pod's status (housekeeping strategies: podLifeTime states, failedPods filters). */
/** What a resized pod holds on its node (PodInfo.held): 1.37's reading, and 1.35/1.36's (`byContainer`). */
export interface HeldResources {
  readonly requests: Resources;
  readonly nonZeroRequests: { readonly cpu: number; readonly memory: number };
  /** The larger of spec and status taken per container (component-helpers determineEffectiveRequests, 1.35/1.36). */
  readonly byContainer: {
    readonly requests: Resources;
    readonly nonZeroRequests: { readonly cpu: number; readonly memory: number };
  };
}

export interface PodStatusDetail {
  /** status.reason (Evicted, NodeLost, Shutdown, DeadlineExceeded, …). */
  readonly reason: string | undefined;
  /** The current state's reason of every container that is waiting or terminated (CrashLoopBackOff, Error, …). */
  readonly reasons: readonly string[];
  readonly initReasons: readonly string[];
  /** The same for status.ephemeralContainerStatuses (debug containers); absent when none reports a reason. */
  readonly ephemeralReasons?: readonly string[];
  /** The exit codes of the containers whose current state is terminated. */
  readonly exitCodes: readonly number[];
  readonly initExitCodes: readonly number[];
}

/** One claim's volume that can be reached only from some nodes: the node must match one of `terms`. */
export interface VolumeTopology {
  readonly claim: string;
  /** `PersistentVolume <name>`, or `StorageClass <name>` for a claim its class will bind in allowed zones. */
  readonly source: string;
  readonly terms: readonly NodeSelectorTerm[];
  /** Canonical text of the terms (`topology.kubernetes.io/zone in (zone-a)`). */
  readonly text: string;
}

export interface PersistentVolumeInfo {
  readonly name: string;
  readonly storageClassName: string | undefined;
  /** spec.nodeAffinity.required: terms ORed; undefined when the volume is reachable from every node. */
  readonly nodeAffinity: { readonly terms: readonly NodeSelectorTerm[]; readonly text: string } | undefined;
  /** spec.csi, when the volume is a CSI one. */
  readonly csi?: CsiVolume;
}

export interface PersistentVolumeClaimInfo {
  readonly namespace: string;
  readonly name: string;
  /** spec.volumeName once bound. */
  readonly volumeName: string | undefined;
  readonly storageClassName: string | undefined;
  /** spec.accessModes includes ReadWriteOncePod. */
  readonly readWriteOncePod?: boolean;
}

export interface StorageClassInfo {
  readonly name: string;
  /** The provisioner: the CSI driver a claim of this class will be attached by. */
  readonly provisioner?: string;
  readonly volumeBindingMode: 'Immediate' | 'WaitForFirstConsumer';
  /** allowedTopologies as node selector terms (ORed); undefined when not set. */
  readonly allowedTopologies: { readonly terms: readonly NodeSelectorTerm[]; readonly text: string } | undefined;
}

/** A CSINode: how many volumes of each CSI driver its node can attach (drivers without a count are absent). */
export interface CsiNodeInfo {
  readonly name: string;
  readonly limits: Readonly<Record<string, number>>;
}

export interface PdbInfo {
  readonly namespace: string;
  readonly name: string;
  readonly selector: Selector;
  /** status.disruptionsAllowed when status was present; otherwise undefined and computed from spec. */
  readonly statusAllowed: number | undefined;
  readonly minAvailable: IntOrPercent | undefined;
  readonly maxUnavailable: IntOrPercent | undefined;
}

export type IntOrPercent =
  { readonly kind: 'int'; readonly value: number } | { readonly kind: 'percent'; readonly value: number };

export interface PriorityClassInfo {
  readonly name: string;
  readonly value: number;
  readonly globalDefault: boolean;
}

export interface NamespaceInfo {
  readonly name: string;
  readonly labels: Labels;
}

/** Everything one planning cycle reads. Built from a file (`plan`, `simulate`) or from the watch caches (`run`). */
export interface ClusterSnapshot {
  readonly nodes: readonly NodeInfo[];
  readonly pods: readonly PodInfo[];
  readonly pdbs: readonly PdbInfo[];
  readonly priorityClasses: readonly PriorityClassInfo[];
  readonly namespaces: readonly NamespaceInfo[];
  /** The instant the snapshot describes (pod ages are measured against it), epoch ms. */
  readonly now: number;
  /**
   * Usage from metrics.k8s.io, for utilization strategies with `usage: Metrics`: absent when it was not read (a
   * saved cluster without NodeMetrics, or no policy asked for it).
   */
  readonly metrics?: UsageMetrics;
  /**
   * Node usage from a Prometheus query, for lowNodeUtilization with `usage: Prometheus`: absent when it was not read
   * (no policy asked for it, or a saved cluster planned without `--usage-file`).
   */
  readonly nodeUsage?: NodeUsageQuery;
  /** The Kubernetes minor whose scheduler the placement follows; absent means the newest supported. */
  readonly kubeVersion?: KubeVersion;
}

/**
 * A reading of metrics.k8s.io (NodeMetrics and PodMetrics, what `kubectl top` shows), in the model's units (cpu in
 * millicores, memory in bytes), or why there is none.
 */
export type UsageMetrics = UsageReading | UsageUnavailable;

export interface UsageReading {
  readonly available: true;
  /** Node name → its usage (cpu and memory). */
  readonly nodes: ReadonlyMap<string, Resources>;
  /** `namespace/name` → the pod's usage (its containers summed) and the node it ran on when read, if known. */
  readonly pods: ReadonlyMap<string, PodUsage>;
  /** When it was read (epoch ms). */
  readonly readAt: number;
}

export interface PodUsage {
  readonly usage: Resources;
  readonly node: string | undefined;
}

/** A Prometheus query's value for each node (`usage: Prometheus`), or why there is none. */
export type NodeUsageQuery = NodeUsageValues | UsageUnavailable;

export interface NodeUsageValues {
  readonly available: true;
  /** Node name (the samples' `instance` label) → the query's value, 0–1. */
  readonly values: ReadonlyMap<string, number>;
  /** When it was read (epoch ms). */
  readonly readAt: number;
  /** What was asked (the server and the query), for messages. */
  readonly source: string;
  /**
   * Each pod's estimated part of its node's value, in percentage points (`namespace/name` → node and points), and
   * the points per unit of request weight for pods the reading did not see; set by the planner when it first plans
   * with the reading (planner/prometheusMeasure.ts), from the pods of that moment.
   */
  readonly parts?: {
    readonly pods: ReadonlyMap<string, { readonly node: string; readonly points: number }>;
    readonly perWeight: number;
  };
}

export interface UsageUnavailable {
  readonly available: false;
  /** Why, naming metrics.k8s.io and the HTTP status when there was one. */
  readonly message: string;
}
