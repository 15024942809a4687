// Credentials handed to client-node's KubeConfig (exec plugins, auth providers, proxies), with the impersonation it
// does not fully do.
import type * as https from 'node:https';
import { InputError } from '../errors.js';
import { applyImpersonation, type Impersonation } from './impersonation.js';
import type { Credentials, Obj } from './credentialTypes.js';

/** client-node's KubeConfig with the impersonation client-node does not fully do (it knows `as` only). */
export class Delegated implements Credentials {
  constructor(
    private readonly kc: Credentials,
    private readonly impersonate: Impersonation | undefined,
  ) {}

  getCurrentCluster(): { readonly name: string; readonly server: string } | null {
    return this.kc.getCurrentCluster();
  }

  getCurrentContext(): string {
    return this.kc.getCurrentContext();
  }

  getCurrentUser(): { readonly name: string } | null {
    return this.kc.getCurrentUser();
  }

  async applyToHTTPSOptions(options: https.RequestOptions): Promise<void> {
    await this.kc.applyToHTTPSOptions(options);
    if (this.impersonate === undefined) return;
    const headers = { ...(options.headers as Obj | undefined) } as Record<string, string | string[]>;
    applyImpersonation(headers, this.impersonate);
    options.headers = headers;
  }
}

/** client-node's KubeConfig for what StaticCredentials does not do; its import is the cost this module avoids. */
export async function clientNodeKubeConfig(merged: Obj, context: string, name: string): Promise<Credentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    kc.loadFromString(JSON.stringify(merged));
  } catch (err) {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
    throw new InputError(name, undefined, undefined, `cannot load the kubeconfig: ${message}`);
  }
  kc.setCurrentContext(context);
  return kc;
}
