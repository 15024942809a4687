#!/usr/bin/env node
// The executable: everything testable lives in program.ts; this file only runs it with the process's arguments.
import { main } from './program.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`error: ${String(err)}\n`);
    process.exitCode = 1;
  },
);
