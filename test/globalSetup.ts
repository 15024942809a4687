// Runs once before the test files. Suites in test/integration need a real control plane (test/controlplane); where
// KUBEBUILDER_ASSETS does not lead to one, they skip, and this prints the one line naming them and how to enable them.
// Where it does, the suites that run the operator as a process (`node dist/src/cli/main.js run`) need a build: made
// here once, so `npm test` works on a fresh clone without a separate `npm run build`. A build at least as new as
// every source file is used as it is: a second run (CI's 1.35 and 1.36 steps) saves the compile, and never rewrites
// dist/ under a process reading it (CI's pack check beside the parity step).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENABLE_HINT, findAssets } from './controlplane/assets.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function mtimeMs(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Every src/ TypeScript file has its dist/ JavaScript, written after it and after the compiler's settings. */
function buildIsCurrent(): boolean {
  const settings = Math.max(
    ...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => mtimeMs(join(ROOT, f)) ?? Infinity),
  );
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' }).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.test.ts'),
  );
  return (
    sources.length > 0 &&
    sources.every((f) => {
      const source = join(ROOT, 'src', f);
      const built = mtimeMs(join(ROOT, 'dist', relative(ROOT, source).replace(/\.ts$/, '.js')));
      return built !== undefined && built >= Math.max(mtimeMs(source) ?? Infinity, settings);
    })
  );
}

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
  if (buildIsCurrent()) return;
  execFileSync(
    process.execPath,
    [fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url))].concat([
      '-p',
      'tsconfig.build.json',
    ]),
    { cwd: ROOT, stdio: 'inherit' },
  );
}
