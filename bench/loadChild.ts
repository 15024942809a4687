// One `kube-rebalancer plan --snapshot F` in this process (output discarded), then its time and peak RSS as JSON.
import { main } from '../src/cli/program.js';

const file = process.argv[2] ?? '';
const start = process.hrtime.bigint();
const code = await main(['plan', '--snapshot', file], {
  stdout: () => undefined,
  stderr: (s) => void process.stderr.write(s),
});
const planMs = Number(process.hrtime.bigint() - start) / 1e6;
if (code !== 0) process.exit(code);
process.stdout.write(
  `${JSON.stringify({ planMs: Math.round(planMs), maxRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
);
