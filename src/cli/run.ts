// `kube-rebalancer run`: the operator. Flag parsing only; the work is in src/operator/run.ts.
import type { Command } from 'commander';
import { runOperator, type RunOperatorOptions } from '../operator/run.js';
import { InvalidArgumentError } from 'commander';
import { LEADER_ELECTION_DEFAULTS } from '../operator/leaderElectionFlags.js';
import { positiveInt, positiveNumber } from './args.js';
import { SCHEDULER_CONFIG_HELP } from './offline.js';

/** Commander fills every option, so the flags are exactly runOperator's options. */
type RunFlags = RunOperatorOptions & { readonly logLevel: string };

/** `--flag` alone is true; `--flag=true|false` as given (Kubernetes components spell their booleans this way). */
function booleanFlag(value: string | undefined): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('must be true or false');
}

export function registerRunCommand(program: Command, io: { readonly stderr: (s: string) => void }): void {
  program
    .command('run')
    .description('run the operator (in cluster: service-account credentials; outside: kubeconfig)')
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: in-cluster credentials, else $KUBECONFIG or ~/.kube/config)',
    )
    .option(
      '--metrics-addr <[host]:port>',
      'address of /metrics (HTTPS, TokenReview + SubjectAccessReview; plain HTTP with --metrics-secure=false)',
      ':8443',
    )
    .option(
      '--metrics-secure [bool]',
      'serve /metrics over HTTPS behind authentication and authorization; --metrics-secure=false for plain local runs',
      booleanFlag,
      true,
    )
    .option(
      '--metrics-cert-dir <dir>',
      'folder with tls.crt and tls.key for /metrics, reloaded when they change (default: self-signed)',
    )
    .option('--health-addr <[host]:port>', 'address of /healthz and /readyz (plain HTTP, for the probes)', ':8081')
    .option('--leader-elect', 'elect a leader through a Lease, so several replicas can run', false)
    .option(
      '--leader-elect-lease-duration <duration>',
      'how long followers wait after the last renewal before taking the Lease (whole seconds)',
      LEADER_ELECTION_DEFAULTS.leaseDuration,
    )
    .option(
      '--leader-elect-renew-deadline <duration>',
      'how long the leader keeps trying to renew before it stops leading (shorter than the lease duration)',
      LEADER_ELECTION_DEFAULTS.renewDeadline,
    )
    .option(
      '--leader-elect-retry-period <duration>',
      'how often a replica tries to take or renew the Lease',
      LEADER_ELECTION_DEFAULTS.retryPeriod,
    )
    .option(
      '--namespace <ns>',
      "the operator's namespace (its leader-election Lease)",
      process.env['POD_NAMESPACE'] !== undefined && process.env['POD_NAMESPACE'] !== ''
        ? process.env['POD_NAMESPACE']
        : 'kube-rebalancer',
    )
    .option(
      '--kube-api-qps <n>',
      'sustained Kubernetes API requests per second, all requests together',
      positiveNumber,
      20,
    )
    .option('--kube-api-burst <n>', 'Kubernetes API requests allowed in a burst', positiveInt, 40)
    .option('--log-level <level>', 'trace, debug, info, warn, error or silent', 'info')
    .option('--log-format <format>', 'json (one record per line) or text (readable times, for a terminal)', 'json')
    .option(
      '--once',
      'run one cycle of every policy, then exit (0, or 1 if a cycle failed); for a Job or CronJob',
      false,
    )
    .option('--scheduler-config <file>', SCHEDULER_CONFIG_HELP)
    .action(async (flags: RunFlags) => {
      process.exitCode = await runOperator(flags, { stderr: io.stderr });
    });
}
