// A real Kubernetes control plane for tests (the release KUBEBUILDER_ASSETS holds: 1.26 to 1.37, CI runs 1.35, 1.36
// and 1.37), in the spirit of controller-runtime's envtest: etcd,
// kube-apiserver (RBAC + Node authorization, ServiceAccount token signing, client-certificate admin, an audit log),
// kube-controller-manager (ReplicaSets, the disruption controller, node lifecycle, ServiceAccounts) and kube-scheduler,
// each on free loopback ports with a fresh data folder under the OS temp dir. One per test file or suite
// (beforeAll/afterAll), never per test. There is no kubelet: test/controlplane/kubelet.ts stands in for it.
//
// Choices that differ from a production cluster, and why:
// - the ServiceAccount admission plugin is off: with no kubelet nothing mounts tokens, and with it on a pod created in
//   a namespace whose `default` ServiceAccount the controller has not made yet is refused (a race in every test);
// - the controllers and the scheduler get a high client QPS so seeding thousands of pods is not the slow part;
// - every component has its own client certificate (all in system:masters), so the audit log tells them apart and
//   the operator's own requests can be counted at the server.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import { controlPlaneVersion, featureGateArgs, requireAssets, type KubeVersion } from './assets.js';
import { createPki, issueClientCert, writeKubeconfig, type Pki } from './pki.js';
import { ManagedProcess, startWatchdog } from './processes.js';

export interface ControlPlaneOptions {
  /** Start kube-controller-manager (default true). */
  readonly controllerManager?: boolean;
  /** Start kube-scheduler (default true). */
  readonly scheduler?: boolean;
  /**
   * A KubeSchedulerConfiguration file kube-scheduler runs with (`--config`), as a cluster's would: its profiles as
   * written, with the harness's connection settings (clientConnection, leaderElection) put in a copy, since
   * kube-scheduler ignores those flags once it has a --config.
   */
  readonly schedulerConfig?: string;
  /** kube-scheduler's log verbosity (`-v`); at 10 it logs every node's plugin and final scores for each pod. */
  readonly schedulerVerbosity?: number;
  /** Extra kube-apiserver flags. */
  readonly apiServerArgs?: readonly string[];
  /**
   * Feature gates for kube-apiserver, kube-controller-manager and kube-scheduler, each given only the gates its
   * release still offers (see featureGateArgs): a gate GA in that release is on anyway and naming it could stop the
   * component from starting.
   */
  readonly featureGates?: Readonly<Record<string, boolean>>;
}

/** One request as the API server's audit log recorded it (stage ResponseComplete). */
export interface AuditEvent {
  readonly verb: string;
  readonly user: { readonly username: string; readonly groups?: readonly string[] };
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
    readonly apiGroup?: string;
  };
  readonly responseStatus?: { readonly code?: number; readonly message?: string; readonly reason?: string };
  readonly requestURI: string;
  readonly userAgent?: string;
  readonly stageTimestamp: string;
}

export interface RawAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface ControlPlane {
  readonly dir: string;
  /** The release of the binaries (kube-apiserver --version). */
  readonly version: KubeVersion;
  /** https://127.0.0.1:PORT */
  readonly server: string;
  /** The admin kubeconfig (client certificate in system:masters). */
  readonly kubeconfigPath: string;
  kubeConfig(): k8s.KubeConfig;
  /**
   * A request as the admin, body sent and answer read as raw JSON. client-node's typed models drop fields whose
   * names they spell differently (a CRD's `default` and `x-kubernetes-validations` are lost through
   * KubernetesObjectApi), so objects that must reach the server exactly as written go through here.
   */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<RawAnswer>;
  /**
   * A kubeconfig file that authenticates as a ServiceAccount through a TokenRequest token, as a pod would.
   * The ServiceAccount must exist.
   */
  serviceAccountKubeconfig(namespace: string, name: string): Promise<string>;
  /** Requests recorded in the audit log so far, each once, in the order they were answered (watches: started). */
  audit(): AuditEvent[];
  /** SIGTERM to kube-apiserver, then the same flags again on the same etcd; resolves once /readyz answers ok. */
  restartApiServer(): Promise<void>;
  /** SIGTERM to etcd, then started again on the same data; resolves once the API server is ready again. */
  restartEtcd(): Promise<void>;
  /** SIGTERM to kube-scheduler, then started again, with `config` as its --config (see schedulerConfig) or none. */
  restartScheduler(config?: string): Promise<void>;
  /** Pids of the running control-plane processes. */
  pids(): number[];
  /** Stops every process by its pid and removes the folder. Safe to call twice. */
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, proc: ManagedProcess, timeoutMs: number, check: () => Promise<boolean>) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) throw new Error(`${proc.name} exited while waiting for ${what}:\n${proc.tail()}`);
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${proc.tail()}`);
    await sleep(200);
  }
}

// Metadata for the requests of the operator, the tests and the stand-in kubelet; nothing for the control plane's
// own components, whose traffic would drown the rest.
const AUDIT_POLICY = {
  apiVersion: 'audit.k8s.io/v1',
  kind: 'Policy',
  omitStages: ['RequestReceived'],
  rules: [
    { level: 'None', users: ['kube-controller-manager', 'kube-scheduler', 'system:apiserver'] },
    { level: 'None', userGroups: ['system:nodes'] },
    { level: 'None', nonResourceURLs: ['/healthz*', '/readyz*', '/livez*', '/version', '/openapi*', '/api', '/apis*'] },
    { level: 'Metadata' },
  ],
};

/**
 * `start()` again (up to three tries) when it failed because a port found free by freePort() was taken before the
 * process it was handed to could bind it: with suites side by side, outgoing connections draw from the same range.
 * `start` picks its ports itself and throws with the process's log, which says "address already in use".
 */
export async function onFreshPorts<T>(what: string, start: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= 3 || !/address already in use/.test((err as Error).message)) throw err;
      console.warn(`${what}: a port was taken before it could bind; starting again (try ${attempt + 1} of 3)`);
    }
  }
}

/** Starts a control plane, on fresh ports again if one was taken before etcd or kube-apiserver bound it. */
export function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  return onFreshPorts('control plane', () => startControlPlaneOnce(opts));
}

async function startControlPlaneOnce(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const assets = requireAssets();
  const version = controlPlaneVersion();
  const gates = (binary: string): string[] => featureGateArgs(binary, opts.featureGates ?? {});
  // Checked before anything starts, so a gate that cannot be had fails the suite with no process to clean up.
  const [apiGates, controllerGates, schedulerGates] = [
    gates(assets.binary('kube-apiserver')),
    opts.controllerManager === false ? [] : gates(assets.binary('kube-controller-manager')),
    opts.scheduler === false ? [] : gates(assets.binary('kube-scheduler')),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'kube-rebalancer-cp-'));
  startWatchdog(dir);
  const procs = new Map<string, ManagedProcess>();
  let stopped = false;
  const stopAll = async (): Promise<void> => {
    // Dependents first, etcd last, so nothing logs a storm of connection errors while going down.
    for (const name of ['kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd']) {
      await procs.get(name)?.stop({ graceMs: 5_000 });
    }
  };
  try {
    const pki = createPki(dir);
    const [etcdPort, etcdPeerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    writeKubeconfig(kubeconfigPath, server, pki.caCert, { certFile: pki.adminCert, keyFile: pki.adminKey });
    const componentKubeconfig = (name: string): string => {
      const cert = issueClientCert(dir, name, `/O=system:masters/CN=${name}`);
      const path = join(dir, `${name}.kubeconfig`);
      writeKubeconfig(path, server, pki.caCert, cert);
      return path;
    };
    writeFileSync(join(dir, 'audit-policy.json'), JSON.stringify(AUDIT_POLICY));
    const auditLog = join(dir, 'audit.log');

    const etcdArgs = [
      '--name=test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=test=http://127.0.0.1:${etcdPeerPort}`,
      // Tests write fast; etcd's default 10,000-revision snapshot and fsync cadence are not what is being tested.
      '--unsafe-no-fsync',
    ];
    const startEtcd = async (): Promise<void> => {
      const etcd = new ManagedProcess({ name: 'etcd', command: assets.binary('etcd'), args: etcdArgs, dir });
      procs.set('etcd', etcd);
      await until('etcd /health', etcd, 30_000, async () => {
        const res = await fetch(`http://127.0.0.1:${etcdPort}/health`);
        return ((await res.json()) as { health?: string }).health === 'true';
      });
    };

    const apiArgs = [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      '--advertise-address=127.0.0.1',
      '--service-cluster-ip-range=10.0.0.0/24',
      `--tls-cert-file=${pki.servingCert}`,
      `--tls-private-key-file=${pki.servingKey}`,
      `--client-ca-file=${pki.caCert}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${pki.saPub}`,
      `--service-account-signing-key-file=${pki.saKey}`,
      '--authorization-mode=Node,RBAC',
      '--endpoint-reconciler-type=none',
      '--disable-admission-plugins=ServiceAccount',
      `--audit-policy-file=${join(dir, 'audit-policy.json')}`,
      `--audit-log-path=${auditLog}`,
      '--audit-log-format=json',
      '--audit-log-maxsize=0',
      ...apiGates,
      ...(opts.apiServerArgs ?? []),
    ];
    const admin = adminClient(pki);
    const adminFetch = async (url: string): Promise<string> => {
      const answer = await admin('GET', url);
      return typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    };
    const startApiServer = async (): Promise<void> => {
      const api = new ManagedProcess({
        name: 'kube-apiserver',
        command: assets.binary('kube-apiserver'),
        args: apiArgs,
        dir,
      });
      procs.set('kube-apiserver', api);
      await until('kube-apiserver /readyz', api, 60_000, async () => (await adminFetch(`${server}/readyz`)) === 'ok');
    };

    await startEtcd();
    await startApiServer();
    if (opts.controllerManager ?? true) {
      const kubeconfig = componentKubeconfig('kube-controller-manager');
      procs.set(
        'kube-controller-manager',
        new ManagedProcess({
          name: 'kube-controller-manager',
          command: assets.binary('kube-controller-manager'),
          args: [
            `--kubeconfig=${kubeconfig}`,
            `--service-account-private-key-file=${pki.saKey}`,
            `--root-ca-file=${pki.caCert}`,
            '--use-service-account-credentials=false',
            '--leader-elect=false',
            '--bind-address=127.0.0.1',
            '--secure-port=0',
            '--kube-api-qps=500',
            '--kube-api-burst=1000',
            // Workload controllers sync many objects at once when a test seeds thousands of pods.
            '--concurrent-replicaset-syncs=20',
            '--concurrent-deployment-syncs=20',
            // The node lifecycle controller lifts a new node's not-ready taint on its next pass (default every 5 s).
            '--node-monitor-period=1s',
            ...controllerGates,
          ],
          dir,
        }),
      );
    }
    const schedulerKubeconfig = (opts.scheduler ?? true) ? componentKubeconfig('kube-scheduler') : '';
    let schedulerConfigs = 0;
    const startScheduler = (config: string | undefined): void => {
      const connection = { kubeconfig: schedulerKubeconfig, qps: 500, burst: 1000 };
      let settings: string[];
      if (config === undefined) {
        settings = [
          `--kubeconfig=${schedulerKubeconfig}`,
          '--leader-elect=false',
          `--kube-api-qps=${connection.qps}`,
          `--kube-api-burst=${connection.burst}`,
        ];
      } else {
        const file = parseYaml(readFileSync(config, 'utf8')) as Record<string, unknown>;
        const copy = join(dir, `kube-scheduler-config-${++schedulerConfigs}.yaml`);
        writeFileSync(
          copy,
          JSON.stringify({ ...file, clientConnection: connection, leaderElection: { leaderElect: false } }),
        );
        settings = [`--config=${copy}`];
      }
      procs.set(
        'kube-scheduler',
        new ManagedProcess({
          name: 'kube-scheduler',
          command: assets.binary('kube-scheduler'),
          args: [
            ...settings,
            '--bind-address=127.0.0.1',
            '--secure-port=0',
            ...schedulerGates,
            ...(opts.schedulerVerbosity === undefined ? [] : [`-v=${opts.schedulerVerbosity}`]),
          ],
          dir,
        }),
      );
    };
    if (opts.scheduler ?? true) startScheduler(opts.schedulerConfig);

    const plane: ControlPlane = {
      dir,
      version,
      server,
      kubeconfigPath,
      request(method, path, body, contentType) {
        return admin(method, `${server}${path}`, body, contentType);
      },
      kubeConfig() {
        const kc = new k8s.KubeConfig();
        kc.loadFromFile(kubeconfigPath);
        return kc;
      },
      async serviceAccountKubeconfig(namespace, name) {
        const core = plane.kubeConfig().makeApiClient(k8s.CoreV1Api);
        const request = await core.createNamespacedServiceAccountToken({
          namespace,
          name,
          body: { spec: { audiences: [], expirationSeconds: 3600 } },
        });
        const token = request.status?.token;
        if (token === undefined) throw new Error(`no token issued for ServiceAccount ${namespace}/${name}`);
        const path = join(dir, `sa-${namespace}-${name}.kubeconfig`);
        writeKubeconfig(path, server, pki.caCert, { token });
        return path;
      },
      audit() {
        let text: string;
        try {
          text = readFileSync(auditLog, 'utf8');
        } catch {
          return [];
        }
        // A watch is logged when its response starts and again when it ends; it counts once, when it started.
        const events: AuditEvent[] = [];
        const started = new Set<string>();
        const lines = text.split('\n');
        // The API server may be writing the last event right now: only lines it has ended are read.
        lines.pop();
        for (const [i, line] of lines.entries()) {
          if (line === '') continue;
          const event = parseAuditLine(line, `${auditLog}:${i + 1}`);
          if (event.stage === 'ResponseStarted') {
            started.add(event.auditID);
            events.push(event);
          } else if ((event.stage === 'ResponseComplete' || event.stage === 'Panic') && !started.has(event.auditID)) {
            events.push(event);
          }
        }
        return events;
      },
      async restartApiServer() {
        await procs.get('kube-apiserver')?.stop();
        await startApiServer();
      },
      async restartEtcd() {
        await procs.get('etcd')?.stop();
        await startEtcd();
        const api = procs.get('kube-apiserver')!;
        await until('kube-apiserver /readyz after etcd restart', api, 60_000, async () => {
          return (await adminFetch(`${server}/readyz`)) === 'ok';
        });
      },
      async restartScheduler(config) {
        await procs.get('kube-scheduler')?.stop({ graceMs: 5_000 });
        startScheduler(config);
      },
      pids() {
        return [...procs.values()].filter((p) => p.running).map((p) => p.pid);
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        await stopAll();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    return plane;
  } catch (err) {
    await stopAll();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Requests with the admin client certificate, for probes before any client library is set up and for raw JSON. */
function adminClient(
  pki: Pki,
): (method: string, url: string, body?: unknown, contentType?: string) => Promise<RawAnswer> {
  const ca = readFileSync(pki.caCert);
  const cert = readFileSync(pki.adminCert);
  const key = readFileSync(pki.adminKey);
  return (method, url, body, contentType = 'application/json') =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        url,
        {
          method,
          ca,
          cert,
          key,
          timeout: 10_000,
          headers: payload === undefined ? {} : { 'Content-Type': contentType },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => {
            let parsed: unknown = text;
            try {
              parsed = JSON.parse(text);
            } catch {
              // plain text (/readyz)
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end(payload);
    });
}

/**
 * One line of the audit log. A kube-apiserver killed mid-write leaves a cut event that the restarted one's first
 * event continues on the same line: the last event that starts on the line is the complete one.
 */
export function parseAuditLine(line: string, where: string): AuditEvent & { stage: string; auditID: string } {
  type Line = AuditEvent & { stage: string; auditID: string };
  try {
    return JSON.parse(line) as Line;
  } catch (err) {
    const last = line.lastIndexOf('{"kind":"Event"');
    if (last > 0) return parseAuditLine(line.slice(last), where);
    throw new Error(`${where}: not an audit event: ${err instanceof Error ? err.message : String(err)}`);
  }
}
