// The shapes shared by the credential modules: what a request needs (Credentials), a kubeconfig entry as read, and
// file material read again when it may have been rotated.
import { readFileSync } from 'node:fs';
import type * as https from 'node:https';

/** What every request needs: where the server is, and how to authenticate to it (client-node's KubeConfig fits). */
export interface Credentials {
  getCurrentCluster(): { readonly name: string; readonly server: string } | null;
  getCurrentContext(): string;
  getCurrentUser(): { readonly name: string } | null;
  /** Sets the TLS options and the Authorization header of one request. */
  applyToHTTPSOptions(options: https.RequestOptions): Promise<void>;
}

export type CredentialFile =
  { readonly kind: 'files'; readonly paths: readonly string[] } | { readonly kind: 'in-cluster' };

/** The pod's service account, where the kubelet mounts it. */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** A projected token is rotated by the kubelet; it is read again after this long, as client-go does. */
export const TOKEN_FILE_REFRESH_MS = 60_000;
/** Certificate, key and CA files are read again after this long (rotation without a restart). */
export const TLS_FILE_REFRESH_MS = 60_000;

/** TLS material: inline data, or a file read again after TLS_FILE_REFRESH_MS (the last good read kept on failure). */
export type Material = () => Buffer;

/** A file's content, read now (errors thrown) and again after `refreshMs` when asked. */
export function rereadFile(path: string, now: () => number = Date.now, refreshMs = TLS_FILE_REFRESH_MS): Material {
  let value = readFileSync(path);
  let readAt = now();
  return () => {
    const t = now();
    if (t - readAt >= refreshMs) {
      readAt = t;
      try {
        value = readFileSync(path);
      } catch {
        // Replaced atomically by the rotating agent, so a failed read is rare: the last one stays in use.
      }
    }
    return value;
  };
}

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface Named {
  readonly name: string;
  readonly value: Obj;
  /** The file it came from, for relative paths and messages. */
  readonly file: string;
}

export interface ClusterEntry {
  readonly name: string;
  readonly server: string;
  readonly ca?: Material;
  readonly insecure: boolean;
  readonly servername?: string;
}

export type Auth =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'token-file'; readonly path: string }
  | { readonly kind: 'basic'; readonly header: string };

/** Credentials this module reads itself. */
