// Which node changes start cycles, and how the triggers reach the policies: every policy with nodeChanges on gets a
// debounced cycle; suspended, invalid and nodeChanges-off policies do not; a policy change starts only that policy.
import { describe, expect, it } from 'vitest';
import { ClusterCache, type PolicyEntry } from '../../src/operator/clusterCache.js';
import { nodeChange, Triggers, watchNodeChanges } from '../../src/operator/triggers.js';
import type { NodeInfo } from '../../src/model/types.js';
import { convertNode } from '../../src/snapshot/convert.js';
import { makeNode, makePolicy } from '../builders.js';
import { captureLogger, ManualClock } from './fakes.js';

const node = (b: ReturnType<typeof makeNode>): NodeInfo => convertNode(b.obj());
const base = () => makeNode('n1').label('topology.kubernetes.io/zone', 'a');

describe('nodeChange', () => {
  it.each([
    ['a new node', undefined, node(base()), 'node n1 added'],
    ['becoming Ready', node(base().notReady()), node(base()), 'node n1 became Ready'],
    ['uncordoned', node(base().unschedulable()), node(base()), 'node n1 became schedulable'],
    ['relabelled', node(base()), node(base().label('topology.kubernetes.io/zone', 'b')), 'labels of node n1 changed'],
    ['a label added', node(base()), node(base().label('disk', 'ssd')), 'labels of node n1 changed'],
    [
      'tainted',
      node(base()),
      node(base().taint('maint', 'yes', 'NoSchedule')),
      'taints of node n1 changed (none → maint=yes:NoSchedule)',
    ],
    [
      'untainted',
      node(base().taint('maint', 'yes', 'NoSchedule')),
      node(base()),
      'taints of node n1 changed (maint=yes:NoSchedule → none)',
    ],
    ['nothing that matters (a heartbeat)', node(base()), node(base()), undefined],
    ['going NotReady', node(base()), node(base().notReady()), undefined],
    ['cordoned', node(base()), node(base().unschedulable()), undefined],
  ])('%s', (_name, previous, next, expected) => {
    expect(nodeChange(previous, next)).toBe(expected);
  });
});

function policyEntry(name: string, spec: Record<string, unknown>, generation = 1): PolicyEntry {
  const raw = makePolicy(name, spec);
  (raw['metadata'] as Record<string, unknown>)['generation'] = generation;
  return new ClusterCache(new ManualClock()).convertPolicy(raw);
}

function setup(policies: PolicyEntry[]) {
  const clock = new ManualClock();
  const started: string[] = [];
  const { logger, lines } = captureLogger();
  const triggers = new Triggers({
    clock,
    logger,
    policies: () => policies,
    policy: (name) => policies.find((p) => p.name === name),
    start: (name, trigger, changes) => started.push(`${name} ${trigger}: ${changes.join('; ')}`),
  });
  return { clock, started, triggers, lines };
}

describe('Triggers', () => {
  it('a node change starts a debounced cycle of every policy that wants node changes', async () => {
    const policies = [
      policyEntry('fast', { triggers: { debounce: '1s' } }),
      policyEntry('slow', { triggers: { debounce: '5s' } }),
      policyEntry('off', { triggers: { nodeChanges: false } }),
      policyEntry('suspended', { suspend: true }),
      policyEntry('invalid', { mode: 'evict' }),
    ];
    const { clock, started, triggers, lines } = setup(policies);
    triggers.onNode(node(base()), node(base().taint('maint', 'yes', 'NoSchedule')));
    await clock.advance(500);
    triggers.onNode(undefined, node(makeNode('n2')));
    await clock.advance(1_000);
    expect(started).toEqual(['fast node: taints of node n1 changed (none → maint=yes:NoSchedule); node n2 added']);
    await clock.advance(10_000);
    expect(started).toHaveLength(2);
    expect(started[1]).toMatch(/^slow node: /);
    expect(
      lines.filter((l) => l.msg === 'node change: starting a cycle').map((l) => [l['policy'], l['waitedMs']]),
    ).toEqual([
      ['fast', 1_500],
      ['slow', 5_500],
    ]);
  });

  it('ignores node updates that change nothing that matters', async () => {
    const { clock, started, triggers } = setup([policyEntry('p', {})]);
    triggers.onNode(node(base()), node(base()));
    await clock.advance(60_000);
    expect(started).toEqual([]);
  });

  it('a policy created or edited starts that policy only, after its debounce', async () => {
    const a = policyEntry('a', {}, 3);
    const { clock, started, triggers } = setup([a, policyEntry('b', {})]);
    triggers.onPolicy(a, 2);
    await clock.advance(2_000);
    expect(started).toEqual(['a policy: spec of policy a changed (generation 2 → 3)']);
  });

  it('forget drops the waiting changes of a deleted policy; stop drops everything', async () => {
    const { clock, started, triggers } = setup([policyEntry('a', {}), policyEntry('b', {})]);
    triggers.onNode(undefined, node(base()));
    triggers.forget('a');
    await clock.advance(2_000);
    expect(started.map((s) => s.split(' ')[0])).toEqual(['b']);
    triggers.onNode(undefined, node(base()));
    triggers.stop();
    await clock.advance(2_000);
    expect(started).toHaveLength(1);
  });
});

describe('watchNodeChanges', () => {
  it('reports changes with the node as it was, only once the node list has synced', () => {
    const cache = new ClusterCache(new ManualClock());
    let synced = false;
    const seen: Array<[string | undefined, string]> = [];
    const handlers = watchNodeChanges(
      cache.nodeHandlers,
      (name) => cache.node(name),
      () => synced,
      (previous, next) => seen.push([previous?.labels['disk'], next.labels['disk'] ?? '-']),
    );
    const upsert = (b: ReturnType<typeof makeNode>): void => {
      const raw = b.obj();
      handlers.upsert({ metadata: { name: 'n1' }, value: convertNode(raw) });
    };
    upsert(makeNode('n1').label('disk', 'hdd'));
    expect(seen).toEqual([]);
    synced = true;
    upsert(makeNode('n1').label('disk', 'ssd'));
    expect(seen).toEqual([['hdd', 'ssd']]);
    expect(cache.node('n1')?.labels['disk']).toBe('ssd');
  });
});
