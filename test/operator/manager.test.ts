// The manager's order (docs/adr/0016): caches, then what needs neither, then the elector, then what needs leadership;
// stopped in the exact reverse, each stop awaited before the next begins, also when one fails or start never ran.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Manager, type Runnable } from '../../src/operator/manager.js';

type Role = 'cache' | 'other' | 'elector' | 'leader';

/** A runnable that writes `start name` and `stop name` to the journal; its stop resolves a turn of the loop later. */
function recording(journal: string[], name: string, role: Role, failStop = false): Runnable {
  return {
    name,
    ...(role === 'cache' ? { cache: true } : {}),
    ...(role === 'elector' ? { elector: true } : {}),
    ...(role === 'leader' ? { needLeaderElection: true } : {}),
    start: () => void journal.push(`start ${name}`),
    stop: async () => {
      await new Promise((resolve) => setImmediate(resolve));
      journal.push(`stop ${name}`);
      if (failStop) throw new Error(`${name} failed to stop`);
    },
  };
}

describe('Manager', () => {
  it.each<{ name: string; added: Array<[string, Role]>; started: string[] }>([
    {
      name: 'the operator’s parts added in wiring order start caches, elector, then cycles',
      added: [
        ['version', 'cache'],
        ['pods', 'cache'],
        ['leader election', 'elector'],
        ['events', 'leader'],
        ['cycles', 'leader'],
      ],
      started: ['version', 'pods', 'leader election', 'events', 'cycles'],
    },
    {
      name: 'parts added backwards still start caches first and leadership last',
      added: [
        ['cycles', 'leader'],
        ['leader election', 'elector'],
        ['serving', 'other'],
        ['nodes', 'cache'],
      ],
      started: ['nodes', 'serving', 'leader election', 'cycles'],
    },
  ])('$name, and stop in the reverse', async ({ added, started }) => {
    const journal: string[] = [];
    const manager = new Manager();
    for (const [name, role] of added) manager.add(recording(journal, name, role));
    manager.start();
    await manager.stop();
    expect(journal).toEqual([...started.map((n) => `start ${n}`), ...[...started].reverse().map((n) => `stop ${n}`)]);
  });

  it('keeps the phases in order and the order of adding within a phase, for any order of adding', () => {
    const roles: Role[] = ['cache', 'other', 'elector', 'leader'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...roles), { maxLength: 12 }), (added) => {
        const journal: string[] = [];
        const manager = new Manager();
        added.forEach((role, i) => manager.add(recording(journal, `${role}-${i}`, role)));
        manager.start();
        const expected = roles.flatMap((role) => added.flatMap((r, i) => (r === role ? [`start ${role}-${i}`] : [])));
        expect(journal).toEqual(expected);
      }),
    );
  });

  it('waits for each stop before the next one begins', async () => {
    const journal: string[] = [];
    let release: () => void = () => undefined;
    const manager = new Manager();
    manager.add(recording(journal, 'pods', 'cache'));
    manager.add({
      name: 'cycles',
      needLeaderElection: true,
      start: () => undefined,
      stop: () => new Promise<void>((resolve) => (release = resolve)),
    });
    manager.start();
    const stopping = manager.stop();
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(journal).toEqual(['start pods']);
    release();
    await stopping;
    expect(journal).toEqual(['start pods', 'stop pods']);
  });

  it('stops every part when one fails to stop, then reports the first failure', async () => {
    const journal: string[] = [];
    const manager = new Manager();
    manager.add(recording(journal, 'pods', 'cache'));
    manager.add(recording(journal, 'leader election', 'elector', true));
    manager.add(recording(journal, 'cycles', 'leader', true));
    manager.start();
    await expect(manager.stop()).rejects.toThrow('cycles failed to stop');
    expect(journal.filter((line) => line.startsWith('stop'))).toEqual([
      'stop cycles',
      'stop leader election',
      'stop pods',
    ]);
  });

  it('stops every part also when start never ran, once however often it is asked', async () => {
    const journal: string[] = [];
    const manager = new Manager();
    manager.add(recording(journal, 'pods', 'cache'));
    manager.add(recording(journal, 'cycles', 'leader'));
    const first = manager.stop();
    expect(manager.stop()).toBe(first);
    await first;
    manager.start();
    expect(journal).toEqual(['stop cycles', 'stop pods']);
  });

  it('refuses a part added after the start, and a part with two roles', () => {
    const manager = new Manager();
    expect(() =>
      manager.add({ name: 'both', cache: true, elector: true, start: () => undefined, stop: () => undefined }),
    ).toThrow('runnable both: at most one of cache, elector, needLeaderElection');
    manager.start();
    expect(() => manager.add({ name: 'late', start: () => undefined, stop: () => undefined })).toThrow(
      'runnable late added after the manager started',
    );
  });
});
