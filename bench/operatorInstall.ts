// How the real-control-plane bench starts the operator, so its figures hold for the ways users run it (issue 22):
//   image  the Dockerfile's stages replayed by hand: the build's dist, production dependencies only
//          (`npm ci --omit=dev --ignore-scripts`), and the ENTRYPOINT's `node <options> …/cli/main.js`;
//   npm    `npm pack` of the built tree installed into an empty prefix (`npm install --global --prefix`), and the
//          `kube-rebalancer` command it puts on the PATH: no Node.js options at all, as a user types it;
//   repo   `node <ENTRYPOINT options> dist/src/cli/main.js` in this checkout (development dependencies present).
// Installs go into a temporary folder that the caller removes; dependencies come from the npm cache first.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../test/integration/cluster.js';
import { imageNodeOptions, type OperatorLaunch } from '../test/integration/operatorProcess.js';

export const OPERATOR_INSTALLS = ['image', 'npm', 'repo'] as const;
export type OperatorInstall = (typeof OPERATOR_INSTALLS)[number];

export function operatorInstallFrom(value: string | undefined): OperatorInstall {
  const kind = value === undefined || value === '' ? 'image' : value;
  if (!(OPERATOR_INSTALLS as readonly string[]).includes(kind))
    throw new Error(`BENCH_OPERATOR_INSTALL=${kind}: expected one of ${OPERATOR_INSTALLS.join(', ')}`);
  return kind as OperatorInstall;
}

const npm = (args: readonly string[], cwd: string): string =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--prefer-offline', '--silent'], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });

/** Prepares `kind` under `work` (an empty folder) and says how to start it; `nodeArgs` are extra Node.js options. */
export function prepareOperator(kind: OperatorInstall, work: string, nodeArgs: readonly string[]): OperatorLaunch {
  const root = repoRoot();
  switch (kind) {
    case 'repo':
      return {
        command: process.execPath,
        args: [...imageNodeOptions(), ...nodeArgs, join(root, 'dist/src/cli/main.js')],
        description: 'this checkout: node <ENTRYPOINT options> dist/src/cli/main.js',
      };
    case 'image': {
      const app = join(work, 'app');
      mkdirSync(app, { recursive: true });
      // The `deps` stage: the manifest and the lockfile, production dependencies only.
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(root, f), join(app, f));
      npm(['ci', '--omit=dev', '--ignore-scripts'], app);
      // The `build` stage's output (the build's dist/src: the bench's own compile of src is the same code).
      cpSync(join(root, 'dist/src'), join(app, 'dist/src'), { recursive: true });
      return {
        command: process.execPath,
        args: [...imageNodeOptions(), ...nodeArgs, join(app, 'dist/src/cli/main.js')],
        description: `the image's stages replayed: production dependencies only, node ${imageNodeOptions().join(' ')}`,
      };
    }
    case 'npm': {
      const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
      const tarball = npm(['pack', '--pack-destination', work], root).trim().split('\n').pop()!;
      const prefix = join(work, 'prefix');
      npm(['install', '--global', '--prefix', prefix, join(work, tarball)], work);
      const description = `npm install of kube-rebalancer ${version} (the packed tarball)`;
      // With Node.js options (BENCH_OPERATOR_NODE_ARGS), the installed entry point is run by node with them.
      if (nodeArgs.length > 0)
        return {
          command: process.execPath,
          args: [...nodeArgs, join(prefix, 'lib/node_modules/kube-rebalancer/dist/src/cli/main.js')],
          description: `${description}, node ${nodeArgs.join(' ')}`,
        };
      return {
        command: join(prefix, 'bin', 'kube-rebalancer'),
        args: [],
        description: `${description}, its bin, no Node.js options`,
      };
    }
  }
}
