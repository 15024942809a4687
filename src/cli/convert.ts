// `convert --descheduler-policy F`: prints the RebalancePolicies a descheduler policy translates to.
import type { Command } from 'commander';
import { convertDeschedulerPolicy, renderConverted } from '../convert/descheduler.js';
import { InputError } from '../errors.js';
import { parseDocuments, readInputFile } from '../snapshot/load.js';

interface ConvertOptions {
  readonly deschedulerPolicy: string;
  readonly name?: string;
}

export function registerConvertCommand(
  program: Command,
  io: { readonly stdout: (s: string) => void; readonly stderr: (s: string) => void },
): void {
  program
    .command('convert')
    .description('turn a descheduler policy into RebalancePolicies (DryRun); what cannot carry over is commented')
    .requiredOption('--descheduler-policy <file>', 'a DeschedulerPolicy (descheduler/v1alpha1 or v1alpha2)')
    .option('--name <name>', 'name of the RebalancePolicy (default: the profile name, or from-descheduler)')
    .action((opts: ConvertOptions) => {
      const file = opts.deschedulerPolicy;
      const documents = parseDocuments(readInputFile(file), file).filter((d) => d !== null);
      // The descheduler's Helm chart and manifests ship the policy inside a ConfigMap (data["policy.yaml"]).
      const policy = documents.length === 1 ? unwrapConfigMap(documents[0], file) : undefined;
      if (policy === undefined) {
        throw new InputError(
          file,
          undefined,
          undefined,
          `must hold one DeschedulerPolicy (found ${documents.length} documents)`,
        );
      }
      const policies = convertDeschedulerPolicy(policy, file, opts.name);
      io.stdout(renderConverted(policies, file));
      // What was not carried over is said where the user sees it, not only in the output file's comments.
      const said = new Set<string>();
      for (const p of policies) {
        for (const note of p.notes) {
          if (said.has(note)) continue;
          said.add(note);
          io.stderr(`note: ${p.name}: ${note}\n`);
        }
      }
    });
}

function unwrapConfigMap(doc: unknown, file: string): unknown {
  const o = doc as { kind?: unknown; data?: Record<string, unknown> } | null;
  if (o?.kind !== 'ConfigMap') return doc;
  const text = Object.values(o.data ?? {}).find(
    (v): v is string => typeof v === 'string' && v.includes('DeschedulerPolicy'),
  );
  if (text === undefined) throw new InputError(file, 'ConfigMap', 'data', 'holds no DeschedulerPolicy');
  return parseDocuments(text, file)[0];
}
