// A spread group's count per eligible domain, kept sparse: only the domains with pods are stored, every other
// eligible domain reads 0. A hostname spread over 1,000 nodes whose workload has 10 pods is 1,000 domains and 10
// counts; holding the zeros too was most of what an analysis allocated at 30,000 pods (3,000 such groups, a Map of
// 1,000 entries each, built again for every plan of a paced run; issue 29).
//
// It is a ReadonlyMap of every eligible domain, zeros included, in the eligibility order, so readers that iterate or
// look up domains see what a dense Map gave them; skewTuple and skewBounds read the sparse form directly.

/** domain → its position in the eligibility order; one per distinct domain list (groups share their lists). */
const positions = new WeakMap<readonly string[], ReadonlyMap<string, number>>();

function positionsOf(domains: readonly string[]): ReadonlyMap<string, number> {
  let map = positions.get(domains);
  if (map === undefined) {
    const built = new Map<string, number>();
    for (let i = 0; i < domains.length; i++) built.set(domains[i]!, i);
    positions.set(domains, (map = built));
  }
  return map;
}

export class DomainCounts implements ReadonlyMap<string, number> {
  private readonly index: ReadonlyMap<string, number>;
  /** Positive counts only: a domain whose count drops to 0 is deleted, so `zeros` is size − nonZero.size. */
  private readonly nonZero: Map<string, number>;

  /** Bumped by every add(): what intoEmptyTuple's memo is valid for. */
  private changes = 0;
  private intoEmpty:
    | { changes: number; minDomains: number; minus: string | undefined; tuple: readonly [number, number, number] }
    | undefined;

  /** `domains`: every eligible domain, in order, shared and never changed (the eligibility cache's list). */
  constructor(
    readonly domains: readonly string[],
    nonZero?: ReadonlyMap<string, number>,
  ) {
    this.index = positionsOf(domains);
    this.nonZero = new Map<string, number>(nonZero ?? []);
  }

  get size(): number {
    return this.domains.length;
  }

  /** How many eligible domains have no pod. */
  get zeros(): number {
    return this.domains.length - this.nonZero.size;
  }

  has(domain: string): boolean {
    return this.index.has(domain);
  }

  get(domain: string): number | undefined {
    const n = this.nonZero.get(domain);
    if (n !== undefined) return n;
    return this.index.has(domain) ? 0 : undefined;
  }

  /** Adds `delta` to an eligible domain's count; a count never goes below 0. Throws for a domain not eligible. */
  add(domain: string, delta: number): void {
    if (!this.index.has(domain)) throw new RangeError(`${domain} is not an eligible domain of this group`);
    const n = (this.nonZero.get(domain) ?? 0) + delta;
    if (n < 0) throw new RangeError(`the count of ${domain} would go below 0`);
    this.changes++;
    if (n === 0) this.nonZero.delete(domain);
    else this.nonZero.set(domain, n);
  }

  /**
   * The skew tuple of a move out of `minus` into a domain without pods (the same for every such domain), computed
   * once per state of the counts (spread.ts).
   */
  intoEmptyTuple(
    minus: string | undefined,
    minDomains: number,
    compute: () => readonly [number, number, number],
  ): readonly [number, number, number] {
    const memo = this.intoEmpty;
    if (memo?.changes === this.changes && memo.minus === minus && memo.minDomains === minDomains) return memo.tuple;
    const tuple = compute();
    this.intoEmpty = { changes: this.changes, minDomains, minus, tuple };
    return tuple;
  }

  /** A changeable copy sharing the domain list. */
  copy(): DomainCounts {
    return new DomainCounts(this.domains, this.nonZero);
  }

  /** The domains with pods and their counts, in no particular order. */
  positive(): ReadonlyMap<string, number> {
    return this.nonZero;
  }

  forEach(callback: (value: number, key: string, map: ReadonlyMap<string, number>) => void, thisArg?: unknown): void {
    for (const domain of this.domains) callback.call(thisArg, this.nonZero.get(domain) ?? 0, domain, this);
  }

  *entries(): MapIterator<[string, number]> {
    for (const domain of this.domains) yield [domain, this.nonZero.get(domain) ?? 0];
  }

  keys(): MapIterator<string> {
    return this.domains.values();
  }

  *values(): MapIterator<number> {
    for (const domain of this.domains) yield this.nonZero.get(domain) ?? 0;
  }

  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.entries();
  }
}
