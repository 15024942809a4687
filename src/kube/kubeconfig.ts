// Which credentials to use, decided the way kubectl decides, before anything is loaded: client-node's own lookup
// silently falls back to http://localhost:8080 when it finds nothing, and a command that then retries a port nobody
// listens on looks hung rather than misconfigured.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { InputError } from '../errors.js';
import { loadKubeconfig, serviceAccountCredentials, type Credentials } from './credentials.js';

export type CredentialSource =
  | { readonly kind: 'flag'; readonly path: string }
  | { readonly kind: 'env'; readonly paths: readonly string[] }
  | { readonly kind: 'home'; readonly path: string }
  | { readonly kind: 'in-cluster' };

export interface LookupEnvironment {
  readonly env: NodeJS.ProcessEnv;
  readonly home: string | undefined;
  readonly exists: (path: string) => boolean;
}

export const processEnvironment = (): LookupEnvironment => ({
  env: process.env,
  home: homedir(),
  exists: existsSync,
});

export function runsInCluster(env: NodeJS.ProcessEnv): boolean {
  return (env['KUBERNETES_SERVICE_HOST'] ?? '') !== '';
}

/**
 * --kubeconfig, else $KUBECONFIG, else ~/.kube/config, else the pod's service account (kubectl's order);
 * `inClusterFirst` (the operator in its pod) puts the service account before the files. Undefined: none exists.
 */
export function findCredentials(
  flag: string | undefined,
  where: LookupEnvironment,
  inClusterFirst = false,
): CredentialSource | undefined {
  if (flag !== undefined && flag !== '') return { kind: 'flag', path: flag };
  const inCluster = runsInCluster(where.env);
  if (inClusterFirst && inCluster) return { kind: 'in-cluster' };
  const paths = (where.env['KUBECONFIG'] ?? '').split(delimiter).filter((p) => p !== '');
  if (paths.length > 0) return { kind: 'env', paths };
  if (where.home !== undefined) {
    const path = join(where.home, '.kube', 'config');
    if (where.exists(path)) return { kind: 'home', path };
  }
  return inCluster ? { kind: 'in-cluster' } : undefined;
}

/** Why no credentials were found, for a message that starts with the flag or command it concerns. */
export const NO_CREDENTIALS =
  'no Kubernetes credentials: no --kubeconfig, $KUBECONFIG is not set, ~/.kube/config does not exist, ' +
  'and this is not a pod (KUBERNETES_SERVICE_HOST is not set)';

export function describeSource(source: CredentialSource): string {
  switch (source.kind) {
    case 'flag':
      return source.path;
    case 'env':
      return `$KUBECONFIG (${source.paths.join(delimiter)})`;
    case 'home':
      return source.path;
    case 'in-cluster':
      return 'in-cluster service account';
  }
}

/** Loads the credentials and switches to `context` when given; every problem is bad input naming the source. */
export async function loadCredentials(
  source: CredentialSource,
  context: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  warn: (line: string) => void = () => undefined,
): Promise<Credentials> {
  const name = describeSource(source);
  if (source.kind === 'in-cluster') {
    if (context !== undefined && context !== 'inCluster') {
      throw new InputError(name, undefined, 'contexts', `has no context "${context}" (it has: inCluster)`);
    }
    return (await serviceAccountCredentials(env)).credentials;
  }
  if (source.kind === 'env') {
    const skipped = (path: string): void => warn(`warning: $KUBECONFIG names ${path}, which does not exist; skipped`);
    return (await loadKubeconfig(source.paths, context, name, env, skipped)).credentials;
  }
  return (await loadKubeconfig([source.path], context, name, env)).credentials;
}
