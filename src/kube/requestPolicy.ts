// The request policy every API call follows, in one place (kubeClient.ts applies it): which bucket priority a
// request takes, which verbs may be sent again, and when an answer asks to be retried. Pure, so each rule is tested
// on its own.
//
// - Priority: Events and status writes are the record of what happened; they go 'low' (rateLimiter.ts), so they
//   never hold an eviction, a list or a watch, and still go out within seconds while evictions stream.
// - Idempotent verbs (GET, HEAD, PUT, DELETE, as RFC 9110 names them; a PUT here always carries a resourceVersion)
//   may be sent twice without doing twice. Only they are retried on a 5xx with Retry-After, and only they are resent
//   after a reused keep-alive connection turned out closed before any answer byte, as Go's transport does. A POST is
//   never sent twice by this layer.
// - A 429 with Retry-After (API priority and fairness, max-in-flight) is retried for any verb but an eviction: an
//   eviction's retries belong to the executor alone (src/operator/eviction/evictionRetry.ts), which reads the same
//   Retry-After; two layers multiplied (five sends here for each of its attempts).
// - Every wait (a token, a Retry-After) counts against the call's deadline: a retry that would end after it is not
//   made, and the answer in hand is returned.
import type { IncomingHttpHeaders } from 'node:http';
import { hasDisruptionBudgetCause, retryAfterMs, statusOf } from './evictionErrors.js';
import type { RequestPriority } from './rateLimiter.js';

/** policy/v1 Eviction subresource of a pod. */
export const EVICTION_PATH = /\/pods\/[^/]+\/eviction$/;
/** Event writes (core/v1 events, a collection or one Event). */
const EVENTS_PATH = /\/events(\/[^/]+)?$/;
/** A status subresource (the policies' status). */
const STATUS_PATH = /\/status$/;

export type Verb = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export function priorityOf(method: string, pathname: string): RequestPriority {
  if (method !== 'GET' && (EVENTS_PATH.test(pathname) || STATUS_PATH.test(pathname))) return 'low';
  return 'normal';
}

export function isIdempotent(method: string): boolean {
  return method === 'GET' || method === 'HEAD' || method === 'PUT' || method === 'DELETE';
}

export const isEviction = (pathname: string): boolean => EVICTION_PATH.test(pathname);

/**
 * How long to wait before sending the request again after this answer, or undefined when it is final: 429 with
 * Retry-After (not an eviction, not a budget's refusal), or a 5xx with Retry-After on an idempotent verb.
 */
export function retryWaitMs(
  method: string,
  pathname: string,
  answer: { readonly status: number; readonly headers: IncomingHttpHeaders; readonly text: string },
  wallNow: number,
): number | undefined {
  const { status } = answer;
  if (status === 429) {
    if (isEviction(pathname)) return undefined;
    const body = statusOf(answer.text);
    if (hasDisruptionBudgetCause(body)) return undefined;
    return retryAfterMs(answer.headers, body, wallNow);
  }
  if (status >= 500 && status <= 599 && isIdempotent(method)) {
    return retryAfterMs(answer.headers, statusOf(answer.text), wallNow);
  }
  return undefined;
}
