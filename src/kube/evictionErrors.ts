// The one place that maps answers of the Eviction API (POST pods/{name}/eviction) to typed errors with stable codes.
// The executor matches on `code` (and reads `result`/`retryable`), never on message text.
//
//   answer                                                   code              result       retried?
//   429 with a DisruptionBudget cause (budget spent, or the  E_PDB_BLOCKED     pdb_blocked  no: the workload backs off
//       PDB's status not yet observed by its controller)
//   429 without that cause (API priority & fairness)         E_THROTTLED       failed       yes, after Retry-After
//   404                                                      E_NOT_FOUND       not_found    no
//   409 (the uid precondition failed: same name, new pod)    E_UID_MISMATCH    not_found    no
//   500 "more than one PodDisruptionBudget"                  E_MULTIPLE_PDBS   skipped      no
//   other 5xx                                                E_SERVER          failed       yes, capped backoff
//   no HTTP answer (connection refused/reset, timeout)       E_NETWORK         failed       yes, capped backoff
//   other 4xx (400, 403, 422, ...)                           E_REJECTED        failed       no
import type { EvictionResult } from '../model/evictionResult.js';

export type EvictionErrorCode =
  | 'E_PDB_BLOCKED'
  | 'E_THROTTLED'
  | 'E_NOT_FOUND'
  | 'E_UID_MISMATCH'
  | 'E_MULTIPLE_PDBS'
  | 'E_SERVER'
  | 'E_NETWORK'
  | 'E_REJECTED';

const RESULTS: Readonly<Record<EvictionErrorCode, EvictionResult>> = {
  E_PDB_BLOCKED: 'pdb_blocked',
  E_THROTTLED: 'failed',
  E_NOT_FOUND: 'not_found',
  E_UID_MISMATCH: 'not_found',
  E_MULTIPLE_PDBS: 'skipped',
  E_SERVER: 'failed',
  E_NETWORK: 'failed',
  E_REJECTED: 'failed',
};

const RETRYABLE: ReadonlySet<EvictionErrorCode> = new Set(['E_THROTTLED', 'E_SERVER', 'E_NETWORK']);

export class EvictionError extends Error {
  /** The metric result this answer is counted as when it is final. */
  readonly result: EvictionResult;
  /** Whether the same request may succeed if sent again later. */
  readonly retryable: boolean;

  constructor(
    readonly code: EvictionErrorCode,
    message: string,
    /** HTTP status, when there was an answer. */
    readonly status: number | undefined,
    /** The server's Retry-After (header or details.retryAfterSeconds), ms. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
    this.name = 'EvictionError';
    this.result = RESULTS[code];
    this.retryable = RETRYABLE.has(code);
  }
}

interface StatusBody {
  message?: unknown;
  reason?: unknown;
  details?: { causes?: unknown; retryAfterSeconds?: unknown };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The metav1.Status in an error body (client-node hands it over as text or as a parsed object). */
export function statusOf(body: unknown): StatusBody | undefined {
  if (isRecord(body)) return body;
  if (typeof body === 'string' && body.trimStart().startsWith('{')) {
    try {
      const parsed: unknown = JSON.parse(body);
      return isRecord(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function headerValue(headers: unknown, name: string): string | undefined {
  if (!isRecord(headers)) return undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
}

/** Retry-After as ms: the header (seconds or an HTTP date), else details.retryAfterSeconds. */
export function retryAfterMs(headers: unknown, status: StatusBody | undefined, now: number): number | undefined {
  const header = headerValue(headers, 'retry-after');
  if (header !== undefined) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(header);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const detail = status?.details?.retryAfterSeconds;
  return typeof detail === 'number' && detail > 0 ? detail * 1000 : undefined;
}

/** A PodDisruptionBudget refused the eviction (the answer is 429 then, like a throttle, but it is not one). */
export function hasDisruptionBudgetCause(status: StatusBody | undefined): boolean {
  const causes = status?.details?.causes;
  if (!Array.isArray(causes)) return false;
  // metav1.StatusCause's Go field is Type, its JSON key is `reason`; accept `type` too.
  return causes.some((c) => isRecord(c) && (c['reason'] === 'DisruptionBudget' || c['type'] === 'DisruptionBudget'));
}

function httpStatusOf(err: unknown): number | undefined {
  if (!isRecord(err) && !(err instanceof Error)) return undefined;
  const e = err as { code?: unknown; statusCode?: unknown };
  if (typeof e.code === 'number') return e.code;
  if (typeof e.statusCode === 'number') return e.statusCode;
  return undefined;
}

/** Maps whatever the eviction call threw (client-node ApiException, fetch error, anything) to an EvictionError. */
export function classifyEvictionError(err: unknown, now: number): EvictionError {
  if (err instanceof EvictionError) return err;
  const status = httpStatusOf(err);
  const e = err as { body?: unknown; headers?: unknown };
  const body = status === undefined ? undefined : statusOf(e.body);
  const message =
    typeof body?.message === 'string' && body.message !== ''
      ? body.message
      : err instanceof Error
        ? err.message.split('\n')[0]!
        : String(err);
  if (status === undefined) return new EvictionError('E_NETWORK', message, undefined, undefined);
  const retryAfter = retryAfterMs(e.headers, body, now);
  if (status === 429) {
    return hasDisruptionBudgetCause(body)
      ? new EvictionError('E_PDB_BLOCKED', message, status, retryAfter)
      : new EvictionError('E_THROTTLED', message, status, retryAfter);
  }
  if (status === 404) return new EvictionError('E_NOT_FOUND', message, status, undefined);
  if (status === 409) return new EvictionError('E_UID_MISMATCH', message, status, undefined);
  if (status === 500 && /more than one PodDisruptionBudget/i.test(message)) {
    return new EvictionError('E_MULTIPLE_PDBS', message, status, undefined);
  }
  if (status >= 500) return new EvictionError('E_SERVER', message, status, retryAfter);
  return new EvictionError('E_REJECTED', message, status, undefined);
}
