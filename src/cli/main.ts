#!/usr/bin/env node
// The executable: everything testable lives in program.ts; this file only runs it with the process's arguments.
// `run` sets the V8 options it needs first (heapOptions.ts), so the program's modules are loaded after that.
import { basename } from 'node:path';
import { applyOperatorV8Flags } from './heapOptions.js';

const args = process.argv.slice(2);
applyOperatorV8Flags(args, process.execArgv, process.env);
const { main } = await import('./program.js');

// npm links the same file as `kubectl-rebalance`, which kubectl runs for `kubectl rebalance …`.
const plugin = basename(process.argv[1] ?? '').startsWith('kubectl-rebalance');
main(args, {
  stdout: (s) => void process.stdout.write(s),
  stderr: (s) => void process.stderr.write(s),
  stderrIsTTY: process.stderr.isTTY,
  ...(plugin ? { name: 'kubectl rebalance' } : {}),
}).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
