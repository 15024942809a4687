// The sparse domain counts against the dense Map they replace: every read a reader makes (size, get, iteration in
// the eligibility order) and the skew measures computed from the sparse form agree with the dense one, zeros,
// minDomains and a moved pod's domains included.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { skewBounds } from '../../src/analysis/topologySpread.js';
import { DomainCounts } from '../../src/model/domainCounts.js';
import { skewTuple } from '../../src/model/spread.js';

const DOMAINS = ['node-a', 'node-b', 'node-c', 'node-d', 'node-e', 'node-f'];

/** Both forms of one group's counts: `n` eligible domains, some of them with pods. */
const counts = fc
  .tuple(fc.integer({ min: 1, max: DOMAINS.length }), fc.array(fc.nat({ max: 4 }), { minLength: 6, maxLength: 6 }))
  .map(([n, values]) => {
    const domains = DOMAINS.slice(0, n);
    const dense = new Map(domains.map((d, i) => [d, values[i]!]));
    const sparse = new DomainCounts(domains);
    domains.forEach((d, i) => values[i]! > 0 && sparse.add(d, values[i]!));
    return { dense, sparse };
  });

const domainOrNone = fc.option(fc.constantFrom(...DOMAINS, 'zone-x'), { nil: undefined });

describe('DomainCounts', () => {
  it('reads as the dense Map: size, get, has and every entry in order', () => {
    fc.assert(
      fc.property(counts, ({ dense, sparse }) => {
        expect(sparse.size).toBe(dense.size);
        expect([...sparse]).toEqual([...dense]);
        expect([...sparse.values()]).toEqual([...dense.values()]);
        expect([...sparse.keys()]).toEqual([...dense.keys()]);
        for (const d of [...DOMAINS, 'zone-x']) {
          expect(sparse.get(d)).toBe(dense.get(d));
          expect(sparse.has(d)).toBe(dense.has(d));
        }
      }),
    );
  });

  it('gives the skew tuple and bounds of the dense form, with and without a pod moved', () => {
    fc.assert(
      fc.property(
        counts,
        domainOrNone,
        domainOrNone,
        fc.integer({ min: 1, max: 8 }),
        ({ dense, sparse }, m, p, minDomains) => {
          // A move takes its pod from a domain that holds one (as the planner's moves do).
          const minus = m !== undefined && (dense.get(m) ?? 0) > 0 ? m : undefined;
          expect(skewTuple(sparse, minDomains, minus, p)).toEqual(skewTuple(dense, minDomains, minus, p));
          expect(skewBounds(sparse, minDomains)).toEqual(skewBounds(dense, minDomains));
        },
      ),
    );
  });

  it('a memo of moves into empty domains follows every change of the counts', () => {
    fc.assert(
      fc.property(
        counts,
        fc.array(fc.tuple(fc.constantFrom(...DOMAINS), fc.constantFrom(...DOMAINS)), { maxLength: 6 }),
        fc.integer({ min: 1, max: 8 }),
        ({ dense, sparse }, moves, minDomains) => {
          for (const [from, to] of moves) {
            // Every move out of each domain with pods into each domain, before and after one pod really moves.
            // Forward and back: the memo left by the last check is the first one the next round reads.
            const withPods = [...dense.keys()].filter((d) => dense.get(d)! > 0);
            for (const m of [...withPods, ...withPods.reverse()]) {
              for (const p of dense.keys()) {
                expect(skewTuple(sparse, minDomains, m, p)).toEqual(skewTuple(dense, minDomains, m, p));
              }
            }
            if ((dense.get(from) ?? 0) === 0 || !dense.has(to)) continue;
            dense.set(from, dense.get(from)! - 1);
            dense.set(to, dense.get(to)! + 1);
            sparse.add(from, -1);
            sparse.add(to, 1);
          }
        },
      ),
    );
  });

  it('a copy changes alone; a count back at 0 reads 0 and counts among the zeros', () => {
    const counts = new DomainCounts(['a', 'b', 'c']);
    counts.add('a', 2);
    const copy = counts.copy();
    copy.add('a', -2);
    copy.add('c', 1);
    expect([...counts]).toEqual([
      ['a', 2],
      ['b', 0],
      ['c', 0],
    ]);
    expect([...copy]).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 1],
    ]);
    expect(copy.zeros).toBe(2);
    expect(() => copy.add('d', 1)).toThrow(/not an eligible domain/);
    expect(() => copy.add('b', -1)).toThrow(/below 0/);
  });
});
