// `kube-rebalancer run`: the operator. Flag parsing only; the work is in src/operator/run.ts.
import { InvalidArgumentError, type Command } from 'commander';
import { runOperator } from '../operator/run.js';
import { positiveInt } from './args.js';

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a number > 0');
  return n;
}

interface RunFlags {
  readonly kubeconfig?: string;
  readonly metricsAddr: string;
  readonly leaderElect: boolean;
  readonly namespace: string;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  readonly logLevel: string;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('run the operator (in cluster: service-account credentials; outside: kubeconfig)')
    .option(
      '--kubeconfig <file>',
      'kubeconfig file (default: in-cluster credentials, else $KUBECONFIG or ~/.kube/config)',
    )
    .option('--metrics-addr <[host]:port>', 'address of /healthz, /readyz and /metrics', ':8080')
    .option('--leader-elect', 'elect a leader through a Lease, so several replicas can run', false)
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
    .action(async (flags: RunFlags) => {
      process.exitCode = await runOperator({
        ...(flags.kubeconfig !== undefined ? { kubeconfig: flags.kubeconfig } : {}),
        metricsAddr: flags.metricsAddr,
        leaderElect: flags.leaderElect,
        namespace: flags.namespace,
        kubeApiQps: flags.kubeApiQps,
        kubeApiBurst: flags.kubeApiBurst,
        logLevel: flags.logLevel,
      });
    });
}
