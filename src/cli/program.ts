// kube-rebalancer's command line. Exit codes: 0 success, 1 runtime failure, 2 bad input (with one paragraph
// on stderr naming the file, object and field).
import { Command, CommanderError } from 'commander';
import { InputError } from '../errors.js';
import { VERSION } from '../version.js';
import { registerConvertCommand } from './convert.js';
import { registerOfflineCommands } from './offline.js';
import { registerRunCommand } from './run.js';

export interface Io {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  /** True when stderr is a terminal (progress lines are shown only then). */
  readonly stderrIsTTY?: boolean;
  /** How the user invoked us: `kubectl rebalance` for the kubectl plugin, else kube-rebalancer. */
  readonly name?: string;
}

const processIo: Io = {
  stdout: (s) => void process.stdout.write(s),
  stderr: (s) => void process.stderr.write(s),
  stderrIsTTY: process.stderr.isTTY,
};

export function buildProgram(io: Io): Command {
  const program = new Command();
  program
    .name(io.name ?? 'kube-rebalancer')
    .description('Restores Kubernetes topology spread, affinity and taint compliance with the fewest safe evictions')
    .version(VERSION, '--version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError(false);
  program
    .command('version')
    .description('print the version')
    .action(() => io.stdout(`kube-rebalancer ${VERSION}\n`));
  registerOfflineCommands(program, io);
  registerConvertCommand(program, io);
  registerRunCommand(program, io);
  return program;
}

/** Runs the command line; resolves to the exit code. Never throws and never prints a stack trace. */
export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; unknown commands or flags, missing arguments and bad values are bad input.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof InputError) {
      io.stderr(`error: ${err.message}\n`);
      return 2;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
