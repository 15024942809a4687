// collectPlanGarbage (src/v8Flags.ts): under the memory-first options a paced run's plan ends with a full collection
// once the heap has grown by 48 MiB since the last one; with V8's defaults it never collects.
import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { collectPlanGarbage, noteAppliedFlags, optimizingForSize, planSlice } from '../src/v8Flags.js';

const MiB = 1024 * 1024;

describe('collectPlanGarbage', () => {
  it('with V8 defaults (speed first) collects nothing, however the heap grew', () => {
    expect(optimizingForSize()).toBe(false);
    expect(collectPlanGarbage(() => 4096 * MiB)).toBe(false);
  });

  it('under --optimize-for-size collects once the heap grew by 48 MiB since the last collection, and frees the garbage', () => {
    noteAppliedFlags(['--optimize-for-size']);
    expect(collectPlanGarbage(() => 40 * MiB)).toBe(false);
    // A plan's garbage: 64 MiB of arrays nothing refers to any more.
    let garbage: number[][] | undefined = Array.from({ length: 64 }, () => new Array<number>(MiB / 8).fill(1.5));
    expect(garbage.length).toBe(64);
    garbage = undefined;
    const before = getHeapStatistics().used_heap_size;
    // The heap as read before the collection (grown past the threshold whatever the test process held before), then
    // as it is after it.
    const readings: number[] = [];
    const used = (): number => {
      const now = getHeapStatistics().used_heap_size;
      readings.push(now);
      return readings.length === 1 ? now + 100 * MiB : now;
    };
    expect(collectPlanGarbage(used)).toBe(true);
    const after = readings[1]!;
    expect(after).toBeLessThan(before - 32 * MiB);
    // Counted from what the heap held after that collection: 20 MiB more is not enough, 60 MiB more is.
    const base = after;
    expect(collectPlanGarbage(() => base + 20 * MiB)).toBe(false);
    expect(collectPlanGarbage(() => base + 60 * MiB)).toBe(true);
  });

  it("a slice of a plan returns its work's result, and the memory-first options hold after it", () => {
    // Still applied from the test above (the module's record of the flags `run` set).
    expect(planSlice(() => 42)).toBe(42);
    expect(optimizingForSize()).toBe(true);
  });
});
