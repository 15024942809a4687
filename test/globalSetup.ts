// Runs once before the test files. Suites in test/integration need a real control plane (test/controlplane); where
// KUBEBUILDER_ASSETS does not lead to one, they skip, and this prints the one line naming them and how to enable them.
// Where it does, the suites that run the operator as a process (`node dist/src/cli/main.js run`) need a build: made
// here once, so `npm test` works on a fresh clone without a separate `npm run build`.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENABLE_HINT, findAssets } from './controlplane/assets.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export default function setup(): void {
  const suites = readdirSync(new URL('./integration/', import.meta.url))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => f.replace(/\.test\.ts$/, ''));
  const assets = findAssets();
  if (!assets.ok) {
    console.log(
      `${suites.length} real-control-plane suites skipped (${assets.why}): test/integration/{${suites.join(',')}}` +
        `.test.ts. To enable them: ${ENABLE_HINT}.`,
    );
    return;
  }
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))].concat([
      '-p',
      'tsconfig.build.json',
    ]),
    { cwd: ROOT, stdio: 'inherit' },
  );
}
