// Loop detection: which topology keys a move was meant to change, and when a replacement landed back.
import { describe, expect, it } from 'vitest';
import {
  landedBack,
  loopKeysFor,
  waitForReplacement,
  type EvictionRecord,
} from '../../../src/operator/eviction/pacing.js';
import { buildSnapshot, makeNode, makePod, ZONE, HOSTNAME } from '../../builders.js';
import { deletePod, newCache } from '../cacheFixtures.js';
import { flush, ManualClock } from '../fakes.js';

const snapshot = buildSnapshot([
  makeNode('a1').zone('zone-a'),
  makeNode('a2').zone('zone-a'),
  makeNode('c1').zone('zone-c'),
  makePod('web-1')
    .labels({ app: 'web' })
    .node('a1')
    .spread({ topologyKey: ZONE, maxSkew: 1, labelSelector: { matchLabels: { app: 'web' } } }),
]);
const node = (name: string) => snapshot.nodes.find((n) => n.name === name)!;
const pod = snapshot.pods[0]!;

function record(keys: string[]): EvictionRecord {
  return {
    workload: 'default/Pod/web-1',
    pod,
    strategy: 'TopologySpread',
    from: node('a1'),
    loopKeys: keys,
    readyBefore: 1,
    podsBefore: new Set([pod.uid]),
    pdb: undefined,
  };
}

describe('loop detection', () => {
  it('a spread move is meant to change the domains that differ between source and target', () => {
    expect(loopKeysFor(pod, ZONE, node('a1'), node('c1'), [])).toEqual([ZONE]);
    expect(loopKeysFor(pod, ZONE, node('a1'), node('a2'), [])).toEqual([]);
    expect(loopKeysFor(pod, ZONE, node('a1'), undefined, [])).toEqual([ZONE]);
    expect(loopKeysFor(pod, undefined, node('a1'), node('c1'), [])).toEqual([]);
  });

  it('a replacement on the same node, or back in a domain the move was meant to leave, is a loop', () => {
    expect(landedBack(record([ZONE]), node('a1'), 'a1')).toBe('node a1');
    expect(landedBack(record([ZONE]), node('a2'), 'a2')).toBe(`${ZONE}=zone-a`);
    expect(landedBack(record([ZONE]), node('c1'), 'c1')).toBeUndefined();
    expect(landedBack(record([]), node('a2'), 'a2')).toBeUndefined();
    expect(landedBack(record([HOSTNAME]), node('a2'), 'a2')).toBeUndefined();
  });
});

describe('pacing', () => {
  it.each([
    ['forward', 3_600_000],
    ['backward', -3_600_000],
  ])('a wall-clock step of 1 h %s neither ends nor stretches the replacement timeout', async (_, step) => {
    const clock = new ManualClock();
    const cache = newCache(clock, [makeNode('a1').zone('zone-a'), makePod('web-1').labels({ app: 'web' }).node('a1')]);
    const evicted = cache.pod('default', 'web-1')!;
    deletePod(cache, 'default', 'web-1');
    let outcome: string | undefined;
    void waitForReplacement(
      cache,
      { ...record([]), pod: evicted, workload: 'default/Pod/web-1' },
      { timeoutMs: 60_000, signal: new AbortController().signal, onLoop: () => undefined },
    ).then((o) => (outcome = o.kind));
    await flush();
    clock.jumpWall(step);
    await clock.advance(59_000);
    expect(outcome).toBeUndefined();
    await clock.advance(1_000);
    expect(outcome).toBe('not_ready');
  });
});
