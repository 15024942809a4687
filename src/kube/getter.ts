// The GETs of `plan`/`simulate --kubeconfig` (src/live/read.ts pages through the kinds with them): one request per
// call, authenticated as kubectl would be, answered as status + parsed JSON, sent by the one client runtime.
import { systemClock, type Clock } from '../clock.js';
import type { Credentials } from './credentials.js';
import type { TextAnswer } from './httpRequest.js';
import { CredentialsError, KubeTransport } from './kubeClient.js';
import { createRateLimiter } from './rateLimiter.js';

export interface HttpAnswer {
  readonly status: number;
  /** The parsed JSON body, or undefined when it was not JSON. */
  readonly body: unknown;
}

/** One GET of a path with its query; the shell sends it over HTTP, tests answer it from memory. */
export type Getter = (pathAndQuery: string) => Promise<HttpAnswer>;

export class LiveReadError extends Error {
  readonly code = 'E_LIVE_READ' as const;
  constructor(message: string) {
    super(message);
    this.name = 'LiveReadError';
  }
}

/** Requests per second and burst of the CLI's reads (kubectl's defaults are 50 and 300 for discovery). */
const CLI_QPS = 50;
const CLI_BURST = 100;

/**
 * GETs against the kubeconfig's current cluster, authenticated as kubectl would be (certificates, tokens, exec),
 * through the operator's client runtime (kubeClient.ts): a token bucket, Retry-After honoured on 429 and 5xx, a
 * deadline from the call, a GET resent once when its reused connection turned out closed. `close()` frees the
 * pooled connections.
 */
export function kubeGetter(
  kc: Credentials,
  timeoutMs = 60_000,
  clock: Clock = systemClock,
): Getter & { close(): void } {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new LiveReadError('the kubeconfig has no current cluster');
  const base = cluster.server.replace(/\/+$/, '');
  const transport = new KubeTransport(kc, {
    limiter: createRateLimiter({ qps: CLI_QPS, burst: CLI_BURST, clock }),
    clock,
    requestTimeoutMs: timeoutMs,
    userAgent: 'kube-rebalancer-cli',
  });
  const get = async (pathAndQuery: string): Promise<HttpAnswer> => {
    let answer: TextAnswer;
    try {
      answer = await transport.request({ method: 'GET', path: pathAndQuery });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const what = err instanceof CredentialsError ? 'cannot authenticate to' : 'cannot reach the API server at';
      throw new LiveReadError(`${what} ${base}: ${message.split('\n')[0]}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      body = undefined;
    }
    return { status: answer.status, body };
  };
  return Object.assign(get, { close: () => transport.close() });
}
