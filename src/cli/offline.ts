// `plan` and `simulate`: the planner on a saved cluster (`--snapshot`) or on a live one read once through a
// kubeconfig (read-only, paginated), nothing evicted either way.
import { Option, type Command } from 'commander';
import { InputError } from '../errors.js';
import { findCredentials, loadCredentials, NO_CREDENTIALS, processEnvironment } from '../kube/kubeconfig.js';
import { readLiveSnapshot } from '../live/liveSnapshot.js';
import { kubeGetter, readUsageMetrics, type Getter } from '../live/read.js';
import type { ClusterSnapshot } from '../model/types.js';
import { modelledVersion, NEWEST_KUBE_VERSION, type KubeRelease, type KubeVersion } from '../model/kubeVersion.js';
import { readClusterKubeVersion } from '../operator/clusterVersion.js';
import { planCycle } from '../planner/plan.js';
import { simulate } from '../planner/simulate.js';
import { usesMetrics } from '../planner/utilization.js';
import { DEFAULT_POLICY, loadPolicyFile, parsePolicy, resolvePriorityThreshold } from '../policy/parse.js';
import type { Policy } from '../policy/types.js';
import type { SchedulerSetting } from '../scheduling/profile.js';
import { loadSchedulerConfig } from '../scheduling/schedulerConfigFile.js';
import { USAGE_FILE_HELP, withPrometheusAnswer } from './usageFile.js';
import { STRATEGIES } from '../strategies/registry.js';
import { loadSnapshotFile, type LoadResult } from '../snapshot/load.js';
import { snapshotWarnings } from '../snapshot/sanity.js';
import { kubeRelease, positiveInt } from './args.js';
import { choosePolicy } from './policyChoice.js';
import { createProgress, type Progress } from './progress.js';
import { planTable, simulationTable } from './table.js';

export interface OfflineIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  /** True when stderr is a terminal: progress lines are shown only then. */
  readonly stderrIsTTY?: boolean;
}

interface OfflineOptions {
  readonly snapshot?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly policy?: string;
  readonly policyName?: string;
  readonly schedulerConfig?: string;
  readonly usageFile?: string;
  readonly kubeVersion?: KubeRelease & { readonly text: string };
  readonly output: 'json' | 'table' | 'wide';
}

function progressFor(io: OfflineIo): Progress {
  return createProgress({ write: io.stderr, isTTY: io.stderrIsTTY ?? false, now: () => performance.now() });
}

/** The cluster through the kubeconfig's current context (or --context), as kubectl would choose it. */
async function readLive(
  opts: OfflineOptions,
  io: OfflineIo,
  progress: Progress,
): Promise<LoadResult & { readonly get: Getter & { close(): void } }> {
  const source = findCredentials(opts.kubeconfig, processEnvironment());
  if (source === undefined) {
    throw new InputError(
      '--snapshot',
      undefined,
      undefined,
      `not given, and no live cluster to read: ${NO_CREDENTIALS}`,
    );
  }
  const kc = await loadCredentials(source, opts.context, process.env, (line) => io.stderr(`${line}\n`));
  const name = `context ${kc.getCurrentContext()}`;
  const get = kubeGetter(kc);
  try {
    // Each page is converted as it arrives: the raw objects of the cluster are never all held at once.
    const loaded = await readLiveSnapshot(get, {
      file: name,
      warn: (line) => io.stderr(`${line}\n`),
      progress: (kind, count) => progress.update(`${name}: read ${count.toLocaleString('en-US')} ${kind}s`),
    });
    // Read after the lists, so an API server that does not answer is the lists' error (exit 1), not a warning here.
    const kubeVersion =
      opts.kubeVersion !== undefined
        ? flagVersion(opts.kubeVersion, io)
        : await readClusterKubeVersion(async () => (await get('/version')).body, {
            // Said only when it is news: a warning, not the usual "predicted as" line.
            info: () => undefined,
            warn: (line: string) => io.stderr(`warning: ${line}\n`),
          });
    return { ...loaded, snapshot: { ...loaded.snapshot, kubeVersion }, get };
  } catch (err) {
    get.close();
    throw err;
  }
}

/**
 * The cluster and the policy to apply: --policy, else the cluster's RebalancePolicy named by --policy-name (or its
 * only one; several and no name is bad input), else the defaults.
 * The cluster is --snapshot, else the live cluster (--kubeconfig/--context, else the default kubeconfig).
 */
export async function loadInputs(
  opts: OfflineOptions,
  io: OfflineIo,
  progress: Progress,
): Promise<{ snapshot: ClusterSnapshot; policy: Policy; schedulerProfile: SchedulerSetting | undefined }> {
  if (opts.snapshot !== undefined && (opts.kubeconfig !== undefined || opts.context !== undefined)) {
    throw new InputError(
      '--snapshot',
      undefined,
      undefined,
      'reads a saved cluster; it cannot be combined with --kubeconfig or --context',
    );
  }
  // Read before the cluster: a bad file is reported before a long read.
  const schedulerProfile =
    opts.schedulerConfig === undefined
      ? undefined
      : loadSchedulerConfig(opts.schedulerConfig, (line) => io.stderr(`${line}\n`));
  const loaded: LoadResult & { readonly get?: Getter & { close(): void } } =
    opts.snapshot !== undefined
      ? loadSnapshotFile(opts.snapshot, {
          kubeVersion: opts.kubeVersion === undefined ? NEWEST_KUBE_VERSION : flagVersion(opts.kubeVersion, io),
          warn: (line) => io.stderr(`${line}\n`),
          progress: (text) => progress.update(text),
        })
      : await readLive(opts, io, progress);
  for (const line of snapshotWarnings(loaded.snapshot, opts.snapshot ?? 'the live cluster')) io.stderr(`${line}\n`);
  let policy: Policy;
  let where: { file: string; object?: string };
  if (opts.policy !== undefined && opts.policyName !== undefined) {
    throw new InputError(
      '--policy-name',
      undefined,
      undefined,
      `picks a RebalancePolicy of the cluster; it cannot be combined with --policy ${opts.policy}`,
    );
  }
  if (opts.policy !== undefined) {
    policy = loadPolicyFile(opts.policy);
    where = { file: opts.policy, ...(policy.name !== '' ? { object: `RebalancePolicy ${policy.name}` } : {}) };
  } else {
    const file = opts.snapshot ?? 'cluster';
    const first = choosePolicy(loaded.policies, opts.policyName, file);
    policy = first ? parsePolicy(first.raw, { file, object: first.object }) : DEFAULT_POLICY;
    where = { file, ...(first !== undefined ? { object: first.object } : {}) };
  }
  // A priorityThreshold naming a class the snapshot lacks is bad input of this policy: say which file and object
  // now, rather than from inside the planner.
  resolvePriorityThreshold(policy, loaded.snapshot.priorityClasses, where);
  let snapshot = loaded.snapshot;
  // A live cluster's metrics.k8s.io is read only when the policy measures by it (a saved one carries NodeMetrics).
  if (loaded.get !== undefined && usesMetrics(policy.spec, STRATEGIES)) {
    progress.update('reading metrics.k8s.io');
    const where = new Map(snapshot.pods.map((p) => [`${p.namespace}/${p.name}`, p.nodeName]));
    const metrics = await readUsageMetrics(loaded.get, (ns, name) => where.get(`${ns}/${name}`), snapshot.now);
    snapshot = { ...snapshot, metrics };
  }
  // The live reads are done: the pooled connections would otherwise hold the process open.
  loaded.get?.close();
  snapshot = withPrometheusAnswer(snapshot, policy, where, opts.usageFile, io);
  return { snapshot, policy, schedulerProfile };
}

/** The minor --kube-version asks for, or the nearest supported one with one warning line. */
function flagVersion(release: KubeRelease & { readonly text: string }, io: OfflineIo): KubeVersion {
  const { version, warning } = modelledVersion(release, `--kube-version ${release.text}`);
  if (warning !== undefined) io.stderr(`${warning}\n`);
  return version;
}

const KUBE_VERSION_HELP =
  "the Kubernetes version whose scheduler replacements are predicted by (default: a live cluster's /version, else " +
  `${NEWEST_KUBE_VERSION}; supported 1.35–${NEWEST_KUBE_VERSION}, others are modelled as the nearest)`;

const outputOption = (): Option =>
  new Option('-o, --output <format>', 'output format (wide: table with every skipped pod)')
    .choices(['json', 'table', 'wide'])
    .default('json');

const SNAPSHOT_HELP =
  'a saved cluster (kubectl get … -o yaml|json; see the README); without it the live cluster is read';

/** Shared with `run` (run.ts). */
export const SCHEDULER_CONFIG_HELP =
  "the cluster's KubeSchedulerConfiguration (v1 or v1beta3) replacements are predicted by (default: v1.26's defaults)";

function addSourceOptions(command: Command): Command {
  return command
    .option('--snapshot <file>', SNAPSHOT_HELP)
    .option('--kubeconfig <file>', 'kubeconfig of the live cluster (default: $KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context (default: its current context)')
    .option('--policy <file>', 'RebalancePolicy to apply (default: the one in the cluster, else the CRD defaults)')
    .option('--policy-name <name>', "the cluster's RebalancePolicy to apply (needed when it has several)")
    .option('--scheduler-config <file>', SCHEDULER_CONFIG_HELP)
    .option('--usage-file <file>', USAGE_FILE_HELP)
    .option('--kube-version <version>', KUBE_VERSION_HELP, kubeRelease);
}

export function registerOfflineCommands(program: Command, io: OfflineIo): void {
  addSourceOptions(
    program.command('plan').description('one planning cycle on a saved or live cluster; nothing is evicted'),
  )
    .addOption(outputOption())
    .action(async (opts: OfflineOptions) => {
      const progress = progressFor(io);
      try {
        const { snapshot, policy, schedulerProfile } = await loadInputs(opts, io, progress);
        progress.update('planning');
        const { plan } = planCycle(snapshot, policy, { schedulerProfile });
        progress.done();
        io.stdout(
          opts.output === 'json'
            ? `${JSON.stringify(plan, null, 2)}\n`
            : planTable(plan, { mode: policy.spec.mode, wide: opts.output === 'wide' }),
        );
      } finally {
        progress.done();
      }
    });

  addSourceOptions(
    program
      .command('simulate')
      .description('plan, "evict", reschedule replacements with the built-in scheduler simulation, repeat'),
  )
    .option('--cycles <n>', 'most cycles to run (stops early once a cycle plans nothing)', positiveInt, 20)
    .addOption(outputOption())
    .action(async (opts: OfflineOptions & { cycles: number }) => {
      const progress = progressFor(io);
      try {
        const { snapshot, policy, schedulerProfile } = await loadInputs(opts, io, progress);
        const result = simulate(snapshot, policy, {
          cycles: opts.cycles,
          schedulerProfile,
          onCycle: (cycle, of) => progress.update(`simulating cycle ${cycle} of at most ${of}`),
        });
        progress.done();
        io.stdout(
          opts.output === 'json'
            ? `${JSON.stringify({ cycles: result.cycles, final: result.final }, null, 2)}\n`
            : simulationTable(result),
        );
      } finally {
        progress.done();
      }
    });
}
