// The operator reads the API server's /version once when it starts: the placement model follows that minor's
// scheduler (src/model/kubeVersion.ts). A server outside the supported range is modelled as the nearest supported minor
// with one warning; a /version that cannot be read or parsed leaves the newest supported minor, also with one warning,
// since the cluster is still there to balance.
import type { Logger } from 'pino';
import {
  modelledVersion,
  NEWEST_KUBE_VERSION,
  releaseFromServerVersion,
  type KubeVersion,
} from '../model/kubeVersion.js';

export async function readClusterKubeVersion(
  getVersion: () => Promise<unknown>,
  logger: Pick<Logger, 'info' | 'warn'>,
): Promise<KubeVersion> {
  let info: unknown;
  try {
    info = await getVersion();
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    logger.warn(
      `cannot read the API server's /version (${message}); landings are predicted as kube-scheduler ${NEWEST_KUBE_VERSION}'s`,
    );
    return NEWEST_KUBE_VERSION;
  }
  const release = releaseFromServerVersion(info);
  if (release === undefined) {
    logger.warn(
      `the API server's /version names no release; landings are predicted as kube-scheduler ${NEWEST_KUBE_VERSION}'s`,
    );
    return NEWEST_KUBE_VERSION;
  }
  const { version, warning } = modelledVersion(
    release,
    `the API server (Kubernetes ${release.major}.${release.minor})`,
  );
  if (warning !== undefined) logger.warn(warning.replace(/^warning: /, ''));
  else logger.info({ kubeVersion: version }, `landings are predicted as kube-scheduler ${version}'s`);
  return version;
}
