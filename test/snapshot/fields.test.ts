// sameJson decides whether a pod may reuse what the previous pod converted to: equal raw JSON, key order aside.
import { describe, expect, it } from 'vitest';
import { sameJson } from '../../src/snapshot/convert/fields.js';

describe('sameJson', () => {
  it.each([
    ['the same keys in another order', { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, true],
    ['a key only the second has', { a: 1 }, { a: 1, b: 2 }, false],
    ['a key only the first has', { a: 1, b: 2 }, { a: 1 }, false],
    ['an undefined value against a missing key', { a: undefined }, {}, false],
    ['as many keys, but other ones', { a: 1 }, { b: 1 }, false],
    ['a nested difference', { a: { b: 'x' } }, { a: { b: 'y' } }, false],
    ['lists in another order', [1, 2], [2, 1], false],
    ['a list against an object with index keys', [1], { 0: 1 }, false],
    ['null against an empty object', null, {}, false],
    ['absent on both sides', undefined, undefined, true],
  ])('%s', (_name, a, b, same) => {
    expect(sameJson(a, b)).toBe(same);
    expect(sameJson(b, a)).toBe(same);
  });
});
