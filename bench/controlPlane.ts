// The 10k case on a real control plane (test/controlplane, the release KUBEBUILDER_ASSETS holds): 1,000 Deployments ×
// 10 pods skewed 5/5/0 over 300
// nodes (100 a zone; zone-c is added after the pods are placed), one PDB each (maxUnavailable 1), balanced by
// `kube-rebalancer run --leader-elect` as its own process with the shipped ServiceAccount's token and its default
// QPS/burst (20/40). The real ReplicaSet controller replaces every evicted pod, the real scheduler places it, the
// stand-in kubelet makes it Ready at once. Prints JSON: seconds from the policy's creation to every Deployment within
// maxSkew (with every pod Ready), evictions by answer, the operator's requests by verb and resource (from the API
// server's audit log), its peak RSS (VmHWM) and CPU seconds. BENCH_OPERATOR_INSTALL picks how the operator is
// installed and started: image (default), npm or repo (bench/operatorInstall.ts).
// BENCH_BALANCER=descheduler runs the same scenario with the descheduler instead (sigs.k8s.io/descheduler at its newest
// release, built by hack/descheduler.sh outside the repo): its RemovePodsViolatingTopologySpreadConstraint plugin with
// the DefaultEvictor, every 10 s, with the operator's client budget (QPS 20, burst 40) and a cluster-admin
// ServiceAccount; the same figures, read the same way (audit log, /proc).
//   KUBEBUILDER_ASSETS="$(bash hack/control-plane-assets.sh 1.37)" node dist/bench/controlPlane.js [deployments] [nodesPerZone]
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as k8s from '@kubernetes/client-node';
import { controlPlaneVersion } from '../test/controlplane/assets.js';
import { ManagedProcess } from '../test/controlplane/processes.js';
import {
  createPolicy,
  installManifests,
  isDryRun,
  OPERATOR_NAMESPACE,
  OPERATOR_SA,
  OPERATOR_USER,
  startCluster,
  ZONE,
  type Cluster,
} from '../test/integration/cluster.js';
import { startOperatorProcess, type OperatorProcess } from '../test/integration/operatorProcess.js';
import { operatorInstallFrom, prepareOperator } from './operatorInstall.js';

const deployments = Number(process.argv[2] ?? 1000);
const nodesPerZone = Number(process.argv[3] ?? 100);
const REPLICAS = 10;
const NAMESPACES = 20;

const log = (msg: string): void => {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `fn` over `items`, `width` at a time. */
async function inBatches<T>(items: readonly T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(fn));
}

/** Every pod of the run, from one watch: zone counts per app and Ready counts, for "balanced" without polling. */
class PodTracker {
  private readonly pods = new Map<string, { app: string; node: string; ready: boolean }>();
  private request: AbortController | undefined;
  private stopped = false;

  constructor(
    private readonly c: Cluster,
    private readonly zoneOf: Map<string, string>,
  ) {}

  async start(): Promise<void> {
    // 30,000 pods in one answer: on a loaded machine the API server may cut it short ("Premature close"), so the
    // list is tried again, as a reflector lists again.
    let list: k8s.V1PodList | undefined;
    for (let attempt = 1; list === undefined; attempt++) {
      try {
        list = await this.c.core.listPodForAllNamespaces({ labelSelector: 'bench=realcp' });
      } catch (err) {
        if (attempt >= 5) throw err;
        log(`listing the pods failed (${(err as Error).message.slice(0, 120)}); listing again`);
        await sleep(2_000);
      }
    }
    for (const pod of list.items) this.apply('ADDED', pod);
    let resourceVersion = list.metadata?.resourceVersion;
    const loop = async (): Promise<void> => {
      while (!this.stopped) {
        await new Promise<void>((resolve) => {
          void new k8s.Watch(this.c.kc)
            .watch(
              '/api/v1/pods',
              { labelSelector: 'bench=realcp', resourceVersion, allowWatchBookmarks: true },
              (phase: string, pod: k8s.V1Pod) => {
                resourceVersion = pod.metadata?.resourceVersion ?? resourceVersion;
                if (phase !== 'BOOKMARK' && phase !== 'ERROR') this.apply(phase, pod);
              },
              () => resolve(),
            )
            .then((req) => (this.request = req))
            .catch(() => resolve());
        });
      }
    };
    void loop();
  }

  private apply(phase: string, pod: k8s.V1Pod): void {
    const key = pod.metadata!.uid!;
    if (phase === 'DELETED' || pod.metadata?.deletionTimestamp) {
      this.pods.delete(key);
      return;
    }
    const ready = (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
    this.pods.set(key, {
      app: `${pod.metadata?.namespace}/${pod.metadata?.labels?.['app']}`,
      node: pod.spec?.nodeName ?? '',
      ready,
    });
  }

  /** Apps whose zone skew is above 1, and pods not Ready. */
  state(zones: readonly string[]): { skewed: number; notReady: number; pods: number } {
    const counts = new Map<string, Map<string, number>>();
    let notReady = 0;
    for (const p of this.pods.values()) {
      if (!p.ready) notReady++;
      let c = counts.get(p.app);
      if (c === undefined) counts.set(p.app, (c = new Map(zones.map((z) => [z, 0]))));
      const zone = this.zoneOf.get(p.node);
      if (zone !== undefined) c.set(zone, (c.get(zone) ?? 0) + 1);
    }
    let skewed = 0;
    for (const c of counts.values()) {
      const values = [...c.values()];
      if (Math.max(...values) - Math.min(...values) > 1) skewed++;
    }
    return { skewed, notReady, pods: this.pods.size };
  }

  stop(): void {
    this.stopped = true;
    this.request?.abort();
  }
}

async function addNodes(c: Cluster, zone: string, zoneOf: Map<string, string>): Promise<void> {
  const names = Array.from({ length: nodesPerZone }, (_, i) => `${zone}-node-${i + 1}`);
  await inBatches(names, 20, (name) => c.kubelet.addNode({ name, zone, cpu: '64', pods: '250' }));
  await inBatches(names, 20, (name) => c.kubelet.waitUntilSchedulable(name, 60_000));
  for (const name of names) zoneOf.set(name, zone);
}

async function seed(c: Cluster): Promise<void> {
  for (let n = 0; n < NAMESPACES; n++) await c.core.createNamespace({ body: { metadata: { name: `team-${n}` } } });
  const ids = Array.from({ length: deployments }, (_, i) => i);
  await inBatches(ids, 25, async (w) => {
    const namespace = `team-${w % NAMESPACES}`;
    const labels = { app: `app-${w}`, bench: 'realcp' };
    await c.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: `app-${w}` },
        spec: {
          replicas: REPLICAS,
          selector: { matchLabels: { app: `app-${w}` } },
          template: {
            metadata: { labels },
            spec: {
              terminationGracePeriodSeconds: 0,
              containers: [
                {
                  name: 'app',
                  image: 'registry.example/app:1',
                  resources: { requests: { cpu: '10m', memory: '16Mi' } },
                },
              ],
              // The pod shape of the second harness (../shared/perf-rig, gen-scenario.mjs): a hard zone spread and a
              // soft hostname spread. The soft one is not balanced (the policy's includeSoftConstraints is false), but
              // the simulated scheduler scores with it and the operator counts it per node: without it this bench
              // measured 149 MiB where the second harness measured 311 MiB (issue 24).
              topologySpreadConstraints: [
                {
                  maxSkew: 1,
                  topologyKey: ZONE,
                  whenUnsatisfiable: 'DoNotSchedule',
                  labelSelector: { matchLabels: { app: `app-${w}` } },
                },
                {
                  maxSkew: 2,
                  topologyKey: 'kubernetes.io/hostname',
                  whenUnsatisfiable: 'ScheduleAnyway',
                  labelSelector: { matchLabels: { app: `app-${w}` } },
                },
              ],
            },
          },
        },
      },
    });
    await c.policy.createNamespacedPodDisruptionBudget({
      namespace,
      body: {
        metadata: { name: `app-${w}` },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: `app-${w}` } } },
      },
    });
  });
}

interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

const MiB = (bytes: number): number => Math.round(bytes / 2 ** 20);

/** RSS from /proc; heap and external memory from the operator's own `nodejs_*` metrics (prom-client defaults). */
async function memoryOf(op: OperatorProcess): Promise<Memory> {
  const rss = op.usage()?.rssBytes ?? 0;
  const text = await op.scrape().catch(() => '');
  const gauge = (name: string): number => {
    const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text);
    return m === null ? 0 : Number(m[1]);
  };
  return {
    rss: MiB(rss),
    heapUsed: MiB(gauge('nodejs_heap_size_used_bytes')),
    heapTotal: MiB(gauge('nodejs_heap_size_total_bytes')),
    external: MiB(gauge('nodejs_external_memory_bytes')),
  };
}

/**
 * Samples the operator's memory through a run: RSS from /proc every 250 ms (the peak itself is the kernel's VmHWM),
 * the heap from /metrics every 10 s and when RSS is 16 MiB above the highest a reading was taken at (at most every
 * 2 s). Each scrape renders every series of the operator (thousands at 3,000 workloads): in a CPU profile of a
 * 30,000-pod run, this bench's scrapes (every 2 s and at every rise of RSS) took 34 of the 171 s, more than planning.
 */
class MemoryWatch {
  atPeak: Memory = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0 };
  largestHeapUsed: Memory = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0 };
  last: Memory = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0 };
  private timer: NodeJS.Timeout | undefined;
  private lastScrape = 0;
  /** The highest RSS a heap sample was taken at or after. */
  private sampledRss = 0;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly op: OperatorProcess) {}

  start(): void {
    this.timer = setInterval(() => {
      const rss = MiB(this.op.usage()?.rssBytes ?? 0);
      const now = Date.now();
      const risen = rss >= this.sampledRss + 16 && now - this.lastScrape >= 2_000;
      if (!risen && now - this.lastScrape < 10_000) return;
      this.lastScrape = now;
      this.sampledRss = Math.max(this.sampledRss, rss);
      this.pending = this.pending.then(async () => {
        const m = await memoryOf(this.op);
        this.last = m;
        if (m.rss >= this.atPeak.rss) this.atPeak = m;
        if (m.heapUsed >= this.largestHeapUsed.heapUsed) this.largestHeapUsed = m;
      });
    }, 250);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pending;
  }
}

async function until(what: string, timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = Date.now();
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    if (Date.now() - last > 15_000) {
      log(`still waiting for ${what}`);
      last = Date.now();
    }
    await sleep(250);
  }
}

/** RSS, its high-water mark and CPU seconds of a process, from /proc. */
function procUsage(pid: number): { rssBytes: number; hwmBytes: number; cpuSeconds: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return {
      rssBytes: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024,
      hwmBytes: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024,
      cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
    };
  } catch {
    return undefined;
  }
}

const DESCHEDULER_SA = 'descheduler';
const DESCHEDULER_USER = `system:serviceaccount:kube-system:${DESCHEDULER_SA}`;

// The descheduler's answer to a zone skew: the topology-spread plugin, hard constraints only (as the operator's
// policy: includeSoftConstraints false), pods evicted through the Eviction API so every PDB holds.
const DESCHEDULER_POLICY = {
  apiVersion: 'descheduler/v1alpha2',
  kind: 'DeschedulerPolicy',
  profiles: [
    {
      name: 'bench',
      pluginConfig: [
        { name: 'DefaultEvictor', args: {} },
        { name: 'RemovePodsViolatingTopologySpreadConstraint', args: { constraints: ['DoNotSchedule'] } },
      ],
      plugins: { balance: { enabled: ['RemovePodsViolatingTopologySpreadConstraint'] } },
    },
  ],
};

/** The same run with the descheduler: from its start to every Deployment balanced and Ready. */
async function runDescheduler(
  c: Cluster,
  t: PodTracker,
  zones: readonly string[],
  header: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const binary = execFileSync('bash', [join(root, 'hack/descheduler.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  const version = execFileSync(binary, ['version'], { encoding: 'utf8' }).match(/GitVersion:(v[^ ]+)/)?.[1];
  await c.core.createNamespacedServiceAccount({
    namespace: 'kube-system',
    body: { metadata: { name: DESCHEDULER_SA } },
  });
  await c.kc.makeApiClient(k8s.RbacAuthorizationV1Api).createClusterRoleBinding({
    body: {
      metadata: { name: 'bench-descheduler' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: DESCHEDULER_SA, namespace: 'kube-system' }],
    },
  });
  const kubeconfig = await c.cp.serviceAccountKubeconfig('kube-system', DESCHEDULER_SA);
  const policyFile = join(c.cp.dir, 'descheduler-policy.json');
  writeFileSync(policyFile, JSON.stringify(DESCHEDULER_POLICY));
  const auditMark = c.cp.audit().length;
  const t0 = Date.now();
  const proc = new ManagedProcess({
    name: 'descheduler',
    command: binary,
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--policy-config-file=${policyFile}`,
      '--descheduling-interval=10s',
      '--client-connection-qps=20',
      '--client-connection-burst=40',
      '--secure-port=0',
      '--v=1',
    ],
    dir: c.cp.dir,
  });
  let peakSampled = 0;
  const sampler = setInterval(() => {
    peakSampled = Math.max(peakSampled, MiB(procUsage(proc.pid)?.rssBytes ?? 0));
  }, 250);
  try {
    await until('every Deployment balanced and Ready', 3_600_000, () => {
      if (!proc.running) throw new Error(`the descheduler exited:\n${proc.tail()}`);
      const s = t.state(zones);
      return s.skewed === 0 && s.notReady === 0 && s.pods === deployments * REPLICAS;
    });
  } finally {
    clearInterval(sampler);
  }
  const seconds = (Date.now() - t0) / 1000;
  const end = procUsage(proc.pid);
  await proc.stop({ graceMs: 5_000 });
  const requests = c.cp
    .audit()
    .slice(auditMark)
    .filter((e) => e.user.username === DESCHEDULER_USER);
  const evictions = requests.filter((e) => e.objectRef?.subresource === 'eviction');
  const byCode: Record<string, number> = {};
  for (const e of evictions) byCode[String(e.responseStatus?.code)] = (byCode[String(e.responseStatus?.code)] ?? 0) + 1;
  return {
    ...header,
    balancer: `descheduler ${version ?? '?'} (RemovePodsViolatingTopologySpreadConstraint, DoNotSchedule only, every 10 s, QPS 20, burst 40)`,
    secondsToBalanced: Math.round(seconds * 10) / 10,
    evictions: evictions.length,
    evictionAnswers: byCode,
    requests: requests.length,
    peakRssMiB: MiB(end?.hwmBytes ?? 0),
    peakRssSampledMiB: peakSampled,
    cpuSeconds: Math.round((end?.cpuSeconds ?? 0) * 10) / 10,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

async function main(): Promise<void> {
  const started = Date.now();
  const descheduler = process.env['BENCH_BALANCER'] === 'descheduler';
  // Installed before the cluster starts: npm's work is not part of the run.
  const install = operatorInstallFrom(process.env['BENCH_OPERATOR_INSTALL']);
  const installDir = mkdtempSync(join(os.tmpdir(), 'rebalancer-install-'));
  const nodeArgs = (process.env['BENCH_OPERATOR_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  let launch: ReturnType<typeof prepareOperator> | undefined;
  try {
    launch = descheduler ? undefined : prepareOperator(install, installDir, nodeArgs);
  } catch (err) {
    rmSync(installDir, { recursive: true, force: true });
    throw err;
  }
  log(launch === undefined ? 'balancer: the descheduler' : `operator: ${launch.description}`);
  // A kubelet renews its node's Lease every 10 s; at 1,000 nodes that is 100 writes a second the 2-vCPU machines here
  // cannot spare while seeding 30,000 pods, so BENCH_LEASE_RENEW_MS may stretch it (below the controller's 50 s grace).
  const leaseRenewMs = Number(process.env['BENCH_LEASE_RENEW_MS'] ?? 10_000);
  const c = await startCluster({ zones: [], kubelet: { readyDelayMs: 0, leaseRenewMs } });
  let operator: OperatorProcess | undefined;
  let tracker: PodTracker | undefined;
  try {
    const zoneOf = new Map<string, string>();
    await addNodes(c, 'zone-a', zoneOf);
    await addNodes(c, 'zone-b', zoneOf);
    await installManifests(c);
    log(`control plane and ${zoneOf.size} nodes up in ${Math.round((Date.now() - started) / 1000)} s; seeding`);
    await seed(c);
    tracker = new PodTracker(c, zoneOf);
    await tracker.start();
    const t = tracker;
    await until(`${deployments * REPLICAS} Ready pods`, 1_800_000, () => {
      const s = t.state(['zone-a', 'zone-b']);
      return s.pods === deployments * REPLICAS && s.notReady === 0;
    });
    log(`seeded in ${Math.round((Date.now() - started) / 1000)} s; adding zone-c`);
    await addNodes(c, 'zone-c', zoneOf);
    const zones = ['zone-a', 'zone-b', 'zone-c'];
    const skewedAtStart = t.state(zones).skewed;
    await until('every PDB to allow 1', 600_000, async () => {
      // The operator's own PDB (manifests/) is not part of the scenario.
      const pdbs = (await c.policy.listPodDisruptionBudgetForAllNamespaces()).items.filter((p) =>
        p.metadata?.namespace?.startsWith('team-'),
      );
      return pdbs.length === deployments && pdbs.every((p) => p.status?.disruptionsAllowed === 1);
    });

    const v = controlPlaneVersion();
    const header = {
      scenario: `${deployments} Deployments x ${REPLICAS} pods skewed 5/5/0 (hard zone spread, soft hostname spread), ${zoneOf.size} nodes, PDB maxUnavailable 1`,
      controlPlane: `real: kube-apiserver, kube-controller-manager, kube-scheduler ${v.gitVersion}, ${etcdVersion()}`,
      deploymentsSkewedAtStart: skewedAtStart,
      nodeLeaseRenewSeconds: leaseRenewMs / 1000,
    };
    if (launch === undefined) {
      process.stdout.write(`${JSON.stringify(await runDescheduler(c, t, zones, header), null, 2)}\n`);
      return;
    }
    const kubeconfig = await c.cp.serviceAccountKubeconfig(OPERATOR_NAMESPACE, OPERATOR_SA);
    // BENCH_OPERATOR_ARGS: more flags for `run` (e.g. --log-level=debug); BENCH_OPERATOR_LOG: where to keep its log.
    const extraArgs = (process.env['BENCH_OPERATOR_ARGS'] ?? '').split(' ').filter((a) => a !== '');
    operator = await startOperatorProcess({ dir: c.cp.dir, kubeconfig, identity: 'bench', launch: launch, extraArgs });
    const op = operator;
    await until('the operator to be ready', 300_000, async () => {
      try {
        return (await fetch(`http://127.0.0.1:${op.metricsPort}/readyz`)).ok;
      } catch {
        return false;
      }
    });
    const auditMark = c.cp.audit().length;
    const synced = await memoryOf(op);
    const memory = new MemoryWatch(op);
    memory.start();
    const cpuBefore = op.usage()?.cpuSeconds ?? 0;
    const t0 = Date.now();
    await createPolicy(c, 'bench', {
      mode: 'Evict',
      schedule: '*/10 * * * * *',
      eviction: { maxPerCycle: 100_000, maxPerNode: 100_000, maxPerNamespace: 100_000 },
    });
    log(`policy created; ${skewedAtStart} Deployments skewed`);
    // A heap snapshot mid-run, to see what the operator holds (with BENCH_OPERATOR_NODE_ARGS=--heapsnapshot-signal=SIGUSR2).
    const snapshotAt = Number(process.env['BENCH_HEAPSNAPSHOT_AFTER_SECONDS'] ?? 0);
    const snapshotTimer =
      snapshotAt > 0 ? setTimeout(() => process.kill(op.proc.pid, 'SIGUSR2'), snapshotAt * 1000) : undefined;
    await until('every Deployment balanced and Ready', 3_600_000, () => {
      const s = t.state(zones);
      return s.skewed === 0 && s.notReady === 0 && s.pods === deployments * REPLICAS;
    });
    const seconds = (Date.now() - t0) / 1000;
    clearTimeout(snapshotTimer);
    await memory.stop();
    const end = op.usage();
    const cpuSeconds = (end?.cpuSeconds ?? 0) - cpuBefore;
    // VmHWM, as the second harness (../shared/perf-rig) reports it: the kernel's high-water mark of the operator's
    // resident set since it started, so a spike between two samples counts too.
    const peakRss = MiB(end?.hwmBytes ?? 0);
    const requests = c.cp
      .audit()
      .slice(auditMark)
      .filter((e) => e.user.username === OPERATOR_USER);
    const evictions = requests.filter((e) => e.objectRef?.subresource === 'eviction' && !isDryRun(e));
    const byCode: Record<string, number> = {};
    for (const e of evictions)
      byCode[String(e.responseStatus?.code)] = (byCode[String(e.responseStatus?.code)] ?? 0) + 1;
    const byVerb: Record<string, number> = {};
    for (const e of requests) {
      const resource = `${e.objectRef?.resource ?? e.requestURI}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
      const key = `${e.verb} ${resource}`;
      byVerb[key] = (byVerb[key] ?? 0) + 1;
    }
    // Share of the API budget each kind of request took (Lease requests go through a limiter of their own).
    const share: Record<string, string> = {};
    for (const [key, n] of Object.entries(byVerb).sort((a, b) => b[1] - a[1]))
      share[key] = `${((100 * n) / requests.length).toFixed(1)}%`;
    process.stdout.write(
      `${JSON.stringify(
        {
          ...header,
          operator: 'kube-rebalancer run --leader-elect (own process, ServiceAccount token, QPS 20, burst 40)',
          operatorInstall: install,
          operatorLaunch: launch.description,
          secondsToBalanced: Math.round(seconds * 10) / 10,
          // The fastest the client budget allows: the burst at once, then one eviction per 1/QPS seconds.
          apiBudgetSeconds: Math.round(apiBudgetSeconds(evictions.length) * 10) / 10,
          ratioToApiBudget: Math.round((seconds / apiBudgetSeconds(evictions.length)) * 1000) / 1000,
          evictions: evictions.length,
          evictionAnswers: byCode,
          answered429: byCode['429'] ?? 0,
          requests: requests.length,
          requestsByVerbAndResource: byVerb,
          requestShare: share,
          operatorMemoryMiB: {
            afterSync: synced,
            atPeakRss: memory.atPeak,
            largestHeapUsed: memory.largestHeapUsed,
            atEnd: memory.last,
          },
          operatorRssAfterSyncMiB: synced.rss,
          operatorPeakRssMiB: peakRss,
          operatorPeakRssSampledMiB: memory.atPeak.rss,
          operatorCpuSeconds: Math.round(cpuSeconds * 10) / 10,
          operatorCpuSecondsSinceStart: Math.round((end?.cpuSeconds ?? 0) * 10) / 10,
          loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
          kubeletErrors: c.kubelet.errors.length,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    tracker?.stop();
    await operator?.proc.stop({ graceMs: 5_000 });
    const keepLog = process.env['BENCH_OPERATOR_LOG'];
    if (keepLog !== undefined && operator !== undefined) copyFileSync(operator.proc.logFile, keepLog);
    await c.stop();
    rmSync(installDir, { recursive: true, force: true });
  }
}

/** The operator's default client budget (QPS 20, burst 40), as the run uses it. */
const QPS = 20;
const BURST = 40;

/** Seconds the client budget needs to send `evictions` evictions: the API-budget limit of a run. */
function apiBudgetSeconds(evictions: number): number {
  return Math.max(evictions - BURST, 0) / QPS;
}

/** `etcd 3.6.16`, as the binary of KUBEBUILDER_ASSETS says. */
function etcdVersion(): string {
  const out = execFileSync(join(process.env['KUBEBUILDER_ASSETS'] ?? '', 'etcd'), ['--version'], { encoding: 'utf8' });
  return `etcd ${/etcd Version: (\S+)/.exec(out)?.[1] ?? '?'}`;
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exitCode = 1;
});
