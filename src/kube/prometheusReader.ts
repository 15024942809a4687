// Reads a policy's Prometheus query for lowNodeUtilization with `usage: Prometheus`: once per cycle, an instant
// query (`GET <url>/api/v1/query`), with the bearer token of the Secret the policy names (key `prometheusAuthToken`,
// as the descheduler reads it), fetched again every cycle so a rotated token is used from the next cycle on.
//
// Every way it can fail is a reading that is unavailable with the reason, never an empty or older one: the Secret
// missing, refused (the operator's Role grants `get` on Secrets in its own namespace only) or without the key;
// Prometheus unreachable, too slow, answering an HTTP error or refusing the token; an answer that is not a vector of
// one value in 0–1 per node (snapshot/prometheusAnswer.ts). The policy is then Degraded and the strategy plans
// nothing (no fallback to requests: a cluster whose Prometheus is down is not rebalanced by other figures).
// https URLs are verified against the system's CAs and, in a pod, the cluster's CA (a Prometheus served with a
// certificate of the cluster's CA, as the descheduler expects).
import { existsSync, readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Clock } from '../clock.js';
import { FieldError } from '../errors.js';
import type { NodeUsageQuery } from '../model/types.js';
import { nodeValuesFromAnswer } from '../snapshot/prometheusAnswer.js';
import type { PrometheusSource } from '../strategies/types.js';
import { SERVICE_ACCOUNT_DIR } from './credentialTypes.js';
import { requestText } from './httpRequest.js';
import type { KubeApi } from './kubeClient.js';
import { ApiError } from './transport.js';

/** The Secret's key holding the token (the descheduler's). */
export const TOKEN_KEY = 'prometheusAuthToken';

/** An instant query answers in well under this; a hung server must not hold the cycle. */
const QUERY_TIMEOUT_MS = 15_000;
/** An answer with one sample per node of a 5,000-node cluster is a few hundred KiB. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

export interface PrometheusReaderOptions {
  readonly clock: Clock;
  readonly timeoutMs?: number;
  /** Extra CA certificates (PEM) for https servers; default: the pod's service account CA, when present. */
  readonly ca?: readonly string[];
  /** Told once per distinct problem (the policy's Degraded condition carries it meanwhile). */
  readonly onProblem?: (message: string) => void;
  /** Told once when a query answers again after a problem was told. */
  readonly onRecovered?: () => void;
}

/** `Prometheus <url> query "<query>"`, the start of every message about a reading. */
export function describeSource(source: PrometheusSource): string {
  return `Prometheus ${source.url ?? '(no url)'} query "${source.query ?? ''}"`;
}

function serviceAccountCa(): string[] {
  const file = `${SERVICE_ACCOUNT_DIR}/ca.crt`;
  try {
    return existsSync(file) ? [readFileSync(file, 'utf8')] : [];
  } catch {
    return [];
  }
}

export class PrometheusReader {
  private told: string | undefined;
  private readonly ca: readonly string[];

  constructor(
    private readonly api: { readonly core: Pick<KubeApi['core'], 'readNamespacedSecret'> },
    private readonly opts: PrometheusReaderOptions,
  ) {
    this.ca = opts.ca ?? serviceAccountCa();
  }

  async read(source: PrometheusSource): Promise<NodeUsageQuery> {
    const what = describeSource(source);
    const readAt = this.opts.clock.wall();
    const outcome = await this.readOnce(source).catch((err: unknown) => ({
      problem: err instanceof Error ? err.message.split('\n')[0]! : String(err),
    }));
    if ('problem' in outcome) {
      const message = `${what}: ${outcome.problem}`;
      if (message !== this.told) {
        this.told = message;
        this.opts.onProblem?.(message);
      }
      return { available: false, message };
    }
    if (this.told !== undefined) {
      this.told = undefined;
      this.opts.onRecovered?.();
    }
    return { available: true, values: outcome.values, readAt, source: what };
  }

  private async token(source: PrometheusSource): Promise<string | undefined> {
    const ref = source.authToken?.secretReference;
    if (ref === undefined) return undefined;
    const name = `Secret ${ref.namespace}/${ref.name}`;
    let secret: unknown;
    try {
      secret = await this.api.core.readNamespacedSecret(ref);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) throw new Error(`${name} (the bearer token) does not exist`);
      if (err instanceof ApiError && err.code === 403) {
        throw new Error(
          `not allowed to get ${name} (the operator may read Secrets in its own namespace only; put the token there)`,
        );
      }
      throw new Error(`cannot read ${name}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const data = (secret as { data?: Record<string, unknown> } | undefined)?.data?.[TOKEN_KEY];
    const token = typeof data === 'string' ? Buffer.from(data, 'base64').toString('utf8').trim() : '';
    if (token === '') throw new Error(`${name} has no ${TOKEN_KEY} (or it is empty)`);
    return token;
  }

  private async readOnce(source: PrometheusSource): Promise<{ values: Map<string, number> }> {
    if (source.url === undefined || source.query === undefined) throw new Error('url and query are required');
    const token = await this.token(source);
    const url = new URL(`${source.url.replace(/\/+$/, '')}/api/v1/query`);
    url.searchParams.set('query', source.query);
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
    let answer;
    try {
      answer = await requestText(
        url,
        {
          method: 'GET',
          headers,
          ...(url.protocol === 'https:' && this.ca.length > 0 ? { ca: [...rootCertificates, ...this.ca] } : {}),
          agent: false,
        },
        undefined,
        { timeoutMs: this.opts.timeoutMs ?? QUERY_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES },
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(`unreachable (${code ?? (err instanceof Error ? err.message : String(err))})`);
    }
    if (answer.status === 401 || answer.status === 403) {
      throw new Error(
        `HTTP ${answer.status}: the server refused ${token === undefined ? 'a request without a token' : 'the token'}`,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      throw new Error(`HTTP ${answer.status}: the answer is not JSON (is the url Prometheus's?)`);
    }
    try {
      return { values: nodeValuesFromAnswer(body) };
    } catch (err) {
      if (!(err instanceof FieldError)) throw err;
      const status = answer.status >= 200 && answer.status < 300 ? '' : `HTTP ${answer.status}: `;
      throw new Error(`${status}${err.field !== '' ? `${err.field}: ` : ''}${err.problem}`);
    }
  }
}
