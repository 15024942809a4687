// Shared keep-alive agents of the client runtime (transport.ts): one per distinct set of TLS options, so rotated
// credentials get a new pool, and one per proxy (client-node builds a new proxy agent per request otherwise). At most
// `maxSockets` connections each, which also bounds the requests in flight.
import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';

const AGENT_KEYS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

/** Shared keep-alive agents, one per distinct set of TLS options (rotated credentials get a new pool). */
export class AgentPool {
  private readonly agents = new Map<string, http.Agent>();

  constructor(
    private readonly maxSockets: number,
    private readonly keepAlive: boolean,
  ) {}

  forRequest(options: https.RequestOptions, secure: boolean): http.Agent {
    const hash = createHash('sha256').update(secure ? 'https' : 'http');
    const o = options as Record<string, unknown>;
    for (const key of AGENT_KEYS) hash.update(`\u0000${key}=${String(o[key])}`);
    const id = hash.digest('hex');
    let pooled = this.agents.get(id);
    if (pooled === undefined) {
      const settings: https.AgentOptions = { keepAlive: this.keepAlive, maxSockets: this.maxSockets };
      for (const key of AGENT_KEYS) if (o[key] !== undefined) (settings as Record<string, unknown>)[key] = o[key];
      pooled = secure ? new https.Agent(settings) : new http.Agent(settings);
      this.agents.set(id, pooled);
    }
    return pooled;
  }

  /**
   * One pooled agent per proxy and TLS options, for the proxy agent client-node built for this one request (it
   * builds a new one, without keep-alive, on every call: a CONNECT and a TLS handshake per request). The pooled agent
   * is of the same class, made with keep-alive and the pool's limit; the per-request one is dropped.
   */
  forProxy(given: http.Agent, options: https.RequestOptions, secure: boolean): http.Agent {
    const proxy: unknown = (given as { proxy?: unknown }).proxy;
    if (!(proxy instanceof URL)) return given;
    const hash = createHash('sha256').update(`${given.constructor.name}\u0000${proxy.href}\u0000${String(secure)}`);
    const o = options as Record<string, unknown>;
    for (const key of AGENT_KEYS) hash.update(`\u0000${key}=${String(o[key])}`);
    const id = hash.digest('hex');
    let pooled = this.agents.get(id);
    if (pooled === undefined) {
      const settings: Record<string, unknown> = { keepAlive: this.keepAlive, maxSockets: this.maxSockets, proxy };
      for (const key of AGENT_KEYS) if (o[key] !== undefined) settings[key] = o[key];
      pooled = new (given.constructor as new (o: Record<string, unknown>) => http.Agent)(settings);
      this.agents.set(id, pooled);
    }
    if (pooled !== given) given.destroy();
    return pooled;
  }

  destroy(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
