// Credentials this process applies itself (certificates, tokens, token files, basic auth, impersonation), without
// importing client-node; anything else is delegated (delegated.ts).
import type * as https from 'node:https';
import { applyImpersonation, type Impersonation } from './impersonation.js';
import { readFileSync } from 'node:fs';
import {
  TOKEN_FILE_REFRESH_MS,
  type Auth,
  type ClusterEntry,
  type Credentials,
  type Material,
  type Obj,
} from './credentialTypes.js';

export class StaticCredentials implements Credentials {
  private token: { value: string; readAt: number } | undefined;

  constructor(
    private readonly cluster: ClusterEntry,
    private readonly context: string,
    private readonly user: {
      name: string;
      cert?: Material;
      key?: Material;
      auth: Auth;
      impersonate?: Impersonation;
    },
    private readonly now: () => number = Date.now,
  ) {}

  getCurrentCluster(): { name: string; server: string } {
    return { name: this.cluster.name, server: this.cluster.server };
  }

  getCurrentContext(): string {
    return this.context;
  }

  getCurrentUser(): { name: string } {
    return { name: this.user.name };
  }

  applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    if (this.cluster.ca !== undefined) options.ca = this.cluster.ca();
    if (this.cluster.insecure) options.rejectUnauthorized = false;
    if (this.cluster.servername !== undefined) options.servername = this.cluster.servername;
    if (this.user.cert !== undefined) options.cert = this.user.cert();
    if (this.user.key !== undefined) options.key = this.user.key();
    const authorization = this.authorization();
    if (authorization !== undefined) {
      options.headers = { ...(options.headers as Obj | undefined), Authorization: authorization };
    }
    if (this.user.impersonate !== undefined) {
      const headers = { ...(options.headers as Obj | undefined) } as NonNullable<https.RequestOptions['headers']>;
      applyImpersonation(headers as Record<string, string | string[]>, this.user.impersonate);
      options.headers = headers;
    }
    return Promise.resolve();
  }

  private authorization(): string | undefined {
    const auth = this.user.auth;
    switch (auth.kind) {
      case 'none':
        return undefined;
      case 'token':
        return `Bearer ${auth.token}`;
      case 'basic':
        return auth.header;
      case 'token-file': {
        const now = this.now();
        if (this.token === undefined || now - this.token.readAt >= TOKEN_FILE_REFRESH_MS) {
          // A failed re-read keeps the token read last: the kubelet replaces the file atomically, so this is rare.
          try {
            this.token = { value: readFileSync(auth.path, 'utf8').trim(), readAt: now };
          } catch (err) {
            if (this.token === undefined) throw err;
          }
        }
        return `Bearer ${this.token.value}`;
      }
    }
  }
}

/** The pod's service account: KUBERNETES_SERVICE_HOST/PORT, its CA and its (rotated) token. */
