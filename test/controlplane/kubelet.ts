// A stand-in kubelet for the real control plane (test code; there is no real kubelet here). It
//  - creates Node objects with zone/hostname labels, capacity and allocatable, condition Ready=True;
//  - renews every node's Lease in kube-node-lease, so the node lifecycle controller never taints them unreachable;
//  - reports each pod bound to one of its nodes Running and Ready after a delay that can be set per pod, including
//    "never Ready" (Running, Ready=False) and "stays Pending" (never reported);
//  - deletes terminating pods (deletionTimestamp set, e.g. by an eviction) with grace 0 after a configurable grace;
//  - on request, reports a running pod's containers restarted N times (reportRestarts) or the pod Failed with a
//    reason and exit code (reportFailed), as a kubelet does after crash loops or an OOM kill.
//  - reports its node Ready again when the node lifecycle controller marked it Unknown (Lease renewals that did not
//    get through in its grace period, e.g. while etcd restarts on a loaded machine), as a kubelet's status loop does:
//    otherwise the node stayed NotReady, and unschedulable, for the rest of the test.
// It watches pods and nodes with plain list + watch loops that relist after any error, so it rides through API server
// and etcd restarts like a kubelet does.
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';

export type PodReadiness =
  /** Running and Ready after this many milliseconds. */
  | { readonly readyAfterMs: number }
  /** Running, never Ready. */
  | 'never-ready'
  /** Never reported: the pod stays Pending on its node. */
  | 'pending';

export interface KubeletOptions {
  /** Bind → Running+Ready delay for pods the `readiness` function leaves undefined (default 0). */
  readonly readyDelayMs?: number;
  /** Per-pod readiness; undefined falls back to `readyDelayMs`. Read when the pod is first seen bound. */
  readiness?: (pod: k8s.V1Pod) => PodReadiness | undefined;
  /** Terminating pod → deleted with grace 0 after this many milliseconds (default 0). */
  readonly terminationGraceMs?: number;
  /** Lease renewal interval (default 5 s; the lifecycle controller's grace is 40 s). */
  readonly leaseRenewMs?: number;
}

export interface NodeOptions {
  readonly name: string;
  readonly zone?: string;
  readonly cpu?: string;
  readonly memory?: string;
  readonly pods?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly k8s.V1Taint[];
  readonly unschedulable?: boolean;
}

export const ZONE = 'topology.kubernetes.io/zone';
export const HOSTNAME = 'kubernetes.io/hostname';

const MAX_IN_FLIGHT = 32;

type PodList = { items: k8s.V1Pod[]; metadata?: { resourceVersion?: string } };
type NodeList = { items: k8s.V1Node[]; metadata?: { resourceVersion?: string } };

const MERGE = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);

/** The node condition the stand-in reports: Ready, as a kubelet whose node is healthy does. */
function readyCondition(now: Date): k8s.V1NodeCondition {
  return {
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    message: 'stand-in kubelet',
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  };
}

/** metav1.MicroTime wants six fractional digits. */
function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * client-node 1.x builds a new agent, so a new TLS connection, for every request. At 1,000 nodes the stand-in's Lease
 * renewals and pod status writes kept about 1,400 connections open or closing, and TLS handshakes took 17% of the API
 * server's CPU, which the operator under test was left to share. A kubelet keeps its connection: here every request
 * of one stand-in goes through one keep-alive agent, made from the options of the first agent client-node built.
 */
class SharedAgent {
  private agent: https.Agent | undefined;

  readonly middleware: k8s.Middleware = {
    pre: (context) => {
      const given = context.getAgent();
      if (given instanceof https.Agent) {
        this.agent ??= new https.Agent({ ...given.options, keepAlive: true, maxSockets: MAX_IN_FLIGHT });
        if (given !== this.agent) given.destroy();
        context.setAgent(this.agent);
      }
      return Promise.resolve(context);
    },
    post: (response) => Promise.resolve(response),
  };

  client<T>(kubeConfig: k8s.KubeConfig, Api: new (config: k8s.Configuration) => T): T {
    const cluster = kubeConfig.getCurrentCluster();
    if (cluster === null) throw new Error('the kubeconfig has no current cluster');
    return new Api(
      k8s.createConfiguration({
        baseServer: new k8s.ServerConfiguration(cluster.server, {}),
        authMethods: { default: kubeConfig },
        promiseMiddleware: [this.middleware],
      }),
    );
  }

  destroy(): void {
    this.agent?.destroy();
  }
}

export class StandInKubelet {
  private readonly agent = new SharedAgent();
  private readonly core: k8s.CoreV1Api;
  private readonly coordination: k8s.CoordinationV1Api;
  private readonly nodes = new Set<string>();
  /** uid → what has been done or scheduled for the pod. */
  private readonly seen = new Map<string, 'reported' | 'scheduled' | 'left' | 'deleting'>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private leaseTimer: NodeJS.Timeout | undefined;
  private readonly requests = new Set<AbortController>();
  /** Nodes whose Ready=True report is queued or in flight. */
  private readonly reportingReady = new Set<string>();
  private stopped = false;
  private ipCounter = 1;
  private readonly queue: Array<() => Promise<void>> = [];
  private inFlight = 0;
  readonly errors: string[] = [];

  constructor(
    private readonly kubeConfig: k8s.KubeConfig,
    readonly options: KubeletOptions = {},
  ) {
    this.core = this.agent.client(kubeConfig, k8s.CoreV1Api);
    this.coordination = this.agent.client(kubeConfig, k8s.CoordinationV1Api);
  }

  async addNode(opts: NodeOptions): Promise<void> {
    const resources = { cpu: opts.cpu ?? '8', memory: opts.memory ?? '32Gi', pods: opts.pods ?? '110' };
    const now = new Date();
    await this.core.createNode({
      body: {
        metadata: {
          name: opts.name,
          labels: {
            [HOSTNAME]: opts.name,
            'kubernetes.io/os': 'linux',
            ...(opts.zone !== undefined ? { [ZONE]: opts.zone } : {}),
            ...opts.labels,
          },
        },
        spec: { taints: opts.taints ? [...opts.taints] : undefined, unschedulable: opts.unschedulable },
        // Node status is accepted on create, as a kubelet registering itself sends it.
        status: {
          capacity: resources,
          allocatable: resources,
          conditions: [readyCondition(now)],
          addresses: [{ type: 'Hostname', address: opts.name }],
        },
      },
    });
    this.nodes.add(opts.name);
    await this.renewLease(opts.name);
  }

  /**
   * Waits until the node can take pods: the TaintNodesByCondition admission plugin gives every new Node a
   * `node.kubernetes.io/not-ready:NoSchedule` taint, which the node lifecycle controller removes once it has seen the
   * node Ready. The scheduler (and the operator's simulation of it) refuses the node until then.
   */
  async waitUntilSchedulable(name: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const node = await this.core.readNode({ name });
      if (!(node.spec?.taints ?? []).some((t) => t.key === 'node.kubernetes.io/not-ready')) return;
      if (Date.now() > deadline) throw new Error(`node ${name} still has the not-ready taint after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Starts the Lease renewals and the pod watch. */
  start(): void {
    const renewEvery = this.options.leaseRenewMs ?? 5_000;
    this.leaseTimer = setInterval(() => {
      for (const node of this.nodes) void this.renewLease(node);
    }, renewEvery);
    void this.watchLoop(
      '/api/v1/pods',
      { fieldSelector: 'spec.nodeName!=' },
      async () => (await this.core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName!=' })) as PodList,
      (phase, pod) => this.onPod(phase, pod),
    );
    void this.watchLoop(
      '/api/v1/nodes',
      {},
      async () => (await this.core.listNode()) as NodeList,
      (phase, node) => this.onNode(phase, node),
    );
  }

  stop(): void {
    this.stopped = true;
    if (this.leaseTimer !== undefined) clearInterval(this.leaseTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const r of this.requests) r.abort();
    this.agent.destroy();
  }

  /** Runs `fn` after `ms`, at most MAX_IN_FLIGHT at once, so seeding thousands of pods does not open a socket each. */
  private later(ms: number, fn: () => Promise<void>, attempt = 0): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.queue.push(() =>
        fn().catch((err: unknown) => {
          const code = (err as { code?: number }).code;
          // The API server is restarting (connection refused, 5xx): report again later, as a kubelet does.
          if (code !== 404 && code !== 409 && attempt < 100 && !this.stopped) this.later(300, fn, attempt + 1);
          else throw err;
        }),
      );
      this.drain();
    }, ms);
    this.timers.add(timer);
  }

  private drain(): void {
    while (!this.stopped && this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const fn = this.queue.shift()!;
      this.inFlight++;
      fn()
        .catch((err: unknown) => this.note(err))
        .finally(() => {
          this.inFlight--;
          this.drain();
        });
    }
  }

  private note(err: unknown): void {
    if (this.stopped) return;
    const e = err as { code?: number; message?: string };
    // 404/409: the pod went away or changed under us; the watch brings the next state.
    if (e.code === 404 || e.code === 409) return;
    this.errors.push(e.message ?? String(err));
  }

  private async renewLease(node: string): Promise<void> {
    if (this.stopped) return;
    const body = {
      metadata: { name: node, namespace: 'kube-node-lease' },
      spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: microTime(new Date()) },
    };
    try {
      await this.coordination.patchNamespacedLease(
        { name: node, namespace: 'kube-node-lease', body: { spec: body.spec } },
        MERGE,
      );
    } catch (err) {
      if ((err as { code?: number }).code !== 404) return; // the API server may be restarting; next tick
      try {
        await this.coordination.createNamespacedLease({
          namespace: 'kube-node-lease',
          body: body as unknown as k8s.V1Lease,
        });
      } catch {
        // created concurrently, or the server is away: the next tick renews
      }
    }
  }

  private async watchLoop<T>(
    path: string,
    query: Record<string, string>,
    list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
    onEvent: (phase: string, object: T) => void,
  ): Promise<void> {
    const watch = new k8s.Watch(this.kubeConfig);
    while (!this.stopped) {
      try {
        const listed = await list();
        for (const item of listed.items) onEvent('ADDED', item);
        await new Promise<void>((resolve) => {
          void watch
            .watch(
              path,
              { ...query, resourceVersion: listed.metadata?.resourceVersion },
              (phase: string, object: T) => onEvent(phase, object),
              () => resolve(),
            )
            .then((controller) => {
              this.requests.add(controller);
              controller.signal.addEventListener('abort', () => this.requests.delete(controller));
              if (this.stopped) controller.abort();
            })
            .catch(() => resolve());
        });
      } catch {
        // listing failed (server restarting): retry below
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }

  /** One of its nodes no longer Ready=True (the lifecycle controller set Unknown): report it Ready, once at a time. */
  private onNode(phase: string, node: k8s.V1Node): void {
    const name = node.metadata?.name;
    if (phase === 'DELETED' || name === undefined || !this.nodes.has(name)) return;
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
    if (ready?.status === 'True' || this.reportingReady.has(name)) return;
    this.reportingReady.add(name);
    this.later(0, async () => {
      try {
        await this.core.patchNodeStatus(
          {
            name,
            body: {
              status: {
                // A merge patch replaces the list: Ready is the only condition the stand-in reports.
                conditions: [readyCondition(new Date())],
              },
            },
          },
          MERGE,
        );
      } finally {
        this.reportingReady.delete(name);
      }
    });
  }

  private onPod(phase: string, pod: k8s.V1Pod): void {
    const uid = pod.metadata?.uid;
    const node = pod.spec?.nodeName;
    if (uid === undefined || node === undefined || !this.nodes.has(node)) return;
    if (phase === 'DELETED') {
      this.seen.delete(uid);
      return;
    }
    if (pod.metadata?.deletionTimestamp !== undefined) {
      if (this.seen.get(uid) === 'deleting') return;
      this.seen.set(uid, 'deleting');
      const { name, namespace } = pod.metadata;
      this.later(this.options.terminationGraceMs ?? 0, async () => {
        await this.core.deleteNamespacedPod({
          name: name!,
          namespace: namespace!,
          gracePeriodSeconds: 0,
          body: { preconditions: { uid } },
        });
      });
      return;
    }
    if (this.seen.has(uid) || pod.status?.phase !== 'Pending') return;
    const readiness = this.options.readiness?.(pod) ?? { readyAfterMs: this.options.readyDelayMs ?? 0 };
    if (readiness === 'pending') {
      this.seen.set(uid, 'left');
      return;
    }
    this.seen.set(uid, 'scheduled');
    const delay = readiness === 'never-ready' ? 0 : readiness.readyAfterMs;
    this.later(delay, () => this.report(pod, readiness !== 'never-ready'));
  }

  /** Reports the pod's containers (still running and Ready) as restarted `restarts` times in all. */
  async reportRestarts(namespace: string, name: string, restarts: number): Promise<void> {
    const pod = await this.core.readNamespacedPod({ namespace, name });
    const statuses = pod.status?.containerStatuses ?? [];
    await this.core.patchNamespacedPodStatus(
      {
        name,
        namespace,
        body: {
          status: {
            // A strategic merge would key by name; a merge patch replaces the list, so every entry is sent.
            containerStatuses: statuses.map((c, i) => ({ ...c, restartCount: i === 0 ? restarts : 0 })),
          },
        },
      },
      MERGE,
    );
  }

  /** Reports the pod Failed: its containers terminated with `exitCode` and `reason`, and status.reason if given. */
  async reportFailed(
    namespace: string,
    name: string,
    failure: { readonly exitCode: number; readonly containerReason: string; readonly podReason?: string },
  ): Promise<void> {
    const pod = await this.core.readNamespacedPod({ namespace, name });
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    await this.core.patchNamespacedPodStatus(
      {
        name,
        namespace,
        body: {
          status: {
            phase: 'Failed',
            ...(failure.podReason !== undefined ? { reason: failure.podReason } : {}),
            conditions: [
              { type: 'Initialized', status: 'True', lastTransitionTime: now },
              { type: 'Ready', status: 'False', lastTransitionTime: now },
              { type: 'ContainersReady', status: 'False', lastTransitionTime: now },
              { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
            ],
            containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
              name: c.name,
              image: c.image ?? '',
              imageID: '',
              ready: false,
              started: false,
              restartCount: 0,
              state: {
                terminated: {
                  exitCode: failure.exitCode,
                  reason: failure.containerReason,
                  startedAt: now,
                  finishedAt: now,
                },
              },
            })),
          },
        },
      },
      MERGE,
    );
  }

  private async report(pod: k8s.V1Pod, ready: boolean): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const status = ready ? 'True' : 'False';
    const ip = `10.244.${Math.floor(this.ipCounter / 250) % 250}.${(this.ipCounter++ % 250) + 1}`;
    const containers = pod.spec?.containers ?? [];
    await this.core.patchNamespacedPodStatus(
      {
        name: pod.metadata!.name!,
        namespace: pod.metadata!.namespace!,
        body: {
          status: {
            phase: 'Running',
            hostIP: '127.0.0.1',
            podIP: ip,
            podIPs: [{ ip }],
            startTime: now,
            conditions: [
              { type: 'Initialized', status: 'True', lastTransitionTime: now },
              { type: 'Ready', status, lastTransitionTime: now },
              { type: 'ContainersReady', status, lastTransitionTime: now },
              { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
            ],
            containerStatuses: containers.map((c) => ({
              name: c.name,
              image: c.image ?? '',
              imageID: '',
              ready,
              started: true,
              restartCount: 0,
              state: { running: { startedAt: now } },
            })),
          },
        },
      },
      MERGE,
    );
    this.seen.set(pod.metadata!.uid!, 'reported');
  }
}
