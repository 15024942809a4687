// Where the control-plane binaries are, the envtest way: KUBEBUILDER_ASSETS names a folder holding etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler (bash .ci/run points it at ../shared/k8s/bin). Suites
// that need them use `describe.skipIf(!controlPlaneAvailable())`; the global setup prints the one line that names
// the skipped suites and how to enable them, so `npm test` passes on a machine without the binaries.
import { accessSync, constants } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
export type Binary = (typeof BINARIES)[number];

export const ENABLE_HINT =
  'set KUBEBUILDER_ASSETS to a folder with etcd, kube-apiserver, kube-controller-manager and kube-scheduler v1.26 ' +
  '(bash .ci/run uses ../shared/k8s/bin), and have openssl on the PATH';

export type AssetLookup =
  | { readonly ok: true; readonly dir: string; binary(name: Binary): string }
  | { readonly ok: false; readonly why: string };

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export function findAssets(env: NodeJS.ProcessEnv = process.env): AssetLookup {
  const dir = env['KUBEBUILDER_ASSETS'];
  if (dir === undefined || dir === '') return { ok: false, why: 'KUBEBUILDER_ASSETS is unset' };
  const missing = BINARIES.filter((b) => !executable(join(dir, b)));
  if (missing.length > 0) return { ok: false, why: `KUBEBUILDER_ASSETS=${dir} lacks ${missing.join(', ')}` };
  // The harness signs its certificates with openssl (Node's crypto cannot issue X.509 certificates).
  if (!hasOpenssl()) return { ok: false, why: 'openssl is not on the PATH' };
  return { ok: true, dir, binary: (name) => join(dir, name) };
}

let cached: AssetLookup | undefined;

export function controlPlaneAvailable(): boolean {
  cached ??= findAssets();
  return cached.ok;
}

export function requireAssets(): Extract<AssetLookup, { ok: true }> {
  cached ??= findAssets();
  if (!cached.ok) throw new Error(`no control plane: ${cached.why}; ${ENABLE_HINT}`);
  return cached;
}
