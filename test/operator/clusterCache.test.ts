// The cache the cycle plans from: snapshot allowances as the Eviction API would see them, ready counts per
// workload, keyed waiting, PriorityClasses arriving after pods, and policy entries.
import { describe, expect, it } from 'vitest';
import { ClusterCache, pdbWaitKey, workloadWaitKey } from '../../src/operator/clusterCache.js';
import {
  makeCsiNode,
  makeNode,
  makePdb,
  makePersistentVolume,
  makePod,
  makePolicy,
  makePriorityClass,
  makePvc,
  makeStorageClass,
} from '../builders.js';
import { apply, deletePod, newCache } from './cacheFixtures.js';
import { ManualClock } from './fakes.js';

const web = (name: string) => makePod(name, 'shop').deployment('web').node('n1');

describe('cluster cache', () => {
  it('knows when a node was added or changed what the scheduler filters and scores on, and nothing else', async () => {
    const clock = new ManualClock();
    const cache = newCache(clock, [makeNode('n1').zone('zone-a')]);
    const planned = clock.now();
    await clock.advance(1000);
    // A status write that changes nothing the scheduler reads (the same node again).
    apply(cache, [makeNode('n1').zone('zone-a')]);
    expect(cache.nodeChangedAfter('n1', planned)).toBe(false);
    // Back from NotReady: the lifecycle controller's taint is gone. Added later: a new node.
    apply(cache, [makeNode('n1').zone('zone-a').taint('node.kubernetes.io/unreachable', undefined, 'NoSchedule')]);
    const tainted = clock.now();
    await clock.advance(1000);
    apply(cache, [makeNode('n1').zone('zone-a'), makeNode('n2').zone('zone-a')]);
    expect(cache.nodeChangedAfter('n1', planned)).toBe(true);
    expect(cache.nodeChangedAfter('n1', tainted)).toBe(true);
    expect(cache.nodeChangedAfter('n2', tainted)).toBe(true);
    expect(cache.nodeChangedAfter('n1', clock.now())).toBe(false);
    apply(cache, [makeNode('n1').zone('zone-a').unschedulable()]);
    const cordoned = clock.now();
    await clock.advance(1000);
    apply(cache, [makeNode('n1').zone('zone-a').unschedulable().label('team', 'a')]);
    expect(cache.nodeChangedAfter('n1', cordoned)).toBe(true);
    expect(cache.nodeChangedAfter('gone', 0)).toBe(false);
  });

  it('resolves volume topology per snapshot, so a claim bound after its pod arrived still counts', () => {
    const cache = newCache(new ManualClock(), [
      makeNode('n1').zone('zone-a'),
      makePod('db-0', 'shop').owner('StatefulSet', 'db').node('n1').pvc('data-db-0'),
      makePvc('data-db-0', 'shop').storageClass('gp3'),
      makeStorageClass('gp3'),
    ]);
    const topology = () => cache.snapshot().pods[0]!.volumeTopology.map((v) => `${v.source}: ${v.text}`);
    expect(topology()).toEqual([]);
    apply(cache, [
      makePvc('data-db-0', 'shop').storageClass('gp3').boundTo('pv-1'),
      makePersistentVolume('pv-1').zone('zone-a'),
    ]);
    expect(topology()).toEqual(['PersistentVolume pv-1: topology.kubernetes.io/zone=zone-a']);
    cache.persistentVolumeHandlers.remove({ metadata: { name: 'pv-1' }, value: undefined });
    expect(topology()).toEqual([]);
  });

  it('joins CSINode attach limits to their nodes per snapshot, whichever arrives first', () => {
    const cache = newCache(new ManualClock(), [makeCsiNode('n2', { 'ebs.csi.example': 1 }), makeNode('n1')]);
    const limits = () => cache.snapshot().nodes.map((n) => [n.name, n.csiVolumeLimits]);
    expect(limits()).toEqual([['n1', undefined]]);
    apply(cache, [makeNode('n2')]);
    expect(limits()).toEqual([
      ['n1', undefined],
      ['n2', { 'ebs.csi.example': 1 }],
    ]);
    cache.csiNodeHandlers.remove({ metadata: { name: 'n2' }, value: undefined });
    expect(limits()).toEqual([
      ['n1', undefined],
      ['n2', undefined],
    ]);
  });

  it('gives a budget the allowance the Eviction API would: 0 while its status is missing or stale, minus debits', () => {
    const clock = new ManualClock();
    const fresh = makePdb('fresh', 'shop').selector({ app: 'a' }).maxUnavailable(1).allowed(2);
    const noStatus = makePdb('nostatus', 'shop').selector({ app: 'b' }).maxUnavailable(1);
    const stale = makePdb('stale', 'shop').selector({ app: 'c' }).maxUnavailable(1).allowed(1).obj();
    (stale['metadata'] as Record<string, unknown>)['generation'] = 2;
    const cache = newCache(clock, [fresh, noStatus, stale]);
    const allowed = (debit: number) =>
      Object.fromEntries(cache.snapshot(() => debit).pdbs.map((p) => [p.name, p.statusAllowed]));
    expect(allowed(0)).toEqual({ fresh: 2, nostatus: 0, stale: 0 });
    expect(allowed(1)).toEqual({ fresh: 1, nostatus: 0, stale: 0 });
    expect(allowed(5)).toEqual({ fresh: 0, nostatus: 0, stale: 0 });
  });

  it('counts Ready, non-terminating pods per workload', () => {
    const cache = newCache(new ManualClock(), [web('w1'), web('w2'), web('w3').notReady(), web('w4').terminating()]);
    expect(cache.workloadPods('shop/Deployment/web')).toHaveLength(4);
    expect(cache.readyCount('shop/Deployment/web')).toBe(2);
    deletePod(cache, 'shop', 'w1');
    expect(cache.readyCount('shop/Deployment/web')).toBe(1);
  });

  it('wakes a waiter when a change to its key makes the condition true; times out otherwise', async () => {
    const clock = new ManualClock();
    const cache = newCache(clock, [web('w1')]);
    const key = 'shop/Deployment/web';
    const ready2 = cache.waitUntil([workloadWaitKey(key)], () => cache.readyCount(key) >= 2, 10_000);
    apply(cache, [makePod('other', 'shop').deployment('api').node('n1')]);
    apply(cache, [web('w2')]);
    expect(await ready2).toBe(true);
    const never = cache.waitUntil([pdbWaitKey('shop/web')], () => false, 1000);
    await clock.advance(1000);
    expect(await never).toBe(false);
    const abort = new AbortController();
    const aborted = cache.waitUntil([workloadWaitKey(key)], () => false, 60_000, abort.signal);
    abort.abort();
    expect(await aborted).toBe(false);
  });

  it('re-resolves the priority of pods without spec.priority when their PriorityClass arrives later', () => {
    const cache = newCache(new ManualClock(), [makeNode('n1'), web('w1').priorityClass('high')]);
    expect(cache.snapshot().pods[0]?.priority).toBe(0);
    apply(cache, [makePriorityClass('high', 1000)]);
    expect(cache.snapshot().pods[0]?.priority).toBe(1000);
    apply(cache, [web('w2').priority(5)]);
    expect(cache.snapshot().pods.find((p) => p.name === 'w2')?.priority).toBe(5);
  });

  it('parses policies on arrival, keeping the problems of an invalid one and the status it carries', () => {
    const cache = new ClusterCache(new ManualClock());
    const events: string[] = [];
    cache.onPolicy((event, entry) => events.push(`${event} ${entry.name} ${entry.policy ? 'valid' : 'invalid'}`));
    const valid = makePolicy('ok', { mode: 'Evict' });
    valid['status'] = { totals: { evicted: 4, failed: 1 }, lastRunTime: '2026-01-01T00:00:00Z' };
    apply(cache, [valid, makePolicy('bad', { mode: 'Sometimes' })]);
    expect(events).toEqual(['upsert ok valid', 'upsert bad invalid']);
    expect(cache.policy('ok')?.status).toMatchObject({
      totals: { evicted: 4, failed: 1 },
      lastRunTime: '2026-01-01T00:00:00Z',
    });
    expect(cache.policy('bad')?.problems.map((p) => p.field)).toEqual(['spec.mode']);
  });
});
