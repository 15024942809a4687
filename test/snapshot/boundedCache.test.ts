// The converters' memo: bounded, so a long-running operator cannot leak through it.
import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/snapshot/convert/boundedCache.js';

describe('BoundedCache', () => {
  it('keeps entries up to its limit, then starts again from empty', () => {
    const cache = new BoundedCache<string, number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect([cache.get('a'), cache.get('b')]).toEqual([1, 2]);
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, undefined, 3]);
  });
});
