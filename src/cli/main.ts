#!/usr/bin/env node
// The executable: everything testable lives in program.ts; this file only runs it with the process's arguments.
import { basename } from 'node:path';
import { main } from './program.js';

// npm links the same file as `kubectl-rebalance`, which kubectl runs for `kubectl rebalance …`.
const plugin = basename(process.argv[1] ?? '').startsWith('kubectl-rebalance');
main(process.argv.slice(2), {
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
