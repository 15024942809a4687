// The closed loop's queue (src/operator/eviction/landingOrder.ts): lanes send in the order their plans made them; a lane
// waits for a landing only when a related replacement is on its way, or when landing first it could spoil an earlier
// replacement's prediction: more overtaking it than its slack (by default, one fewer than its possible landings).
import { describe, expect, it } from 'vitest';
import type { PodInfo } from '../../../src/model/types.js';
import { LandingOrder, type Turn } from '../../../src/operator/eviction/landingOrder.js';
import { buildSnapshot, makePod } from '../../builders.js';

const pods = buildSnapshot([
  makePod('a', 'shop').deployment('a').labels({ app: 'a' }),
  makePod('b', 'shop').deployment('b').labels({ app: 'b' }),
  makePod('c', 'shop').deployment('c').labels({ app: 'c' }),
  makePod('a2', 'shop').deployment('a').labels({ app: 'a' }),
]).pods;
const pod = (name: string): PodInfo => pods.find((p) => p.name === name)!;

/** What waitTurn answers now: 'waits' when it has not settled after the pending promises ran. */
async function turnNow(order: LandingOrder, ticket: number): Promise<Turn | 'waits'> {
  const signal = new AbortController().signal;
  const result = await Promise.race([
    order.waitTurn(ticket, signal),
    new Promise<'waits'>((r) => setTimeout(() => r('waits'), 5)),
  ]);
  return result;
}

/** Sends the lane of `ticket` as the executor does: its eviction is queued, the next lane's turn comes. */
function send(order: LandingOrder, ticket: number): void {
  order.landingAwaited(ticket);
  order.settle(ticket);
}

describe('the closed loop queue', () => {
  it('unrelated replacements with room to spare: each lane sends without waiting for a landing', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1', 'n2', 'n3']);
    const b = order.enqueue(pod('b'), ['n1', 'n2', 'n3']);
    expect(await turnNow(order, b)).toBe('waits'); // a's turn first
    expect(await turnNow(order, a)).toBe('go');
    send(order, a);
    expect(await turnNow(order, b)).toBe('go');
  });

  it('an earlier replacement with one possible landing: a later one that may take that node waits until it lands', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1']);
    const b = order.enqueue(pod('b'), ['n1', 'n2']);
    const c = order.enqueue(pod('c'), ['n3']);
    send(order, a);
    expect(await turnNow(order, b)).toBe('waits');
    order.landingKnown(pod('a'));
    expect(await turnNow(order, b)).toBe('go');
    send(order, b);
    expect(await turnNow(order, c)).toBe('go'); // n3 is no possible landing of b
  });

  it('two possible landings: one later replacement may crowd it, a second may not until it lands', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1', 'n2']);
    const b = order.enqueue(pod('b'), ['n1']);
    const c = order.enqueue(pod('c'), ['n2', 'n3']);
    send(order, a);
    expect(await turnNow(order, b)).toBe('go');
    send(order, b);
    expect(await turnNow(order, c)).toBe('waits'); // b may take n1, c n2: a would have nowhere it was predicted
    order.landingKnown(pod('a'));
    expect(await turnNow(order, c)).toBe('go'); // b, still on its way, keeps n1: c cannot land there
  });

  it('many possible landings but a slack of one (few of them hold the top for sure): a second later one waits', async () => {
    const order = new LandingOrder();
    // 250 nodes named, but only two of them at the top score for certain and one replacement counted on already.
    const nodes = Array.from({ length: 250 }, (_, i) => `n${i}`);
    const a = order.enqueue(pod('a'), nodes, 1);
    const b = order.enqueue(pod('b'), nodes);
    const c = order.enqueue(pod('c'), nodes);
    send(order, a);
    expect(await turnNow(order, b)).toBe('go');
    send(order, b);
    expect(await turnNow(order, c)).toBe('waits'); // b and c landing first could drain a's top level
    order.landingKnown(pod('a'));
    expect(await turnNow(order, c)).toBe('go');
  });

  it('every feasible node predicted (an infinite slack): later ones never wait for it, one possible landing or not', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1'], Infinity);
    const b = order.enqueue(pod('b'), ['n1', 'n2']);
    send(order, a);
    expect(await turnNow(order, b)).toBe('go');
  });

  it('a related replacement (the same workload) on its way: the lane waits for its landing whatever the nodes', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1', 'n2', 'n3']);
    const a2 = order.enqueue(pod('a2'), ['n4']);
    send(order, a);
    expect(await turnNow(order, a2)).toBe('waits');
    order.landingKnown(pod('a'));
    expect(await turnNow(order, a2)).toBe('go');
  });

  it('a tie taken the other way makes only related predictions stale; a landing elsewhere makes all of them stale', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1', 'n2']);
    const a2 = order.enqueue(pod('a2'), ['n1', 'n2']);
    const b = order.enqueue(pod('b'), ['n3']);
    send(order, a);
    order.invalidateRelated(pod('a'));
    expect(await turnNow(order, a2)).toBe('stale');
    order.settle(a2);
    expect(await turnNow(order, b)).toBe('go');
    order.invalidate();
    expect(await turnNow(order, b)).toBe('stale');
  });

  it('what goes stale while a plan is made applies to the lanes it queues when done, and only to those it concerns', async () => {
    const order = new LandingOrder();
    const a = order.enqueue(pod('a'), ['n1', 'n2']);
    send(order, a);
    order.planBegins();
    // a's replacement takes a tie the other way while the plan (made with it on its way) is being made.
    order.invalidateRelated(pod('a'));
    const a2 = order.enqueue(pod('a2'), ['n1', 'n2']);
    const b = order.enqueue(pod('b'), ['n3']);
    order.planDone();
    expect(await turnNow(order, a2)).toBe('stale');
    order.settle(a2);
    expect(await turnNow(order, b)).toBe('go');
    send(order, b);
    // A landing elsewhere during the next plan: every lane that plan queues is stale, none queued after it is done.
    order.planBegins();
    order.invalidate();
    const c = order.enqueue(pod('c'), ['n4']);
    order.planDone();
    expect(await turnNow(order, c)).toBe('stale');
    order.settle(c);
    order.planBegins();
    order.planDone();
    const c2 = order.enqueue(pod('c'), ['n5']);
    expect(await turnNow(order, c2)).toBe('go');
  });
});
