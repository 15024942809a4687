// The debounce of triggers, on a manual clock: a key fires once no change has arrived for the debounce, at the latest
// 10 × debounce after the first change; changes are coalesced; keys are independent.
import { describe, expect, it } from 'vitest';
import { Debouncer, type Fired } from '../../src/operator/debounce.js';
import { ManualClock } from './fakes.js';

function setup(): { clock: ManualClock; debouncer: Debouncer; fired: Array<Fired & { at: number }> } {
  const clock = new ManualClock();
  const fired: Array<Fired & { at: number }> = [];
  const debouncer = new Debouncer(clock, (f) => fired.push({ ...f, at: clock.now() - start }));
  const start = clock.now();
  return { clock, debouncer, fired };
}

/** Pokes `key` at each offset (ms from the start), then lets time run far enough for everything to fire. */
async function run(offsets: readonly number[], debounceMs: number): Promise<number[]> {
  const { clock, debouncer, fired } = setup();
  let now = 0;
  for (const at of offsets) {
    await clock.advance(at - now);
    now = at;
    debouncer.poke('p', 'node', `change at ${at}`, debounceMs);
  }
  await clock.advance(100 * debounceMs);
  return fired.map((f) => f.at);
}

describe('Debouncer', () => {
  it.each([
    ['one change fires after the debounce', [0], 2_000, [2_000]],
    ['a burst fires once, the debounce after its last change', [0, 500, 1_000, 1_900], 2_000, [3_900]],
    ['two bursts further apart than the debounce fire twice', [0, 100, 5_000], 2_000, [2_100, 7_000]],
    [
      'a steady stream fires at 10 × debounce after the first change',
      Array.from({ length: 40 }, (_, i) => i * 1_000),
      2_000,
      [20_000, 40_000],
    ],
    ['a zero debounce fires each change at once', [0, 0], 0, [0, 0]],
  ])('%s', async (_name, offsets, debounceMs, expected) => {
    expect(await run(offsets, debounceMs)).toEqual(expected);
  });

  it('coalesces: one fire lists the changes, keeps the first trigger kind and the first change time', async () => {
    const { clock, debouncer, fired } = setup();
    const start = clock.now();
    debouncer.poke('p', 'node', 'node n1 added', 1_000);
    await clock.advance(300);
    debouncer.poke('p', 'policy', 'policy p spec changed', 1_000);
    expect(debouncer.waiting('p')).toBe(true);
    await clock.advance(999);
    expect(fired).toHaveLength(0);
    await clock.advance(1);
    expect(fired).toEqual([
      { key: 'p', trigger: 'node', changes: ['node n1 added', 'policy p spec changed'], since: start, at: 1_300 },
    ]);
    expect(debouncer.waiting('p')).toBe(false);
  });

  it('keeps at most 10 changes and says how many more', async () => {
    const { clock, debouncer, fired } = setup();
    for (let i = 0; i < 13; i++) debouncer.poke('p', 'node', `c${i}`, 1_000);
    await clock.advance(1_000);
    expect(fired[0]!.changes).toHaveLength(11);
    expect(fired[0]!.changes.at(-1)).toBe('and 3 more');
  });

  it('keys fire independently, each on its own debounce', async () => {
    const { clock, debouncer, fired } = setup();
    debouncer.poke('slow', 'node', 'n', 5_000);
    debouncer.poke('fast', 'node', 'n', 1_000);
    await clock.advance(10_000);
    expect(fired.map((f) => [f.key, f.at])).toEqual([
      ['fast', 1_000],
      ['slow', 5_000],
    ]);
  });

  it('cancel and stop drop what is waiting; stop ignores later changes', async () => {
    const { clock, debouncer, fired } = setup();
    debouncer.poke('a', 'node', 'n', 1_000);
    debouncer.poke('b', 'node', 'n', 1_000);
    debouncer.cancel('a');
    await clock.advance(2_000);
    expect(fired.map((f) => f.key)).toEqual(['b']);
    debouncer.poke('c', 'node', 'n', 1_000);
    debouncer.stop();
    debouncer.poke('d', 'node', 'n', 1_000);
    await clock.advance(5_000);
    expect(fired.map((f) => f.key)).toEqual(['b']);
    expect(clock.waiting).toBe(0);
  });
});
