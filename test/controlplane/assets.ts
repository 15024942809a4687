// Where the control-plane binaries are, the envtest way: KUBEBUILDER_ASSETS names a folder holding etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler of one release (`bash hack/control-plane-assets.sh 1.37`
// prints such a folder, building it once into a cache). Suites that need them use
// `describe.skipIf(!controlPlaneAvailable())`; the global setup prints the one line that names the skipped suites and
// the command that enables them, so `npm test` passes on a machine without the binaries.
//
// The harness runs releases from 1.26 to 1.37. What differs between them is read from the binaries themselves, not
// from a table kept here: the release from `kube-apiserver --version`, and the feature gates a component still
// accepts from its `--help` (see acceptedGates).
import { accessSync, constants } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export const BINARIES = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
export type Binary = (typeof BINARIES)[number];

/** The command that makes the suites run, for messages: CI runs them on these releases (see .ci/run). */
export const ENABLE_COMMAND = 'KUBEBUILDER_ASSETS="$(bash hack/control-plane-assets.sh 1.37)" npm test';

export const ENABLE_HINT =
  `run \`${ENABLE_COMMAND}\` (the script prints a folder with etcd, kube-apiserver, kube-controller-manager and ` +
  'kube-scheduler of that release, building it once from the Go module proxy into ~/.cache/kube-rebalancer; ' +
  '1.35 and 1.36 work too), and have openssl on the PATH';

export interface KubeVersion {
  /** As the binary prints it, e.g. v1.37.2. */
  readonly gitVersion: string;
  readonly major: number;
  readonly minor: number;
}

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

/** `Kubernetes v1.37.2` (kube-apiserver --version) → its parts; undefined for anything else. */
export function parseVersionLine(line: string): KubeVersion | undefined {
  const m = /\bv(\d+)\.(\d+)\.\d+\S*/.exec(line);
  if (m === null) return undefined;
  return { gitVersion: m[0], major: Number(m[1]), minor: Number(m[2]) };
}

const versions = new Map<string, KubeVersion>();

/** The release of the binaries in the assets folder, as kube-apiserver reports it. */
export function controlPlaneVersion(): KubeVersion {
  const assets = requireAssets();
  const known = versions.get(assets.dir);
  if (known !== undefined) return known;
  const out = execFileSync(assets.binary('kube-apiserver'), ['--version'], { encoding: 'utf8' });
  const version = parseVersionLine(out);
  if (version === undefined) throw new Error(`${assets.binary('kube-apiserver')} --version printed no version: ${out}`);
  versions.set(assets.dir, version);
  return version;
}

/**
 * The feature gates a component's --help offers (alpha and beta ones; newer releases print them as `kube:Name`).
 * A gate that went GA is no longer listed and, once removed, makes the component refuse to start when named, so
 * the harness names only gates found here.
 */
export function parseGateHelp(help: string): Set<string> {
  const gates = new Set<string>();
  for (const m of help.matchAll(/^\s+(?:[a-z]+:)?([A-Z][A-Za-z0-9]*)=true\|false \((?:ALPHA|BETA|DEPRECATED)\b/gm)) {
    gates.add(m[1]!);
  }
  return gates;
}

const gateHelp = new Map<string, Set<string>>();

export function acceptedGates(binary: string): Set<string> {
  let gates = gateHelp.get(binary);
  if (gates === undefined) {
    // --help exits 0 on every release, but some print it on stderr.
    const help = execFileSync(binary, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    gates = parseGateHelp(help);
    gateHelp.set(binary, gates);
  }
  return gates;
}

/**
 * `--feature-gates=` for a component of this release: every wanted gate it still offers. A gate it no longer offers
 * went GA (or was dropped): on is then what the release does anyway; off cannot be had, and that is an error rather
 * than a control plane that silently runs something else.
 */
export function featureGateArgs(
  binary: string,
  wanted: Readonly<Record<string, boolean>>,
  offered: ReadonlySet<string> = acceptedGates(binary),
): string[] {
  const pairs: string[] = [];
  for (const [gate, on] of Object.entries(wanted)) {
    if (offered.has(gate)) pairs.push(`${gate}=${on}`);
    else if (!on) throw new Error(`${binary} offers no feature gate ${gate}: it cannot be turned off in this release`);
  }
  return pairs.length === 0 ? [] : [`--feature-gates=${pairs.join(',')}`];
}
