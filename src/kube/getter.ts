// The GETs of `plan`/`simulate --kubeconfig` (src/live/read.ts pages through the kinds with them): one request per
// call, authenticated as kubectl would be, answered as status + parsed JSON.
import type * as https from 'node:https';
import type { Credentials } from './credentials.js';
import { requestText, type TextAnswer } from './httpRequest.js';

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

/** GETs against the kubeconfig's current cluster, authenticated as kubectl would be (certificates, tokens, exec). */
export function kubeGetter(kc: Credentials, timeoutMs = 60_000): Getter {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new LiveReadError('the kubeconfig has no current cluster');
  const base = cluster.server.replace(/\/+$/, '');
  return async (pathAndQuery) => {
    const url = new URL(`${base}${pathAndQuery}`);
    const options: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json' } };
    try {
      await kc.applyToHTTPSOptions(options);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new LiveReadError(`cannot authenticate to ${base}: ${message.split('\n')[0]}`);
    }
    let answer: TextAnswer;
    try {
      answer = await requestText(url, options, undefined, { timeoutMs });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      throw new LiveReadError(`cannot reach the API server at ${base}: ${message.split('\n')[0]}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      body = undefined;
    }
    return { status: answer.status, body };
  };
}
