// The V8 options the operator needs, applied by the process itself, so `kube-rebalancer run` from an npm install keeps
// the footprint the image has: the operator allocates little that lives (its cache is compact) and much that dies at
// once (each watch event's JSON, each plan's scratch), and with V8's defaults that garbage costs resident memory for
// no speed it needs. Measured (bench/RESULTS.md, issue 24): the 3,000-pod run peaked at 488 MiB without these options
// and at 112–140 MiB with them.
//
// Only the options V8 reads while it runs can be set from inside the process (v8.setFlagsFromString):
//   --optimize-for-size          memory-first heap growth and collection (read at each GC);
//   --semi-space-growth-factor=1 the young generation stays at its initial 1 MiB semi-spaces, which is what
//                                --max-semi-space-size=1 gives (that one is read only when the heap is created).
// They are set before the operator's modules are loaded (main.ts imports the program after this), so no young
// generation has grown yet. Options the user gave (on the command line or in NODE_OPTIONS) win: a flag of the same
// family is left alone. `plan` and `simulate` of a live cluster take them too; on a saved file (--snapshot), and the
// other commands, keep V8's defaults, which favour speed.
import { setFlagsFromString } from 'node:v8';
import { noteAppliedFlags } from '../v8Flags.js';

interface OperatorFlag {
  /** The option set when none of its family was given. */
  readonly flag: string;
  /** Options the user may give that decide the same thing. */
  readonly family: RegExp;
}

const OPERATOR_FLAGS: readonly OperatorFlag[] = [
  { flag: '--optimize-for-size', family: /^--(no-)?optimize[-_]for[-_]size(=|$)/ },
  {
    flag: '--semi-space-growth-factor=1',
    family: /^--(max|min)[-_]semi[-_]space[-_]size(=|$)|^--semi[-_]space[-_]growth[-_]factor(=|$)/,
  },
];

/** The subcommand: the first argument that is not an option (the program has no global option taking a value). */
function subcommand(args: readonly string[]): string | undefined {
  return args.find((a) => !a.startsWith('-'));
}

/**
 * The V8 options to set for this invocation: those of OPERATOR_FLAGS whose family the user did not give, for `run`
 * only. `args` are the command's arguments (process.argv after the script), `nodeOptions` the Node.js options of the
 * process (process.execArgv and the words of NODE_OPTIONS).
 */
export function operatorV8Flags(args: readonly string[], nodeOptions: readonly string[]): string[] {
  const command = subcommand(args);
  // A live read (`plan`/`simulate` without --snapshot) converts page after page, as the operator's informers do: the
  // same garbage, the same options (its peak must stay under the operator's after sync, bench/RESULTS.md).
  const liveRead = (command === 'plan' || command === 'simulate') && !args.includes('--snapshot');
  if (command !== 'run' && !liveRead) return [];
  return OPERATOR_FLAGS.filter(({ family }) => !nodeOptions.some((o) => family.test(o))).map(({ flag }) => flag);
}

/** Sets operatorV8Flags for this process; returns what it set (for the log). */
export function applyOperatorV8Flags(
  args: readonly string[],
  execArgv: readonly string[],
  env: NodeJS.ProcessEnv,
): string[] {
  const nodeOptions = [...execArgv, ...(env['NODE_OPTIONS'] ?? '').split(/\s+/).filter((w) => w !== '')];
  const flags = operatorV8Flags(args, nodeOptions);
  for (const flag of flags) setFlagsFromString(flag);
  noteAppliedFlags(flags);
  return flags;
}
