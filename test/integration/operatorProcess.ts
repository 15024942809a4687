// The operator as its own process: `node dist/src/cli/main.js run` (the build the global setup makes), as the
// container runs it, so a test can SIGKILL a leader or measure the operator's RSS and CPU. Stopped by pid like
// every process a test starts (test/controlplane/processes.ts).
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { ManagedProcess } from '../controlplane/processes.js';
import { repoRoot } from './cluster.js';

const ENTRY = join(repoRoot(), 'dist/src/cli/main.js');

/**
 * The Node.js options of the image's ENTRYPOINT (the Dockerfile), so the operator runs here as it runs in its
 * container: the memory the bench reports is the memory the container's process would use.
 */
export function imageNodeOptions(): string[] {
  const dockerfile = readFileSync(join(repoRoot(), 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(dockerfile);
  if (entrypoint === null) throw new Error('Dockerfile: no ENTRYPOINT in exec form');
  const argv = JSON.parse(entrypoint[1]!) as string[];
  const script = argv.findIndex((a) => a.endsWith('/cli/main.js'));
  if (argv[0] !== 'node' || script < 1)
    throw new Error(`Dockerfile: ENTRYPOINT is not node …/cli/main.js: ${entrypoint[1]}`);
  return argv.slice(1, script);
}

/**
 * Leader-election timings for the suites that kill a leader and wait for the other replica to take over: the
 * takeover, not the default 15 s Lease, is what they test, and each kill would otherwise wait that out. Still with
 * room for a loaded machine: a renewal may take up to 2 s (half the renew deadline) before the leader gives up.
 */
export const QUICK_HANDOVER: readonly string[] = [
  '--leader-elect-lease-duration=6s',
  '--leader-elect-renew-deadline=4s',
  '--leader-elect-retry-period=1s',
];

/** How to start the operator: the program and the arguments before `run` (bench/operatorInstall.ts makes others). */
export interface OperatorLaunch {
  readonly command: string;
  readonly args: readonly string[];
  readonly description: string;
}

export interface OperatorProcessOptions {
  /** Folder for its log (the control plane's folder, removed with it). */
  readonly dir: string;
  readonly kubeconfig: string;
  /** POD_NAME: the Lease holder identity and the User-Agent suffix. */
  readonly identity: string;
  readonly leaderElect?: boolean;
  readonly extraArgs?: readonly string[];
  /** Node.js options after the image's (e.g. `--heapsnapshot-signal=SIGUSR2` to look inside a bench run). */
  readonly nodeArgs?: readonly string[];
  /** Another installation to start (then `nodeArgs` is ignored); default: this checkout's build, as the image runs it. */
  readonly launch?: OperatorLaunch;
  /**
   * /metrics as in the Deployment: HTTPS behind TokenReview/SubjectAccessReview (a self-signed certificate unless
   * `certDir`), the probes on a port of their own. Default: `--metrics-secure=false`, all three paths on one plain
   * HTTP port, as a local run serves them.
   */
  readonly secure?: { readonly certDir?: string };
}

export interface OperatorProcess {
  readonly identity: string;
  readonly proc: ManagedProcess;
  readonly metricsPort: number;
  /** Port of /healthz and /readyz (the metrics port unless `secure`). */
  readonly healthPort: number;
  /** GET /metrics (over HTTPS with `token` as bearer when `secure`; the certificate is not verified). */
  scrape(token?: string): Promise<string>;
  /** Status and body of GET /metrics, for the authentication tests. */
  get(path: string, token?: string): Promise<{ status: number; text: string }>;
  /** Log lines (pino JSON) so far. */
  logs(): Array<Record<string, unknown>>;
  /**
   * Resident set size, its high-water mark (VmHWM: the largest resident set the kernel saw since the process started,
   * so a spike between two samples counts too) and CPU seconds (user + system), from /proc, while it runs.
   */
  usage(): { rssBytes: number; hwmBytes: number; cpuSeconds: number } | undefined;
}

export async function startOperatorProcess(opts: OperatorProcessOptions): Promise<OperatorProcess> {
  // Port 0, the ports read back from the log: a port found free and handed over later can be taken meanwhile (the
  // control plane's own outgoing connections draw from the same range), and the operator then exits at start.
  const serving =
    opts.secure !== undefined
      ? [
          '--health-addr=127.0.0.1:0',
          ...(opts.secure.certDir !== undefined ? [`--metrics-cert-dir=${opts.secure.certDir}`] : []),
        ]
      : ['--metrics-secure=false', '--health-addr=127.0.0.1:0'];
  const proc = new ManagedProcess({
    name: `operator-${opts.identity}`,
    command: opts.launch?.command ?? process.execPath,
    args: [
      ...(opts.launch?.args ?? [...imageNodeOptions(), ...(opts.nodeArgs ?? []), ENTRY]),
      'run',
      `--kubeconfig=${opts.kubeconfig}`,
      '--metrics-addr=127.0.0.1:0',
      ...serving,
      '--namespace=kube-rebalancer',
      ...(opts.leaderElect === false ? [] : ['--leader-elect']),
      ...(opts.extraArgs ?? []),
    ],
    dir: opts.dir,
    env: { ...process.env, POD_NAME: opts.identity, KUBERNETES_SERVICE_HOST: '' },
  });
  const { metricsPort, healthPort } = await listeningPorts(proc, opts.secure !== undefined);
  return {
    identity: opts.identity,
    proc,
    metricsPort,
    healthPort,
    async scrape(token) {
      const answer = await getText(opts.secure !== undefined, metricsPort, '/metrics', token);
      if (answer.status !== 200) throw new Error(`GET /metrics: HTTP ${answer.status}: ${answer.text}`);
      return answer.text;
    },
    get: (path, token) => getText(opts.secure !== undefined, metricsPort, path, token),
    logs: () => logEntries(proc),
    usage() {
      try {
        const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
        const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
        const hwmKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
        const stat = readFileSync(`/proc/${proc.pid}/stat`, 'utf8');
        // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const ticks = Number(fields[11]) + Number(fields[12]);
        return { rssBytes: rssKb * 1024, hwmBytes: hwmKb * 1024, cpuSeconds: ticks / 100 };
      } catch {
        return undefined;
      }
    },
  };
}

/** The log lines (pino JSON) the operator has ended so far; none before its log file exists. */
function logEntries(proc: ManagedProcess): Array<Record<string, unknown>> {
  let text: string;
  try {
    text = readFileSync(proc.logFile, 'utf8');
  } catch {
    return [];
  }
  const lines = text.split('\n');
  // The operator may be writing its last line right now: only the lines it has ended are read.
  lines.pop();
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** How long a starting operator may take to open its listeners (a loaded 2-core machine, two suites beside it). */
const LISTEN_TIMEOUT_MS = 60_000;

/**
 * The ports the operator listens on, from its "serving …" log lines; throws with its log if it exits first or is not
 * listening within LISTEN_TIMEOUT_MS.
 */
async function listeningPorts(
  proc: ManagedProcess,
  secure: boolean,
): Promise<{ metricsPort: number; healthPort: number }> {
  const deadline = Date.now() + LISTEN_TIMEOUT_MS;
  for (;;) {
    const ports = new Map<string, number>();
    for (const entry of logEntries(proc)) {
      const port = typeof entry['address'] === 'string' ? Number(/:(\d+)$/.exec(entry['address'])?.[1]) : NaN;
      const msg = entry['msg'];
      if (typeof msg !== 'string' || !Number.isInteger(port)) continue;
      if (msg.startsWith('serving /healthz')) ports.set('health', port);
      if (msg.startsWith('serving /metrics')) ports.set('metrics', port);
    }
    const health = ports.get('health');
    const metrics = secure ? ports.get('metrics') : health;
    if (health !== undefined && metrics !== undefined) return { metricsPort: metrics, healthPort: health };
    if (!proc.running) throw new Error(`${proc.name} exited before it was listening:\n${proc.tail(40)}`);
    if (Date.now() > deadline)
      throw new Error(`${proc.name} not listening after ${LISTEN_TIMEOUT_MS} ms:\n${proc.tail(40)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One GET on 127.0.0.1, over HTTPS without verifying the (self-signed) certificate when `tls`. */
export function getText(
  tls: boolean,
  port: number,
  path: string,
  token?: string,
): Promise<{ status: number; text: string }> {
  const send = tls ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        headers: token !== undefined ? { Authorization: `Bearer ${token}` } : {},
        ...(tls ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${path}: no answer in 10 s`)));
    req.on('error', reject);
    req.end();
  });
}
