// A memo that cannot grow without bound: past its limit it is cleared and refilled. Clearing only costs sharing, never
// correctness (a cached value is what converting the same raw shape again would give), so a long-running operator that
// sees shapes come and go (a new pod-template-hash per rollout) does not leak.
//
// A Map whose set() is bounded: get() stays the built-in one, which matters on the pod converter's hot path.

const DEFAULT_LIMIT = 50_000;

export class BoundedCache<K, V> extends Map<K, V> {
  constructor(private readonly limit = DEFAULT_LIMIT) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.limit) this.clear();
    return super.set(key, value);
  }
}
