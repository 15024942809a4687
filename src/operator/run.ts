// The entry point of `kube-rebalancer run`: the only place that reads the environment (POD_NAME,
// KUBERNETES_SERVICE_HOST, the hostname), opens the listeners and handles signals. Everything else is
// createOperator(deps).
//
// Listeners: serving.ts.
//
// SIGTERM/SIGINT: readiness fails, no new cycle or eviction starts, the eviction in flight completes, the Lease is
// released so another replica takes over at once, and the promise resolves to exit code 0.
// Exit codes: 0 after a signal; 1 runtime failure (cannot listen); 2 bad input (invalid flag value, unreadable or
// invalid kubeconfig, no credentials at all), reported as one `error:` line on stderr like any other command's.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { pino, type DestinationStream } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { InputError } from '../errors.js';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Credentials } from '../kube/credentials.js';
import { leaseWorkerUrl } from '../kube/leaseThread.js';
import type { SchedulerSetting } from '../scheduling/profile.js';
import { loadSchedulerConfig } from '../scheduling/schedulerConfigFile.js';
import {
  describeSource,
  findCredentials,
  loadCredentials,
  NO_CREDENTIALS,
  processEnvironment,
} from '../kube/kubeconfig.js';
import { leaderElectionTimings, type LeaderElectionFlags } from './leaderElectionFlags.js';
import { runOnce } from './once.js';
import { LOG_FORMATS, textDestination } from './textLog.js';
import { createOperator } from './operator.js';
import { openListeners, servingFlagProblem } from './serving.js';

export interface RunOperatorOptions extends LeaderElectionFlags {
  readonly kubeconfig?: string;
  readonly metricsAddr: string;
  /** HTTPS with TokenReview/SubjectAccessReview on /metrics (default true); false: plain HTTP, no auth. */
  readonly metricsSecure?: boolean;
  /** Folder with tls.crt and tls.key for /metrics (default: a self-signed certificate). */
  readonly metricsCertDir?: string;
  /** /healthz and /readyz, plain HTTP (default :8081). */
  readonly healthAddr?: string;
  readonly leaderElect: boolean;
  readonly namespace: string;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  readonly logLevel?: string;
  /** json (default: one JSON record per line) or text (readable times, for a terminal). */
  readonly logFormat?: string;
  /** One cycle of every policy, then exit (once.ts). */
  readonly once?: boolean;
  /** A KubeSchedulerConfiguration file (e.g. a mounted ConfigMap): each pod's replacement is predicted by the profile its schedulerName names. */
  readonly schedulerConfig?: string;
}

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** POD_NAME (the downward API) or hostname plus a random suffix, so two local runs never share an identity. */
export function leaderIdentity(env: NodeJS.ProcessEnv): string {
  const pod = env['POD_NAME'];
  if (pod !== undefined && pod !== '') return pod;
  return `${hostname()}-${randomBytes(4).toString('hex')}`;
}

export interface RunIo {
  /** Where bad input is reported (the log is for a running component; a bad start is a command-line error). */
  readonly stderr: (s: string) => void;
  /** Where the JSON log lines go (default: stdout). */
  readonly log?: DestinationStream;
}

const processStderr: RunIo = { stderr: (s) => void process.stderr.write(s) };

export async function runOperator(opts: RunOperatorOptions, io: RunIo = processStderr): Promise<number> {
  // Read before the first await: the environment is the process's at the call.
  const identity = leaderIdentity(process.env);
  const level = opts.logLevel ?? 'info';
  const badInput = (message: string): number => {
    // One line: YAML parsers quote the offending text over several.
    io.stderr(`error: ${message.split('\n')[0]}\n`);
    return 2;
  };
  if (!LOG_LEVELS.includes(level))
    return badInput(`invalid --log-level ${JSON.stringify(level)} (${LOG_LEVELS.join(', ')})`);
  // The program's name under `name`: parts log their own `component` (events, cron, leader-election), and a second
  // `component` key in one JSON line would leave readers to pick one.
  const format = opts.logFormat ?? 'json';
  if (!(LOG_FORMATS as readonly string[]).includes(format))
    return badInput(`invalid --log-format ${JSON.stringify(format)} (${LOG_FORMATS.join(', ')})`);
  const logOptions = { level, name: 'kube-rebalancer', base: {} };
  const destination = format === 'text' ? textDestination(io.log ?? process.stdout) : io.log;
  const logger = destination !== undefined ? pino(logOptions, destination) : pino(logOptions);
  if (!(opts.kubeApiQps > 0)) return badInput(`--kube-api-qps must be > 0 (got ${opts.kubeApiQps})`);
  if (!Number.isInteger(opts.kubeApiBurst) || opts.kubeApiBurst < 1) {
    return badInput(`--kube-api-burst must be an integer >= 1 (got ${opts.kubeApiBurst})`);
  }
  if (opts.namespace === '') return badInput('--namespace must not be empty');
  const flagProblem = servingFlagProblem(opts);
  if (flagProblem !== undefined) return badInput(flagProblem);
  const election = leaderElectionTimings(opts);
  if ('problem' in election) return badInput(election.problem);
  let schedulerProfile: SchedulerSetting | undefined;
  try {
    schedulerProfile =
      opts.schedulerConfig === undefined
        ? undefined
        : loadSchedulerConfig(opts.schedulerConfig, (line) => io.stderr(`${line}\n`));
  } catch (err) {
    if (err instanceof InputError) return badInput(err.message);
    throw err;
  }
  // Without any, a client would fall back to http://localhost:8080 and retry it for ever.
  const source = findCredentials(opts.kubeconfig, processEnvironment(), true);
  if (source === undefined) return badInput(NO_CREDENTIALS);
  let kubeConfig: Credentials;
  try {
    kubeConfig = await loadCredentials(source, undefined, process.env, (line) => logger.warn(line));
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const detail = err.field !== undefined ? `${err.field}: ${err.problem}` : err.problem;
    return badInput(`cannot load Kubernetes credentials from ${describeSource(source)}: ${detail}`);
  }
  logger.info(
    {
      server: kubeConfig.getCurrentCluster()?.server,
      context: kubeConfig.getCurrentContext(),
      user: kubeConfig.getCurrentUser()?.name,
      identity,
    },
    'connecting to the API server',
  );

  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const operator = createOperator({
    kubeConfig,
    logger,
    registry,
    identity,
    namespace: opts.namespace,
    // A Job runs alone (concurrencyPolicy Forbid) and must not wait behind a Lease: --once takes none.
    leaderElect: opts.leaderElect && opts.once !== true,
    // Renewals on a thread of their own, as built (the sources run by a test runner have no worker script to start).
    ...(existsSync(fileURLToPath(leaseWorkerUrl())) ? { leaseThread: { source } } : {}),
    leaderElection: election.timings,
    kubeApiQps: opts.kubeApiQps,
    kubeApiBurst: opts.kubeApiBurst,
    ...(opts.once === true ? { once: true } : {}),
    ...(schedulerProfile !== undefined ? { schedulerProfile } : {}),
  });
  if (opts.once === true) {
    // A Job needs no listener; a signal stops the run like the operator's (no new eviction, status written).
    const stop = new AbortController();
    const onSignal = (): void => {
      stop.abort();
      void operator.shutdown({ releaseLease: true });
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      return await runOnce({ operator, logger, stderr: (l) => io.stderr(l), signal: stop.signal });
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }
  const listeners = await openListeners(operator, opts, logger);
  if (listeners === undefined) return 1;

  const signalled = new Promise<string>((resolve) => {
    const onSignal = (signal: string): void => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  operator.start();
  let stopping = false;
  void operator.waitForSync().then(() => {
    // Shutting down ends the wait too; "ready" then would contradict the "stopped" that follows.
    if (!stopping) logger.info('all caches synced; ready');
  });
  const signal = await signalled;
  stopping = true;
  logger.info({ signal }, 'signal received');
  await operator.shutdown({ releaseLease: true });
  await listeners.close();
  return 0;
}
