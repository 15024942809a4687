// Synthetic clusters for the benchmark, as raw API objects (what kubectl or a watch would deliver), so
// conversion is measured too. Deterministic: the same parameters give the same cluster.
export interface ClusterShape {
  readonly nodes: number;
  readonly zones: number;
  readonly workloads: number;
  readonly replicas: number;
  /** Fraction of workloads whose pods are piled into the first zones (the rest are balanced). */
  readonly skewedFraction: number;
  /** 'spread': zone spread only (the 5/5/0 pattern); 'mixed': adds anti-affinity, node affinity and taints. */
  readonly kind: 'spread' | 'mixed';
  readonly namespaces: number;
}

/** The bench's 10k-pod cluster: every workload skewed (the one-cycle rows of run.ts, compare.ts and load.ts). */
export const SPREAD_10K: ClusterShape = {
  nodes: 300,
  zones: 3,
  workloads: 1000,
  replicas: 10,
  skewedFraction: 1,
  kind: 'spread',
  namespaces: 20,
};

/** The bench's 150k-pod cluster: 5,000 nodes, a tenth of the workloads skewed, spread and affinity mixed. */
export const MIXED_150K: ClusterShape = {
  nodes: 5000,
  zones: 3,
  workloads: 3000,
  replicas: 50,
  skewedFraction: 0.1,
  kind: 'mixed',
  namespaces: 100,
};

export interface RawCluster {
  readonly objects: unknown[];
  readonly podCount: number;
}

const CREATED = '2026-11-01T00:00:00Z';

function node(i: number, zone: string, tainted: boolean, pool: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `node-${i}`,
      uid: `node-uid-${i}`,
      resourceVersion: String(100 + i),
      creationTimestamp: CREATED,
      labels: {
        'kubernetes.io/hostname': `node-${i}`,
        'kubernetes.io/os': 'linux',
        'topology.kubernetes.io/zone': zone,
        'node.kubernetes.io/instance-type': 'm5.4xlarge',
        'node-pool': pool,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: tainted ? { taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] } : {},
    status: {
      allocatable: { cpu: '16', memory: '64Gi', pods: '110', 'ephemeral-storage': '95Gi' },
      capacity: { cpu: '16', memory: '64Gi', pods: '110' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
      nodeInfo: {
        kubeletVersion: 'v1.26.15',
        osImage: 'Bottlerocket OS 1.19.0',
        containerRuntimeVersion: 'containerd://1.6.28',
      },
      images: [],
    },
  };
}

interface WorkloadSpec {
  readonly name: string;
  readonly namespace: string;
  readonly hash: string;
  readonly antiAffinity: boolean;
  readonly nodeAffinity: boolean;
  readonly tolerates: boolean;
}

function pod(w: WorkloadSpec, index: number, nodeName: string): unknown {
  const labels = { app: w.name, 'pod-template-hash': w.hash, tier: 'backend' };
  const affinity: Record<string, unknown> = {};
  if (w.antiAffinity) {
    affinity['podAntiAffinity'] = {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { labelSelector: { matchLabels: { app: w.name } }, topologyKey: 'kubernetes.io/hostname' },
      ],
    };
  }
  if (w.nodeAffinity) {
    affinity['nodeAffinity'] = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: 'node-pool', operator: 'In', values: ['general', 'batch'] }] }],
      },
    };
  }
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `${w.name}-${w.hash}-${index.toString(36).padStart(5, '0')}`,
      namespace: w.namespace,
      uid: `${w.namespace}-${w.name}-${index}`,
      resourceVersion: String(10_000 + index),
      creationTimestamp: CREATED,
      labels,
      annotations: { 'kubectl.kubernetes.io/restartedAt': CREATED },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${w.name}-${w.hash}`,
          uid: `rs-${w.namespace}-${w.name}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: CREATED,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': {} } },
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'app',
          image: `registry.example.com/${w.name}:1.0.0`,
          ports: [{ containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          env: [{ name: 'LOG_LEVEL', value: 'info' }],
          volumeMounts: [
            { name: 'kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true },
          ],
        },
      ],
      volumes: [{ name: 'kube-api-access', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }],
      nodeName,
      priority: 0,
      schedulerName: 'default-scheduler',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        ...(w.tolerates ? [{ key: 'dedicated', operator: 'Equal', value: 'batch', effect: 'NoSchedule' }] : []),
      ],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { app: w.name } },
          matchLabelKeys: ['pod-template-hash'],
        },
      ],
      ...(Object.keys(affinity).length > 0 ? { affinity } : {}),
    },
    status: {
      phase: 'Running',
      qosClass: 'Burstable',
      conditions: [
        { type: 'Initialized', status: 'True' },
        { type: 'Ready', status: 'True' },
        { type: 'ContainersReady', status: 'True' },
        { type: 'PodScheduled', status: 'True' },
      ],
      hostIP: '10.0.0.1',
      podIP: '10.1.0.1',
      startTime: CREATED,
    },
  };
}

function pdb(w: WorkloadSpec, replicas: number): unknown {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: w.name, namespace: w.namespace, uid: `pdb-${w.namespace}-${w.name}`, generation: 1 },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: w.name } } },
    status: {
      observedGeneration: 1,
      currentHealthy: replicas,
      desiredHealthy: replicas - 1,
      expectedPods: replicas,
      disruptionsAllowed: 1,
    },
  };
}

/** Nodes per zone in round-robin; a skewed workload fills zones 0 and 1 only (5/5/0 for 10 replicas). */
export function* clusterObjects(shape: ClusterShape): Generator<unknown> {
  const zoneNodes: string[][] = Array.from({ length: shape.zones }, () => []);
  for (let i = 0; i < shape.nodes; i++) {
    const zone = i % shape.zones;
    const tainted = shape.kind === 'mixed' && i % 10 === 9;
    yield node(i, `zone-${zone}`, tainted, i % 4 === 3 ? 'batch' : 'general');
    zoneNodes[zone]!.push(`node-${i}`);
  }
  for (let n = 0; n < shape.namespaces; n++) {
    yield {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: `team-${n}`, labels: { 'kubernetes.io/metadata.name': `team-${n}` } },
    };
  }
  const cursor = new Array<number>(shape.zones).fill(0);
  const skewEvery = shape.skewedFraction > 0 ? Math.round(1 / shape.skewedFraction) : Infinity;
  for (let w = 0; w < shape.workloads; w++) {
    const spec: WorkloadSpec = {
      name: `app-${w}`,
      namespace: `team-${w % shape.namespaces}`,
      hash: (0x5f00000 + w).toString(16),
      antiAffinity: shape.kind === 'mixed' && w % 5 === 1,
      nodeAffinity: shape.kind === 'mixed' && w % 7 === 2,
      tolerates: shape.kind === 'mixed' && w % 3 === 0,
    };
    const skewed = w % skewEvery === 0;
    const zonesUsed = skewed ? Math.max(1, shape.zones - 1) : shape.zones;
    for (let r = 0; r < shape.replicas; r++) {
      const zone = r % zonesUsed;
      const list = zoneNodes[zone]!;
      const nodeName = list[cursor[zone]! % list.length]!;
      cursor[zone]!++;
      yield pod(spec, r, nodeName);
    }
    yield pdb(spec, shape.replicas);
  }
}

export function generateCluster(shape: ClusterShape): RawCluster {
  const objects = [...clusterObjects(shape)];
  return { objects, podCount: objects.filter((o) => (o as { kind: string }).kind === 'Pod').length };
}
