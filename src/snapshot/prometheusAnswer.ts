// The answer of Prometheus's instant-query API (`GET /api/v1/query`) for `usage: Prometheus`, read as the descheduler
// reads it: a vector with one sample per node, labelled `instance` with the node's name, each value in 0–1. Anything
// else is refused whole, naming what is wrong (the caller turns it into the policy's Degraded reason): an error
// answer, another result type (a scalar, a matrix: the query is not an instant vector), a sample without
// `instance`, two samples for one node (the query does not aggregate by instance), a value that is not a number,
// NaN, or outside 0–1 (a percentage where a fraction is expected), and an empty vector (nothing to classify by).
import { FieldError } from '../errors.js';
import { isObj, typeName } from '../model/rawJson.js';

/** Node name → the query's value (0–1), from a decoded answer; FieldError names the part that is wrong. */
export function nodeValuesFromAnswer(answer: unknown): Map<string, number> {
  if (!isObj(answer)) throw new FieldError('', `the answer is not a JSON object (got ${typeName(answer)})`);
  if (answer['status'] !== 'success') {
    const kind = typeof answer['errorType'] === 'string' ? `${answer['errorType']}: ` : '';
    const error = typeof answer['error'] === 'string' ? answer['error'] : 'no error text';
    throw new FieldError('status', `the query failed (${kind}${error})`);
  }
  const data = answer['data'];
  if (!isObj(data)) throw new FieldError('data', `must be an object (got ${typeName(data)})`);
  const type = data['resultType'];
  if (type !== 'vector') {
    throw new FieldError(
      'data.resultType',
      `must be vector, one sample per node (got ${typeof type === 'string' ? type : typeName(type)})`,
    );
  }
  const result = data['result'];
  if (!Array.isArray(result)) throw new FieldError('data.result', `must be a list (got ${typeName(result)})`);
  if (result.length === 0) throw new FieldError('data.result', 'the query returned no samples');
  const out = new Map<string, number>();
  result.forEach((sample: unknown, i) => {
    const at = `data.result[${i}]`;
    if (!isObj(sample)) throw new FieldError(at, `must be an object (got ${typeName(sample)})`);
    const metric = sample['metric'];
    const node = isObj(metric) ? metric['instance'] : undefined;
    if (typeof node !== 'string' || node === '') {
      throw new FieldError(`${at}.metric.instance`, 'is missing: each sample must be labelled with its node name');
    }
    const pair = sample['value'];
    const text: unknown = Array.isArray(pair) && pair.length === 2 ? (pair as unknown[])[1] : undefined;
    if (typeof text !== 'string') throw new FieldError(`${at}.value`, 'must be [time, "number"]');
    // Prometheus writes floats as Go does: NaN, +Inf, -Inf, or a decimal.
    const value = text === 'NaN' ? NaN : text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text);
    if (text.trim() === '' || (Number.isNaN(value) && text !== 'NaN')) {
      throw new FieldError(`${at}.value`, `node ${node}: "${text}" is not a number`);
    }
    if (Number.isNaN(value)) throw new FieldError(`${at}.value`, `node ${node}: the value is NaN`);
    if (value < 0 || value > 1) {
      throw new FieldError(`${at}.value`, `node ${node}: ${text} is outside 0–1 (the query must give a fraction)`);
    }
    if (out.has(node)) {
      throw new FieldError(`${at}.metric.instance`, `node ${node} has two samples (aggregate the query by instance)`);
    }
    out.set(node, value);
  });
  return out;
}
