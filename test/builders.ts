// Fluent builders for RAW Kubernetes objects (plain JSON, as `kubectl get -o json` prints them), in the style of
// kube-scheduler's MakePod().Name().Label().SpreadConstraint(...) test wrappers. Tests feed them through the real
// loader (buildSnapshot → snapshotFromObjects → converters), so every test exercises the same code a snapshot file does.
//
//   buildSnapshot([
//     makeNode('a1').zone('zone-a'),
//     makePod('web-1', 'shop').deployment('web').label('app', 'web').node('a1')
//       .spread({ topologyKey: ZONE, labelSelector: { matchLabels: { app: 'web' } } }),
//   ]);
import type { ClusterSnapshot } from '../src/model/types.js';
import { snapshotFromObjects, type LoadResult } from '../src/snapshot/load.js';

type Json = Record<string, unknown>;

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';
export const REGION = 'topology.kubernetes.io/region';

/** The instant tests treat as "now" unless they say otherwise (objects are created an hour before it). */
export const NOW = Date.parse('2024-06-01T12:00:00Z');
const CREATED = '2024-06-01T11:00:00Z';

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Sets a dotted path (`spec.nodeName`, `metadata.labels.app`), creating objects on the way. */
function setPath(target: Json, path: string, value: unknown): void {
  const parts = path.split('.');
  let cursor: Json = target;
  for (const part of parts.slice(0, -1)) {
    const next = cursor[part];
    if (typeof next !== 'object' || next === null) cursor[part] = {};
    cursor = cursor[part] as Json;
  }
  const last = parts[parts.length - 1]!;
  if (value === undefined) delete cursor[last];
  else cursor[last] = value;
}

abstract class Builder {
  protected readonly o: Json;

  protected constructor(o: Json) {
    this.o = o;
  }

  protected get meta(): Json {
    return this.o['metadata'] as Json;
  }

  protected get specObj(): Json {
    return (this.o['spec'] ??= {}) as Json;
  }

  label(key: string, value: string): this {
    ((this.meta['labels'] ??= {}) as Json)[key] = value;
    return this;
  }

  labels(labels: Record<string, string>): this {
    for (const [k, v] of Object.entries(labels)) this.label(k, v);
    return this;
  }

  annotation(key: string, value: string): this {
    ((this.meta['annotations'] ??= {}) as Json)[key] = value;
    return this;
  }

  /** Escape hatch for bad-input tests: set (or, with undefined, delete) any dotted path of the raw object. */
  set(path: string, value: unknown): this {
    setPath(this.o, path, value);
    return this;
  }

  /** A deep copy of the raw object. */
  obj(): Json {
    return clone(this.o);
  }
}

// ---- Node ------------------------------------------------------------------------------------------------------

export class NodeBuilder extends Builder {
  constructor(name: string) {
    super({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, uid: `uid-node-${name}`, creationTimestamp: CREATED, labels: { [HOSTNAME]: name } },
      spec: {},
      status: {
        allocatable: { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi' },
        capacity: { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '100Gi' },
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      },
    });
  }

  zone(zone: string): this {
    return this.label(ZONE, zone);
  }

  region(region: string): this {
    return this.label(REGION, region);
  }

  taint(key: string, value: string | undefined, effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute'): this {
    const taints = (this.specObj['taints'] ??= []) as Json[];
    taints.push(value === undefined ? { key, effect } : { key, value, effect });
    return this;
  }

  unschedulable(): this {
    this.specObj['unschedulable'] = true;
    return this;
  }

  notReady(): this {
    const status = this.o['status'] as Json;
    status['conditions'] = [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }];
    return this;
  }

  /** Replaces status.allocatable, e.g. { cpu: '4', memory: '8Gi', pods: '110' }. */
  /** status.declaredFeatures (NodeDeclaredFeatures). */
  declaredFeatures(...names: string[]): this {
    (this.o['status'] as Json)['declaredFeatures'] = names;
    return this;
  }

  allocatable(resources: Record<string, string | number>): this {
    (this.o['status'] as Json)['allocatable'] = { ...resources };
    return this;
  }

  /** Adds a node.status.images entry (what the kubelet reports: every name of the image, and its size). */
  image(names: readonly string[], sizeBytes: number): this {
    const status = this.o['status'] as Json;
    ((status['images'] ??= []) as Json[]).push({ names: [...names], sizeBytes });
    return this;
  }
}

export function makeNode(name: string): NodeBuilder {
  return new NodeBuilder(name);
}

// ---- Pod -------------------------------------------------------------------------------------------------------

export interface SpreadOptions {
  maxSkew?: number;
  topologyKey: string;
  whenUnsatisfiable?: 'DoNotSchedule' | 'ScheduleAnyway';
  /** Raw metav1.LabelSelector; omitted = nil (matches nothing). */
  labelSelector?: Json | null;
  matchLabelKeys?: string[];
  minDomains?: number;
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
}

export interface PodAffinityTermOptions {
  labelSelector?: Json | null;
  topologyKey: string;
  namespaces?: string[];
  namespaceSelector?: Json | null;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface TolerationOptions {
  key?: string;
  operator?: 'Equal' | 'Exists' | 'Lt' | 'Gt';
  value?: string;
  effect?: '' | 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

export interface ContainerStatusOptions {
  restarts?: number;
  waiting?: string;
  terminated?: { reason?: string; exitCode: number };
}

export class PodBuilder extends Builder {
  constructor(name: string, namespace: string) {
    super({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, uid: `uid-${namespace}-${name}`, creationTimestamp: CREATED },
      spec: {
        containers: [{ name: 'app', image: 'registry.example/app:1.0', resources: {} }],
        restartPolicy: 'Always',
        schedulerName: 'default-scheduler',
      },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'True' },
        ],
      },
    });
  }

  private get status(): Json {
    return this.o['status'] as Json;
  }

  private get firstContainer(): Json {
    return (this.specObj['containers'] as Json[])[0]!;
  }

  private get affinity(): Json {
    return (this.specObj['affinity'] ??= {}) as Json;
  }

  node(name: string): this {
    this.specObj['nodeName'] = name;
    return this;
  }

  phase(phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown'): this {
    this.status['phase'] = phase;
    return this;
  }

  /**
   * status.containerStatuses (initContainerStatuses with `init`), one entry per item: its restartCount and current
   * state (waiting with a reason, or terminated with a reason and exit code; running otherwise).
   */
  /** status.containerStatuses (initContainerStatuses with `true`, ephemeralContainerStatuses with 'ephemeral'). */
  containerStatuses(statuses: readonly ContainerStatusOptions[], init: boolean | 'ephemeral' = false): this {
    const kind = init === 'ephemeral' ? 'ephemeral' : init ? 'init' : 'app';
    const key = { ephemeral: 'ephemeralContainerStatuses', init: 'initContainerStatuses', app: 'containerStatuses' }[
      kind
    ];
    this.status[key] = statuses.map((c, i) => ({
      name: `${kind === 'ephemeral' ? 'debugger' : kind}-${i}`,
      image: 'registry.example/app:1.0',
      imageID: '',
      ready: c.waiting === undefined && c.terminated === undefined,
      restartCount: c.restarts ?? 0,
      state:
        c.waiting !== undefined
          ? { waiting: { reason: c.waiting } }
          : c.terminated !== undefined
            ? { terminated: { exitCode: c.terminated.exitCode, reason: c.terminated.reason } }
            : { running: { startedAt: CREATED } },
    }));
    return this;
  }

  /** status.reason (Evicted, NodeLost, …). */
  statusReason(reason: string): this {
    this.status['reason'] = reason;
    return this;
  }

  terminating(at = '2024-06-01T11:59:00Z'): this {
    this.meta['deletionTimestamp'] = at;
    return this;
  }

  notReady(): this {
    this.status['conditions'] = [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'False' },
    ];
    return this;
  }

  /**
   * Sets the status.conditions entry of `type` (replacing one already there): its status, and optionally its reason
   * and lastTransitionTime (an ISO string, or epoch ms).
   */
  condition(type: string, status: string, opts: { reason?: string; since?: string | number } = {}): this {
    const list = ((this.status['conditions'] as Json[] | undefined) ?? []).filter((c) => c['type'] !== type);
    const c: Json = { type, status };
    if (opts.reason !== undefined) c['reason'] = opts.reason;
    if (opts.since !== undefined) {
      c['lastTransitionTime'] = typeof opts.since === 'number' ? new Date(opts.since).toISOString() : opts.since;
    }
    this.status['conditions'] = [...list, c];
    return this;
  }

  /** creationTimestamp as an ISO string, or epoch ms. */
  createdAt(at: string | number): this {
    this.meta['creationTimestamp'] = typeof at === 'number' ? new Date(at).toISOString() : at;
    return this;
  }

  priority(value: number): this {
    this.specObj['priority'] = value;
    return this;
  }

  priorityClass(name: string): this {
    this.specObj['priorityClassName'] = name;
    return this;
  }

  /** spec.schedulerName: the scheduler profile that places it (default-scheduler unless set). */
  scheduler(name: string): this {
    this.specObj['schedulerName'] = name;
    return this;
  }

  /** A controller owner reference. */
  owner(kind: string, name: string): this {
    this.meta['ownerReferences'] = [
      {
        apiVersion: kind === 'Node' ? 'v1' : 'apps/v1',
        kind,
        name,
        uid: `uid-${kind.toLowerCase()}-${name}`,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
    return this;
  }

  /** Owned by ReplicaSet `<name>-<hash>` with the pod-template-hash label, as a Deployment's pods are. */
  deployment(name: string, hash = '6d4cf56db6'): this {
    this.label('pod-template-hash', hash);
    return this.owner('ReplicaSet', `${name}-${hash}`);
  }

  daemonSet(name: string): this {
    return this.owner('DaemonSet', name);
  }

  requests(resources: Record<string, string | number>): this {
    ((this.firstContainer['resources'] as Json)['requests'] ??= {}) as Json;
    Object.assign((this.firstContainer['resources'] as Json)['requests'] as Json, resources);
    return this;
  }

  limits(resources: Record<string, string | number>): this {
    ((this.firstContainer['resources'] as Json)['limits'] ??= {}) as Json;
    Object.assign((this.firstContainer['resources'] as Json)['limits'] as Json, resources);
    return this;
  }

  /** Adds a container (regular, or an init container; `sidecar` makes it a restartable init container). */
  addContainer(
    name: string,
    resources: { requests?: Json; limits?: Json },
    kind: 'container' | 'init' | 'sidecar' = 'container',
  ): this {
    const c: Json = { name, image: 'registry.example/helper:1.0', resources: clone(resources) };
    if (kind === 'sidecar') c['restartPolicy'] = 'Always';
    const key = kind === 'container' ? 'containers' : 'initContainers';
    ((this.specObj[key] ??= []) as Json[]).push(c);
    return this;
  }

  /** Pod-level spec.resources.requests (PodLevelResources, 1.34+). */
  podResources(requests: Record<string, string>): this {
    this.specObj['resources'] = { requests: { ...requests } };
    return this;
  }

  /**
   * An in-place resize as the kubelet reports it: the first container's status.containerStatuses entry with
   * allocatedResources (and resources.requests, the actuated amounts, when given). `infeasible` adds the
   * PodResizePending condition with reason Infeasible.
   */
  resized(
    allocated: Record<string, string>,
    opts: { actuated?: Record<string, string>; infeasible?: boolean } = {},
  ): this {
    const name = this.firstContainer['name'] as string;
    const entry: Json = {
      name,
      image: 'registry.example/app:1.0',
      ready: true,
      restartCount: 0,
      allocatedResources: { ...allocated },
    };
    if (opts.actuated !== undefined) entry['resources'] = { requests: { ...opts.actuated } };
    this.status['containerStatuses'] = [entry];
    if (opts.infeasible === true) {
      (this.status['conditions'] as Json[]).push({ type: 'PodResizePending', status: 'True', reason: 'Infeasible' });
    }
    return this;
  }

  /** A scheduling gate (spec.schedulingGates): the scheduler leaves the pod alone until it is removed. */
  schedulingGate(name: string): this {
    ((this.specObj['schedulingGates'] ??= []) as Json[]).push({ name });
    return this;
  }

  /** A DRA claim the pod uses (spec.resourceClaims), made from a ResourceClaimTemplate. */
  resourceClaim(name: string, template = `${name}-template`): this {
    ((this.specObj['resourceClaims'] ??= []) as Json[]).push({ name, resourceClaimTemplateName: template });
    return this;
  }

  /** A restart rule on the first container that restarts every container: needs a node feature (1.36+). */
  restartAllContainersOn(exitCode: number): this {
    this.firstContainer['restartPolicyRules'] = [
      { action: 'RestartAllContainers', exitCodes: { operator: 'In', values: [exitCode] } },
    ];
    return this;
  }

  /** A port the first container binds on its node (`hostIP` 0.0.0.0 and protocol TCP unless given). */
  hostPort(port: number, opts: { protocol?: 'TCP' | 'UDP' | 'SCTP'; hostIP?: string } = {}): this {
    const ports = (this.firstContainer['ports'] ??= []) as Json[];
    ports.push({ containerPort: port, hostPort: port, ...opts });
    return this;
  }

  overhead(resources: Record<string, string>): this {
    this.specObj['overhead'] = { ...resources };
    return this;
  }

  nodeSelector(selector: Record<string, string>): this {
    this.specObj['nodeSelector'] = { ...selector };
    return this;
  }

  private get nodeAffinity(): Json {
    return (this.affinity['nodeAffinity'] ??= {}) as Json;
  }

  /** Required node affinity with raw nodeSelectorTerms (ORed). */
  nodeAffinityTerms(terms: Json[]): this {
    this.nodeAffinity['requiredDuringSchedulingIgnoredDuringExecution'] = { nodeSelectorTerms: clone(terms) };
    return this;
  }

  /** Required node affinity: one term, `key In values`. */
  nodeAffinityIn(key: string, values: string[]): this {
    return this.nodeAffinityTerms([{ matchExpressions: [{ key, operator: 'In', values }] }]);
  }

  preferredNodeAffinity(weight: number, term: Json): this {
    const list = (this.nodeAffinity['preferredDuringSchedulingIgnoredDuringExecution'] ??= []) as Json[];
    list.push({ weight, preference: clone(term) });
    return this;
  }

  toleration(t: TolerationOptions): this {
    ((this.specObj['tolerations'] ??= []) as Json[]).push({ ...t });
    return this;
  }

  /** A topology spread constraint; maxSkew defaults to 1 and whenUnsatisfiable to DoNotSchedule. */
  spread(c: SpreadOptions): this {
    const raw: Json = {
      maxSkew: c.maxSkew ?? 1,
      topologyKey: c.topologyKey,
      whenUnsatisfiable: c.whenUnsatisfiable ?? 'DoNotSchedule',
    };
    if (c.labelSelector !== undefined) raw['labelSelector'] = clone(c.labelSelector);
    if (c.matchLabelKeys !== undefined) raw['matchLabelKeys'] = [...c.matchLabelKeys];
    if (c.minDomains !== undefined) raw['minDomains'] = c.minDomains;
    if (c.nodeAffinityPolicy !== undefined) raw['nodeAffinityPolicy'] = c.nodeAffinityPolicy;
    if (c.nodeTaintsPolicy !== undefined) raw['nodeTaintsPolicy'] = c.nodeTaintsPolicy;
    ((this.specObj['topologySpreadConstraints'] ??= []) as Json[]).push(raw);
    return this;
  }

  private affinityTerm(kind: 'podAffinity' | 'podAntiAffinity', term: PodAffinityTermOptions): this {
    const section = (this.affinity[kind] ??= {}) as Json;
    const list = (section['requiredDuringSchedulingIgnoredDuringExecution'] ??= []) as Json[];
    const raw: Json = { topologyKey: term.topologyKey };
    if (term.labelSelector !== undefined) raw['labelSelector'] = clone(term.labelSelector);
    if (term.namespaces !== undefined) raw['namespaces'] = [...term.namespaces];
    if (term.namespaceSelector !== undefined) raw['namespaceSelector'] = clone(term.namespaceSelector);
    if (term.matchLabelKeys !== undefined) raw['matchLabelKeys'] = [...term.matchLabelKeys];
    if (term.mismatchLabelKeys !== undefined) raw['mismatchLabelKeys'] = [...term.mismatchLabelKeys];
    list.push(raw);
    return this;
  }

  podAffinity(term: PodAffinityTermOptions): this {
    return this.affinityTerm('podAffinity', term);
  }

  podAntiAffinity(term: PodAffinityTermOptions): this {
    return this.affinityTerm('podAntiAffinity', term);
  }

  /** A preferred (soft) pod affinity or anti-affinity term with its weight (InterPodAffinity scoring). */
  preferredPodAffinity(
    weight: number,
    term: PodAffinityTermOptions,
    kind: 'podAffinity' | 'podAntiAffinity' = 'podAffinity',
  ): this {
    const section = (this.affinity[kind] ??= {}) as Json;
    const list = (section['preferredDuringSchedulingIgnoredDuringExecution'] ??= []) as Json[];
    const raw: Json = { topologyKey: term.topologyKey };
    if (term.labelSelector !== undefined) raw['labelSelector'] = clone(term.labelSelector);
    if (term.namespaces !== undefined) raw['namespaces'] = [...term.namespaces];
    if (term.namespaceSelector !== undefined) raw['namespaceSelector'] = clone(term.namespaceSelector);
    list.push({ weight, podAffinityTerm: raw });
    return this;
  }

  preferredPodAntiAffinity(weight: number, term: PodAffinityTermOptions): this {
    return this.preferredPodAffinity(weight, term, 'podAntiAffinity');
  }

  /** Sets the images of the containers (the first container gets the first image, more containers are added). */
  images(...images: string[]): this {
    const containers = this.specObj['containers'] as Json[];
    images.forEach((image, i) => {
      if (containers[i] === undefined) containers.push({ name: `c${i}`, image, resources: {} });
      else containers[i]['image'] = image;
    });
    return this;
  }

  private volume(volume: Json): this {
    const list = (this.specObj['volumes'] ??= []) as Json[];
    list.push({ name: `vol-${list.length}`, ...volume });
    return this;
  }

  emptyDir(): this {
    return this.volume({ emptyDir: {} });
  }

  hostPath(path = '/var/log'): this {
    return this.volume({ hostPath: { path, type: 'Directory' } });
  }

  pvc(claim: string): this {
    return this.volume({ persistentVolumeClaim: { claimName: claim } });
  }

  /** A generic ephemeral volume (its claim is named `<pod>-<volume>`). */
  ephemeral(volumeName: string): this {
    const list = (this.specObj['volumes'] ??= []) as Json[];
    list.push({
      name: volumeName,
      ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: {} } } },
    });
    return this;
  }

  /** A mirror pod: the kubelet's annotation and a Node owner. */
  mirror(): this {
    const node = (this.specObj['nodeName'] as string | undefined) ?? 'node';
    this.annotation('kubernetes.io/config.mirror', 'a1b2c3d4e5f6');
    return this.owner('Node', node);
  }
}

export function makePod(name: string, namespace = 'default'): PodBuilder {
  return new PodBuilder(name, namespace);
}

// ---- PodDisruptionBudget, PriorityClass, Namespace -------------------------------------------------------------

export class PdbBuilder extends Builder {
  constructor(name: string, namespace: string) {
    super({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name, namespace, uid: `uid-pdb-${namespace}-${name}`, creationTimestamp: CREATED },
      spec: {},
    });
  }

  /** A raw metav1.LabelSelector, or a label map as shorthand for { matchLabels }; null = nil selector. */
  selector(selector: Json | Record<string, string> | null): this {
    const isSelector = selector !== null && ('matchLabels' in selector || 'matchExpressions' in selector);
    this.specObj['selector'] =
      selector === null || isSelector || Object.keys(selector).length === 0
        ? clone(selector)
        : { matchLabels: { ...selector } };
    return this;
  }

  minAvailable(value: number | string): this {
    this.specObj['minAvailable'] = value;
    return this;
  }

  maxUnavailable(value: number | string): this {
    this.specObj['maxUnavailable'] = value;
    return this;
  }

  /** A status as the disruption controller writes it. */
  allowed(n: number): this {
    this.o['status'] = {
      observedGeneration: 1,
      disruptionsAllowed: n,
      currentHealthy: 0,
      desiredHealthy: 0,
      expectedPods: 0,
    };
    return this;
  }
}

export function makePdb(name: string, namespace = 'default'): PdbBuilder {
  return new PdbBuilder(name, namespace);
}

export function makePriorityClass(name: string, value: number, globalDefault?: boolean): Json {
  const o: Json = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value };
  if (globalDefault !== undefined) o['globalDefault'] = globalDefault;
  return o;
}

export function makeNamespace(name: string, labels?: Record<string, string>): Json {
  const metadata: Json = { name };
  if (labels !== undefined) metadata['labels'] = { ...labels };
  return { apiVersion: 'v1', kind: 'Namespace', metadata, status: { phase: 'Active' } };
}

/** A NodeMetrics as `kubectl get nodes.metrics.k8s.io -o yaml` prints it (sampled at `timestamp`, default NOW). */
export function makeNodeMetrics(
  name: string,
  cpu: string,
  memory = '1Gi',
  timestamp = new Date(NOW).toISOString(),
): Json {
  return {
    apiVersion: 'metrics.k8s.io/v1beta1',
    kind: 'NodeMetrics',
    metadata: { name },
    timestamp,
    window: '20s',
    usage: { cpu, memory },
  };
}

/** A PodMetrics of one container `app` (as `kubectl get pods.metrics.k8s.io -A -o yaml` prints it). */
export function makePodMetrics(
  name: string,
  namespace: string,
  cpu: string,
  memory = '64Mi',
  timestamp = new Date(NOW).toISOString(),
): Json {
  return {
    apiVersion: 'metrics.k8s.io/v1beta1',
    kind: 'PodMetrics',
    metadata: { name, namespace },
    timestamp,
    window: '20s',
    containers: [{ name: 'app', usage: { cpu, memory } }],
  };
}

export function makePolicy(name: string, spec: Json = {}): Json {
  return {
    apiVersion: 'rebalancer.dev/v1alpha1',
    kind: 'RebalancePolicy',
    metadata: { name, generation: 1 },
    spec: clone(spec),
  };
}

// ---- volumes ---------------------------------------------------------------------------------------------------

/** A PersistentVolume; `zone` gives it the node affinity a zonal provisioner writes. */
export class PersistentVolumeBuilder extends Builder {
  constructor(name: string) {
    super({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, uid: `uid-pv-${name}`, creationTimestamp: CREATED },
      spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'], persistentVolumeReclaimPolicy: 'Delete' },
      status: { phase: 'Bound' },
    });
  }

  /** spec.nodeAffinity.required with one term `key In values`. */
  nodeAffinityIn(key: string, values: string[]): this {
    this.specObj['nodeAffinity'] = {
      required: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [...values] }] }] },
    };
    return this;
  }

  zone(zone: string): this {
    return this.nodeAffinityIn(ZONE, [zone]);
  }

  storageClass(name: string): this {
    this.specObj['storageClassName'] = name;
    return this;
  }

  /** A CSI volume: spec.csi with the driver and the volume's handle. */
  csi(driver: string, volumeHandle: string): this {
    this.specObj['csi'] = { driver, volumeHandle };
    return this;
  }

  /** The claim it is bound to. */
  claim(namespace: string, name: string): this {
    this.specObj['claimRef'] = { kind: 'PersistentVolumeClaim', namespace, name };
    return this;
  }
}

export function makePersistentVolume(name: string): PersistentVolumeBuilder {
  return new PersistentVolumeBuilder(name);
}

export class PersistentVolumeClaimBuilder extends Builder {
  constructor(name: string, namespace: string) {
    super({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name, namespace, uid: `uid-pvc-${namespace}-${name}`, creationTimestamp: CREATED },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } },
      status: { phase: 'Pending' },
    });
  }

  /** Bound to the volume (spec.volumeName, status Bound). */
  boundTo(volume: string): this {
    this.specObj['volumeName'] = volume;
    (this.o['status'] as Json)['phase'] = 'Bound';
    return this;
  }

  storageClass(name: string): this {
    this.specObj['storageClassName'] = name;
    return this;
  }

  accessModes(modes: Array<'ReadWriteOnce' | 'ReadOnlyMany' | 'ReadWriteMany' | 'ReadWriteOncePod'>): this {
    this.specObj['accessModes'] = [...modes];
    return this;
  }
}

export function makePvc(name: string, namespace = 'default'): PersistentVolumeClaimBuilder {
  return new PersistentVolumeClaimBuilder(name, namespace);
}

/** A StorageClass; `zones` become allowedTopologies on the zone label. */
export function makeStorageClass(
  name: string,
  opts: { binding?: 'Immediate' | 'WaitForFirstConsumer'; zones?: string[] } = {},
): Json {
  const o: Json = {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name },
    provisioner: 'ebs.csi.example',
    volumeBindingMode: opts.binding ?? 'WaitForFirstConsumer',
  };
  if (opts.zones !== undefined) {
    o['allowedTopologies'] = [{ matchLabelExpressions: [{ key: ZONE, values: [...opts.zones] }] }];
  }
  return o;
}

/** A CSINode for node `name`: how many volumes each driver can attach there (undefined: the driver gives no count). */
export function makeCsiNode(name: string, drivers: Record<string, number | undefined>): Json {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'CSINode',
    metadata: { name },
    spec: {
      drivers: Object.entries(drivers).map(([driver, count]) => ({
        name: driver,
        nodeID: `${name}-id`,
        ...(count === undefined ? {} : { allocatable: { count } }),
      })),
    },
  };
}

// ---- snapshot --------------------------------------------------------------------------------------------------

type Buildable = Json | { obj(): Json };

function toRaw(o: Buildable): Json {
  return typeof (o as { obj?: unknown }).obj === 'function' ? (o as { obj(): Json }).obj() : o;
}

/** A kubectl-style List of the objects (raw or builders). */
export function listOf(objects: readonly Buildable[]): Json {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: objects.map(toRaw) };
}

/** Runs the real loader over the objects (one kubectl-style List); `now` defaults to NOW. */
export function loadObjects(
  objects: readonly Buildable[],
  opts: { now?: number; warn?: (line: string) => void } = {},
): LoadResult {
  return snapshotFromObjects([listOf(objects)], { file: 'test-snapshot.yaml', now: opts.now ?? NOW, warn: opts.warn });
}

export function buildSnapshot(objects: readonly Buildable[], opts: { now?: number } = {}): ClusterSnapshot {
  return loadObjects(objects, opts).snapshot;
}

/** Every field of the compact PodInfo: converters must keep these and nothing of the raw object besides. */
export const COMPACT_POD_FIELDS: readonly string[] = [
  'uid',
  'namespace',
  'name',
  'labels',
  'nodeName',
  'phase',
  'terminating',
  'terminationGracePeriodSeconds',
  'ready',
  'createdAt',
  'priority',
  'priorityClassName',
  'schedulerName',
  'qos',
  'owner',
  'workload',
  'requests',
  'nonZeroRequests',
  'images',
  'requiredNodeAffinity',
  'preferredNodeAffinity',
  'tolerations',
  'spreadConstraints',
  'podAffinity',
  'podAntiAffinity',
  'preferredPodAffinity',
  'preferredPodAntiAffinity',
  'daemonSet',
  'mirror',
  'localStorage',
  'pvc',
  'claims',
  'volumeTopology',
  'hostPorts',
  'evictAnnotation',
  'protectedBy',
  'restarts',
  'initRestarts',
  'statusDetail',
  'conditions',
  'requestedResources',
  'held',
  'schedulingGated',
  'resourceClaims',
  'requiredFeatures',
  'fitNonZeroRequests',
];

/**
 * The placement-rule sections a policy ran before "what a policy names is what runs" (DESIGN.md): topology spread,
 * required anti-affinity, node affinity and node taints. Scenarios about those rules name them, as a policy must.
 */
export const RULE_STRATEGIES: Json = Object.freeze({
  topologySpread: {},
  podAntiAffinity: {},
  nodeAffinity: {},
  nodeTaints: {},
});

/** `spec` with RULE_STRATEGIES named under its own sections (its own win, section by section). */
export function withRuleStrategies(spec: Json = {}): Json {
  const own = (spec['strategies'] ?? {}) as Json;
  return { ...spec, strategies: { ...RULE_STRATEGIES, ...own } };
}
