// The instant-query answer `usage: Prometheus` reads, as Prometheus's /api/v1/query writes it: a vector of one sample
// per node, labelled instance=<node>, each value a fraction. Everything else is refused whole, naming the part.
import { describe, expect, it } from 'vitest';
import { FieldError } from '../../src/errors.js';
import { nodeValuesFromAnswer } from '../../src/snapshot/prometheusAnswer.js';

const sample = (instance: string | undefined, value: string, extra: Record<string, string> = {}): unknown => ({
  metric: { __name__: 'instance:node_cpu_utilisation:rate5m', ...extra, ...(instance ? { instance } : {}) },
  value: [1795801535.721, value],
});
const vector = (...result: unknown[]): unknown => ({ status: 'success', data: { resultType: 'vector', result } });

describe('a Prometheus instant-query answer for usage: Prometheus', () => {
  it.each([
    ['a vector of one sample per node', vector(sample('n1', '0.9'), sample('n2', '0.05')), { n1: 0.9, n2: 0.05 }],
    ['the bounds 0 and 1 themselves', vector(sample('n1', '0'), sample('n2', '1')), { n1: 0, n2: 1 }],
    ['other labels beside instance', vector(sample('n1', '0.5', { job: 'node-exporter' })), { n1: 0.5 }],
    ['an exponent, as Go writes small floats', vector(sample('n1', '5e-05')), { n1: 0.00005 }],
  ])('reads %s', (_, answer, expected) => {
    expect(Object.fromEntries(nodeValuesFromAnswer(answer))).toEqual(expected);
  });

  it.each([
    [
      'a scalar (the query is not a vector)',
      { status: 'success', data: { resultType: 'scalar', result: [1, '0.5'] } },
      'data.resultType',
      'must be vector, one sample per node (got scalar)',
    ],
    [
      'a matrix (a range selector without a function)',
      { status: 'success', data: { resultType: 'matrix', result: [] } },
      'data.resultType',
      'got matrix',
    ],
    ['an empty vector', vector(), 'data.result', 'the query returned no samples'],
    [
      'NaN (0/0 in the query)',
      vector(sample('n1', '0.2'), sample('n2', 'NaN')),
      'data.result[1].value',
      'node n2: the value is NaN',
    ],
    ['+Inf', vector(sample('n1', '+Inf')), 'data.result[0].value', 'node n1: +Inf is outside 0–1'],
    [
      'a percentage where a fraction is meant',
      vector(sample('n1', '73.5')),
      'data.result[0].value',
      'node n1: 73.5 is outside 0–1',
    ],
    ['a negative value', vector(sample('n1', '-0.1')), 'data.result[0].value', 'node n1: -0.1 is outside 0–1'],
    [
      'a value that is not a number',
      vector(sample('n1', 'high')),
      'data.result[0].value',
      'node n1: "high" is not a number',
    ],
    [
      'a value without its time',
      vector({ metric: { instance: 'n1' }, value: '0.5' }),
      'data.result[0].value',
      'must be [time, "number"]',
    ],
    [
      'a sample without instance',
      vector(sample(undefined, '0.5', { node: 'n1' })),
      'data.result[0].metric.instance',
      'is missing: each sample must be labelled with its node name',
    ],
    [
      'two samples of one node (not aggregated by instance)',
      vector(sample('n1', '0.5', { cpu: '0' }), sample('n1', '0.7', { cpu: '1' })),
      'data.result[1].metric.instance',
      'node n1 has two samples (aggregate the query by instance)',
    ],
    [
      'an error answer',
      { status: 'error', errorType: 'bad_data', error: 'invalid parameter "query": 1:5: parse error' },
      'status',
      'the query failed (bad_data: invalid parameter "query": 1:5: parse error)',
    ],
    ['an answer that is not an object', 'ok', '', 'the answer is not a JSON object (got string "ok")'],
    ['no data', { status: 'success' }, 'data', 'must be an object'],
  ])('refuses %s, naming the field', (_, answer, field, problem) => {
    let error: unknown;
    try {
      nodeValuesFromAnswer(answer);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(FieldError);
    expect((error as FieldError).field).toBe(field);
    expect((error as FieldError).problem).toContain(problem);
  });
});
