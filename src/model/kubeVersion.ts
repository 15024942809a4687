// The Kubernetes minor whose scheduler the placement model follows. Only the three newest minors are supported (as
// Kubernetes and the descheduler support them); a cluster outside that range is modelled as the nearest supported
// minor, with one warning, rather than refused: an old cluster still gets a prediction, flagged as approximate.
//
// Per minor, what the scheduler's default profile does differently is read from that release's source
// (pkg/features/kube_features.go gate defaults, pkg/scheduler/apis/config/v1/default_plugins.go):
// - NodeDeclaredFeatures: alpha and off in 1.35, beta and on in 1.36, GA in 1.37; when on, the default profile gains
//   its filter (a pod that needs a node feature lands only on nodes listing it in status.declaredFeatures).
// - TaintTolerationComparisonOperators (tolerations with operator Lt/Gt): alpha and off in 1.35–1.37, so such a
//   toleration tolerates nothing.
// Everything else this model reads (sidecars, in-place resize, pod-level resources, scheduling gates, DRA, the
// matchLabelKeys merge, inter-pod matchLabelKeys/mismatchLabelKeys, minDomains, node inclusion policies) is on by
// default in all three.

export const SUPPORTED_KUBE_VERSIONS = ['1.35', '1.36', '1.37'] as const;
export type KubeVersion = (typeof SUPPORTED_KUBE_VERSIONS)[number];

/** The newest supported minor: what a saved cluster is modelled as unless --kube-version says otherwise. */
export const NEWEST_KUBE_VERSION: KubeVersion = '1.37';

export interface KubeRelease {
  readonly major: number;
  readonly minor: number;
}

// `1.37`, `v1.37.2`, `1.37.0-rc.1`, `v1.37.2+k3s1`, `v1.37.2-eks-1234`: the major and minor are all that matter.
const RELEASE = /^v?(\d{1,3})\.(\d{1,3})(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$/;

/** A version as a user or `/version`'s gitVersion writes it; undefined when it is not one. */
export function parseKubeRelease(text: string): KubeRelease | undefined {
  const m = RELEASE.exec(text.trim());
  if (m === null) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * The API server's /version answer: gitVersion when it parses, else major and minor (providers write minor as
 * `37+`); undefined when neither says which release it is.
 */
export function releaseFromServerVersion(info: unknown): KubeRelease | undefined {
  if (typeof info !== 'object' || info === null) return undefined;
  const o = info as Record<string, unknown>;
  const git = typeof o['gitVersion'] === 'string' ? parseKubeRelease(o['gitVersion']) : undefined;
  if (git !== undefined) return git;
  const major = typeof o['major'] === 'string' ? /^(\d+)\+?$/.exec(o['major']) : null;
  const minor = typeof o['minor'] === 'string' ? /^(\d+)\+?$/.exec(o['minor']) : null;
  if (major === null || minor === null) return undefined;
  return { major: Number(major[1]), minor: Number(minor[1]) };
}

export interface ModelledVersion {
  readonly version: KubeVersion;
  /** Set when the release is outside the supported range: one line saying which minor is modelled instead. */
  readonly warning: string | undefined;
}

/**
 * The supported minor nearest to `release`, and a warning when it is not `release` itself; `source` names where the
 * release came from (`--kube-version 1.20`, `the API server (v1.20.4)`).
 */
export function modelledVersion(release: KubeRelease, source: string): ModelledVersion {
  const exact = `${release.major}.${release.minor}`;
  if ((SUPPORTED_KUBE_VERSIONS as readonly string[]).includes(exact)) {
    return { version: exact as KubeVersion, warning: undefined };
  }
  const oldest = SUPPORTED_KUBE_VERSIONS[0];
  const newer = release.major > 1 || (release.major === 1 && release.minor > minorOf(NEWEST_KUBE_VERSION));
  const version = newer ? NEWEST_KUBE_VERSION : oldest;
  return {
    version,
    warning:
      `warning: ${source} is outside the supported Kubernetes ${oldest}–${NEWEST_KUBE_VERSION}; ` +
      `landings are predicted as kube-scheduler ${version}'s`,
  };
}

/** Looked up, not parsed: scoring asks for it per node (BalancedAllocation's formula changed in 1.36). */
const MINORS: ReadonlyMap<string, number> = new Map(SUPPORTED_KUBE_VERSIONS.map((v) => [v, Number(v.slice(2))]));

export function minorOf(version: KubeVersion): number {
  return MINORS.get(version) ?? Number(version.slice(2));
}

/** What the scheduler's default profile does at a minor, as far as the model reads it (see the header). */
export interface SchedulerFeatures {
  readonly nodeDeclaredFeatures: boolean;
  readonly tolerationComparisonOperators: boolean;
}

export function schedulerFeatures(version: KubeVersion | undefined): SchedulerFeatures {
  const minor = minorOf(version ?? NEWEST_KUBE_VERSION);
  return { nodeDeclaredFeatures: minor >= 36, tolerationComparisonOperators: false };
}
