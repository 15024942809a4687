// One table maps every Eviction API answer to a typed error: code, metric result, retryability, Retry-After.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { classifyEvictionError, retryAfterMs } from '../../src/kube/evictionErrors.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function status(code: number, message: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, message, ...extra });
}

function api(code: number, body: string, headers: Record<string, string> = {}): ApiException<string> {
  return new ApiException(code, 'Unknown API Status Code!', body, headers);
}

const budget = {
  details: {
    causes: [
      { reason: 'DisruptionBudget', message: 'The disruption budget web needs 9 healthy pods and has 9 currently' },
    ],
  },
};

describe('classifyEvictionError', () => {
  it.each([
    // [scenario, error, code, result, retryable, retryAfterMs]
    [
      'budget spent: 429 with a DisruptionBudget cause',
      api(429, status(429, "Cannot evict pod as it would violate the pod's disruption budget.", budget)),
      'E_PDB_BLOCKED',
      'pdb_blocked',
      false,
      undefined,
    ],
    [
      'budget status stale: 429, DisruptionBudget cause, Retry-After 10',
      api(429, status(429, 'Cannot evict pod', { details: { ...budget.details, retryAfterSeconds: 10 } }), {
        'retry-after': '10',
      }),
      'E_PDB_BLOCKED',
      'pdb_blocked',
      false,
      10_000,
    ],
    [
      'API priority and fairness: 429 without a budget cause',
      api(429, status(429, 'Too many requests, please try again later.'), { 'Retry-After': '2' }),
      'E_THROTTLED',
      'failed',
      true,
      2000,
    ],
    ['pod gone: 404', api(404, status(404, 'pods "web-1" not found')), 'E_NOT_FOUND', 'not_found', false, undefined],
    [
      'recreated pod with the same name: 409 from the uid precondition',
      api(409, status(409, 'the UID in the precondition (a) does not match the UID in record (b)')),
      'E_UID_MISMATCH',
      'not_found',
      false,
      undefined,
    ],
    [
      'two budgets: 500 "more than one PodDisruptionBudget"',
      api(
        500,
        status(500, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'),
      ),
      'E_MULTIPLE_PDBS',
      'skipped',
      false,
      undefined,
    ],
    [
      'server error: 500',
      api(500, status(500, 'etcdserver: request timed out')),
      'E_SERVER',
      'failed',
      true,
      undefined,
    ],
    ['unavailable: 503', api(503, 'upstream connect error'), 'E_SERVER', 'failed', true, undefined],
    [
      'forbidden: 403',
      api(403, status(403, 'pods "web-1" is forbidden: User cannot create resource "pods/eviction"')),
      'E_REJECTED',
      'failed',
      false,
      undefined,
    ],
    [
      'connection refused: no HTTP answer',
      Object.assign(new Error('request to http://x failed, reason: connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'E_NETWORK',
      'failed',
      true,
      undefined,
    ],
  ])('%s', (_scenario, err, code, result, retryable, retryAfter) => {
    const e = classifyEvictionError(err, NOW);
    expect(e.code).toBe(code);
    expect(e.result).toBe(result);
    expect(e.retryable).toBe(retryable);
    expect(e.retryAfterMs).toBe(retryAfter);
  });

  it('keeps the server message, not client-node wrapper text', () => {
    const e = classifyEvictionError(api(404, status(404, 'pods "web-1" not found')), NOW);
    expect(e.message).toBe('pods "web-1" not found');
  });

  it('reads Retry-After as seconds or as an HTTP date, else details.retryAfterSeconds', () => {
    expect(retryAfterMs({ 'retry-after': '3' }, undefined, NOW)).toBe(3000);
    expect(retryAfterMs({ 'Retry-After': new Date(NOW + 4000).toUTCString() }, undefined, NOW)).toBe(4000);
    expect(retryAfterMs({}, { details: { retryAfterSeconds: 7 } }, NOW)).toBe(7000);
    expect(retryAfterMs({}, undefined, NOW)).toBeUndefined();
  });
});
