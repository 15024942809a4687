// `plan` and `simulate`: the planner on a saved cluster (`kubectl get ... -o yaml`), nothing evicted.
import { Option, type Command } from 'commander';
import type { ClusterSnapshot } from '../model/types.js';
import { planCycle } from '../planner/plan.js';
import { simulate } from '../planner/simulate.js';
import { DEFAULT_POLICY, loadPolicyFile, parsePolicy } from '../policy/parse.js';
import type { Policy } from '../policy/types.js';
import { loadSnapshotFile } from '../snapshot/load.js';
import { snapshotWarnings } from '../snapshot/sanity.js';
import { positiveInt } from './args.js';
import { planTable, simulationTable } from './table.js';

interface Io {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

interface OfflineOptions {
  readonly snapshot: string;
  readonly policy?: string;
  readonly output: 'json' | 'table';
}

/** The snapshot and the policy to apply: --policy, else the snapshot's first RebalancePolicy, else the defaults. */
export function loadInputs(opts: OfflineOptions, io: Io): { snapshot: ClusterSnapshot; policy: Policy } {
  const loaded = loadSnapshotFile(opts.snapshot, { warn: (line) => io.stderr(`${line}\n`) });
  for (const line of snapshotWarnings(loaded.snapshot, opts.snapshot)) io.stderr(`${line}\n`);
  let policy: Policy;
  if (opts.policy !== undefined) policy = loadPolicyFile(opts.policy);
  else {
    const first = loaded.policies[0];
    policy = first ? parsePolicy(first.raw, { file: opts.snapshot, object: first.object }) : DEFAULT_POLICY;
  }
  return { snapshot: loaded.snapshot, policy };
}

const outputOption = (): Option =>
  new Option('-o, --output <format>', 'output format').choices(['json', 'table']).default('json');

export function registerOfflineCommands(program: Command, io: Io): void {
  program
    .command('plan')
    .description('one planning cycle on a saved cluster; nothing is evicted')
    .requiredOption(
      '--snapshot <file>',
      'cluster saved with kubectl get nodes,pods,pdb,priorityclasses,namespaces,rebalancepolicies,pv,pvc,storageclasses -A -o yaml',
    )
    .option('--policy <file>', 'RebalancePolicy to apply (default: the first in the snapshot, else the CRD defaults)')
    .addOption(outputOption())
    .action((opts: OfflineOptions) => {
      const { snapshot, policy } = loadInputs(opts, io);
      const { plan } = planCycle(snapshot, policy);
      io.stdout(opts.output === 'table' ? planTable(plan) : `${JSON.stringify(plan, null, 2)}\n`);
    });

  program
    .command('simulate')
    .description('plan, "evict", reschedule replacements with the built-in scheduler simulation, repeat')
    .requiredOption('--snapshot <file>', 'cluster saved with kubectl get ... -o yaml')
    .option('--policy <file>', 'RebalancePolicy to apply')
    .option('--cycles <n>', 'most cycles to run (stops early once a cycle plans nothing)', positiveInt, 20)
    .addOption(outputOption())
    .action((opts: OfflineOptions & { cycles: number }) => {
      const { snapshot, policy } = loadInputs(opts, io);
      const result = simulate(snapshot, policy, { cycles: opts.cycles });
      io.stdout(
        opts.output === 'table'
          ? simulationTable(result)
          : `${JSON.stringify({ cycles: result.cycles, final: result.final }, null, 2)}\n`,
      );
    });
}
